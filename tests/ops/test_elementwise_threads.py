"""The split (thread pool) paths of backends/_chunked.py: PReLU, LeakyReLU, the slope select of
their gradients, BatchNorm in training and Adam's update, with the pool forced on (2 and 3
threads) and the threshold moved to the test's sizes. Split against serial (elementwise values
the same bits; BatchNorm's per-channel statistics too, since each channel's sums are computed
alike in any part) and against PyTorch, in float32 and float64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.backends import _chunked, _threads

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64"]


@pytest.fixture
def pool(monkeypatch: Any) -> Any:
    """``pool(threads, min_elements)`` sets the thread count and the split threshold; the list
    it returns records the number of parts of each split kernel call."""
    calls: list[int] = []
    real = _threads.parallel_map

    def counting(fn: Any, items: Any) -> Any:
        calls.append(len(items))
        return real(fn, items)

    monkeypatch.setattr(_chunked, "parallel_map", counting)

    def set_(threads: int, min_elements: int) -> list[int]:
        monkeypatch.setitem(_threads._state, "count", threads)
        monkeypatch.setattr(_chunked, "MIN_ELEMENTS", min_elements)
        calls.clear()
        return calls

    return set_


def _bits(a: Any) -> Any:
    a = np.ascontiguousarray(a)
    return a.view(np.uint8)


def _same_bits(a: Any, b: Any) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(_bits(a), _bits(b)), np.abs(a.astype(np.float64) - b).max()


def _specials(x: np.ndarray) -> np.ndarray:
    """Signed zeros, infinities, a NaN and subnormals at the front of x (a copy)."""
    x = x.copy()
    f = x.reshape(-1)
    f[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 1.0]
    return x


def _prelu(m: Any, x: np.ndarray, w: np.ndarray, g: np.ndarray) -> list[np.ndarray]:
    tx, tw = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
    y = m.nn.functional.prelu(tx, tw)
    y.backward(m.tensor(g))
    return [y.detach().numpy(), tx.grad.numpy(), tw.grad.numpy()]


# (x shape, number of slopes); 6144 elements and more take _slope_select's factor passes
PRELU_CASES = [((6, 4, 16, 16), 1), ((6, 4, 16, 16), 4), ((5, 3, 4, 6), 3), ((9, 7), 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,k", PRELU_CASES, ids=str)
@pytest.mark.parametrize("slopes", ["in (0, 1]", "above 1", "mixed signs"])
def test_prelu_split_matches_serial_and_torch(
    pool: Any, dtype: str, shape: Any, k: int, slopes: str
) -> None:
    rng = np.random.default_rng(len(shape) + k)
    x = _specials(rng.standard_normal(shape).astype(dtype))
    g = rng.standard_normal(shape).astype(dtype)
    lo, hi = {"in (0, 1]": (0.05, 1.0), "above 1": (1.0, 3.0), "mixed signs": (-2.0, 2.0)}[slopes]
    w = rng.uniform(lo, hi, k).astype(dtype)
    pool(1, 0)
    serial = _prelu(cr, x, w, g)
    calls = pool(3, x.size)  # at the threshold: split
    split = _prelu(cr, x, w, g)
    assert calls and all(p == 3 for p in calls)
    ref = _prelu(torch, x, w, g)
    for a, b in zip(serial, split):  # the slope's grad too: its samples' sums added in order
        _same_bits(a, b)
    _same_bits(split[0], ref[0])  # PyTorch's select, bit for bit
    _same_bits(split[1], ref[1])
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(split[2], ref[2], rtol=tol, atol=tol)


def test_prelu_below_threshold_is_serial(pool: Any) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 8, 8)).astype(np.float32)
    calls = pool(2, x.size + 1)
    _prelu(cr, x, np.array([0.25], np.float32), x)
    assert calls == []
    calls = pool(2, x.size)
    _prelu(cr, x, np.array([0.25], np.float32), x)
    assert calls == [2, 2]  # forward and backward


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("slope", [0.2, 0.01, 1.0, 3.0])
@pytest.mark.parametrize("shape", [(6, 4, 16, 16), (2, 3000)], ids=str)
def test_leaky_relu_split_matches_serial_and_torch(
    pool: Any, dtype: str, slope: float, shape: Any
) -> None:
    rng = np.random.default_rng(3)
    x = _specials(rng.standard_normal(shape).astype(dtype))
    g = rng.standard_normal(shape).astype(dtype)

    def run(m: Any) -> list[np.ndarray]:
        tx = m.tensor(x, requires_grad=True)
        y = m.nn.functional.leaky_relu(tx, slope)
        y.backward(m.tensor(g))
        return [y.detach().numpy(), tx.grad.numpy()]

    pool(1, 0)
    serial = run(cr)
    calls = pool(2, x.size)
    split = run(cr)
    assert calls == ([2, 2] if 0 < slope <= 1 else [2])  # max(x, s x) only for s in (0, 1]
    for a, b, r in zip(serial, split, run(torch)):
        _same_bits(a, b)
        _same_bits(b, r)


def _bn(m: Any, x: np.ndarray, w: Any, b: Any, g: np.ndarray) -> list[np.ndarray]:
    c = x.shape[1]
    tx = m.tensor(x, requires_grad=True)
    tw = None if w is None else m.tensor(w, requires_grad=True)
    tb = None if b is None else m.tensor(b, requires_grad=True)
    rm, rv = m.zeros(c, dtype=tx.dtype), m.ones(c, dtype=tx.dtype)
    y = m.nn.functional.batch_norm(tx, rm, rv, tw, tb, training=True, momentum=0.3)
    y.backward(m.tensor(g))
    out = [y.detach().numpy(), tx.grad.numpy(), rm.numpy(), rv.numpy()]
    if tw is not None:
        out += [tw.grad.numpy(), tb.grad.numpy()]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(8, 5, 6, 6), (4, 7, 9), (6, 3)], ids=str)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("threads", [2, 3])
def test_batch_norm_split_matches_serial_and_torch(
    pool: Any, dtype: str, shape: Any, affine: bool, threads: int
) -> None:
    rng = np.random.default_rng(shape[1])
    x = (rng.standard_normal(shape) * 3 + 2).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    c = shape[1]
    w = rng.uniform(0.5, 1.5, c).astype(dtype) if affine else None
    b = rng.standard_normal(c).astype(dtype) if affine else None
    pool(1, 0)
    serial = _bn(cr, x, w, b, g)
    calls = pool(threads, x.size)
    split = _bn(cr, x, w, b, g)
    assert calls == [threads, threads]  # forward and backward over parts of the channels
    for a, s in zip(serial, split):
        _same_bits(a, s)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for s, r in zip(split, _bn(torch, x, w, b, g)):
        np.testing.assert_allclose(s, r, rtol=tol, atol=tol)


def test_batch_norm_split_below_threshold_is_serial(pool: Any) -> None:
    x = np.random.default_rng(0).standard_normal((4, 3, 5, 5))
    calls = pool(2, x.size + 1)
    _bn(cr, x, None, None, x)
    assert calls == []


@pytest.mark.parametrize("shape", [(0, 3, 4), (2, 3, 0), (4, 3, 0, 2)], ids=str)
def test_prelu_empty(pool: Any, shape: Any) -> None:
    pool(2, 0)
    x = np.zeros(shape, np.float32)
    for w in (np.array([0.25], np.float32), np.full(3, 0.5, np.float32)):
        for a, b in zip(_prelu(cr, x, w, x), _prelu(torch, x, w, x)):
            _same_bits(a, b)


def test_split_kernels_gradcheck(pool: Any) -> None:
    pool(2, 0)
    rng = np.random.default_rng(5)
    x = cr.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    w = cr.tensor(rng.uniform(0.1, 0.9, 3), requires_grad=True)
    b = cr.tensor(rng.standard_normal(3), requires_grad=True)
    fn = cr.nn.functional
    assert cr.autograd.gradcheck(lambda x, w: fn.prelu(x, w), (x, w))
    assert cr.autograd.gradcheck(lambda x: fn.leaky_relu(x, 0.3), (x,))
    assert cr.autograd.gradcheck(
        lambda x, w, b: fn.batch_norm(x, None, None, w, b, training=True), (x, w, b)
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_split_matches_serial_and_torch(pool: Any, dtype: str, amsgrad: bool) -> None:
    rng = np.random.default_rng(9)
    p0 = rng.standard_normal((37, 29)).astype(dtype)
    grads = [rng.standard_normal(p0.shape).astype(dtype) for _ in range(3)]

    def run(m: Any) -> np.ndarray:
        p = m.tensor(p0.copy(), requires_grad=True)
        opt = m.optim.Adam([p], lr=0.01, amsgrad=amsgrad)
        for gr in grads:
            p.grad = m.tensor(gr)
            opt.step()
        return p.detach().numpy()

    pool(1, 0)
    serial = run(cr)
    calls = pool(2, p0.size)
    split = run(cr)
    assert calls == [2, 2, 2]
    _same_bits(serial, split)
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(split, run(torch), rtol=tol, atol=tol)
