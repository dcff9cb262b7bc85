"""The plans of ``chainrule/ops/_conv_windows.py`` against PyTorch: per-sample window columns
(strided convs), the 1x1 products (pointwise), and the tap sums of one-channel convs; values,
gradients (each plan's adjoint runs through the others) and the double backward, serial and
split over the pool."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chainrule.backends import _threads
from chainrule.ops import _conv_kernels, _conv_windows
from tests.ops.test_conv import _double_backward_matches
from tests.ops.test_nn import compare

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(19)


def F(m: Any) -> Any:
    return m.nn.functional


@pytest.fixture(params=[1, 2], ids=["serial", "split"])
def threads(request: Any, monkeypatch: Any) -> int:
    monkeypatch.setattr(_conv_kernels, "PARALLEL_MIN_FLOPS", 0)
    monkeypatch.setitem(_threads._state, "count", request.param)
    return request.param


def _used(monkeypatch: Any, name: str) -> list[int]:
    """Count the calls of the plan ``name`` of _conv_windows (conv.py calls it through the
    module)."""
    calls: list[int] = []
    real = getattr(_conv_windows, name)
    monkeypatch.setattr(_conv_windows, name, lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


WINDOWS = [
    ((5, 5, 9, 8), (4, 5, 3, 3), dict(stride=2, padding=1)),
    ((2, 4, 9, 11), (3, 4, 3, 2), dict(stride=(2, 3), padding=(1, 2))),
    ((2, 3, 11, 10), (5, 3, 3, 3), dict(stride=2, padding=2, dilation=(2, 1))),
    ((3, 2, 8, 8), (4, 2, 4, 4), dict(stride=3)),
]


@pytest.mark.parametrize("xs,ws,kw", WINDOWS, ids=str)
def test_strided_windows_match_torch(xs: Any, ws: Any, kw: Any, threads: int, monkeypatch: Any):
    calls = _used(monkeypatch, "conv_sample_windows")
    wcalls = _used(monkeypatch, "weight_sample_windows")
    x, w, b = RNG.uniform(-1, 1, xs), RNG.uniform(-1, 1, ws), RNG.uniform(-1, 1, ws[0])
    compare(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
    _double_backward_matches(lambda m, xs_, ws_: F(m).conv2d(xs_, ws_, **kw), x, w)
    assert calls
    # The weight gradient on the same columns when it splits (these outputs are below
    # PHASE_MIN_PIXELS); the batch-major columns' one product on one thread.
    assert bool(wcalls) == (threads > 1)


@pytest.mark.parametrize("hw", [(1, 1), (3, 4)], ids=str)
def test_pointwise_matches_torch(hw: tuple[int, int], threads: int, monkeypatch: Any) -> None:
    fwd = _used(monkeypatch, "conv_pointwise")
    wgt = _used(monkeypatch, "weight_pointwise")
    x, w, b = (
        RNG.uniform(-1, 1, (4, 6, *hw)),
        RNG.uniform(-1, 1, (5, 6, 1, 1)),
        RNG.uniform(-1, 1, 5),
    )
    compare(lambda m, x, w, b: F(m).conv2d(x, w, b), [x, w, b])
    _double_backward_matches(lambda m, xs_, ws_: F(m).conv2d(xs_, ws_), x, w, power=3)
    assert fwd and wgt


@pytest.mark.parametrize(
    "kw",
    [dict(), dict(stride=2, padding=1), dict(stride=(1, 2), padding=(2, 1), dilation=(1, 2))],
    ids=str,
)
def test_one_channel_taps_match_torch(kw: dict[str, Any], monkeypatch: Any) -> None:
    calls = _used(monkeypatch, "conv_taps")
    x, w, b = (
        RNG.uniform(-1, 1, (3, 1, 7, 8)),
        RNG.uniform(-1, 1, (1, 1, 3, 2)),
        RNG.uniform(-1, 1, 1),
    )
    compare(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
    _double_backward_matches(lambda m, xs_, ws_: F(m).conv2d(xs_, ws_, **kw), x, w)
    assert calls


def test_avg_pool_uses_taps(monkeypatch: Any) -> None:
    calls = _used(monkeypatch, "conv_taps")
    x = RNG.uniform(-1, 1, (2, 3, 8, 8))
    compare(lambda m, x: F(m).avg_pool2d(x, 2), [x])
    assert calls


@pytest.mark.parametrize("ws", [(2, 3, 5, 5), (1, 2, 3, 4)], ids=str)
def test_rowfold_few_channels_matches_torch(ws: Any, threads: int, monkeypatch: Any) -> None:
    # Fewer than ROWFOLD_MIN_C input channels, but 4*O <= C*kh*kw: the row-folded forward.
    calls: list[int] = []
    real = _conv_kernels._conv_rowfold
    monkeypatch.setattr(_conv_kernels, "_conv_rowfold", lambda *a: calls.append(1) or real(*a))
    x, w, b = (
        RNG.uniform(-1, 1, (3, ws[1], 9, 8)),
        RNG.uniform(-1, 1, ws),
        RNG.uniform(-1, 1, ws[0]),
    )
    compare(lambda m, x, w, b: F(m).conv2d(x, w, b, padding=2), [x, w, b])
    assert calls
