"""Helpers shared by the per-family op tests that run one case under chainrule and PyTorch.

The checks assert with explicit messages: pytest does not rewrite asserts in this module.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import chainrule as cr


def arange_tensor(m: Any, *shape: int, grad: bool = False) -> Any:
    """``0, 1, 2, ...`` as a float32 tensor of ``shape`` in module ``m`` (chainrule or torch)."""
    n = int(np.prod(shape))
    return m.tensor(np.arange(n, dtype=np.float32).reshape(shape), requires_grad=grad)


def outcome(m: Any, f: Callable[[Any], Any]) -> tuple[str, str]:
    """What ``f(m)`` does: ``(exception type, message)`` if it raises, else ``("ok", shape)``."""
    try:
        out = f(m)
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return type(e).__name__, str(e)
    return "ok", str(tuple(out.shape))


def assert_same_failure(f: Callable[[Any], Any]) -> None:
    """``f(m)`` fails in PyTorch, and fails in chainrule with the same exception and text."""
    import torch

    want = outcome(torch, f)
    assert want[0] != "ok", "the case should fail in PyTorch"
    got = outcome(cr, f)
    assert got == want, f"chainrule: {got}\nPyTorch:   {want}"


def assert_same_grad_fn(f: Callable[[Any, Any], Any]) -> None:
    """``f(m, x)``, for a 3x4 ``x`` requiring grad, has the same ``grad_fn`` name in both."""
    import torch

    got, want = (f(m, arange_tensor(m, 3, 4, grad=True)).grad_fn.name() for m in (cr, torch))
    assert got == want, f"chainrule: {got}, PyTorch: {want}"
