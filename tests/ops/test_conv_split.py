"""The batch split over the thread pool of the row-phase kernels (``ops/_conv_rowphase.py``:
forward, stride 1 and strided, weight gradient, adjoint) and the channel-last input-gradient
kernels (``ops/_conv_inputgrad.py``), and OpenBLAS held at one thread inside the conv ops.

Split, the forward and the input gradient are bit-identical to the serial kernel (each
sample's products do not depend on its part), the weight gradient equal up to the order of
the parts' sum; through ``F.conv2d`` they match PyTorch, and the plan chosen does not depend
on the thread count, so a whole conv's forward and input gradient are the same at 1 and 2
threads."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.backends import _threads
from chainrule.ops import _conv_inputgrad, _conv_kernels, _conv_rowphase
from tests.ops.test_nn import compare

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1903)


def F(m: Any) -> Any:
    return m.nn.functional


@pytest.fixture
def parts(monkeypatch: Any) -> list[int]:
    """No minimum size for a split; the number of items of each ``parallel_map`` call."""
    monkeypatch.setattr(_conv_kernels, "PARALLEL_MIN_FLOPS", 0)
    calls: list[int] = []
    real = _threads.parallel_map

    def counting(fn: Any, items: Any) -> Any:
        calls.append(len(items))
        return real(fn, items)

    monkeypatch.setattr(_conv_kernels, "parallel_map", counting)
    return calls


def _at(monkeypatch: Any, count: int) -> None:
    monkeypatch.setitem(_threads._state, "count", count)


def _arr(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype(dtype)


# (kernel, makes its arguments from a batch size and dtype, is a weight gradient)
def _fwd_strided(n: int, dt: Any) -> tuple:
    return (
        _arr((n, 5, 19, 17), dt),
        _arr((7, 5, 3, 3), dt),
        10,
        9,
        (2, 2),
        ((1, 1), (1, 1)),
        (1, 1),
    )


def _fwd_stride1(n: int, dt: Any) -> tuple:
    x, w = _arr((n, 4, 9, 8), dt), _arr((16, 4, 3, 3), dt)
    return (x, w, 9, 8, (1, 1), ((1, 1), (1, 1)), (1, 1), _arr((16,), dt))


def _wgrad_rowphase(n: int, dt: Any) -> tuple:
    x, g = _arr((n, 5, 19, 17), dt), _arr((n, 16, 10, 9), dt)
    return (x, g, 3, 3, (2, 2), ((1, 1), (1, 1)), (1, 1))


def _adjoint_rowphase(n: int, dt: Any) -> tuple:
    y, w = _arr((n, 6, 9, 8), dt), _arr((6, 5, 3, 3), dt)
    return (y, w, (2, 2), ((1, 1), (1, 1)), (1, 2), (17, 17))


def _adjoint_shifted(n: int, dt: Any) -> tuple:
    y, w = _arr((n, 9, 7, 8), dt), _arr((9, 4, 3, 3), dt)
    return (y, w, ((1, 1), (1, 1)), (7, 8))


def _adjoint_strided(n: int, dt: Any) -> tuple:
    y, w = _arr((n, 6, 6, 7), dt), _arr((6, 4, 3, 3), dt)
    return (y, w, (2, 2), ((1, 1), (1, 1)), (11, 13))


def _fwd_strided_dilated(n: int, dt: Any) -> tuple:
    x, w = _arr((n, 3, 20, 21), dt), _arr((6, 3, 3, 2), dt)
    return (x, w, 7, 10, (3, 2), ((2, 2), (1, 1)), (2, 3), _arr((6,), dt))


KERNELS = [
    ("rowphase_forward_strided", _conv_rowphase, "conv_rowphase", _fwd_strided, False),
    ("rowphase_forward_dilated", _conv_rowphase, "conv_rowphase", _fwd_strided_dilated, False),
    ("rowphase_forward_stride1", _conv_rowphase, "conv_rowphase", _fwd_stride1, False),
    ("rowphase_weight", _conv_rowphase, "weight_rowphase", _wgrad_rowphase, True),
    ("rowphase_adjoint", _conv_rowphase, "transpose_rowphase", _adjoint_rowphase, False),
    ("inputgrad_shifted", _conv_inputgrad, "transpose_shifted", _adjoint_shifted, False),
    ("inputgrad_strided", _conv_inputgrad, "transpose_strided", _adjoint_strided, False),
]


@pytest.mark.parametrize("name,module,fn,make,weight", KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 5, 7])
def test_split_kernel_equals_serial(
    name: str,
    module: Any,
    fn: str,
    make: Any,
    weight: bool,
    dtype: Any,
    n: int,
    parts: Any,
    monkeypatch: Any,
) -> None:
    kernel = getattr(module, fn)
    args = make(n, dtype)
    _at(monkeypatch, 1)
    serial = kernel(np, *args)
    assert not parts
    for count in (2, 3):
        _at(monkeypatch, count)
        split = kernel(np, *args)
        assert split.dtype == serial.dtype and split.shape == serial.shape
        if weight:
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(split, serial, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(split, serial)
    # a batch of one runs serially; else up to PARTS_PER_THREAD parts per thread, one sample
    # each at least
    if n == 1:
        assert not parts
    else:
        per_thread = _conv_kernels.PARTS_PER_THREAD
        assert parts == [min(n, 2 * per_thread), min(n, 3 * per_thread)]


# Through the public ops: (x shape, w shape, conv2d kwargs, the kernels that must run).
CONVS = [
    # strided forward and weight gradient on row-phase columns (Ho*Wo >= 128, O >= 16); the
    # input gradient on the stride phases
    (
        (3, 4, 32, 30),
        (16, 4, 3, 3),
        dict(stride=2, padding=1),
        ["conv_rowphase", "weight_rowphase"],
    ),
    # stride-1 forward on row-phase columns; input gradient channel-last (O >= 2C)
    ((5, 4, 9, 8), (16, 4, 3, 3), dict(padding=1), ["conv_rowphase", "transpose_shifted"]),
    # strided input gradient on row-phase columns (64 < Ho*Wo < 128)
    ((3, 4, 17, 24), (5, 4, 3, 3), dict(stride=2, padding=1), ["transpose_rowphase"]),
    # strided input gradient channel-last (Ho*Wo <= 64)
    ((7, 4, 11, 13), (5, 4, 3, 3), dict(stride=2, padding=1), ["transpose_strided"]),
    # batch of one
    ((1, 4, 9, 8), (16, 4, 3, 3), dict(padding=1), ["conv_rowphase", "transpose_shifted"]),
]
MODULES = {
    "conv_rowphase": _conv_rowphase,
    "weight_rowphase": _conv_rowphase,
    "transpose_rowphase": _conv_rowphase,
    "transpose_shifted": _conv_inputgrad,
    "transpose_strided": _conv_inputgrad,
}


def _count_calls(monkeypatch: Any, names: list[str]) -> dict[str, list[int]]:
    used: dict[str, list[int]] = {}
    for name in names:
        module, real = MODULES[name], getattr(MODULES[name], name)
        used[name] = []
        monkeypatch.setattr(
            module, name, lambda *a, _r=real, _u=used[name], **k: _u.append(1) or _r(*a, **k)
        )
    return used


@pytest.mark.parametrize("xs,ws,kw,kernels", CONVS, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_split_conv_matches_torch(
    xs: Any, ws: Any, kw: Any, kernels: list[str], dtype: str, parts: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(_conv_inputgrad, "STRIDED_MAX_PIXELS", 64)
    _at(monkeypatch, 2)
    used = _count_calls(monkeypatch, kernels)
    x, w, b = RNG.uniform(-1, 1, xs), RNG.uniform(-1, 1, ws), RNG.uniform(-1, 1, ws[0])
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == "float32" else {}
    compare(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b], dtype=dtype, **tol)
    assert all(used[k] for k in kernels), used
    assert (max(parts, default=1) > 1) == (xs[0] > 1)


@pytest.mark.parametrize("xs,ws,kw,kernels", CONVS, ids=str)
def test_conv_same_at_one_and_two_threads(
    xs: Any, ws: Any, kw: Any, kernels: list[str], parts: Any, monkeypatch: Any
) -> None:
    """The plan does not depend on the thread count: forward and input gradient are the same
    bits at one thread and split at two; the weight gradient up to the sum's order."""
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    res = []
    for count in (1, 2):
        _at(monkeypatch, count)
        xt, wt = cr.tensor(x, requires_grad=True), cr.tensor(w, requires_grad=True)
        y = F(cr).conv2d(xt, wt, **kw)
        (y * y).sum().backward()
        res.append((y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()))
    (y1, gx1, gw1), (y2, gx2, gw2) = res
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(gx1, gx2)
    np.testing.assert_allclose(gw1, gw2, rtol=1e-4, atol=1e-3)
    assert (max(parts, default=1) > 1) == (xs[0] > 1)


