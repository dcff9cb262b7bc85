"""Per-sample im2col of strided convolutions (``ops/conv.py`` chooses the plan): the windows
of the padded input copied per sample into (N, C*kh*kw, Ho*Wo) columns (the thread's scratch
slot "cols") and one product w (O, C*kh*kw) @ columns per sample, written straight in NCHW
order; the batch split over chainrule's thread pool as the stride-1 kernels
(``_conv_kernels._by_samples``).

Against the stride phases (four stride-1 convs of the phase images of a stride-2 conv, each
with a 2x2, 2x1, 1x2 or 1x1 kernel and so a short K) the one product has K = C*kh*kw; the
strided gather into the columns costs more than the phases' contiguous runs, but less than
the phases' extra products and copies: measured (thread CPU time, one thread, 3x3 kernel,
stride 2, padding 1) 1.97 -> 0.92 ms for x (8, 32, 32, 32), O = 32, and even (0.58 / 0.60 ms)
with the batch-major im2col at x (8, 64, 16, 16), O = 64."""

from __future__ import annotations

from typing import Any

from chainrule.backends import backend_of
from chainrule.ops._conv_kernels import (
    _by_samples,
    _conv_flops,
    _fill,
    _serial,
    _summed_over_samples,
    _zero_pad,
)

__all__: list[str] = []


def conv_sample_windows(
    xp: Any,
    x: Any,
    w: Any,
    ho: int,
    wo: int,
    stride: Any,
    padding: Any,
    dilation: Any,
    b: Any = None,
) -> Any:
    """conv2d (one group, any stride and dilation) as w (O, C*kh*kw) @ cols[n] per sample,
    cols[n, (c, i, j), h*Wo + v] = xpad[n, c, s0*h + d0*i, s1*v + d1*j]; plus the bias."""
    o, _, kh, kw = w.shape
    (pt, pb), (pl, pr) = padding
    w2 = w.reshape(o, -1)

    def part(xs: Any, dest: Any) -> Any:
        n, c = xs.shape[:2]
        xpad = _zero_pad(xp, xs, pt, pb, pl, pr, slot="pad") if pt or pb or pl or pr else xs
        sn, sc, sh, sw = xpad.strides
        win = backend_of(xpad).as_strided(
            xpad,
            (n, c, kh, kw, ho, wo),
            (sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]),
        )
        cols = _fill(xp, win, (n, c * kh * kw, ho * wo))
        out = xp.matmul(w2, cols).reshape(n, o, ho, wo)
        if dest is None:
            dest = out
        else:
            dest[...] = out
        if b is not None:
            dest += b.reshape(1, -1, 1, 1)
        return dest

    return _by_samples(xp, part, x, (x.shape[0], o, ho, wo), _conv_flops(x, w, ho, wo))


def pointwise_args(stride: Any, padding: Any, groups: int) -> bool:
    """Whether a conv with a 1x1 kernel is a plain product per sample: stride 1, no padding,
    one group (dilation is then moot)."""
    return stride == (1, 1) and not any(padding[0]) and not any(padding[1]) and groups == 1


