"""Row-phase columns of strided convolutions (``ops/conv.py`` chooses the plan): the forward,
the input gradient and the weight gradient of a conv of one group with a row stride sh > 1.

Per sample the kw column taps of the padded input, each read at the column stride, are copied
as ``cols[(c, j), p, r, v] = xpad[c, sh*r + p, sw*v + dw*j]`` (C*kw rows, sh row phases of R
rows of Wo columns; the thread's scratch slot "cols"). Kernel row i reads input rows
sh*h + dh*i = sh*(h + r0) + p with p = dh*i mod sh, r0 = dh*i div sh: the block
``cols[:, p, r0 : r0 + Ho]`` is a (C*kw, Ho*Wo) matrix with contiguous rows, so the conv is kh
products with K = C*kw per sample (the batch in one batched ``matmul`` call per kernel row),
with no junk columns:

- forward: out[n] = sum_i w[:, :, i, :] (O, C*kw) @ block_i[n];
- weight gradient: gw[:, :, i, :] = sum_n g[n] (O, Ho*Wo) @ block_i[n]^T;
- input gradient: block_i[n] += w[:, :, i, :]^T @ g[n] into a zeroed cols buffer, then the
  kw column taps added back into a zero canvas at the column stride (col2im), cropped.

Against the per-sample windows (``_conv_windows.py``: C*kh*kw rows per sample) the copy is
about Hp/(kh*Ho) of the size (2/3 for a 3x3 kernel at stride 2) and the products have K = C*kw
(faster than K = C*kh*kw at these sizes); against the stride phases (four stride-1 convs of
2x2, 2x1, 1x2 and 1x1 kernels, K = C*4 at most) fewer and longer products and no phase copies.
Measured (thread CPU time, one thread, float32, 3x3 kernel, stride 2, padding 1) in
bench/README.md, "SRGAN convolutions, third round".

All three split their batch over chainrule's thread pool as the other per-sample kernels
(``_conv_kernels._by_samples``, ``_summed_over_samples``; ``PARALLEL_MIN_FLOPS``): a sample's
products and sums do not depend on its part or chunk, so the forward and the adjoint are
bit-identical to the serial kernel."""

from __future__ import annotations

from typing import Any

from chainrule.backends import backend_of
from chainrule.ops._conv_kernels import (
    _by_samples,
    _conv_flops,
    _fill,
    _scratch_array,
    _summed_over_samples,
    _zero_pad,
)

__all__: list[str] = []


def rowphase_plan(stride: Any, groups: int) -> bool:
    """Whether a conv runs on row-phase columns: one group and a row stride above one."""
    return groups == 1 and stride[0] > 1


# A stride-1 forward runs on the columns (one phase, exact Wo-wide rows: no junk columns to
# crop, unlike the row-folded kernel) when a sample's columns are at most this many bytes and
# O >= 16 (measured, thread CPU, one thread, float32, batch 8 unless said, row-folded ->
# columns: x (32, 16, 14, 14) batch 32, 3x3 -> 32: 0.91 -> 0.64 ms; (3, 32, 32) 5x5 -> 32:
# 0.69 -> 0.59; (32, 16, 16) 3x3 -> 64: 0.80 -> 0.71, -> 128: 1.46 -> 1.29, -> 32: 0.41 ->
# 0.40; slower from 221 KB: (64, 16, 16) -> 32: 0.98 -> 0.95-1.0, (128, 16, 16): 1.74 ->
# 1.82, (32, 32, 32): 1.66 -> 1.69, and for O = 3); and K = C*kw at least STRIDE1_MIN_K
# (x (8, 3, 32, 32), 3x3 -> 32: per-sample columns 0.29 ms, row-phase columns 0.35).
STRIDE1_MAX_SAMPLE_BYTES = 1 << 17
# ... and the whole batch's columns at most this many bytes: in the CNN step (batch 32 of
# 16 -> 32 channels on 14x14, 1.4 MB of columns; its input gradient 2.8 MB) the plan was
# faster alone (0.91 -> 0.64 ms) but made the step slower (process CPU 6.8 -> 7.5 ms per step);
# in the SRGAN step (batch 8 of 32 channels on 16x16, 0.9 MB) it saved 2-4 ms per step.
STRIDE1_MAX_BATCH_BYTES = 1 << 20
STRIDE1_MIN_K = 12


