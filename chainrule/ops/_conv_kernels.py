"""Array kernels of the convolutions and max pooling (chainrule/ops/conv.py declares the ops,
chooses among these plans and runs the stride phases; its docstring describes the plans):
window views, im2col columns, the per-thread scratch buffers, the stride-1 shifted products,
per-sample columns, and the argmax passes of max pooling. Arrays in, arrays out."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule.backends import backend_of
from chainrule.ops._conv_args import (
    pool_out_size,
)

__all__: list[str] = []


def _out_size(n: int, k: int, s: int, d: int) -> int:
    return (n - d * (k - 1) - 1) // s + 1


def _pad(xp: Any, x: Any, padding: Any) -> Any:
    (pt, pb), (pl, pr) = padding
    if pt or pb or pl or pr:
        return _zero_pad(xp, x, pt, pb, pl, pr)
    return x


def _zero_pad(xp: Any, x: Any, pt: int, pb: int, pl: int, pr: int, slot: str | None = None) -> Any:
    """Zero padding of the last two axes (a zeros canvas and one slice assignment: xp.pad's
    generic path costs several times more on these small images); in scratch ``slot`` if
    given (for a canvas that does not outlive the op call)."""
    n, c, h, w = x.shape
    shape = (n, c, h + pt + pb, w + pl + pr)
    if slot is None:
        out = xp.zeros(shape, dtype=x.dtype)
    else:
        out = _scratch_array(xp, shape, x.dtype, slot)
        out.fill(0)
    out[:, :, pt : pt + h, pl : pl + w] = x
    return out


def _windows(
    xp: Any, xpad: Any, kh: int, kw: int, ho: int, wo: int, stride: Any, dilation: Any
) -> Any:
    """Read-only view (N, C, kh, kw, Ho, Wo) of the receptive fields of a padded input."""
    sn, sc, sh, sw = xpad.strides
    n, c = xpad.shape[:2]
    return backend_of(xpad).as_strided(
        xpad,
        (n, c, kh, kw, ho, wo),
        (sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]),
    )


def _cols(
    xp: Any,
    x: Any,
    kh: int,
    kw: int,
    ho: int,
    wo: int,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> tuple[Any, int]:
    """im2col, batch-major columns: (G, C/G*kh*kw, N*Ho*Wr), contiguous, with Wr >= Wo: output
    (n, h, w) reads column (n*Ho + h)*Wr + w; columns w >= Wo of each row are junk, to be
    cropped (or, for the weight gradient, met by zeros in g). Returns it and Wr. With the batch
    inside the columns, conv2d and its weight gradient are each one large GEMM per group.

    Stride 1: Wr is the padded width Wp, and every kernel offset (i, j) is then one contiguous
    run xpad_flat[n, c, d*(i*Wp + j) : ... + Ho*Wp], so the buffer is copied in long runs (a few
    times faster than gathering Wo-wide rows) at the price of (Wp - Wo) junk columns."""
    n, c = x.shape[:2]
    cg = c // groups
    k = cg * kh * kw
    if stride == (1, 1) and kw > 1:
        (pt, pb), (pl, pr) = padding
        wp = x.shape[3] + pl + pr
        # The last run ends d*(kw-1) past the padded image: extra zero rows at the bottom.
        extra = -(-dilation[1] * (kw - 1) // wp)
        xpad = _zero_pad(xp, x, pt, pb + extra, pl, pr)
        sn, sc = xpad.strides[:2]
        it = xpad.itemsize
        win = backend_of(xpad).as_strided(
            xpad,
            (groups, cg, kh, kw, n, ho * wp),
            (sc * cg, sc, it * wp * dilation[0], it * dilation[1], sn, it),
        )
        return _fill(xp, win, (groups, k, n * ho * wp)), wp
    win = _windows(xp, _pad(xp, x, padding), kh, kw, ho, wo, stride, dilation)
    return _fill(xp, xp.moveaxis(win, 0, 3), (groups, k, n * ho * wo)), wo


# im2col buffers and the padded canvases of the stride-1 plans live only inside one op call,
# so each thread reuses a scratch allocation for each (slots "cols" and "pad", up to this
# size): a fresh buffer of a few MB costs more in page faults (about 0.5 ms per MB here) than
# the copy into it (measured, default glibc malloc: the CNN step 9.2 -> 7.2 ms with "pad",
# from 1046 page faults per step to none). Scratch for the partial products, the phase copies
# or the pooling passes measured slower (cache-cold buffers): those stay fresh allocations.
# Arrays in a slot never leave the op call that filled them.
_SCRATCH_BYTES = 1 << 24
_scratch = threading.local()


def _scratch_array(xp: Any, shape: tuple[int, ...], dtype: Any, slot: str) -> Any:
    """An uninitialized array in the thread's scratch buffer ``slot`` (a fresh one when it
    would exceed _SCRATCH_BYTES or xp is not NumPy)."""
    dtype = np.dtype(dtype)
    size = 1
    for d in shape:
        size *= d
    nbytes = size * dtype.itemsize
    if nbytes > _SCRATCH_BYTES or xp is not np:
        return xp.empty(shape, dtype=dtype)
    bufs = getattr(_scratch, "bufs", None)
    if bufs is None:
        bufs = _scratch.bufs = {}
    buf = bufs.get(slot)
    if buf is None or buf.nbytes < nbytes:
        buf = bufs[slot] = np.empty(max(nbytes, 1 << 20), dtype=np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)


def _fill(xp: Any, win: Any, shape: tuple[int, ...]) -> Any:
    """A contiguous copy of the view ``win`` as ``shape``, in the scratch slot "cols"."""
    if win.size * win.itemsize > _SCRATCH_BYTES or xp is not np:
        return win.reshape(shape)
    out = _scratch_array(xp, win.shape, win.dtype, "cols")
    np.copyto(out, win)
    return out.reshape(shape)


def _shift_plan(
    x: Any, kh: int, kw: int, ho: int, stride: Any, padding: Any, dilation: Any, groups: int, o: int
) -> bool:
    """Whether a stride-1 conv is cheaper as kh*kw shifted products (no im2col buffer): true
    when the input has at least as many channels as about half the output (measured: 2-7x
    faster for a few output channels, 1.3x for O = C, slower for O = 4C or C < 4)."""
    c = x.shape[1]
    return stride == (1, 1) and groups == 1 and c >= 4 and o <= 2 * c


def _shifted_input(xp: Any, x: Any, kw: int, padding: Any, dilation: Any) -> tuple[Any, int]:
    """The padded input flattened to (N, C, rows*Wp), with enough zero rows at the bottom that
    every kernel offset (i, j) is the run [d0*i*Wp + d1*j, ... + Ho*Wp); and Wp. In the scratch
    slot "pad": only for use inside the op call."""
    (pt, pb), (pl, pr) = padding
    wp = x.shape[3] + pl + pr
    extra = -(-dilation[1] * (kw - 1) // wp)
    xpad = _zero_pad(xp, x, pt, pb + extra, pl, pr, slot="pad")
    return xpad.reshape(x.shape[0], x.shape[1], -1), wp


def _conv_shifted(xp: Any, x: Any, w: Any, ho: int, wo: int, padding: Any, dilation: Any) -> Any:
    """Stride-1 conv as sum_{i,j} w[:, :, i, j] @ xpad_flat[n, :, run(i, j)]: each product
    reads the padded input in place (BLAS takes the row stride), into (N, O, Ho, Wp)."""
    o, _, kh, kw = w.shape
    xf, wp = _shifted_input(xp, x, kw, padding, dilation)
    length = ho * wp
    out = tmp = None
    for i in range(kh):
        for j in range(kw):
            off = dilation[0] * i * wp + dilation[1] * j
            run = xf[:, :, off : off + length]
            if out is None:
                out = xp.matmul(w[:, :, i, j], run)
                continue
            if tmp is None:
                tmp = xp.empty_like(out)
            xp.matmul(w[:, :, i, j], run, out=tmp)  # one scratch product, reused
            out += tmp
    return xp.ascontiguousarray(out.reshape(x.shape[0], o, ho, wp)[..., :wo])


def _sample_cols(
    xp: Any, x: Any, kh: int, kw: int, ho: int, padding: Any, dilation: Any
) -> tuple[Any, int]:
    """Stride-1 im2col with per-sample columns: (N, C*kh*kw, Ho*Wp) in the thread's scratch,
    row (c, i, j) of sample n being the run (i, j) of ``_shifted_input`` (Wp - Wo junk columns
    per output row); and Wp. One strided copy; the GEMMs then write NCHW order directly."""
    n, c = x.shape[:2]
    xf, wp = _shifted_input(xp, x, kw, padding, dilation)
    length = ho * wp
    sn, sc, it = xf.strides[0], xf.strides[1], xf.itemsize
    win = backend_of(xf).as_strided(
        xf,
        (n, c, kh, kw, length),
        (sn, sc, it * wp * dilation[0], it * dilation[1], it),
    )
    return _fill(xp, win, (n, c * kh * kw, length)), wp


def _conv_sample_cols(
    xp: Any, x: Any, w: Any, ho: int, wo: int, padding: Any, dilation: Any
) -> Any:
    """Stride-1 conv (one group) as w (O, C*kh*kw) @ per-sample columns: one GEMM per
    sample into (N, O, Ho, Wp), then the junk columns cropped."""
    o, _, kh, kw = w.shape
    cols, wp = _sample_cols(xp, x, kh, kw, ho, padding, dilation)
    out = xp.matmul(w.reshape(o, -1), cols).reshape(x.shape[0], o, ho, wp)
    return out if wp == wo else xp.ascontiguousarray(out[..., :wo])


def _weight_sample_cols(
    xp: Any, x: Any, g: Any, kh: int, kw: int, padding: Any, dilation: Any
) -> Any:
    """Weight gradient of a stride-1 conv (one group) as sum_n gpad[n] @ cols[n]^T, with g
    zero-padded to the Wp-wide rows of the per-sample columns."""
    n, o, ho, wo = g.shape
    cols, wp = _sample_cols(xp, x, kh, kw, ho, padding, dilation)
    gp = g
    if wp != wo:
        gp = xp.zeros((n, o, ho, wp), dtype=g.dtype)
        gp[..., :wo] = g
    gw = xp.matmul(gp.reshape(n, o, ho * wp), xp.swapaxes(cols, 1, 2)).sum(axis=0)
    return gw.reshape(o, x.shape[1], kh, kw)


# Per-sample columns beat the shifted products for the weight gradient up to this many rows
# C*kh*kw (measured: 1.6x at C = 1, 3x3; even at 75; 2x slower at 147).
SAMPLE_COLS_MAX_K = 48


def _weight_shifted(xp: Any, x: Any, g: Any, kh: int, kw: int, padding: Any, dilation: Any) -> Any:
    """Weight gradient of a stride-1 conv: gw[:, :, i, j] = sum_n gpad[n] @ run(i, j)^T, with g
    zero-padded to the Wp-wide rows of the shifted input."""
    n, o, ho, wo = g.shape
    xf, wp = _shifted_input(xp, x, kw, padding, dilation)
    length = ho * wp
    gp = xp.zeros((n, o, ho, wp), dtype=g.dtype)
    gp[..., :wo] = g
    gp = gp.reshape(n, o, length)
    gw = xp.empty((o, x.shape[1], kh, kw), dtype=g.dtype)
    for i in range(kh):
        for j in range(kw):
            off = dilation[0] * i * wp + dilation[1] * j
            gw[:, :, i, j] = xp.matmul(gp, xp.swapaxes(xf[:, :, off : off + length], 1, 2)).sum(
                axis=0
            )
    return gw


def _crop_cols(xp: Any, out: Any, n: int, ho: int, wo: int, wr: int) -> Any:
    """(G, O/G, N*Ho*Wr) product of an im2col buffer -> (N, O, Ho, Wo), contiguous."""
    out = out.reshape(out.shape[0] * out.shape[1], n, ho, wr)[..., :wo]
    return xp.ascontiguousarray(xp.swapaxes(out, 0, 1))


def max_pool2d_indices(
    xp: Any,
    xa: Any,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    ceil_mode: bool,
) -> Any:
    """Flat (h * W + w) argmax index of every window of a (N, C, H, W) array."""
    n, c, h, w = xa.shape
    kh, kw = kernel
    ho = pool_out_size(h, kh, stride[0], padding[0], dilation[0], ceil_mode)
    wo = pool_out_size(w, kw, stride[1], padding[1], dilation[1], ceil_mode)
    need_h = (ho - 1) * stride[0] + dilation[0] * (kh - 1) + 1
    need_w = (wo - 1) * stride[1] + dilation[1] * (kw - 1) + 1
    ph = (padding[0], max(0, need_h - h - padding[0]))
    pw = (padding[1], max(0, need_w - w - padding[1]))
    if (ph, pw) == ((0, 0), (0, 0)) and stride == kernel and dilation == (1, 1) and kh * kw < 256:
        arg = _tiled_argmax(xp, xa, kh, kw, ho, wo)
        if arg is not None:
            offsets = (xp.arange(kh).reshape(kh, 1) * w + xp.arange(kw)).reshape(-1)
            idx = xp.take(offsets, arg)
            idx += (xp.arange(ho).reshape(ho, 1) * kh) * w + xp.arange(wo) * kw
            return idx
    if ph != (0, 0) or pw != (0, 0):
        fill = -xp.inf if _kinds.is_floating(xa) else xp.iinfo(xa.dtype).min
        xa = xp.pad(xa, ((0, 0), (0, 0), ph, pw), constant_values=fill)
    # One vectorized pass per kernel offset k (kh*kw passes, never per pixel). A strict '>'
    # keeps the first maximum and a NaN always takes over, as in PyTorch. Since k increases,
    # "arg = k where updated" is max(arg, upd * k), cheap in a small integer dtype.
    sh, sw = stride
    nan_aware = _kinds.is_floating(xa) and bool(xp.isnan(xa).any())
    kt = xp.uint8 if kh * kw < 256 else xp.int32
    best = None
    arg = xp.zeros((n, c, ho, wo), dtype=kt)
    offsets = [0] * (kh * kw)
    for i in range(kh):
        r0 = i * dilation[0]
        for j in range(kw):
            c0 = j * dilation[1]
            k = i * kw + j
            offsets[k] = r0 * w + c0
            v = xa[:, :, r0 : r0 + sh * (ho - 1) + 1 : sh, c0 : c0 + sw * (wo - 1) + 1 : sw]
            if best is None:
                best = v.copy()
                continue
            upd = v > best
            if nan_aware:
                upd |= xp.isnan(v)
                best = xp.where(upd, v, best)
            else:
                xp.maximum(best, v, out=best)
            xp.maximum(arg, upd.view(xp.uint8).astype(kt, copy=False) * kt(k), out=arg)
    base = (xp.arange(ho).reshape(ho, 1) * sh - padding[0]) * w + xp.arange(wo) * sw - padding[1]
    return xp.asarray(offsets, dtype=xp.int64)[arg] + base


def _tiled_argmax(xp: Any, xa: Any, kh: int, kw: int, ho: int, wo: int) -> Any | None:
    """First argmax (tap i*kw + j, uint8) of each window when the windows tile the image
    (kernel == stride, no padding or dilation); None if a window holds a NaN (then the general
    pass, where the last NaN wins as in PyTorch, decides). The max is taken over whole rows of
    taps first (contiguous runs); then tap k is the first whose value equals the max (the
    last one if no earlier one does). With the index arithmetic, measured 1.2x faster than
    the general pass for MaxPool2d(2) (strided float passes dominate both)."""
    n, c = xa.shape[:2]
    rows = xa[:, :, : ho * kh, : wo * kw].reshape(n, c, ho, kh, wo * kw)
    m = rows[:, :, :, 0].copy() if kh == 1 else xp.maximum(rows[:, :, :, 0], rows[:, :, :, 1])
    for i in range(2, kh):
        xp.maximum(m, rows[:, :, :, i], out=m)
    m = m.reshape(n, c, ho, wo, kw)
    best = m[..., 0].copy() if kw == 1 else xp.maximum(m[..., 0], m[..., 1])
    for j in range(2, kw):
        xp.maximum(best, m[..., j], out=best)
    if _kinds.is_floating(best) and xp.isnan(best).any():
        return None
    taps = rows.reshape(n, c, ho, kh, wo, kw)
    last = kh * kw - 1
    arg = xp.full(best.shape, last, dtype=xp.uint8)
    for k in range(last - 1, -1, -1):
        eq = xp.equal(taps[:, :, :, k // kw, :, k % kw], best).view(xp.uint8)
        arg -= eq * (arg - xp.uint8(k))  # arg = k where tap k equals the max
    return arg
