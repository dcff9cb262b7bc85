"""The input gradient of a stride-1 conv with many output channels, channel-last.

For conv2d with kernel w (O, C, kh, kw), stride 1, dilation 1, one group, the input gradient
is the full correlation of the (padded) output gradient y with the flipped kernel:

    gx[n, :, a, b] = sum_{i, j} y_pad[n, :, a + i, b + j] @ w[:, :, kh-1-i, kw-1-j]

With y_pad in NHWC layout, each kernel offset is one product of the shifted window
(N, H, W, O) with the (O, C) tap: kh*kw products whose inner dimension is O. When O >= 2C
(the SRGAN's 32 -> 64 and 32 -> 128 convs) this beats running the adjoint as a conv2d
forward with C output channels (measured one thread, batch 8, 16x16: O = 64, 1.7-2.2 ms
-> 1.0-1.6 ms; O = 128, 3.2-4.4 -> 3.1-3.2), since the forward plans' products then have
only C rows.

Both kernels here split their batch over chainrule's thread pool
(``_conv_kernels._by_samples``): each sample's products (one per output row, or one per
sample for the strided kernel) do not depend on its part, so a split gives the serial values.
"""

from __future__ import annotations

from typing import Any

from chainrule.ops._conv_kernels import _by_samples

#: the plan runs when O >= INPUTGRAD_MIN_RATIO * C (measured: a tie at O = C).
INPUTGRAD_MIN_RATIO = 2


def plan(y: Any, w: Any, dilation: Any, groups: int) -> bool:
    """Whether the adjoint of a stride-1 conv runs on the channel-last shifted products."""
    o, c = w.shape[0], w.shape[1]
    return groups == 1 and dilation == (1, 1) and c >= 4 and o >= INPUTGRAD_MIN_RATIO * c


def transpose_shifted(xp: Any, y: Any, w: Any, pads: Any, out_hw: Any) -> Any:
    """gx = sum_{i,j} shift_{i,j}(pad(y)) @ flip(w)[i, j], computed in NHWC and returned NCHW.

    ``y`` is already cropped where the correlation's padding is negative; ``pads`` are the
    remaining (top, bottom), (left, right) zero pads."""
    n, o, ho, wo = y.shape
    _, c, kh, kw = w.shape
    (pt, pb), (pl, pr) = pads
    h, wd = out_hw
    # taps[i, j] = w[:, :, kh-1-i, kw-1-j], contiguous (O, C) for the products.
    taps = xp.ascontiguousarray(xp.moveaxis(w[:, :, ::-1, ::-1], (2, 3), (0, 1)))

    def part(ys: Any, dest: Any) -> Any:
        m = ys.shape[0]
        yp = xp.zeros((m, ho + pt + pb, wo + pl + pr, o), dtype=ys.dtype)
        yp[:, pt : pt + ho, pl : pl + wo] = xp.moveaxis(ys, 1, 3)
        out = xp.matmul(yp[:, 0:h, 0:wd], taps[0, 0])
        for i in range(kh):
            for j in range(kw):
                if i or j:
                    out += xp.matmul(yp[:, i : i + h, j : j + wd], taps[i, j])
        res = xp.moveaxis(out, 3, 1)
        if dest is None:
            return xp.ascontiguousarray(res)
        dest[...] = res
        return dest

    flops = 2.0 * n * o * c * kh * kw * h * wd
    return _by_samples(xp, part, y, (n, c, h, wd), flops)


#: the strided plan runs on outputs of at most this many pixels (measured at batch 8: 64 -> 64
#: channels, 8x8 output, 2.6 -> 1.1 ms; 32 -> 32, 16x16 output, 2.7 -> 6.2 ms: slower).
STRIDED_MAX_PIXELS = 64


def strided_plan(y: Any, dilation: Any, groups: int) -> bool:
    """Whether a strided conv's adjoint runs as one channel-last product and kh*kw adds."""
    return groups == 1 and dilation == (1, 1) and y.shape[2] * y.shape[3] <= STRIDED_MAX_PIXELS


def transpose_strided(xp: Any, y: Any, w: Any, stride: Any, padding: Any, out_hw: Any) -> Any:
    """gx = crop(sum_{i,j} place_{i,j}(y^T @ w[:, :, i, j])): with y in NHWC, one product
    (N*Ho*Wo, O) @ (O, kh*kw*C) gives every tap's contribution; tap (i, j) of output pixel
    (a, b) lands at canvas pixel (i + sh*a, j + sw*b), added by kh*kw strided adds in NHWC
    (each touches whole C-long rows), then cropped by the padding and returned NCHW."""
    n, o, ho, wo = y.shape
    _, c, kh, kw = w.shape
    sh, sw = stride
    (pt, pb), (pl, pr) = padding
    h, wd = out_hw
    wm = xp.ascontiguousarray(xp.moveaxis(w, 1, 3)).reshape(o, kh * kw * c)
    hc = max(h + pt + pb, kh + sh * (ho - 1))
    wc = max(wd + pl + pr, kw + sw * (wo - 1))

    def part(ys: Any, dest: Any) -> Any:
        m = ys.shape[0]
        yt = xp.ascontiguousarray(xp.moveaxis(ys, 1, 3)).reshape(m, ho * wo, o)
        # One product per sample (a batched call): a sample's values then do not depend on
        # how many samples its part holds (measured as fast as one (N*Ho*Wo, O) product).
        cols = xp.matmul(yt, wm).reshape(m, ho, wo, kh, kw, c)
        canvas = xp.zeros((m, hc, wc, c), dtype=cols.dtype)
        for i in range(kh):
            for j in range(kw):
                tap = cols[:, :, :, i, j]
                canvas[:, i : i + sh * (ho - 1) + 1 : sh, j : j + sw * (wo - 1) + 1 : sw] += tap
        res = xp.moveaxis(canvas[:, pt : pt + h, pl : pl + wd], 3, 1)
        if dest is None:
            return xp.ascontiguousarray(res)
        dest[...] = res
        return dest

    flops = 2.0 * n * o * c * kh * kw * ho * wo
    return _by_samples(xp, part, y, (n, c, h, wd), flops)
