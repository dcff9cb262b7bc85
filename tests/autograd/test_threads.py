"""Backward from several threads at once into shared leaves (issue 12, defect 1), and
first-time code generation of an op hit by many threads at once.

PyTorch is exact here: it locks each accumulation into a leaf. The tests shrink the switch
interval so that a thread switch can fall between any two bytecodes, and use large arrays, whose
in-place adds release the GIL, so that a missing lock loses updates in most runs.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import chainrule as cr

THREADS = 4
N = 50_000


@pytest.fixture
def tiny_switch_interval() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _in_threads(fn: Callable[[int], Any], n: int = THREADS) -> list[Any]:
    """Run ``fn(i)`` in ``n`` threads started together; re-raise the first error."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = fn(i)
        except BaseException as e:  # noqa: BLE001 (re-raised in the main thread)
            errors.append(e)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]
    return results


# Each way into a leaf's .grad: the engine's plain loop, its generic loop (a leaf hook, or
# inputs=), and create_graph (out-of-place accumulation).
def _plain(w: Any, c: Any) -> None:
    (w * c).sum().backward()


def _with_inputs(w: Any, c: Any) -> None:
    (w * c).sum().backward(inputs=[w])


def _create_graph(w: Any, c: Any) -> None:
    (w * c).sum().backward(create_graph=True)


def _hooked(w: Any, c: Any) -> None:
    (w * c).sum().backward()


PATHS = {
    "plain": _plain,
    "inputs": _with_inputs,
    "create_graph": _create_graph,
    "leaf_hook": _hooked,
}


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("start", ["none", "zeros"])
@pytest.mark.parametrize("path", list(PATHS))
def test_concurrent_backward_into_one_leaf_loses_nothing(
    tiny_switch_interval: None, path: str, start: str
) -> None:
    rounds = 10
    c = cr.ones(N)
    for r in range(rounds):
        w = cr.zeros(N, requires_grad=True)
        if start == "zeros":
            w.grad = cr.zeros(N)  # later gradients are added in place
        if path == "leaf_hook":
            w.register_hook(lambda g: g)
        _in_threads(lambda i: PATHS[path](w, c))
        got = np.unique(w.grad.detach().numpy())
        assert got.tolist() == [float(THREADS)], f"round {r}: .grad holds {got}"


def test_concurrent_backward_through_a_shared_graph(tiny_switch_interval: None) -> None:
    # One graph, retained, backpropagated by all threads at once: its leaf's accumulator is
    # shared, and each thread's gradient must land exactly once.
    for r in range(10):
        w = cr.zeros(N, requires_grad=True)
        y = (w * 2.0).sum()
        _in_threads(lambda i: y.backward(retain_graph=True))
        got = np.unique(w.grad.numpy())
        assert got.tolist() == [2.0 * THREADS], f"round {r}: .grad holds {got}"


def test_concurrent_forward_makes_one_accumulator(tiny_switch_interval: None) -> None:
    # Forwards in several threads reach one leaf's AccumulateGrad: they must all get the same
    # node, or accumulations through two nodes would not exclude each other.
    for r in range(30):
        w = cr.zeros(4, requires_grad=True)
        nodes = _in_threads(lambda i: (w * 1.0).grad_fn.next_functions[0][0], 8)
        assert len({id(n) for n in nodes}) == 1, f"round {r}: {len(set(map(id, nodes)))} nodes"


@pytest.mark.parametrize("fn_name", ["sin", "mul"])
def test_first_use_of_an_op_from_many_threads(tiny_switch_interval: None, fn_name: str) -> None:
    # An op's record and node_apply are generated on its first recorded use (Notes [generated
    # record] and [generated apply] in ops/_registry.py). Reset them to that state and let many
    # threads make the first use together: every result and gradient must be right.
    from chainrule.ops import _registry

    fn = {"sin": cr.ops.unary.sin, "mul": cr.ops.binary.mul}[fn_name]
    op = fn.op
    saved = (op.record, op.node_apply, op.ctx_cls)
    x0 = np.linspace(-1.0, 1.0, 7)

    def work(i: int) -> np.ndarray:
        x = cr.tensor(x0 + i, requires_grad=True)
        y = fn(x) if fn_name == "sin" else fn(x, x)
        y.sum().backward()
        return x.grad.numpy()

    try:
        for _ in range(5):
            op.record, op.node_apply, op.ctx_cls = _registry._first_record, None, None
            grads = _in_threads(work, 8)
            for i, g in enumerate(grads):
                want = np.cos(x0 + i) if fn_name == "sin" else 2 * (x0 + i)
                np.testing.assert_allclose(g, want, rtol=1e-12)
            assert op.record is not _registry._first_record
    finally:
        op.record, op.node_apply, op.ctx_cls = saved
