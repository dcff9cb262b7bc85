"""Reliability: very deep graphs without recursion, graphs freed by reference counting alone,
flat memory over many training steps, and backward from several threads at once."""

from __future__ import annotations

import gc
import threading
import tracemalloc
import weakref
from typing import Any

import numpy as np

import chainrule as cr


def test_deep_chain_backward_without_recursion() -> None:
    n = 30_000  # far beyond the recursion limit; scripts/bench measures up to 1M
    x = cr.tensor([1.0, 2.0], dtype=cr.float64, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0001**n] * 2, rtol=1e-9)
    del y  # freeing the chain must not recurse either


class _Square(cr.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        out = x * x
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        x, out = ctx.saved_tensors
        return 2 * x * g


def _build(x: Any, refs: list[Any]) -> Any:
    a = x.exp()
    b = _Square.apply(a)
    c = b.tanh() * x
    v = c[1:]
    v.mul_(a[1:])  # in-place through a view: CopySlices on c
    w = c.view(3, 1)
    with cr.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        d = w.sigmoid().sum()
    for t in (a, b, c, v, w, d):
        refs.append(weakref.ref(t))
        refs.append(weakref.ref(t.grad_fn))
    refs.append(weakref.ref(a.grad_fn.saved[0].data))
    return d


def test_graph_freed_by_refcount_alone() -> None:
    gc.collect()
    gc.disable()
    try:
        x = cr.tensor([0.1, 0.2, 0.3], requires_grad=True)
        refs: list[Any] = []
        d = _build(x, refs)
        assert refs[-2]() is not None  # d's node, alive while d is
        d.backward()
        del d
        dead = [i for i, r in enumerate(refs) if r() is not None]
        assert dead == [], f"still alive without gc: {dead}"
        assert x.grad is not None
        # create_graph=True graphs are freed too once their outputs go.
        refs2: list[Any] = []
        d2 = _build(x, refs2)
        (g,) = cr.autograd.grad(d2, x, create_graph=True)
        gref = weakref.ref(g.grad_fn)
        del d2, g
        assert [r() for r in refs2 if r() is not None] == [] and gref() is None
    finally:
        gc.enable()


def test_saved_buffers_freed_after_backward() -> None:
    x = cr.tensor(np.ones(1000), requires_grad=True)
    y = (x * x).exp().tanh().sum()
    assert cr.autograd.graph.saved_bytes(y) > 0
    y.backward()
    assert cr.autograd.graph.saved_bytes(y) == 0


def test_memory_flat_over_training_steps() -> None:
    rng = np.random.default_rng(0)
    w1 = cr.tensor(rng.normal(0, 0.3, (4, 8)), requires_grad=True)
    w2 = cr.tensor(rng.normal(0, 0.3, (8, 1)), requires_grad=True)
    xb = cr.tensor(rng.normal(size=(8, 4)))
    yb = cr.tensor(rng.normal(size=(8, 1)))

    def step() -> float:
        out = (xb @ w1).tanh() @ w2
        loss = ((out - yb) ** 2).mean()
        w1.grad = None
        w2.grad = None
        loss.backward()
        with cr.no_grad():
            w1.sub_(0.01 * w1.grad)
            w2.sub_(0.01 * w2.grad)
        return float(loss.detach())

    first = step()
    for _ in range(100):
        step()
    tracemalloc.start()
    try:
        # NumPy's broadcast_to leaves small cyclic garbage for the cycle collector; collect it
        # at both ends so that only memory our graphs keep counts.
        gc.collect()
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(1900):
            last = step()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert last < first
    assert grown < 64 * 1024, f"memory grew by {grown} bytes over 1900 steps"


def test_backward_from_four_threads() -> None:
    rng = np.random.default_rng(1)
    data = [rng.normal(size=(5, 3)) for _ in range(4)]

    def work(a: np.ndarray) -> np.ndarray:
        x = cr.tensor(a, requires_grad=True)
        y = x
        for _ in range(200):
            y = (y * 0.9).tanh() + x * 0.01
        y.pow(2).sum().backward()
        return x.grad.numpy().copy()

    expected = [work(a) for a in data]
    results: list[Any] = [None] * 4
    modes: list[Any] = [None] * 4
    barrier = threading.Barrier(4)

    def run(i: int) -> None:
        barrier.wait()
        if i == 3:
            with cr.no_grad():  # grad mode is per thread: the others keep recording
                modes[i] = cr.is_grad_enabled()
                results[i] = work_in_no_grad(data[i])
            return
        modes[i] = cr.is_grad_enabled()
        results[i] = work(data[i])

    def work_in_no_grad(a: np.ndarray) -> Any:
        x = cr.tensor(a, requires_grad=True)
        assert not (x * 2).requires_grad
        with cr.enable_grad():
            return work(a)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert modes == [True, True, True, False]
    for r, e in zip(results, expected):
        np.testing.assert_allclose(r, e, rtol=1e-12)
