"""Each op's generated apply against the generic one (Note [generated apply] in
chainrule/autograd/_node_apply.py): both come from the op's one declaration, and for the node an
op-table row records, called with the same gradient, they must return the same arrays, bit for
bit (they read the same saved values and call the same VJPs). ``.backward()`` runs the
generated apply; ``autograd.grad`` and create_graph run ``OpNode.apply``."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import chainrule as cr
from chainrule.autograd.graph import OpNode
from tests.opinfo.registry import all_rows

ROWS = [row for row in all_rows() if row.differentiable]


def _args(sample: Any) -> list[Any]:
    return [
        cr.tensor(a.astype("float64"), requires_grad=i not in sample.no_grad)
        if isinstance(a, np.ndarray) and a.dtype.kind == "f"
        else cr.tensor(a)
        if isinstance(a, np.ndarray)
        else a
        for i, a in enumerate(sample.args)
    ]


def _roots() -> list[tuple[str, Any, Any]]:
    """``(row name, node, output gradient)`` for each row output whose node has a generated
    apply (one sample per row)."""
    rng = np.random.default_rng(7)
    found = []
    for row in ROWS:
        sample = next(iter(row.samples(np.random.default_rng(1234))))
        out = row.call(cr, *_args(sample), **sample.kwargs)
        for o in out if isinstance(out, (tuple, list)) else [out]:
            node = getattr(o, "grad_fn", None)
            if isinstance(node, OpNode) and node._fast is not None:
                g = np.asarray(rng.uniform(-1, 1, o._data.shape), dtype=o._data.dtype)
                found.append((row.name, node, g))
    return found


def _mismatches(node: Any, g: Any, generated: Callable[..., Any]) -> list[str]:
    with cr.no_grad():  # as in a backward without create_graph
        # release=False: the node stays whole. It returns its edges and input metadata with
        # its gradients, for the engine's routing (Note [monomorphic reads] in engine.py).
        gen, nexts, metas = generated(node, [g.copy()], False, None)
        ref = OpNode.apply(node, [g.copy()], False)
    if nexts is not node.next_functions or metas is not node._input_meta:
        return ["edges or input metadata are not the node's"]
    if len(gen) != len(ref):
        return [f"{len(gen)} gradients, generic {len(ref)}"]
    bad = []
    for i, (a, b) in enumerate(zip(gen, ref)):
        if (a is None) != (b is None):
            bad.append(f"input {i}: {a is None=} but generic {b is None=}")
        elif a is not None:
            a, b = np.asarray(a), np.asarray(b)
            if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
                bad.append(f"input {i} differs from the generic apply's")
    return bad


def test_generated_apply_matches_the_generic_one() -> None:
    roots = _roots()
    ops = {node.op.name for _, node, _ in roots}
    assert len(ops) > 120, sorted(ops)  # 151 ops when written: most of the table
    bad = {
        f"{name} ({node.name()})": m
        for name, node, g in roots
        if (m := _mismatches(node, g, node._fast))
    }
    assert not bad, bad


def test_the_comparison_sees_a_wrong_generated_apply() -> None:
    """Mutation check: a generated apply that doubles its gradients is caught wherever a
    gradient is not all zeros."""

    def doubled(fast: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any) -> tuple[Any, ...]:
            res, nexts, metas = fast(*a)
            return tuple(None if r is None else r * 2 for r in res), nexts, metas

        return run

    caught = missed = 0
    for name, node, g in _roots():
        with cr.no_grad():
            ref = OpNode.apply(node, [g.copy()], False)
        if not any(r is not None and np.any(np.asarray(r) != 0) for r in ref):
            continue
        if _mismatches(node, g, doubled(node._fast)):
            caught += 1
        else:
            missed += 1
    assert missed == 0 and caught > 120, (caught, missed)
