"""The batch-split (thread pool) plans of the stride-1 convolutions: values and gradients
against PyTorch and against the serial kernels, with the pool forced on small shapes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.backends import _threads
from chainrule.ops import _conv_kernels
from tests.ops.test_conv import _double_backward_matches
from tests.ops.test_nn import compare

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def F(m: Any) -> Any:
    return m.nn.functional


@pytest.fixture
def pool_on(monkeypatch: Any) -> Any:
    """Three threads and no minimum size: every stride-1 conv of a batch > 1 is split."""
    monkeypatch.setattr(_conv_kernels, "PARALLEL_MIN_FLOPS", 0)
    monkeypatch.setitem(_threads._state, "count", 3)
    calls = []
    real = _threads.parallel_map

    def counting(fn: Any, items: Any) -> Any:
        calls.append(len(items))
        return real(fn, items)

    monkeypatch.setattr(_conv_kernels, "parallel_map", counting)
    return calls


CASES = [
    # (x shape, w shape, kwargs): the row-folded plan (C >= 4, kw > 1), the shifted products
    # (one-column kernels, O <= 2C), the per-sample columns (C < 4, or kw = 1 and O > 2C), a
    # strided conv (its phases are stride-1 convs), dilation.
    ((5, 6, 7, 8), (4, 6, 3, 3), dict(padding=1)),
    ((3, 4, 5, 6), (12, 4, 3, 2), dict(padding=(1, 0))),
    ((4, 6, 5, 5), (5, 6, 1, 1), dict()),
    ((3, 5, 6, 6), (4, 5, 3, 1), dict(padding=(1, 0))),
    ((4, 2, 6, 6), (5, 2, 3, 3), dict(padding=1)),
    ((3, 4, 5, 5), (9, 4, 1, 1), dict()),
    ((4, 5, 9, 8), (4, 5, 3, 3), dict(stride=2, padding=1)),
    ((3, 4, 8, 8), (4, 4, 3, 3), dict(padding=2, dilation=2)),
    ((3, 4, 8, 9), (4, 4, 2, 3), dict(padding=(1, 2), dilation=(2, 1))),
]


@pytest.mark.parametrize("xs,ws,kw", CASES, ids=str)
def test_split_conv_matches_torch(xs: Any, ws: Any, kw: Any, pool_on: Any) -> None:
    x, w, b = RNG.uniform(-1, 1, xs), RNG.uniform(-1, 1, ws), RNG.uniform(-1, 1, ws[0])
    compare(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
    # forward, input and weight gradients were split: into one part per sample, up to
    # PARTS_PER_THREAD parts for each of the three threads
    assert pool_on and max(pool_on) == min(xs[0], 3 * _conv_kernels.PARTS_PER_THREAD)


WEIGHT_ROWFOLD = [  # C*kh*kw > SAMPLE_COLS_MAX_K, C >= 4, kw > 1
    ((5, 6, 7, 8), (4, 6, 3, 3), dict(padding=1)),
    ((3, 8, 8, 8), (4, 8, 3, 3), dict(padding=2, dilation=2)),
    ((2, 9, 7, 8), (3, 9, 2, 3), dict(padding=(1, 2), dilation=(2, 1))),
]


@pytest.mark.parametrize("xs,ws,kw", WEIGHT_ROWFOLD, ids=str)
@pytest.mark.parametrize("split", [False, True])
def test_weight_rowfold_matches_torch(
    xs: Any, ws: Any, kw: Any, split: bool, monkeypatch: Any
) -> None:
    # The row-folded weight gradient runs from ROWFOLD_WEIGHT_MIN_COLS output columns; force it.
    monkeypatch.setattr(_conv_kernels, "ROWFOLD_WEIGHT_MIN_COLS", 0)
    monkeypatch.setattr(_conv_kernels, "PARALLEL_MIN_FLOPS", 0)
    monkeypatch.setitem(_threads._state, "count", 2 if split else 1)
    used = []
    real = _conv_kernels._weight_rowfold
    monkeypatch.setattr(_conv_kernels, "_weight_rowfold", lambda *a: used.append(1) or real(*a))
    x, w = RNG.uniform(-1, 1, xs), RNG.uniform(-1, 1, ws)
    compare(lambda m, x, w: F(m).conv2d(x, w, **kw), [x, w])
    assert used


def test_split_conv_double_backward(pool_on: Any) -> None:
    x, w = RNG.uniform(-1, 1, (4, 4, 6, 6)), RNG.uniform(-1, 1, (4, 4, 3, 3))
    _double_backward_matches(lambda m, xs, ws: F(m).conv2d(xs, ws, padding=1), x, w)
    assert pool_on


def test_split_equals_serial_float32(monkeypatch: Any) -> None:
    # One part gives the serial kernel's values exactly; the weight gradient's parts are summed
    # in another order, so it agrees to float32 rounding.
    x = RNG.standard_normal((6, 8, 10, 10)).astype(np.float32)
    w = RNG.standard_normal((8, 8, 3, 3)).astype(np.float32)
    res = []
    for count in (1, 2):
        monkeypatch.setitem(_threads._state, "count", count)
        monkeypatch.setattr(_conv_kernels, "PARALLEL_MIN_FLOPS", 0)
        xs, ws = cr.tensor(x, requires_grad=True), cr.tensor(w, requires_grad=True)
        y = F(cr).conv2d(xs, ws, padding=1)
        (y * y).sum().backward()
        res.append((y.detach().numpy(), xs.grad.numpy(), ws.grad.numpy()))
    (y1, gx1, gw1), (y2, gx2, gw2) = res
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(gx1, gx2)
    np.testing.assert_allclose(gw1, gw2, rtol=1e-5, atol=1e-4)


def test_small_convs_stay_serial(monkeypatch: Any) -> None:
    monkeypatch.setitem(_threads._state, "count", 4)
    calls = []
    monkeypatch.setattr(_conv_kernels, "parallel_map", lambda fn, items: calls.append(1))
    x, w = cr.ones((2, 4, 5, 5)), cr.ones((4, 4, 3, 3))
    F(cr).conv2d(x, w, padding=1)  # 2 * 2 * 4 * 4 * 9 * 5 * 7 flops: below PARALLEL_MIN_FLOPS
    assert calls == []


def test_parallel_map_propagates_errors_and_runs_nested_serially(monkeypatch: Any) -> None:
    monkeypatch.setitem(_threads._state, "count", 2)
    seen = []

    def inner(i: int) -> int:
        seen.append(_threads.in_worker())
        # Nested: runs serially on whichever thread runs this part.
        return sum(_threads.parallel_map(lambda j: i * j, [1, 2]))

    assert _threads.parallel_map(inner, [1, 2, 3]) == [3, 6, 9]
    assert seen == [True, True, True]
    assert not _threads.in_worker()

    def boom(i: int) -> int:
        if i == 2:
            raise ValueError("part 2")
        return i

    with pytest.raises(ValueError, match="part 2"):
        _threads.parallel_map(boom, [1, 2])


def test_parallel_map_does_not_wait_for_a_worker_that_has_not_started(monkeypatch: Any) -> None:
    """The calling thread takes every item when the pool's worker is busy, and withdraws the
    worker's queued share instead of waiting for it (a late worker held back the step)."""
    import threading
    import time

    monkeypatch.setitem(_threads._state, "count", 2)
    release = threading.Event()
    safety = threading.Timer(10.0, release.set)
    safety.start()
    blocker = _threads._pool(1).submit(release.wait)
    try:
        ran_on = []

        def part(i: int) -> int:
            ran_on.append(threading.get_ident())
            return 10 * i

        t0 = time.perf_counter()
        assert _threads.parallel_map(part, [0, 1, 2, 3]) == [0, 10, 20, 30]
        assert time.perf_counter() - t0 < 5.0 and not release.is_set()
        assert ran_on == [threading.get_ident()] * 4
    finally:
        release.set()
        safety.cancel()
        blocker.result()


