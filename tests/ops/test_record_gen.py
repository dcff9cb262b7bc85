"""The generated record (ops/_record_gen.py) against the generic one (ops/_record.py): for a
sample of ops and of which inputs require grad, both build the same node (type, op, edges,
metadata, needs_input_grad), the same saved values (which are kept, their arrays, whether each
is an output, the version it was saved at) and the same output tensor."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd.graph import AccumulateGrad
from chainrule.ops import _record_gen
from chainrule.ops._record import _record
from chainrule.ops._registry import REGISTRY

# (op name, input makers): one float64 array per input, or a Python number.
CASES: list[tuple[str, tuple[Any, ...]]] = [
    ("exp", ((3,),)),
    ("tanh", ((2, 3),)),
    ("sigmoid", ((4,),)),
    ("relu", ((4,),)),
    ("mul", ((3,), (3,))),
    ("mul", ((2, 3), (3,))),
    ("mul", ((3,), 2.5)),
    ("add", ((3,), (3,))),
    ("sub", ((2, 1), (3,))),
    ("div", ((3,), (3,))),
    ("div", ((3,), 4.0)),
    ("pow", ((3,), (3,))),
    ("maximum", ((3,), (3,))),
    ("atan2", ((3,), (3,))),
]


def _inputs(shapes: tuple[Any, ...], grads: tuple[bool, ...], rng: Any) -> tuple[Any, ...]:
    out = []
    for s, g in zip(shapes, grads):
        if isinstance(s, float):
            out.append(s)
        else:
            out.append(cr.tensor(rng.uniform(0.5, 2.0, s), requires_grad=g))
    return tuple(out)


def _edge(e: tuple[Any, int] | None, inputs: tuple[Any, ...]) -> Any:
    """An edge as something comparable across two nodes: which input's accumulator, or the
    upstream node object itself, and the output number."""
    if e is None or e[0] is None:
        return None
    node, nr = e
    if isinstance(node, AccumulateGrad):
        return ("leaf", next(i for i, x in enumerate(inputs) if x is node.variable), nr)
    return (node, nr)


def _saved(s: Any) -> Any:
    if s is None or not hasattr(s, "is_output"):
        return s  # not kept, or a constant (a Python number) kept as it is
    data = s.data
    return (
        None if data is None else np.asarray(data).tolist(),
        s.is_output,
        s.output_nr,
        s.version,
    )


def _describe(t: Any, inputs: tuple[Any, ...]) -> Any:
    n = t.grad_fn
    return {
        "type": type(n),
        "op": n.op,
        "params": n.params,
        "edges": [_edge(e, inputs) for e in n.next_functions],
        "needs": n.needs_input_grad,
        "meta": n._input_meta,
        "saved": [_saved(s) for s in n.saved],
        "out": (t._data.tolist(), t._requires_grad, t._output_nr, t._data.dtype),
        "out_vc": None if t._vc is None else t._vc.value,
    }


@pytest.mark.parametrize("name,shapes", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_generated_record_builds_what_record_builds(name: str, shapes: tuple[Any, ...]) -> None:
    op = REGISTRY[name]
    tensors = [i for i, s in enumerate(shapes) if not isinstance(s, float)]
    generated = _record_gen._make_record(op)
    assert generated is not _record, f"{name}: no generated record to compare"
    for mask in range(1, 2 ** len(tensors)):
        grads = [False] * len(shapes)
        for j, i in enumerate(tensors):
            grads[i] = bool(mask >> j & 1)
        rng = np.random.default_rng(0)
        inputs = _inputs(shapes, tuple(grads), rng)
        arrays = [x._data if hasattr(x, "_data") else x for x in inputs]
        out = op.forward(np, *arrays)
        got = _describe(generated(op, inputs, out, None, None), inputs)
        want = _describe(_record(op, inputs, out, None, None), inputs)
        assert got == want, f"{name} with requires_grad {grads}"
