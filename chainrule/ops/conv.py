"""Convolutions and max pooling, as BLAS contractions over strided windows.

Three ops close under differentiation (all 2-d; conv1d is conv2d on a height-1 image):

- ``conv2d(x, w, b)``: out = w (*) windows(pad(x)) + b. Eight plans (all BLAS or whole-array
  passes, no per-pixel loops), chosen by measured speed; those with per-sample products split
  the batch over chainrule's thread pool (``_conv_kernels.py``, ``_conv_windows.py``):
  * 1x1 kernel, stride 1, no padding, one group: a plain product per sample (one product
    (N, C) @ (C, O) on 1x1 images). One input and one output channel (avg_pool2d's window
    sums): kh*kw strided multiply-adds.
  * stride 1, one group, kw > 1, C >= 4 or 4*O <= C*kh*kw (few outputs of a wide kernel):
    row-folded, per sample the kw column shifts of the flattened padded image stacked as
    (C*kw, Hp*Wp) and kh products with K = C*kw.
  * other stride-1 convs with C >= 4, O <= 2C: kh*kw shifted products. With the padded image
    flattened to rows of width Wp, kernel offset (i, j) is one contiguous run of it, so
    w[:, :, i, j] @ run reads the input in place; the Wp - Wo junk columns per row are
    cropped at the end.
  * other stride-1 convs of one group: per-sample im2col (N, C*kh*kw, Ho*Wp) of those runs
    and one GEMM per sample, written straight in NCHW order (up to 1.5x faster than
    batch-major columns, whose product needs a transposing copy; even at O = 4C).
  * stride 1, one group, O >= 16, C*kw >= 12, small columns (a sample's at most 128 KB, the
    batch's 1 MB): row-phase columns with exact Wo-wide rows (``_conv_rowphase.py``).
  * row stride > 1, one group, Ho*Wo >= PHASE_MIN_PIXELS: row-phase columns, kh products
    with K = C*kw (``_conv_rowphase.py``).
  * stride > 1, one group: per-sample im2col of the strided windows (N, C*kh*kw, Ho*Wo)
    and one GEMM per sample, split over the pool (``_conv_windows.py``; measured 1.3-2.4x
    faster than the sum over the stride phases of stride-1 convs, which the adjoint and
    the weight gradient still use).
  * otherwise im2col (long contiguous runs for stride 1) and one GEMM per group.
  Folding the batch into the GEMM columns (channel-major (C, N*Hp*Wp) input, 9 large
  products) was measured 1.5-2.5x slower than the per-sample products on these sizes.
  No im2col buffer is kept for the backward: rebuilding it is a fast copy, while holding a few
  MB per conv between forward and backward makes the step's fresh allocations fault in new
  pages (measured: the CNN step 1.7x slower).
- ``conv_transpose2d(y, w, b)``: the adjoint of conv2d in x. Stride 1: a correlation of the
  padded y with the flipped kernel (a conv2d forward; with O >= 2C, one group, no dilation,
  kh*kw channel-last shifted products, ``_conv_inputgrad.py``). Strided with a small output
  (one group, no dilation): one channel-last product and kh*kw strided adds. Otherwise
  strided: per phase, the stride-1 adjoint written into that phase of the canvas (groups /
  dilation: w^T y scattered back by kh*kw strided adds), cropped by the padding.
- ``conv2d_weight(x, g)``: the adjoint of conv2d in w: stride 1 (one group), per kernel offset
  the products of g with the shifted runs of x, summed over the batch, or, when C*kh*kw <=
  SAMPLE_COLS_MAX_K, one product of g with the per-sample columns, or, from
  ROWFOLD_WEIGHT_MIN_COLS output columns, the row-folded products; 1x1 kernels (stride 1,
  no padding), a plain product per sample; strided, per phase; otherwise im2col and one GEMM.
  With O >= 16 the stride-1 kernels (and the phases' ones) multiply by the transposed g
  (``_conv_wgrad.py``: both operands in BLAS's plain layout); a row stride > 1 with O >= 16,
  on the row-phase columns. The strided adjoint (conv_transpose2d) runs on the
  row-phase columns for Ho*Wo < PHASE_MIN_PIXELS or dilation > 1.

Threads: every plan with per-sample (or per-chunk) products splits its batch over chainrule's
pool when a part is worth it (``_conv_kernels.PARALLEL_MIN_FLOPS``), each part writing its
samples, so the plan, and the forward's and input gradient's values, do not depend on the
thread count (the weight gradient's parts are summed: the same up to the sum's order). The
three ops' forwards run with OpenBLAS at one thread (``_one_blas_thread``); only the
one-GEMM-per-group im2col products of the last plan run at BLAS's own count.

VJPs (so double backward works): conv2d -> (conv_transpose2d(g, w), conv2d_weight(x, g),
sum g); conv_transpose2d -> (conv2d(g, w), conv2d_weight(g, y), sum g); conv2d_weight ->
(conv_transpose2d(g, h), conv2d(x, h)). Padding is stored per side, so padding='same' with an
even kernel (extra zero on the right, as PyTorch) needs no special case.

Max pooling finds the argmax indices on arrays (one vectorized pass per kernel offset; when
the windows tile the image, kernel == stride, a max over rows of taps and one equality pass
per tap) and is then one op (``max_pool2d``, PyTorch's MaxPool2DWithIndicesBackward0 node)
taking them (``gather_along``'s forward), whose VJP scatters g to the argmax positions.

Argument checks (PyTorch's order and texts) live in ``_conv_args.py``.

The array kernels (window views and columns, scratch buffers, shifted products, per-sample
columns, the argmax passes) are in ``_conv_kernels.py``; this file declares the ops, chooses
a plan (``_phase_plan``) and runs the stride phases (which call the ops' forwards). Long
because the three conv ops, their VJPs and the max-pooling op are one family sharing those.

Why this file is over 600 lines: the plans above and their VJPs are one op family whose
forwards and VJPs call each other (a conv's VJP is a transposed conv and back); the array
kernels are already apart, in ``ops/_conv_kernels.py``, and the plan thresholds stay here
because tests patch them on this module.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from chainrule._autocast_state import state as _ac
from chainrule.backends import backend_of
from chainrule.backends._threads import blas_threads, one_blas_thread
from chainrule.ops import _autocast
from chainrule.ops import _conv_inputgrad as _inputgrad
from chainrule.ops import _conv_kernels as _kernels
from chainrule.ops import _conv_rowphase as _rowphase
from chainrule.ops import _conv_wgrad as _wgrad
from chainrule.ops import _conv_windows as _windows
from chainrule.ops import shape as _shape
from chainrule.ops._conv_args import (
    check_bias,
    check_conv_dtypes,
    check_dilation,
    check_pool2d,
    check_tensor_args,
    conv_pair,
    pool_pair,
    shape_str,
)
from chainrule.ops._conv_kernels import (
    SAMPLE_COLS_MAX_K,
    _cols,
    _conv_sample_cols,
    _conv_shifted,
    _crop_cols,
    _out_size,
    _pad,
    _shift_plan,
    _weight_sample_cols,
    _weight_shifted,
    max_pool2d_indices,
)
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.nn import _gather_along

__all__ = ["conv1d", "conv2d", "conv_transpose2d", "max_pool2d"]


def _one_blas_thread(forward: Callable[..., Any]) -> Callable[..., Any]:
    """A conv op's forward run with OpenBLAS at one thread when chainrule's pool has several
    (``backends/_threads.one_blas_thread``): its kernels' products are per sample or per
    chunk of samples, too small for OpenBLAS's threads, which would then spin through the
    rest of the step on the core the pool's workers need."""

    @functools.wraps(forward)
    def run(*args: Any, **kwargs: Any) -> Any:
        with one_blas_thread():
            return forward(*args, **kwargs)

    return run


