"""Option grids of the convolutions, poolings and interpolation, compared with PyTorch (see
also the rows in tests/opinfo/conv.py)."""

from __future__ import annotations

import itertools
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from tests.ops.test_nn import compare

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1)


def F(m: Any) -> Any:
    return m.nn.functional


def _u(shape: tuple[int, ...]) -> np.ndarray:
    return RNG.uniform(-1, 1, shape)


def _distinct(shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    return RNG.permutation(n).reshape(shape) / n * 2 - 1


CONV2D = [
    dict(stride=s, padding=p, dilation=d, groups=g)
    for s, p, d, g in itertools.product(
        [1, 2, (2, 1)], [0, 1, (2, 0), "valid"], [1, (1, 2)], [1, 2]
    )
] + [dict(padding="same", dilation=d, groups=g) for d in (1, 2, (2, 1)) for g in (1, 2)]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("kw", CONV2D, ids=str)
def test_conv2d_grid(kw: dict[str, Any], bias: bool) -> None:
    g = kw["groups"]
    args = [_u((2, 4, 6, 5)), _u((6, 4 // g, 3, 2))] + ([_u((6,))] if bias else [])
    if kw.get("padding") == "same" and kw["dilation"] in (1, (2, 1)):
        # An even kernel with odd dilation: PyTorch warns (once) about the padded copy.
        with pytest.warns(UserWarning, match="Using padding='same' with even kernel"):
            F(cr).conv2d(cr.tensor(args[0]), cr.tensor(args[1]), **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compare(lambda m, x, w, b=None, **k: F(m).conv2d(x, w, b, **k), args, kw)
        return
    compare(lambda m, x, w, b=None, **k: F(m).conv2d(x, w, b, **k), args, kw)


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(stride=2, padding=1),
        dict(padding="same"),
        dict(dilation=2, groups=2, padding=2),
    ],
    ids=str,
)
def test_conv2d_float32(kw: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the even-kernel 'same' warning
        compare(
            lambda m, x, w, b: F(m).conv2d(x, w, b, **kw),
            [_u((2, 4, 7, 7)), _u((4, 4 // kw.get("groups", 1), 4, 3)), _u((4,))],
            dtype="float32",
            rtol=1e-4,
            atol=1e-5,
        )


@pytest.mark.parametrize(
    "kw",
    [
        dict(stride=s, padding=p, dilation=d, groups=g)
        for s, p, d, g in itertools.product([1, 2], [0, 1, "same"], [1, 2], [1, 2])
        if not (p == "same" and s == 2)
    ],
    ids=str,
)
def test_conv1d_grid(kw: dict[str, Any]) -> None:
    g = kw["groups"]
    compare(
        lambda m, x, w, b, **k: F(m).conv1d(x, w, b, **k),
        [_u((2, 4, 9)), _u((2, 4 // g, 3)), _u((2,))],
        kw,
    )


CONVT = [
    dict(stride=s, padding=p, output_padding=op, groups=g, dilation=d)
    for s, p, op, g, d in itertools.product([1, 2, (3, 2)], [0, 1, (1, 2)], [0, 1], [1, 2], [1, 2])
    if op < max(s if isinstance(s, int) else min(s), d)
]


@pytest.mark.parametrize("kw", CONVT, ids=str)
def test_conv_transpose2d_grid(kw: dict[str, Any]) -> None:
    g = kw["groups"]
    compare(
        lambda m, x, w, b, **k: F(m).conv_transpose2d(x, w, b, **k),
        [_u((2, 4, 3, 4)), _u((4, 6 // g, 3, 2)), _u((6,))],
        kw,
    )


def test_conv2d_double_backward_matches_torch() -> None:
    x, w = _u((2, 2, 5, 5)), _u((3, 2, 3, 3))
    outs = []
    for m in (cr, torch):
        xs, ws = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        y = F(m).conv2d(xs, ws, stride=2, padding=1)
        gx, gw = m.autograd.grad((y * y).sum(), [xs, ws], create_graph=True)
        r = (gx * gx).sum() + (gw * gw * gw).sum()
        outs.append(
            [np.asarray(a._data) if m is cr else a.numpy() for a in m.autograd.grad(r, [xs, ws])]
        )
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize(
    "kw",
    [
        dict(stride=2, padding=1),
        dict(stride=(2, 3), padding=(2, 0)),
        dict(stride=3),
        dict(stride=(1, 2), padding=1),
    ],
    ids=str,
)
def test_conv2d_phased_matches_torch(kw: dict[str, Any], monkeypatch: Any) -> None:
    # Strided convs on large outputs run as stride-1 convs of the input phases; force that
    # path on small images and check values, gradients and the double backward.
    from chainrule.ops import conv as conv_ops

    monkeypatch.setattr(conv_ops, "PHASE_MIN_PIXELS", 0)
    x, w, b = _u((2, 5, 7, 8)), _u((4, 5, 3, 4)), _u((4,))
    compare(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
    _double_backward_matches(lambda m, xs, ws: F(m).conv2d(xs, ws, **kw), x, w)


def _double_backward_matches(
    conv: Callable[..., Any], x: np.ndarray, w: np.ndarray, power: int = 2
) -> None:
    """Second derivatives through ``conv(m, x, w)`` in chainrule and torch: the gradients of
    |dL/dx|^2 + sum (dL/dw)^3 with L = sum conv(x, w)**power."""
    outs = []
    for m in (cr, torch):
        xs, ws = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        y = conv(m, xs, ws)
        gx, gw = m.autograd.grad((y**power).sum(), [xs, ws], create_graph=True)
        r = (gx * gx).sum() + (gw * gw * gw).sum()
        outs.append(
            [np.asarray(a._data) if m is cr else a.numpy() for a in m.autograd.grad(r, [xs, ws])]
        )
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(padding=1),
        dict(padding=(2, 0), dilation=(1, 2)),
        dict(padding="same", dilation=(2, 1)),
        dict(dilation=2),
    ],
    ids=str,
)
@pytest.mark.parametrize("cin,cout", [(1, 3), (2, 5), (4, 12)])
def test_conv2d_sample_cols_matches_torch(kw: dict[str, Any], cin: int, cout: int) -> None:
    # Stride-1 convs with few input channels (or O > 2C) run on per-sample columns, and their
    # weight gradients too when C*kh*kw is small: values, gradients and double backward.
    x, w, b = _u((2, cin, 7, 6)), _u((cout, cin, 3, 2)), _u((cout,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # padding='same' with an even kernel warns
        compare(lambda m, x, w, b: F(m).conv2d(x, w, b, **kw), [x, w, b])
        _double_backward_matches(lambda m, xs, ws: F(m).conv2d(xs, ws, **kw), x, w, power=3)


def test_conv_errors_match_torch() -> None:
    for m in (cr, torch):
        with pytest.raises(
            RuntimeError,
            match=r"Given groups=1, weight of size \[4, 3, 3, 3\], "
            r"expected input\[2, 2, 5, 5\] to have 3 "
            "channels, but got 2 channels instead",
        ):
            F(m).conv2d(m.zeros(2, 2, 5, 5), m.zeros(4, 3, 3, 3))
        with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
            F(m).conv2d(m.zeros(1, 3, 5, 5), m.zeros(4, 3, 3, 3), stride=2, padding="same")
        with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input"):
            F(m).conv2d(m.zeros(1, 3, 2, 2), m.zeros(4, 3, 3, 3))


def test_conv_transpose2d_output_padding_double_backward() -> None:
    # output_padding >= stride (allowed with dilation > 1): the adjoints crop.
    kw = dict(stride=1, output_padding=1, dilation=2, padding=1)
    x, w = _u((1, 2, 3, 4)), _u((2, 3, 2, 2))
    _double_backward_matches(lambda m, xs, ws: F(m).conv_transpose2d(xs, ws, **kw), x, w)


def test_conv_keeps_float32() -> None:
    x = cr.randn(1, 2, 5, 5, requires_grad=True)
    w = cr.randn(3, 2, 3, 3, requires_grad=True)
    y = F(cr).conv2d(x, w, padding=1)
    assert y.dtype == cr.float32 and y._data.dtype == np.float32
    y.sum().backward()
    assert x.grad._data.dtype == np.float32 and w.grad._data.dtype == np.float32
    assert y.grad_fn.name() == "ConvolutionBackward0"


POOL = [
    dict(kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=c)
    for k, s, p, d, c in itertools.product(
        [2, 3, (3, 2)], [None, 1, 2, (2, 3)], [0, 1], [1, 2], [False, True]
    )
]


@pytest.mark.parametrize("kw", POOL, ids=str)
def test_max_pool2d_grid(kw: dict[str, Any]) -> None:
    compare(
        lambda m, x, **k: F(m).max_pool2d(x, return_indices=True, **k),
        [_distinct((2, 2, 7, 6))],
        kw,
    )


def test_max_pool2d_float32_and_toplevel() -> None:
    compare(
        lambda m, x: m.max_pool2d(x, 2),
        [_distinct((2, 3, 6, 6))],
        dtype="float32",
        rtol=1e-6,
        atol=0,
    )


@pytest.mark.parametrize(
    "kw",
    [
        dict(
            kernel_size=k,
            stride=s,
            padding=p,
            ceil_mode=c,
            count_include_pad=ci,
            divisor_override=dv,
        )
        for k, s, p, c, ci, dv in itertools.product(
            [2, 3, (3, 2)], [None, 2, (1, 2)], [0, 1], [False, True], [False, True], [None, 5]
        )
    ],
    ids=str,
)
def test_avg_pool2d_grid(kw: dict[str, Any]) -> None:
    compare(lambda m, x, **k: F(m).avg_pool2d(x, **k), [_u((2, 2, 7, 6))], kw)


@pytest.mark.parametrize("size", [1, 3, (2, 5), (7, 6), (4, None), (10, 9)], ids=str)
def test_adaptive_pools(size: Any) -> None:
    compare(lambda m, x: F(m).adaptive_avg_pool2d(x, size), [_u((2, 2, 7, 6))])
    compare(
        lambda m, x: F(m).adaptive_max_pool2d(x, size, return_indices=True),
        [_distinct((2, 2, 7, 6))],
    )


@pytest.mark.parametrize("r", [1, 2, 3])
def test_pixel_shuffle_roundtrip(r: int) -> None:
    compare(lambda m, x: F(m).pixel_shuffle(x, r), [_u((2, 3 * r * r, 2, 3))])
    compare(lambda m, x: F(m).pixel_unshuffle(x, r), [_u((1, 2, 2 * r, 3 * r))])


INTERP = (
    [dict(mode="nearest", size=s) for s in [(5, 7), (2, 3), (4, 4), 9]]
    + [dict(mode="nearest", scale_factor=f) for f in [2, 0.5, 1.7, (3, 1.5)]]
    + [dict(mode="nearest-exact", size=(5, 3))]
    + [
        dict(mode="bilinear", align_corners=a, **s)
        for a in (False, True)
        for s in (
            {"size": (5, 7)},
            {"size": (2, 3)},
            {"size": 1},
            {"scale_factor": 2},
            {"scale_factor": (0.6, 1.3)},
        )
    ]
)


@pytest.mark.parametrize("kw", INTERP, ids=str)
def test_interpolate_grid(kw: dict[str, Any]) -> None:
    compare(lambda m, x, **k: F(m).interpolate(x, **k), [_u((2, 2, 4, 5))], kw)
    compare(
        lambda m, x, **k: F(m).interpolate(x, **k),
        [_u((1, 2, 4, 5))],
        kw,
        dtype="float32",
        rtol=1e-5,
        atol=1e-6,
    )


def test_interpolate_linear_3d() -> None:
    for ac in (False, True):
        compare(
            lambda m, x: F(m).interpolate(x, size=8, mode="linear", align_corners=ac),
            [_u((2, 2, 5))],
        )
    compare(lambda m, x: F(m).interpolate(x, scale_factor=3), [_u((2, 2, 5))])


def test_max_pool2d_ties_and_nan_match_torch() -> None:
    x = np.array([[[[1.0, np.nan, 3.0, np.nan], [2, 5, np.nan, 0], [1, 1, 1, 1], [0, 0, 0, 0]]]])
    compare(lambda m, a: F(m).max_pool2d(a, 2, 1, return_indices=True), [x], grad=())
    compare(lambda m, a: F(m).max_pool2d(a, 2, 2, 1, return_indices=True), [x], grad=())


@pytest.mark.parametrize("k", [2, (2, 3), (1, 2), 3])
def test_max_pool2d_tiled_ties_nan_match_torch(k: Any) -> None:
    # kernel == stride without padding (the tiled pass): first maximum on ties, signed zeros
    # tie, infinities, an odd border cropped; a NaN window falls back to the general pass.
    x = RNG.integers(-2, 3, (2, 3, 7, 8)).astype(np.float64)
    x[0, 0, :2, :3] = [[0.0, -0.0, 0.0], [-0.0, 0.0, -0.0]]
    x[0, 1, 2:4, 2:4] = -np.inf
    x[1, 2, 4, 5] = np.inf
    compare(lambda m, a: F(m).max_pool2d(a, k, return_indices=True), [x])
    x[1, 0, 1, 1] = x[1, 0, 1, 4] = x[1, 0, 0, 4] = np.nan
    compare(lambda m, a: F(m).max_pool2d(a, k, return_indices=True), [x], grad=())
    compare(
        lambda m, a: F(m).max_pool2d(a, k, return_indices=True), [RNG.integers(-3, 3, (1, 2, 6, 6))]
    )