def stride1_plan(x: Any, w: Any, ho: int, wo: int, padding: Any, dilation: Any) -> bool:
    """Whether a stride-1 conv of one group runs as ``conv_rowphase`` (see above)."""
    o, c, kh, kw = w.shape
    hp = x.shape[2] + padding[0][0] + padding[0][1]
    if kw < 2 or o < 16 or c * kw < STRIDE1_MIN_K:
        return False
    sample = c * kw * hp * wo * x.itemsize
    return sample <= STRIDE1_MAX_SAMPLE_BYTES and x.shape[0] * sample <= STRIDE1_MAX_BATCH_BYTES


def _rows(kh: int, ho: int, stride: Any, dilation: Any) -> int:
    """R, the rows per phase: kernel row kh - 1 reads rows r0 .. r0 + Ho - 1 of its phase."""
    return (dilation[0] * (kh - 1)) // stride[0] + ho


def _blocks(kh: int, ho: int, wo: int, stride: Any, dilation: Any, rows: int) -> list[int]:
    """Offset of kernel row i's block in a sample's flattened (C*kw, sh*R*Wo) columns:
    phase p's plane starts at p*R*Wo, its row r0 at r0*Wo."""
    sh, dh = stride[0], dilation[0]
    return [((dh * i) % sh) * rows * wo + ((dh * i) // sh) * wo for i in range(kh)]


def _row_phase_cols(
    xp: Any, x: Any, kw: int, rows: int, wo: int, stride: Any, padding: Any, dilation: Any
) -> Any:
    """cols (N, C*kw, sh*R*Wo): sample n, row (c, j), column (p, r, v) holds
    xpad[n, c, sh*r + p, sw*v + dw*j]; the padded canvas has sh*R rows at least (zero rows
    added at the bottom where the phases need them)."""
    n, c, h, _ = x.shape
    sh, sw = stride
    (pt, pb), (pl, pr) = padding
    extra = max(0, sh * rows - (h + pt + pb))
    if pt or pb or pl or pr or extra:
        xpad = _zero_pad(xp, x, pt, pb + extra, pl, pr, slot="pad")
    else:
        xpad = x
    sn, sc, s_h, s_w = xpad.strides
    win = backend_of(xpad).as_strided(
        xpad,
        (n, c, kw, sh, rows, wo),
        (sn, sc, s_w * dilation[1], s_h, s_h * sh, s_w * sw),
    )
    return _fill(xp, win, (n, c * kw, sh * rows * wo))


def conv_rowphase(
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
    """conv2d (one group) as sum_i w[:, :, i, :] @ block_i per sample, in chunks of samples
    (``CHUNK_BYTES``); plus the bias. The batch is split over the thread pool
    (``_conv_kernels._by_samples``); a sample's products do not depend on its chunk or part."""
    o, c, kh, kw = w.shape
    rows = _rows(kh, ho, stride, dilation)
    wrows = xp.ascontiguousarray(xp.moveaxis(w, 2, 0)).reshape(kh, o, c * kw)
    length = ho * wo
    offs = _blocks(kh, ho, wo, stride, dilation, rows)
    sample_bytes = c * kw * stride[0] * rows * wo * x.itemsize

    def part(xs: Any, dest: Any) -> Any:
        n = xs.shape[0]
        m = _chunk(sample_bytes, n)
        out = (
            xp.empty((n, o, length), dtype=xs.dtype) if dest is None else dest.reshape(n, o, length)
        )
        tmp = _scratch_array(xp, (m, o, length), xs.dtype, "tmp") if kh > 1 else None
        for s0 in range(0, n, m):
            cols = _row_phase_cols(xp, xs[s0 : s0 + m], kw, rows, wo, stride, padding, dilation)
            d = out[s0 : s0 + m]
            xp.matmul(wrows[0], cols[:, :, offs[0] : offs[0] + length], out=d)
            for i in range(1, kh):
                assert tmp is not None  # made when kh > 1
                t = tmp[: d.shape[0]]
                xp.matmul(wrows[i], cols[:, :, offs[i] : offs[i] + length], out=t)
                d += t
        out = out.reshape(n, o, ho, wo)
        if b is not None:
            out += b.reshape(1, -1, 1, 1)
        return out

    return _by_samples(xp, part, x, (x.shape[0], o, ho, wo), _conv_flops(x, w, ho, wo))


# Samples per chunk of the row-phase kernels: as many as keep a chunk's columns within this
# many bytes (the columns, the padded canvas and the partial sums then stay in cache between
# the kh products).
CHUNK_BYTES = 1 << 19


def _chunk(sample_bytes: int, n: int) -> int:
    return max(1, min(n, CHUNK_BYTES // max(sample_bytes, 1)))


def weight_rowphase(
    xp: Any, x: Any, g: Any, kh: int, kw: int, stride: Any, padding: Any, dilation: Any
) -> Any:
    """Weight gradient of a conv of one group with row stride > 1: gw[:, :, i, :] =
    sum_n g[n] @ block_i[n]^T. The batch is split over the thread pool, the parts' sums
    added (``_conv_kernels._summed_over_samples``)."""
    n, o, ho, wo = g.shape
    c = x.shape[1]
    rows = _rows(kh, ho, stride, dilation)
    length = ho * wo
    offs = _blocks(kh, ho, wo, stride, dilation, rows)

    def part(xs: Any, gs: Any) -> Any:
        m = xs.shape[0]
        cols = _row_phase_cols(xp, xs, kw, rows, wo, stride, padding, dilation)
        gt = xp.ascontiguousarray(xp.moveaxis(gs.reshape(m, o, length), 1, 2))
        acc = xp.empty((kh, c * kw, o), dtype=gs.dtype)
        for i in range(kh):
            acc[i] = xp.matmul(cols[:, :, offs[i] : offs[i] + length], gt).sum(axis=0)
        return acc

    flops = 2.0 * n * o * c * kh * kw * ho * wo
    acc = _summed_over_samples(xp, part, x, g, flops)
    # acc[i, (c, j), o] -> gw[o, c, i, j]
    return xp.ascontiguousarray(acc.reshape(kh, c, kw, o).transpose(3, 1, 0, 2))


def transpose_rowphase(
    xp: Any, y: Any, w: Any, stride: Any, padding: Any, dilation: Any, out_hw: Any
) -> Any:
    """The adjoint in x of ``conv_rowphase`` (conv_transpose2d, one group, row stride > 1):
    the blocks' products w_i^T @ y[n] summed into zeroed row-phase columns, then the kw column
    taps added into a zero canvas at the column stride, and the padding cropped. The batch is
    split over the thread pool (each sample's sums do not depend on its part)."""
    n, o, ho, wo = y.shape
    _, c, kh, kw = w.shape
    sh, sw = stride
    (pt, pb), (pl, pr) = padding
    h, wd = out_hw
    rows = _rows(kh, ho, stride, dilation)
    length = ho * wo
    offs = _blocks(kh, ho, wo, stride, dilation, rows)
    wt = xp.ascontiguousarray(xp.moveaxis(w, 2, 0).reshape(kh, o, c * kw).swapaxes(1, 2))
    hp = max(h + pt + pb, sh * rows)
    wp = wd + pl + pr
    dw = dilation[1]

    def part(ys: Any, dest: Any) -> Any:
        m = ys.shape[0]
        y2 = ys.reshape(m, o, length)
        cols = xp.zeros((m, c * kw, sh * rows * wo), dtype=ys.dtype)
        tmp = _scratch_array(xp, (m, c * kw, length), ys.dtype, "tmp")
        for i in range(kh):
            xp.matmul(wt[i], y2, out=tmp)
            cols[:, :, offs[i] : offs[i] + length] += tmp
        canvas = xp.zeros((m, c, hp, wp), dtype=ys.dtype)
        grid = canvas[:, :, : sh * rows].reshape(m, c, rows, sh, wp)
        taps = cols.reshape(m, c, kw, sh, rows, wo)
        for j in range(kw):
            view = grid[:, :, :, :, dw * j : dw * j + sw * (wo - 1) + 1 : sw]
            view += xp.swapaxes(taps[:, :, j], 2, 3)
        crop = canvas[:, :, pt : pt + h, pl : pl + wd]
        if dest is None:
            return xp.ascontiguousarray(crop)
        dest[...] = crop
        return dest

    flops = 2.0 * n * o * c * kh * kw * ho * wo
    return _by_samples(xp, part, y, (n, c, h, wd), flops)
