"""Benchmark workloads, written once against the PyTorch API: ``m`` is ``chainrule`` or ``torch``.

Each workload is ``make(m) -> (step, check)``: ``step()`` is the timed unit; ``check()`` returns a
number computed the same way in both libraries, so the report can show they agree.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

Workload = Callable[[Any], tuple[Callable[[], Any], Callable[[], float]]]


def op_chain(m: Any) -> tuple[Callable[[], Any], Callable[[], float]]:
    """200 elementwise ops (mul, add, tanh, exp, repeated) on float32[16], forward + backward.
    Reported per op: time / 200."""
    x = m.tensor(np.linspace(-1, 1, 16, dtype=np.float32), requires_grad=True)

    def step() -> Any:
        x.grad = None
        y = x
        for _ in range(50):
            y = y * 0.9
            y = y + 0.1
            y = y.tanh()
            y = y.exp()
        y.sum().backward()
        return y

    def check() -> float:
        y = step()
        return float(y.sum().item()) + float(x.grad.abs().sum().item())

    return step, check


WORKLOADS: dict[str, tuple[Workload, float, str]] = {
    # name: (factory, divisor for the reported unit, unit)
    "op_chain": (op_chain, 200.0, "us/op"),
}
