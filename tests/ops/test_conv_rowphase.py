"""The plans of ``chainrule/ops/_conv_rowphase.py`` (row-phase columns of strided convs:
forward, input gradient, weight gradient) and ``chainrule/ops/_conv_wgrad.py`` (stride-1 weight
gradients on the transposed output gradient) against PyTorch: values and gradients (input,
weight, bias) in float64 and float32, gradcheck and the double backward in float64, serial and
split over the pool; each test checks that its plan ran."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.backends import _threads
from chainrule.ops import _conv_inputgrad, _conv_kernels, _conv_rowphase, _conv_wgrad
from tests.ops.test_conv import _double_backward_matches
from tests.ops.test_nn import compare

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1902)


@pytest.fixture(autouse=True)
def _no_channel_last_strided_adjoint(monkeypatch: Any) -> None:
    # The small strided adjoints these tests send to the row-phase plan otherwise run on the
    # channel-last plan (tests/ops/test_conv_inputgrad_plans.py).
    monkeypatch.setattr(_conv_inputgrad, "STRIDED_MAX_PIXELS", 0)


def F(m: Any) -> Any:
    return m.nn.functional


def _used(monkeypatch: Any, module: Any, name: str) -> list[int]:
    """Count the calls of ``module.name`` (conv.py calls the plans through their modules)."""
    calls: list[int] = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


@pytest.fixture(params=[1, 2], ids=["serial", "split"])
def threads(request: Any, monkeypatch: Any) -> int:
    monkeypatch.setattr(_conv_kernels, "PARALLEL_MIN_FLOPS", 0)
    monkeypatch.setitem(_threads._state, "count", request.param)
    return request.param


def _gradcheck(fn: Any, *arrays: np.ndarray) -> None:
    ts = [cr.tensor(a, requires_grad=True) for a in arrays]
    assert cr.autograd.gradcheck(fn, ts, eps=1e-6, atol=1e-5, rtol=1e-4)


def _float32_matches(call: Any, arrays: list[np.ndarray]) -> None:
    compare(call, arrays, dtype="float32", rtol=2e-5, atol=2e-5)


# x shape, w shape (O >= WGRAD_T_MIN_O for the weight gradient), conv kwargs. Each has a row
# stride > 1 and at least PHASE_MIN_PIXELS (128) output pixels (the forward's threshold).
ROWPHASE = [
    ((2, 3, 32, 32), (16, 3, 3, 3), dict(stride=2, padding=1)),
    ((2, 4, 23, 34), (17, 4, 3, 2), dict(stride=(2, 1), padding=(1, 2))),
    ((2, 3, 40, 37), (16, 3, 4, 3), dict(stride=(3, 2), padding=2, dilation=(2, 1))),
    ((1, 2, 35, 36), (18, 2, 3, 3), dict(stride=(2, 2), dilation=(1, 3))),
]


@pytest.mark.parametrize("xs,ws,kw", ROWPHASE, ids=str)
def test_rowphase_conv_matches_torch(xs: Any, ws: Any, kw: Any, monkeypatch: Any) -> None:
    fwd = _used(monkeypatch, _conv_rowphase, "conv_rowphase")
    wgt = _used(monkeypatch, _conv_rowphase, "weight_rowphase")
    x, w, b = RNG.uniform(-1, 1, xs), RNG.uniform(-1, 1, ws), RNG.uniform(-1, 1, ws[0])
    compare(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
    _float32_matches(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
    assert fwd and wgt


@pytest.mark.parametrize("xs,ws,kw", ROWPHASE[:2], ids=str)
def test_rowphase_gradcheck(xs: Any, ws: Any, kw: Any, monkeypatch: Any) -> None:
    fwd = _used(monkeypatch, _conv_rowphase, "conv_rowphase")
    wgt = _used(monkeypatch, _conv_rowphase, "weight_rowphase")
    # Small batches and channels keep gradcheck's numerical Jacobian short.
    x = RNG.uniform(-1, 1, (1, xs[1], *xs[2:]))
    w, b = RNG.uniform(-1, 1, ws), RNG.uniform(-1, 1, ws[0])
    _gradcheck(lambda x, w, b: cr.nn.functional.conv2d(x, w, b, **kw), x, w, b)
    _double_backward_matches(lambda m, xs_, ws_: F(m).conv2d(xs_, ws_, **kw), x, w)
    assert fwd and wgt


# Stride-1 convs whose forward runs on the row-phase columns (O >= 16, C*kw >= 12, a
# sample's columns at most STRIDE1_MAX_SAMPLE_BYTES); their input gradient is a stride-1
# conv too (the flipped kernel, O and C swapped: the row-folded or other plans).
STRIDE1 = [
    ((3, 4, 9, 8), (16, 4, 3, 3), dict(padding=1)),
    ((2, 5, 10, 9), (17, 5, 3, 4), dict(padding=(2, 1), dilation=(1, 2))),
    ((2, 6, 8, 11), (16, 6, 2, 2), dict(padding="same")),
    ((2, 3, 12, 12), (16, 3, 5, 5), dict(padding=2, dilation=(2, 1))),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("xs,ws,kw", STRIDE1, ids=str)
def test_rowphase_stride1_matches_torch(xs: Any, ws: Any, kw: Any, monkeypatch: Any) -> None:
    fwd = _used(monkeypatch, _conv_rowphase, "conv_rowphase")
    x, w, b = RNG.uniform(-1, 1, xs), RNG.uniform(-1, 1, ws), RNG.uniform(-1, 1, ws[0])
    compare(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
    _float32_matches(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
    _gradcheck(lambda x, w, b: cr.nn.functional.conv2d(x, w, b, **kw), x[:1], w, b)
    _double_backward_matches(lambda m, xs_, ws_: F(m).conv2d(xs_, ws_, **kw), x[:1], w)
    assert fwd


def test_rowphase_stride1_chunks(monkeypatch: Any) -> None:
    # Chunks of one and of several samples, the last chunk shorter.
    x, w = RNG.uniform(-1, 1, (5, 4, 7, 6)), RNG.uniform(-1, 1, (16, 4, 3, 3))
    for chunk in (1, 3 * 4 * 3 * 9 * 6 * 8):
        monkeypatch.setattr(_conv_rowphase, "CHUNK_BYTES", chunk)
        compare(lambda m, x, w: F(m).conv2d(x, w, padding=1), [x, w])


# conv_transpose2d inputs y with small outputs (Ho*Wo < 128: the row-phase input gradient),
# and dilated strided convs (any size).
TRANSPOSED = [
    ((2, 5, 4, 5), (5, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((2, 4, 3, 6), (4, 2, 4, 2), dict(stride=(3, 2), padding=(1, 0))),
    ((1, 3, 12, 12), (3, 2, 3, 3), dict(stride=2, padding=1, dilation=(2, 1))),
]


@pytest.mark.parametrize("ys,ws,kw", TRANSPOSED, ids=str)
def test_rowphase_transpose_matches_torch(ys: Any, ws: Any, kw: Any, monkeypatch: Any) -> None:
    calls = _used(monkeypatch, _conv_rowphase, "transpose_rowphase")
    y, w, b = RNG.uniform(-1, 1, ys), RNG.uniform(-1, 1, ws), RNG.uniform(-1, 1, ws[1])
    compare(lambda m, y, w, b: F(m).conv_transpose2d(y, w, b, **kw), [y, w, b])
    _float32_matches(lambda m, y, w, b: F(m).conv_transpose2d(y, w, b, **kw), [y, w, b])
    _gradcheck(lambda y, w: cr.nn.functional.conv_transpose2d(y, w, **kw), y[:1], w)
    assert calls


def test_strided_conv_input_grad_uses_rowphase(monkeypatch: Any) -> None:
    # The discriminator's 8x8 stride-2 conv: its input gradient (64 output pixels) runs as the
    # row-phase adjoint.
    calls = _used(monkeypatch, _conv_rowphase, "transpose_rowphase")
    x, w = RNG.uniform(-1, 1, (2, 6, 16, 16)), RNG.uniform(-1, 1, (16, 6, 3, 3))
    compare(lambda m, x, w: F(m).conv2d(x, w, stride=2, padding=1), [x, w])
    assert calls


# Stride-1 weight gradients with O >= WGRAD_T_MIN_O and C*kh*kw > SAMPLE_COLS_MAX_K (48):
# (x shape, w shape, kwargs, plan).
WGRAD_T = [
    ((2, 6, 9, 8), (16, 6, 3, 3), dict(padding=1), "shifted"),
    ((3, 9, 7, 9), (20, 9, 2, 3), dict(padding=(2, 0), dilation=(1, 2)), "shifted"),
    ((2, 50, 4, 5), (16, 50, 1, 1), dict(padding=1), "shifted"),
    ((2, 13, 8, 9), (16, 13, 2, 2), dict(padding="same"), "shifted"),
    ((2, 40, 16, 15), (32, 40, 3, 3), dict(padding=1), "rowfold"),
    ((2, 36, 17, 16), (33, 36, 3, 2), dict(padding=(1, 2), dilation=(2, 1)), "rowfold"),
    ((2, 32, 16, 16), (128, 32, 3, 3), dict(padding=1), "rowfold-real"),  # SRGAN upsampling
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("xs,ws,kw,plan", WGRAD_T, ids=str)
def test_wgrad_t_matches_torch(xs: Any, ws: Any, kw: Any, plan: str, threads: int, monkeypatch):
    name = "weight_shifted_t" if plan == "shifted" else "weight_rowfold_t"
    calls = _used(monkeypatch, _conv_wgrad, name)
    if plan == "rowfold":  # small shapes: the work threshold lowered to reach the kernel
        monkeypatch.setattr(_conv_wgrad, "WGRAD_ROWFOLD_MIN_WORK", 1)
    x, w, b = RNG.uniform(-1, 1, xs), RNG.uniform(-1, 1, ws), RNG.uniform(-1, 1, ws[0])
    compare(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
    _float32_matches(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
    assert calls


@pytest.mark.parametrize("plan", ["shifted", "rowfold"])
def test_wgrad_t_gradcheck(plan: str, monkeypatch: Any) -> None:
    name = "weight_rowfold_t" if plan == "rowfold" else "weight_shifted_t"
    calls = _used(monkeypatch, _conv_wgrad, name)
    # A low work threshold sends the small gradcheck shape through the row-folded kernel.
    monkeypatch.setattr(_conv_wgrad, "WGRAD_ROWFOLD_MIN_WORK", 1 if plan == "rowfold" else 10**12)
    x, w = RNG.uniform(-1, 1, (2, 9, 6, 5)), RNG.uniform(-1, 1, (16, 9, 3, 2))
    _gradcheck(lambda x, w: cr.nn.functional.conv2d(x, w, padding=1), x, w)
    _double_backward_matches(lambda m, xs_, ws_: F(m).conv2d(xs_, ws_, padding=1), x, w)
    assert calls


def test_strided_weight_grad_phases_use_wgrad_t(monkeypatch: Any) -> None:
    # A weight gradient of O >= 16 strided along the width only (no row stride: no row-phase
    # columns) runs its stride phases on the transposed-g shifted kernel, serial and split.
    monkeypatch.setattr(_conv_kernels, "PARALLEL_MIN_FLOPS", 0)
    calls = _used(monkeypatch, _conv_wgrad, "weight_shifted_t")
    x, w = RNG.uniform(-1, 1, (4, 3, 32, 32)), RNG.uniform(-1, 1, (16, 3, 3, 3))
    for count in (1, 2):
        monkeypatch.setitem(_threads._state, "count", count)
        compare(lambda m, x, w: F(m).conv2d(x, w, stride=(1, 2), padding=1), [x, w])
    assert len(calls) == 4  # two stride phases, each run serial and split


def test_new_plans_on_the_cupy_stand_in(fake_cuda: Any, monkeypatch: Any) -> None:
    # The kernels use xp (no NumPy calls): on the strict CuPy stand-in the row-phase forward,
    # input and weight gradients and the transposed-g weight gradients give the CPU values.
    used = [
        _used(monkeypatch, _conv_rowphase, "conv_rowphase"),
        _used(monkeypatch, _conv_rowphase, "weight_rowphase"),
        _used(monkeypatch, _conv_rowphase, "transpose_rowphase"),
        _used(monkeypatch, _conv_wgrad, "weight_shifted_t"),
        _used(monkeypatch, _conv_wgrad, "weight_rowfold_t"),
    ]
    cases = [
        ((2, 3, 32, 32), (16, 3, 3, 3), dict(stride=2, padding=1)),
        ((2, 6, 16, 16), (16, 6, 3, 3), dict(stride=2, padding=1)),
        ((2, 6, 9, 8), (16, 6, 3, 3), dict(padding=1)),
        ((2, 32, 16, 16), (128, 32, 3, 3), dict(padding=1)),
    ]
    for xs, ws, kw in cases:
        x, w = RNG.uniform(-1, 1, xs).astype(np.float32), RNG.uniform(-1, 1, ws).astype(np.float32)
        res = []
        for dev in ("cpu", "cuda"):
            xt = cr.tensor(x).to(dev).requires_grad_()
            wt = cr.tensor(w).to(dev).requires_grad_()
            y = cr.nn.functional.conv2d(xt, wt, **kw)
            gx, gw = cr.autograd.grad((y * y).sum(), [xt, wt])
            res.append([a.detach().cpu().numpy() for a in (y, gx, gw)])
        for a, b in zip(*res):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
    assert all(used)