def _openblas_threads() -> int:
    return max(get() for get, _ in _threads._blas_controls())


@pytest.fixture
def openblas_two(monkeypatch: Any) -> Any:
    """OpenBLAS at two threads and chainrule's pool at two (restored afterwards)."""
    if not _threads._blas_controls():
        pytest.skip("NumPy's BLAS is not OpenBLAS")
    before = [(get(), set_) for get, set_ in _threads._blas_controls()]
    for _, set_ in before:
        set_(2)
    _at(monkeypatch, 2)
    yield
    for count, set_ in before:
        set_(count)


def test_conv_ops_hold_openblas_at_one_thread(openblas_two: Any, monkeypatch: Any) -> None:
    seen: list[int] = []
    for module, name in [
        (_conv_rowphase, "conv_rowphase"),
        (_conv_rowphase, "weight_rowphase"),
        (_conv_inputgrad, "transpose_shifted"),
    ]:
        real = getattr(module, name)
        monkeypatch.setattr(
            module, name, lambda *a, _r=real, **k: seen.append(_openblas_threads()) or _r(*a, **k)
        )
    x = cr.tensor(RNG.standard_normal((2, 4, 9, 8)).astype(np.float32), requires_grad=True)
    w = cr.tensor(RNG.standard_normal((16, 4, 3, 3)).astype(np.float32), requires_grad=True)
    F(cr).conv2d(x, w, padding=1).sum().backward()
    x2 = cr.tensor(RNG.standard_normal((2, 4, 32, 30)).astype(np.float32))
    F(cr).conv2d(x2, w, stride=2, padding=1).sum().backward()
    assert seen == [1, 1, 1, 1]  # two row-phase forwards, weight grad, channel-last adjoint
    assert _openblas_threads() == 2  # restored after each op