def _phase_plan(stride: Any, dilation: Any, groups: int, out_pixels: int | None = None) -> bool:
    """Strided convs (dilation 1, one group) run as stride-1 convs of the input's stride
    phases: no strided gathers or scatter-adds. Measured 1.1-1.8x faster for the adjoint;
    for the weight gradient only with ``out_pixels`` (Ho*Wo) >= 128 (below, the phase images
    are too small for the per-sample products). The forward uses per-sample windows instead."""
    return (
        stride != (1, 1)
        and dilation == (1, 1)
        and groups == 1
        and (out_pixels is None or out_pixels >= PHASE_MIN_PIXELS)
    )


PHASE_MIN_PIXELS = 128


def _phases(kh: int, kw: int, stride: Any) -> list[tuple[int, int]]:
    """Phases (a, b) that hold kernel taps: taps i = a + s*i' read rows s*h + a + s*i'."""
    return [(a, b) for a in range(min(stride[0], kh)) for b in range(min(stride[1], kw))]


def _transpose_phased(xp: Any, y: Any, w: Any, stride: Any, padding: Any, out_hw: Any) -> Any:
    """The adjoint of a strided conv as the sum over its stride phases (a, b) of stride-1
    convs of xpad[:, :, a::s, b::s] with w[:, :, a::s, b::s]: each phase of the padded
    canvas is the stride-1 adjoint of its phase conv applied to y; then the padding is
    cropped."""
    n = y.shape[0]
    c = w.shape[1]
    (pt, pb), (pl, pr) = padding
    h, wd = out_hw
    sh, sw = stride
    canvas = xp.zeros((n, c, h + pt + pb, wd + pl + pr), dtype=y.dtype)
    for a, b in _phases(w.shape[2], w.shape[3], stride):
        view = canvas[:, :, a::sh, b::sw]
        wph = xp.ascontiguousarray(w[:, :, a::sh, b::sw])
        view[...] = _transpose_stride1(xp, y, wph, ((0, 0), (0, 0)), (1, 1), 1, view.shape[2:])
    out = canvas[:, :, pt : pt + h, pl : pl + wd]
    return xp.ascontiguousarray(out) if pt or pb or pl or pr else out


