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
"""

from __future__ import annotations

from typing import Any

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
    yp = xp.zeros((n, ho + pt + pb, wo + pl + pr, o), dtype=y.dtype)
    yp[:, pt : pt + ho, pl : pl + wo] = xp.moveaxis(y, 1, 3)
    # taps[i, j] = w[:, :, kh-1-i, kw-1-j], contiguous (O, C) for the products.
    taps = xp.ascontiguousarray(xp.moveaxis(w[:, :, ::-1, ::-1], (2, 3), (0, 1)))
    out = xp.matmul(yp[:, 0:h, 0:wd], taps[0, 0])
    for i in range(kh):
        for j in range(kw):
            if i or j:
                out += xp.matmul(yp[:, i : i + h, j : j + wd], taps[i, j])
    return xp.ascontiguousarray(xp.moveaxis(out, 3, 1))