def test_one_blas_thread_nests_and_blas_threads_restores(openblas_two: Any) -> None:
    with _threads.one_blas_thread():
        assert _openblas_threads() == 1
        with _threads.one_blas_thread():
            assert _openblas_threads() == 1
            with _threads.blas_threads():
                assert _openblas_threads() == 2
            assert _openblas_threads() == 1
        assert _openblas_threads() == 1
    assert _openblas_threads() == 2
    with _threads.blas_threads():  # outside a region: nothing to do
        assert _openblas_threads() == 2


def test_one_blas_thread_is_a_no_op_at_one_thread(openblas_two: Any, monkeypatch: Any) -> None:
    _at(monkeypatch, 1)
    with _threads.one_blas_thread():
        assert _openblas_threads() == 2
        _at(monkeypatch, 2)  # a count changed inside the region does not unbalance it
    assert _openblas_threads() == 2 and _threads._hold["depth"] == 0


def test_grouped_conv_runs_at_blas_threads(openblas_two: Any, monkeypatch: Any) -> None:
    """The one-GEMM-per-group im2col path runs at BLAS's own count inside the op's region."""
    seen: list[int] = []
    real = np.matmul

    class Spy:
        def __getattr__(self, name: str) -> Any:
            return getattr(np, name)

        @staticmethod
        def matmul(*a: Any, **k: Any) -> Any:
            seen.append(_openblas_threads())
            return real(*a, **k)

    from chainrule.ops import conv

    x = RNG.standard_normal((2, 4, 6, 6))
    w = RNG.standard_normal((4, 2, 3, 3))
    out = conv._conv2d.forward(
        Spy(), x, w, None, stride=(1, 1), padding=((1, 1), (1, 1)), dilation=(1, 1), groups=2
    )
    assert seen and seen[-1] == 2
    ref = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1, groups=2)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-12, atol=1e-12)