def conv_pointwise(xp: Any, x: Any, w: Any, b: Any = None) -> Any:
    """1x1 conv: out[n] = w (O, C) @ x[n] (C, H*W), reading x in place (the general plans pad
    or copy it first), the batch split over the pool; one product (N, C) @ (C, O) when
    H = W = 1. Plus the bias."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    w2 = w.reshape(o, c)
    if h * wd == 1:
        out = _serial(xp, xp.matmul, x.reshape(n, c), w2.T).reshape(n, o, 1, 1)
        if b is not None:
            out += b.reshape(1, -1, 1, 1)
        return out

    def part(xs: Any, dest: Any) -> Any:
        m = xs.shape[0]
        if dest is None:
            dest = xp.matmul(w2, xs.reshape(m, c, h * wd)).reshape(m, o, h, wd)
        else:
            xp.matmul(w2, xs.reshape(m, c, h * wd), out=dest.reshape(m, o, h * wd))
        if b is not None:
            dest += b.reshape(1, -1, 1, 1)
        return dest

    return _by_samples(xp, part, x, (n, o, h, wd), _conv_flops(x, w, h, wd))


def weight_pointwise(xp: Any, x: Any, g: Any) -> Any:
    """Weight gradient of a 1x1 conv: gw = sum_n g[n] (O, H*W) @ x[n]^T, the batch split over
    the pool; (O, N) @ (N, C) when H = W = 1."""
    n, c, h, wd = x.shape
    o = g.shape[1]
    if h * wd == 1:
        gw = _serial(xp, xp.matmul, g.reshape(n, o).T, x.reshape(n, c))
        return gw.reshape(o, c, 1, 1)

    def part(xs: Any, gs: Any) -> Any:
        m = xs.shape[0]
        xt = xp.swapaxes(xs.reshape(m, c, h * wd), 1, 2)
        return xp.matmul(gs.reshape(m, o, h * wd), xt).sum(axis=0)

    gw = _summed_over_samples(xp, part, x, g, 2.0 * n * o * c * h * wd)
    return gw.reshape(o, c, 1, 1)


def taps_plan(x: Any, w: Any, groups: int) -> bool:
    """Whether a conv runs as ``conv_taps``: one input and one output channel (avg_pool2d's
    window sums, and the phases of their adjoint), where a product has K = kh*kw only."""
    return groups == 1 and x.shape[1] == 1 and w.shape[0] == 1


def conv_taps(
    xp: Any,
    x: Any,
    w: Any,
    ho: int,
    wo: int,
    stride: Any,
    padding: Any,
    dilation: Any,
    b: Any = None,
) -> Any:
    """conv2d of one channel into one: out = sum_{i,j} w[0, 0, i, j] * xpad[:, :, d0*i ::s0,
    d1*j ::s1] (each slice Ho x Wo), kh*kw strided multiply-adds (measured 0.47 -> 0.05 ms
    for avg_pool2d(2) of (72, 1, 32, 32) against the per-sample columns); plus the bias."""
    (pt, pb), (pl, pr) = padding
    xpad = _zero_pad(xp, x, pt, pb, pl, pr) if pt or pb or pl or pr else x
    kh, kw = w.shape[2:]
    sh, sw = stride
    out = None
    for i in range(kh):
        r0 = i * dilation[0]
        for j in range(kw):
            c0 = j * dilation[1]
            v = xpad[:, :, r0 : r0 + sh * (ho - 1) + 1 : sh, c0 : c0 + sw * (wo - 1) + 1 : sw]
            if out is None:
                out = v * w[0, 0, i, j]
            else:
                out += v * w[0, 0, i, j]
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def weight_sample_windows(
    xp: Any, x: Any, g: Any, kh: int, kw: int, stride: Any, padding: Any, dilation: Any
) -> Any:
    """Weight gradient of a conv (one group) on the per-sample window columns of
    ``conv_sample_windows``: gw = sum_n g[n] (O, Ho*Wo) @ cols[n]^T, the batch split over the
    pool (conv.py uses it for strided convs only when they split: on one thread the
    batch-major columns' one product is 10-20 % faster, measured at x (8, 64, 16, 16))."""
    n, o, ho, wo = g.shape
    c = x.shape[1]
    (pt, pb), (pl, pr) = padding

    def part(xs: Any, gs: Any) -> Any:
        m = xs.shape[0]
        xpad = _zero_pad(xp, xs, pt, pb, pl, pr, slot="pad") if pt or pb or pl or pr else xs
        sn, sc, sh, sw = xpad.strides
        win = backend_of(xpad).as_strided(
            xpad,
            (m, c, kh, kw, ho, wo),
            (sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]),
        )
        cols = _fill(xp, win, (m, c * kh * kw, ho * wo))
        gs2 = gs.reshape(m, o, ho * wo)
        acc = xp.matmul(gs2[0], cols[0].T)
        if m > 1:
            tmp = xp.empty_like(acc)
            for i in range(1, m):
                xp.matmul(gs2[i], cols[i].T, out=tmp)
                acc += tmp
        return acc

    flops = 2.0 * n * o * c * kh * kw * ho * wo
    return _summed_over_samples(xp, part, x, g, flops).reshape(o, c, kh, kw)