def _weight_phased(xp: Any, x: Any, g: Any, kh: int, kw: int, stride: Any, padding: Any) -> Any:
    """gw[:, :, a::sh, b::sw] = the stride-1 weight gradient of phase (a, b)."""
    xpad = _pad(xp, x, padding)
    sh, sw = stride
    gw = xp.empty((g.shape[1], x.shape[1], kh, kw), dtype=g.dtype)
    for a, b in _phases(kh, kw, stride):
        xph = xp.ascontiguousarray(xpad[:, :, a::sh, b::sw])
        ki, kj = len(range(a, kh, sh)), len(range(b, kw, sw))
        kernel = _weight_shifted
        if _wgrad.plan(xph, g.shape[1], 1, 0, 0) is not None:  # O large enough: g transposed
            kernel = _wgrad.weight_shifted_t
        gw[:, :, a::sh, b::sw] = kernel(xp, xph, g, ki, kj, ((0, 0), (0, 0)), (1, 1))
    return gw


@defop(name="conv2d", saves=("x", "w"), promote="same", node_name="ConvolutionBackward0")
@_one_blas_thread
def _conv2d(
    xp: Any, x: Any, w: Any, b: Any, *, stride: Any, padding: Any, dilation: Any, groups: int
) -> Any:
    """out[n, o] = sum_{c, i, j} w[o, c, i, j] xpad[n, c, s*h + d*i, s*w + d*j] + b[o]."""
    n = x.shape[0]
    o, _, kh, kw = w.shape
    hp = x.shape[2] + padding[0][0] + padding[0][1]
    wp = x.shape[3] + padding[1][0] + padding[1][1]
    ho = _out_size(hp, kh, stride[0], dilation[0])
    wo = _out_size(wp, kw, stride[1], dilation[1])
    if n == 0:
        # An empty batch (valid input, as in torch); the kernels' reshapes need n > 0.
        return _empty_batch(xp, (0, o, ho, wo), x.dtype, b)
    if (kh, kw) == (1, 1) and _windows.pointwise_args(stride, padding, groups):
        return _windows.conv_pointwise(xp, x, w, b)
    if _windows.taps_plan(x, w, groups):
        return _windows.conv_taps(xp, x, w, ho, wo, stride, padding, dilation, b)
    if groups == 1 and stride != (1, 1):
        if _rowphase_forward(ho, wo, stride, groups):
            return _rowphase.conv_rowphase(xp, x, w, ho, wo, stride, padding, dilation, b)
        return _windows.conv_sample_windows(xp, x, w, ho, wo, stride, padding, dilation, b)
    if stride == (1, 1) and groups == 1:
        if _rowphase.stride1_plan(x, w, ho, wo, padding, dilation):
            return _rowphase.conv_rowphase(xp, x, w, ho, wo, stride, padding, dilation, b)
        if _kernels._rowfold_plan(x, kw) or _kernels._rowfold_few_channels(x, w):
            return _kernels._conv_rowfold(xp, x, w, ho, wo, padding, dilation, b)
        if _shift_plan(x, kh, kw, ho, stride, padding, dilation, groups, o):
            return _conv_shifted(xp, x, w, ho, wo, padding, dilation, b)
        return _conv_sample_cols(xp, x, w, ho, wo, padding, dilation, b)
    cols, wr = _cols(xp, x, kh, kw, ho, wo, stride, padding, dilation, groups)
    with blas_threads():  # one product per group over the whole batch: BLAS's own threads
        prod = xp.matmul(w.reshape(groups, o // groups, -1), cols)
    out = _crop_cols(xp, prod, n, ho, wo, wr)
    if b is not None:
        out += b.reshape(1, o, 1, 1)
    return out


def _rowphase_forward(ho: int, wo: int, stride: Any, groups: int) -> bool:
    """Whether a strided conv's forward runs on row-phase columns (``_conv_rowphase.py``):
    row stride > 1, one group, at least PHASE_MIN_PIXELS output pixels (below, the per-sample
    windows are as fast or faster: measured 0.49 / 0.50 ms at x (8, 64, 16, 16), 3x3, stride
    2). Both plans split their batch over the pool, so the choice does not depend on the
    thread count."""
    return _rowphase.rowphase_plan(stride, groups) and ho * wo >= PHASE_MIN_PIXELS


def _empty_batch(xp: Any, shape: tuple[int, ...], dtype: Any, b: Any) -> Any:
    out = xp.zeros(shape, dtype=dtype)
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def _conv_params(ctx: Any) -> dict[str, Any]:
    return {
        "stride": ctx.stride,
        "padding": ctx.padding,
        "dilation": ctx.dilation,
        "groups": ctx.groups,
    }


@_conv2d.vjp
def _conv2d_vjp(ctx: Any, g: Any) -> Any:
    nx, nw, nb = ctx.needs_input_grad
    p = _conv_params(ctx)
    x, w = ctx.x, ctx.w
    gx = ns.conv_transpose2d(g, w, None, out_hw=tuple(ctx.input_shapes[0][2:]), **p) if nx else None
    gw = ns.conv2d_weight(x, g, kernel=tuple(ctx.input_shapes[1][2:]), **p) if nw else None
    gb = ns.sum(g, dim=(0, 2, 3), keepdim=False) if nb else None
    return gx, gw, gb


@defop(name="conv_transpose2d", saves=("y", "w"), promote="same", node_name="ConvolutionBackward0")
@_one_blas_thread
def _conv_transpose2d(
    xp: Any,
    y: Any,
    w: Any,
    b: Any,
    *,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    out_hw: Any,
) -> Any:
    """The adjoint of conv2d in its input: out = conv2d_x^T(y), of spatial size ``out_hw``."""
    n, o, ho, wo = y.shape
    _, cg, kh, kw = w.shape
    c = cg * groups
    if n == 0:
        return _empty_batch(xp, (0, c) + tuple(out_hw), y.dtype, b)
    if stride == (1, 1):
        out = _transpose_stride1(xp, y, w, padding, dilation, groups, out_hw)
        if b is not None:
            out += b.reshape(1, c, 1, 1)
        return out
    if _inputgrad.strided_plan(y, dilation, groups):
        out = _inputgrad.transpose_strided(xp, y, w, stride, padding, out_hw)
        if b is not None:
            out += b.reshape(1, c, 1, 1)
        return out
    if _rowphase.rowphase_plan(stride, groups) and (
        ho * wo < PHASE_MIN_PIXELS or dilation != (1, 1)
    ):
        # Small outputs (the phases' products too short) and dilated strided convs (else
        # kh*kw strided scatter-adds): row-phase columns, kw scatter-adds.
        out = _rowphase.transpose_rowphase(xp, y, w, stride, padding, dilation, out_hw)
        if b is not None:
            out += b.reshape(1, c, 1, 1)
        return out
    if _phase_plan(stride, dilation, groups):
        out = _transpose_phased(xp, y, w, stride, padding, out_hw)
        if b is not None:
            out += b.reshape(1, c, 1, 1)
        return out
    wg = w.reshape(groups, o // groups, -1)
    cols = xp.matmul(xp.swapaxes(wg, 1, 2), y.reshape(n, groups, o // groups, ho * wo))
    cols = cols.reshape(n, c, kh, kw, ho, wo)
    (pt, pb), (pl, pr) = padding
    h, wd = out_hw
    canvas = xp.zeros((n, c, h + pt + pb, wd + pl + pr), dtype=cols.dtype)
    sh, sw = stride
    dh, dw = dilation
    for i in range(kh):
        for j in range(kw):
            canvas[
                :,
                :,
                i * dh : i * dh + sh * (ho - 1) + 1 : sh,
                j * dw : j * dw + sw * (wo - 1) + 1 : sw,
            ] += cols[:, :, i, j]
    out = canvas[:, :, pt : pt + h, pl : pl + wd]
    if pt or pb or pl or pr:
        out = xp.ascontiguousarray(out)
    if b is not None:
        out += b.reshape(1, c, 1, 1)
    return out


def _transpose_stride1(
    xp: Any, y: Any, w: Any, padding: Any, dilation: Any, groups: int, out_hw: Any
) -> Any:
    """Stride 1: the adjoint is a correlation of y, zero-padded by d (k - 1) - pad, with the
    kernel flipped and its channel axes swapped (per group); one im2col + matmul."""
    n, o, ho, wo = y.shape
    _, cg, kh, kw = w.shape
    og = o // groups
    wt = w[:, :, ::-1, ::-1].reshape(groups, og, cg, kh, kw).swapaxes(1, 2)
    wt = wt.reshape(groups * cg, og, kh, kw)
    pads = []
    for ax, (k, d, (p0, _), size, m) in enumerate(
        zip((kh, kw), dilation, padding, out_hw, (ho, wo))
    ):
        top = d * (k - 1) - p0
        bottom = size + p0 - m
        pads.append((top, bottom))
    # Negative pads are crops.
    sl = (slice(None), slice(None)) + tuple(
        slice(max(-t, 0), m - max(-b_, 0)) for (t, b_), m in zip(pads, (ho, wo))
    )
    y = y[sl]
    pads = tuple((max(t, 0), max(b_, 0)) for t, b_ in pads)
    if _inputgrad.plan(y, w, dilation, groups):
        return _inputgrad.transpose_shifted(xp, y, w, pads, out_hw)
    return _conv2d.forward(
        xp,
        xp.ascontiguousarray(y),
        xp.ascontiguousarray(wt),
        None,
        stride=(1, 1),
        padding=pads,
        dilation=dilation,
        groups=groups,
    )


@_conv_transpose2d.vjp
def _conv_transpose2d_vjp(ctx: Any, g: Any) -> Any:
    ny, nw, nb = ctx.needs_input_grad
    p = _conv_params(ctx)
    gy = _crop(ns.conv2d(g, ctx.w, None, **p), ctx.input_shapes[0]) if ny else None
    gw = ns.conv2d_weight(g, ctx.y, kernel=tuple(ctx.input_shapes[1][2:]), **p) if nw else None
    gb = ns.sum(g, dim=(0, 2, 3), keepdim=False) if nb else None
    return gy, gw, gb


@defop(
    name="conv2d_weight", saves=("x", "g"), promote="same", node_name="ConvolutionBackwardBackward0"
)
@_one_blas_thread
def _conv2d_weight(
    xp: Any, x: Any, g: Any, *, stride: Any, padding: Any, dilation: Any, groups: int, kernel: Any
) -> Any:
    """The adjoint of conv2d in its weight: gw[o, c, i, j] = sum_{n,h,w} g[n, o, h, w]
    xpad[n, c, s*h + d*i, s*w + d*j]."""
    n, o, ho, wo = g.shape
    kh, kw = kernel
    if n == 0:
        return xp.zeros((o, x.shape[1] // groups, kh, kw), dtype=x.dtype)
    if (kh, kw) == (1, 1) and _windows.pointwise_args(stride, padding, groups):
        return _windows.weight_pointwise(xp, x, g)
    if stride == (1, 1) and groups == 1:
        if x.shape[1] * kh * kw <= SAMPLE_COLS_MAX_K:
            return _weight_sample_cols(xp, x, g, kh, kw, padding, dilation)
        wp = x.shape[3] + padding[1][0] + padding[1][1]
        tplan = _wgrad.plan(x, o, kw, ho, wp)
        if tplan == "rowfold":
            return _wgrad.weight_rowfold_t(xp, x, g, kh, kw, padding, dilation)
        if tplan == "shifted":
            return _wgrad.weight_shifted_t(xp, x, g, kh, kw, padding, dilation)
        if _kernels._rowfold_plan(x, kw) and ho * wp >= _kernels.ROWFOLD_WEIGHT_MIN_COLS:
            return _kernels._weight_rowfold(xp, x, g, kh, kw, padding, dilation)
        return _weight_shifted(xp, x, g, kh, kw, padding, dilation)
    flops = 2.0 * n * o * x.shape[1] * kh * kw * ho * wo
    if _rowphase.rowphase_plan(stride, groups) and o >= _wgrad.WGRAD_T_MIN_O:
        return _rowphase.weight_rowphase(xp, x, g, kh, kw, stride, padding, dilation)
    if _phase_plan(stride, dilation, groups, ho * wo):
        return _weight_phased(xp, x, g, kh, kw, stride, padding)
    if groups == 1 and _kernels.splits(xp, n, flops):
        return _windows.weight_sample_windows(xp, x, g, kh, kw, stride, padding, dilation)
    cols, wr = _cols(xp, x, kh, kw, ho, wo, stride, padding, dilation, groups)
    # g as (O, N, Ho, Wr), zeros against the junk columns of cols.
    gt = xp.zeros((o, n, ho, wr), dtype=g.dtype)
    gt[..., :wo] = xp.swapaxes(g, 0, 1)
    with blas_threads():
        gw = xp.matmul(gt.reshape(groups, o // groups, -1), xp.swapaxes(cols, -1, -2))
    return gw.reshape(o, x.shape[1] // groups, kh, kw)


def _crop(out: Any, shape: Any) -> Any:
    """With output_padding >= stride (possible when dilation > 1), conv2d of the transposed
    output has extra trailing rows/cols that the adjoint drops."""
    if tuple(out.shape) == tuple(shape):
        return out
    return ns.index(out, index=(slice(None), slice(None), slice(0, shape[2]), slice(0, shape[3])))


@_conv2d_weight.vjp
def _conv2d_weight_vjp(ctx: Any, h: Any) -> Any:
    nx, ng = ctx.needs_input_grad
    p = _conv_params(ctx)
    gx = (
        ns.conv_transpose2d(ctx.g, h, None, out_hw=tuple(ctx.input_shapes[0][2:]), **p)
        if nx
        else None
    )
    gg = _crop(ns.conv2d(ctx.x, h, None, **p), ctx.input_shapes[1]) if ng else None
    return gx, gg


# conv1d: one op (one ConvolutionBackward0, as PyTorch) over conv2d's forward and VJP.


@defop(name="conv1d", saves=("x", "w"), promote="same", node_name="ConvolutionBackward0")
def _conv1d(
    xp: Any, x: Any, w: Any, b: Any, *, stride: Any, padding: Any, dilation: Any, groups: int
) -> Any:
    """out[n, o, l] = b[o] + sum_{c, i} w[o, c, i] xpad[n, c, s l + d i]: conv2d's forward on
    the height-1 images x[:, :, None], w[:, :, None] (the 2-d parameters as ``conv2d``'s op
    takes them, height 1)."""
    out = _conv2d.forward(
        xp,
        x[:, :, None],
        w[:, :, None],
        b,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
    )
    return out[:, :, 0]


@_conv1d.vjp
def _conv1d_vjp(ctx: Any, g: Any) -> Any:
    nx, nw, nb = ctx.needs_input_grad
    p = _conv_params(ctx)
    g4 = ns.unsqueeze(g, dim=2)
    gx = gw = gb = None
    if nx:
        w4 = ns.unsqueeze(ctx.w, dim=2)
        hw = (1, ctx.input_shapes[0][2])
        gx = ns.squeeze(ns.conv_transpose2d(g4, w4, None, out_hw=hw, **p), dim=2)
    if nw:
        x4 = ns.unsqueeze(ctx.x, dim=2)
        k = (1, ctx.input_shapes[1][2])
        gw = ns.squeeze(ns.conv2d_weight(x4, g4, kernel=k, **p), dim=2)
    if nb:
        gb = ns.sum(g, dim=(0, 2), keepdim=False)
    return gx, gw, gb


# Public wrappers ------------------------------------------------------------------------------


def _pair(v: Any) -> tuple[int, int]:
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return int(v[0]), int(v[0])
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _check_conv(input: Any, weight: Any, groups: int, transposed: bool, nd: int) -> None:
    if weight.ndim != nd + 2:
        raise RuntimeError(
            "weight should have at least three dimensions"
            if weight.ndim < 3
            else f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to conv{nd}d, "
            f"but got input of size: {list(input.shape)}"
        )
    if input.ndim != nd + 2:
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
            f"conv{nd}d, but got input of size: {list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    c = input.shape[1]
    if transposed:
        if c != weight.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {shape_str(weight)}, expected input"
                f"{shape_str(input)} to have {weight.shape[0]} channels, but got {c} channels "
                "instead"
            )
    elif c != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {shape_str(weight)}, expected input"
            f"{shape_str(input)} to have {weight.shape[1] * groups} channels, but got {c} "
            "channels instead"
        )
    if not transposed and weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} "
            f"at dimension 0, but got weight of size {shape_str(weight)} instead"
        )


def _conv_padding(
    padding: Any, kernel: tuple[int, ...], dilation: tuple[int, ...], stride: tuple[int, ...]
) -> tuple[tuple[int, int], tuple[int, int]]:
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0), (0, 0)
        if padding == "same":
            if stride != (1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            res = []
            if any(d * (k - 1) % 2 for k, d in zip(kernel, dilation)):
                warnings.warn(
                    "Using padding='same' with even kernel lengths and odd dilation "
                    "may require a zero-padded copy of the input be created",
                    UserWarning,
                    stacklevel=4,
                )
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                res.append((total // 2, total - total // 2))
            return res[0], res[1]
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    ph, pw = _pair(padding)
    if ph < 0 or pw < 0:
        raise RuntimeError("negative padding is not supported")
    return (ph, ph), (pw, pw)


def _batched(input: Any, nd: int) -> tuple[Any, bool]:
    if input.ndim == nd + 1:
        return _shape.unsqueeze(input, 0), True
    return input, False


def conv2d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Any:
    """2-d cross-correlation, as ``torch.nn.functional.conv2d`` (batched or unbatched input;
    ``padding`` int, pair, 'same' or 'valid')."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, weight, bias = _autocast.lower(input, weight, bias)
    check_tensor_args("conv2d", input, weight, bias)
    x, unbatched = _batched(input, 2)
    check_conv_dtypes(input, weight, bias, False)
    _check_conv(x, weight, groups, False, 2)
    check_bias(weight, bias, groups, False)
    st, dl = conv_pair("conv2d", "stride", stride), conv_pair("conv2d", "dilation", dilation)
    if not isinstance(padding, str):
        padding = conv_pair("conv2d", "padding", padding)
    check_dilation(dl)
    if min(st) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    pad = _conv_padding(padding, tuple(weight.shape[2:]), dl, st)
    _check_size(x, weight, pad, dl, 2)
    out = apply_op(
        _conv2d,
        (x, weight, bias),
        {"stride": st, "padding": pad, "dilation": dl, "groups": int(groups)},
    )
    return _shape.squeeze(out, 0) if unbatched else out


def _check_size(x: Any, weight: Any, pad: Any, dl: Any, nd: int) -> None:
    for i in range(nd):
        size = x.shape[2 + i] + pad[i][0] + pad[i][1]
        k = dl[i] * (weight.shape[2 + i] - 1) + 1
        if size < k:
            sizes = tuple(x.shape[2 + j] + pad[j][0] + pad[j][1] for j in range(nd))
            ks = tuple(weight.shape[2:])
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, sizes))}). "
                f"Kernel size: ({' x '.join(map(str, ks))}). Kernel size can't be greater than "
                "actual input size"
            )


class _Shape:
    """A shape for the argument checks: conv1d checks the height-1 images as conv2d's."""

    __slots__ = ("shape", "ndim")

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape, self.ndim = shape, len(shape)


def conv1d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Any:
    """1-d cross-correlation, computed as conv2d on a height-1 image."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, weight, bias = _autocast.lower(input, weight, bias)
    check_tensor_args("conv1d", input, weight, bias)
    x, unbatched = _batched(input, 1)
    check_conv_dtypes(input, weight, bias, False)
    if weight.ndim != 3 or x.ndim != 3:
        raise RuntimeError(
            f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got "
            f"input of size: {list(input.shape)}"
        )
    s = conv_pair("conv1d", "stride", stride, 1)[0]
    d = conv_pair("conv1d", "dilation", dilation, 1)[0]
    check_dilation((d,))
    if isinstance(padding, str):
        pad = _conv_padding(padding, (1, weight.shape[2]), (1, d), (1, s))
    else:
        p = conv_pair("conv1d", "padding", padding, 1)[0]
        pad = ((0, 0), (p, p))
    x4, w4 = _Shape((*x.shape[:2], 1, x.shape[2])), _Shape((*weight.shape[:2], 1, weight.shape[2]))
    _check_conv(x4, w4, groups, False, 2)
    check_bias(weight, bias, groups, False)
    _check_size(x4, w4, pad, (1, d), 2)
    params = {"stride": (1, s), "padding": pad, "dilation": (1, d), "groups": int(groups)}
    out = apply_op(_conv1d, (x, weight, bias), params)  # one ConvolutionBackward0, as torch
    return _shape.squeeze(out, 0) if unbatched else out


def conv_transpose2d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Any:
    """2-d transposed convolution (the gradient of conv2d in its input), as PyTorch:
    H_out = (H_in - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, weight, bias = _autocast.lower(input, weight, bias)
    check_tensor_args("conv_transpose2d", input, weight, bias)
    x, unbatched = _batched(input, 2)
    check_conv_dtypes(input, weight, bias, True)
    _check_conv(x, weight, groups, True, 2)
    check_bias(weight, bias, groups, True)
    st, dl, pd, op = (
        conv_pair("conv_transpose2d", n, v)
        for n, v in (
            ("stride", stride),
            ("dilation", dilation),
            ("padding", padding),
            ("output_padding", output_padding),
        )
    )
    check_dilation(dl)
    for i in range(2):
        if op[i] >= st[i] and op[i] >= dl[i]:
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, "
                f"but got output_padding_height: {op[0]} output_padding_width: "
                f"{op[1]} stride_height: {st[0]} stride_width: {st[1]} "
                f"dilation_height: {dl[0]} dilation_width: {dl[1]}"
            )
    kh, kw = weight.shape[2:]
    hw = tuple(
        (x.shape[2 + i] - 1) * st[i] - 2 * pd[i] + dl[i] * ((kh, kw)[i] - 1) + op[i] + 1
        for i in range(2)
    )
    out = apply_op(
        _conv_transpose2d,
        (x, weight, bias),
        {
            "stride": st,
            "padding": ((pd[0], pd[0]), (pd[1], pd[1])),
            "dilation": dl,
            "groups": int(groups),
            "out_hw": hw,
        },
    )
    return _shape.squeeze(out, 0) if unbatched else out


# Max pooling ------------------------------------------------------------------------------


@defop(name="max_pool2d", promote=None, node_name="MaxPool2DWithIndicesBackward0")
def _max_pool2d(xp: Any, x: Any, *, index: Any, out_hw: tuple[int, int]) -> Any:
    """out[..., c, t] = x[..., c].flat[index[..., c, t]] (``index``: the flat argmax of each
    window, (*, C, Ho*Wo)), shaped (*, C, Ho, Wo) (``out_hw``) from ``x`` (*, C, H, W): one
    op, as PyTorch's node. VJP: g scattered (``scatter_along``, repeats add) to the argmax
    positions."""
    lead = x.shape[:-2]
    flat = x.reshape(*lead, x.shape[-2] * x.shape[-1])
    out = _gather_along.forward(xp, flat, dim=len(lead), index=index)
    return out.reshape(*lead, *out_hw)


@_max_pool2d.vjp
def _max_pool2d_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    lead, (h, w) = tuple(shape[:-2]), shape[-2:]
    g3 = ns.reshape(g, shape=(*lead, ctx.index.shape[-1]))
    gx = ns.scatter_along(g3, dim=len(lead), index=ctx.index, size=h * w)
    return (ns.reshape(gx, shape=tuple(shape)),)


def max_pool2d_with_indices(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> tuple[Any, Any]:
    """Max over windows and the flat argmax indices (as ``F.max_pool2d(return_indices=True)``)."""
    from chainrule._tensor import _new_tensor

    unbatched = input.ndim == 3
    x = input._data[None] if unbatched else input._data  # the argmax runs on arrays
    if x.ndim != 4:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    k = pool_pair("max_pool2d", "kernel_size", kernel_size, 2)
    s = (
        k
        if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
        else pool_pair("max_pool2d", "stride", stride, 3)
    )
    p = pool_pair("max_pool2d", "padding", padding, 4)
    d = pool_pair("max_pool2d", "dilation", dilation, 5)
    check_pool2d(tuple(x.shape), k, s, p, d, ceil_mode)
    idx = max_pool2d_indices(backend_of(x).xp, x, k, s, p, d, ceil_mode)
    ho, wo = idx.shape[2:]
    if unbatched:
        idx = idx[0]
    index = idx.reshape(*idx.shape[:-2], ho * wo)
    out = apply_op(_max_pool2d, (input,), {"index": index, "out_hw": (ho, wo)})
    return out, _new_tensor(idx)


def max_pool2d(
    input: Any,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Any:
    """2-d max pooling (``torch.max_pool2d``). VJP: g scattered to each window's argmax."""
    return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]
