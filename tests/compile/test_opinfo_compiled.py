"""Differential harness: every op-table row's first sample as a program (forward, a sum of
its float outputs, backward), compiled and eager, on the capture's inputs and on two other
inputs of the same shapes (replays), compared bit for bit.

``python -m tests.compile.test_opinfo_compiled`` runs every row and counts those that replay
and those that run eagerly (the figure in docs/compile.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from tests.opinfo.registry import all_rows

ROWS = all_rows()


def _tensors(sample: Any, scale: float) -> list[Any]:
    out = []
    for i, a in enumerate(sample.args):
        if isinstance(a, np.ndarray):
            if a.dtype.kind == "f":
                a = a * np.asarray(scale, a.dtype)
                out.append(cr.tensor(a, requires_grad=i not in sample.no_grad))
            else:
                out.append(cr.tensor(a))
        else:
            out.append(a)
    return out


def _program(row: Any, kwargs: dict[str, Any]) -> Any:
    def prog(*args: Any) -> Any:
        out = row.call(cr, *args, **kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        floats = [o for o in outs if isinstance(o, cr.Tensor) and o.is_floating_point()]
        diff = [o for o in floats if o.requires_grad]
        if diff:
            sum(o.sum() for o in diff).backward()
        grads = [a.grad for a in args if isinstance(a, cr.Tensor) and a.requires_grad]
        return [o.detach() for o in floats], grads

    return prog


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, cr.Tensor) or isinstance(b, cr.Tensor):
        if a is None or b is None:
            return a is b
        x, y = a.detach().numpy(), b.detach().numpy()
        return x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    return a == b


def _check(row: Any) -> str:
    rng = np.random.default_rng(0)
    samples = list(row.samples(rng))
    if not samples:
        return "no sample"
    s = samples[0]
    prog = _program(row, s.kwargs)
    compiled = cr.compile(prog)
    for scale in (1.0, 1.01, 0.99, 1.02):
        try:
            want = prog(*_tensors(s, scale))
        except Exception as e:  # noqa: BLE001 - the eager error must be the compiled one
            with pytest.raises(type(e)):
                compiled(*_tensors(s, scale))
            return "eager raises"
        got = compiled(*_tensors(s, scale))
        assert _same(got, want), f"{row.name}: compiled differs from eager at scale {scale}"
    st = compiled.stats
    return "replayed" if st["replays"] else "eager"


FAST = [r for i, r in enumerate(ROWS) if i % 6 == 0]


@pytest.mark.parametrize("row", FAST, ids=[r.name for r in FAST])
def test_row_compiled_equals_eager(row: Any) -> None:
    _check(row)


@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_every_row_compiled_equals_eager(row: Any) -> None:
    _check(row)


def tally() -> dict[str, list[str]]:
    """Every row's outcome: ``replayed``, ``eager`` or ``eager raises`` -> row names (an
    AssertionError, a compiled result differing from eager, propagates)."""
    out: dict[str, list[str]] = {}
    for row in ROWS:
        out.setdefault(_check(row), []).append(row.name)
    return out


if __name__ == "__main__":
    counts = tally()
    print(f"{len(ROWS)} rows, all bit-identical to eager")
    for outcome, names in counts.items():
        print(f"{outcome}: {len(names)}" + ("" if outcome == "replayed" else f" {names}"))