def test_parallel_map_shares_items_between_threads(monkeypatch: Any) -> None:
    """Both threads take items as they come free; the results keep the items' order."""
    import threading
    import time

    monkeypatch.setitem(_threads._state, "count", 2)
    ran_on = set()

    def part(i: int) -> int:
        ran_on.add(threading.get_ident())
        time.sleep(0.05)  # releases the GIL, as a part's BLAS calls do
        return i * i

    assert _threads.parallel_map(part, list(range(8))) == [i * i for i in range(8)]
    assert len(ran_on) == 2


def test_chunks_cover_the_range() -> None:
    assert _threads.chunks(8, 3) == [(0, 2), (2, 5), (5, 8)]
    assert _threads.chunks(2, 5) == [(0, 1), (1, 2)]
    assert _threads.chunks(5, 0) == [(0, 5)]


def test_num_threads_follows_set_num_threads_and_omp(monkeypatch: Any) -> None:
    from chainrule import _runtime

    monkeypatch.setitem(_threads._state, "count", None)
    monkeypatch.setitem(_threads._state, "default", None)
    monkeypatch.setitem(_runtime._state, "threads", None)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert cr.get_num_threads() == 3 == _threads.num_threads()
    monkeypatch.setitem(_threads._state, "default", None)
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    assert _threads.num_threads() == _threads.default_threads() >= 1
