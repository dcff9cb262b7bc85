"""Array kernels of the convolutions and max pooling (chainrule/ops/conv.py declares the ops,
chooses among these plans and runs the stride phases; its docstring describes the plans):
window views, im2col columns, the per-thread scratch buffers, the stride-1 shifted products,
per-sample columns, and the argmax passes of max pooling. Arrays in, arrays out.

The per-sample kernels (here the stride-1 shifted products, row-folded products and
per-sample columns; also the row-phase, window, pointwise, transposed-g and channel-last
input-gradient kernels of the other ``_conv_*`` files) split the batch into parts run at once
on chainrule's thread pool (``backends/_threads.py``) through ``_by_samples`` and
``_summed_over_samples``, when it has several threads and each part is worth a dispatch
(``PARALLEL_MIN_FLOPS``): their products are per sample anyway, too small for OpenBLAS to
split. Each part writes its samples of the output (the weight gradient: the parts' sums are
added) and a sample's products do not depend on its part, so the forward and the input
gradient have the serial kernel's values bit for bit, and the weight gradient the same up to
the order of its sum (tests/ops/test_conv_split.py, test_conv_threads.py).

Why this file is over 400 lines: the conv plans' kernels (forward and weight gradient of each)
share the scratch buffers and the batch split; the max-pooling argmax passes at the end are the
part to move out next."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule.backends import backend_of
from chainrule.backends._threads import (
    chunks,
    in_worker,
    num_threads,
    one_blas_thread,
    parallel_map,
)
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
# size; the row-folded forward's cropped sums: "out" and "tmp"): a fresh buffer of a few MB
# costs more in page faults (about 0.5 ms per MB here) than the copy into it (measured,
# default glibc malloc: the CNN step 9.2 -> 7.2 ms with "pad", from 1046 page faults per step
# to none). Scratch for the other partial products, the phase copies or the pooling passes
# measured slower (cache-cold buffers): those stay fresh allocations.
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


# A part of a batch-split conv does at least this many flops. Handing a part to a pool worker
# costs a few tens of microseconds, but the parts also contend for the GIL between their BLAS
# calls and run on cold caches: measured at two threads on a quiet 2-core VM (2026-12-02),
# every split of the SRGAN and CNN steps' convs (each below 4e8 flops per part) made the step
# slower than not splitting (SRGAN 155-168 ms split at 4e6 flops per part, 136 at 2e7, 126 at
# 1e8, 121-124 unsplit, 122 at one thread; CNN 13.6-15.1 ms split, 9.3-9.7 unsplit), so only
# convs big enough for parts of ~4 ms each split.
# Re-measured 2026-12-03 (2-core AMD EPYC VM, load 8-15, so by CPU time only; bench/README.md,
# "Convolutions on both cores"): the SRGAN step's conv kernels, replayed, 72.1 ms of thread
# CPU serial, 73.8 ms in 2 parts and 80.0 ms in 4 parts run one after the other (the parts'
# own cost, before any GIL contention), 84.0 ms of process CPU split over two threads at no
# minimum (4 parts). Whether parts below 4e8 flops gain wall time on a quiet machine is for
# ``bench/conv_threads.py`` there to show; until then the value above stands.
PARALLEL_MIN_FLOPS = 400_000_000
# A split conv has up to this many parts per thread, taken by the threads as they come free
# (``parallel_map``): a thread that starts late, or whose core another process holds, then
# does fewer parts instead of leaving the others waiting for its half.
PARTS_PER_THREAD = 2


def _sample_parts(xp: Any, n: int, flops: float) -> list[tuple[int, int]]:
    """Ranges of samples, one per part of a conv of ``flops`` over ``n`` samples: a single part
    unless the arrays are NumPy's, the pool has several threads, this is not already a pool
    worker, and each part does at least PARALLEL_MIN_FLOPS; then up to PARTS_PER_THREAD parts
    per thread."""
    if xp is not np or n < 2 or in_worker():
        return [(0, n)]
    t = num_threads()
    if t < 2:
        return [(0, n)]
    parts = PARTS_PER_THREAD * t
    if PARALLEL_MIN_FLOPS > 0:
        if flops < 2 * PARALLEL_MIN_FLOPS:
            return [(0, n)]
        parts = min(parts, int(flops // PARALLEL_MIN_FLOPS))
    return chunks(n, parts)


def splits(xp: Any, n: int, flops: float) -> bool:
    """Whether a per-sample kernel of ``flops`` over ``n`` samples runs in several parts."""
    return len(_sample_parts(xp, n, flops)) > 1


def _serial(xp: Any, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` on this thread, with OpenBLAS held to one thread when chainrule's pool
    has several (as inside ``parallel_map``). A product that OpenBLAS splits (from about
    M*N*K = 262144, e.g. (32, 32) @ (32, 288)) leaves its worker threads spinning for their
    timeout (about 0.1 s) after the call: measured at two threads on the SRGAN step, 97 ms
    of CPU per step on OpenBLAS's worker, which on two cores takes the core that chainrule's
    pool worker needs (the step at two threads slower than at one)."""
    if xp is not np or in_worker():
        return fn(*args)
    with one_blas_thread():
        return fn(*args)


def _by_samples(xp: Any, part: Any, x: Any, out_shape: tuple[int, ...], flops: float) -> Any:
    """The output of a per-sample kernel: ``part(xs, dest)`` computes samples ``xs`` into
    ``dest`` (a new array when ``dest`` is None) and returns it; the parts run on the pool."""
    parts = _sample_parts(xp, x.shape[0], flops)
    if len(parts) == 1:
        return _serial(xp, part, x, None)
    out = xp.empty(out_shape, dtype=x.dtype)
    parallel_map(lambda r: part(x[r[0] : r[1]], out[r[0] : r[1]]), parts)
    return out


def _summed_over_samples(xp: Any, part: Any, x: Any, g: Any, flops: float) -> Any:
    """sum over the parts of ``part(xs, gs)`` (a weight gradient summed over samples)."""
    parts = _sample_parts(xp, x.shape[0], flops)
    if len(parts) == 1:
        return _serial(xp, part, x, g)
    res = parallel_map(lambda r: part(x[r[0] : r[1]], g[r[0] : r[1]]), parts)
    total = res[0]
    for r in res[1:]:
        total += r
    return total


def _finish(xp: Any, out: Any, wo: int, dest: Any, b: Any) -> Any:
    """(N, O, Ho, Wr) product -> (N, O, Ho, Wo) with its junk columns cropped, into ``dest``
    (or a new array), plus the bias."""
    if dest is None:
        dest = out if out.shape[3] == wo else xp.ascontiguousarray(out[..., :wo])
    else:
        dest[...] = out[..., :wo]
    if b is not None:
        dest += b.reshape(1, -1, 1, 1)
    return dest


def _conv_flops(x: Any, w: Any, ho: int, wr: int) -> float:
    return 2.0 * x.shape[0] * w.shape[0] * w.shape[1] * w.shape[2] * w.shape[3] * ho * wr


def _conv_shifted(
    xp: Any, x: Any, w: Any, ho: int, wo: int, padding: Any, dilation: Any, b: Any = None
) -> Any:
    """Stride-1 conv as sum_{i,j} w[:, :, i, j] @ xpad_flat[n, :, run(i, j)]: each product
    reads the padded input in place (BLAS takes the row stride), into (N, O, Ho, Wp); plus the
    bias. The batch is split over the thread pool."""
    o, _, kh, kw = w.shape
    wp = x.shape[3] + padding[1][0] + padding[1][1]

    def part(xs: Any, dest: Any) -> Any:
        xf, _ = _shifted_input(xp, xs, kw, padding, dilation)
        length = ho * wp
        out = xp.matmul(w[:, :, 0, 0], xf[:, :, :length])
        tmp = xp.empty_like(out) if kh * kw > 1 else None
        for i in range(kh):
            for j in range(kw):
                if i == j == 0:
                    continue
                off = dilation[0] * i * wp + dilation[1] * j
                xp.matmul(w[:, :, i, j], xf[:, :, off : off + length], out=tmp)  # reused scratch
                out += tmp
        return _finish(xp, out.reshape(xs.shape[0], o, ho, wp), wo, dest, b)

    return _by_samples(xp, part, x, (x.shape[0], o, ho, wo), _conv_flops(x, w, ho, wp))


def _conv_rowfold(
    xp: Any, x: Any, w: Any, ho: int, wo: int, padding: Any, dilation: Any, b: Any = None
) -> Any:
    """Stride-1 conv (one group), sample by sample: the kw column shifts of the padded,
    flattened input stacked as (C*kw, Hp*Wp) (one copy, in the scratch slot "cols"), then per
    kernel row i one product w[:, :, i, :] (O, C*kw) @ its columns from d0*i*Wp, summed into
    the sample's (O, Ho*Wp); the junk columns cropped and the bias added at the end. Against
    the shifted products: BLAS gets a K of C*kw instead of C and kh calls instead of kh*kw,
    and a sample's partial sums stay in cache (measured 1.3-1.7x faster for 32-64 channels
    on 16x16 and 32x32 images; even on small ones). The batch is split over the thread pool."""
    o, c, kh, kw = w.shape
    wp = x.shape[3] + padding[1][0] + padding[1][1]
    length = ho * wp
    span = length + dilation[0] * (kh - 1) * wp
    wrows = xp.ascontiguousarray(xp.moveaxis(w, 2, 0)).reshape(kh, o, c * kw)

    def part(xs: Any, dest: Any) -> Any:
        n = xs.shape[0]
        xf, _ = _shifted_input(xp, xs, kw, padding, dilation)
        cols = _scratch_array(xp, (c, kw, span), xs.dtype, "cols")
        flat = cols.reshape(c * kw, span)
        # The (N, O, Ho*Wp) sums are cropped into a new array by _finish unless Wp == Wo: then
        # they are the output and must be fresh. Scratch for them measured 3.7 -> 2.2 ms for
        # x (8, 32, 16, 16), O = 128 (the page faults of a fresh 1.2 MB array); even else.
        if wp != wo:
            out = _scratch_array(xp, (n, o, length), xs.dtype, "out")
        else:
            out = xp.empty((n, o, length), dtype=xs.dtype)
        tmp = _scratch_array(xp, (o, length), xs.dtype, "tmp") if kh > 1 else None
        for s in range(n):
            for j in range(kw):
                off = dilation[1] * j
                cols[:, j, :] = xf[s, :, off : off + span]
            xp.matmul(wrows[0], flat[:, :length], out=out[s])
            for i in range(1, kh):
                off = dilation[0] * i * wp
                xp.matmul(wrows[i], flat[:, off : off + length], out=tmp)
                out[s] += tmp
        return _finish(xp, out.reshape(n, o, ho, wp), wo, dest, b)

    return _by_samples(xp, part, x, (x.shape[0], o, ho, wo), _conv_flops(x, w, ho, wp))


def _weight_rowfold(xp: Any, x: Any, g: Any, kh: int, kw: int, padding: Any, dilation: Any) -> Any:
    """Weight gradient of a stride-1 conv (one group), the adjoint of ``_conv_rowfold``: per
    sample and kernel row i, gw[:, :, i, :] += gpad[n] (O, Ho*Wp) @ (its columns of the stacked
    column shifts from d0*i*Wp)^T, with g zero-padded to Wp-wide rows. The batch is split over
    the thread pool."""
    _, o, ho, wo = g.shape
    c = x.shape[1]

    def part(xs: Any, gs: Any) -> Any:
        n = xs.shape[0]
        xf, wp = _shifted_input(xp, xs, kw, padding, dilation)
        length = ho * wp
        span = length + dilation[0] * (kh - 1) * wp
        gp = gs
        if wp != wo:
            gp = xp.zeros((n, o, ho, wp), dtype=gs.dtype)
            gp[..., :wo] = gs
        gp = gp.reshape(n, o, length)
        cols = _scratch_array(xp, (c, kw, span), xs.dtype, "cols")
        flat = cols.reshape(c * kw, span)
        acc = xp.empty((kh, o, c * kw), dtype=gs.dtype)
        tmp = xp.empty((o, c * kw), dtype=gs.dtype)
        for s in range(n):
            for j in range(kw):
                off = dilation[1] * j
                cols[:, j, :] = xf[s, :, off : off + span]
            for i in range(kh):
                off = dilation[0] * i * wp
                run = flat[:, off : off + length].T
                if s == 0:
                    xp.matmul(gp[s], run, out=acc[i])
                else:
                    xp.matmul(gp[s], run, out=tmp)
                    acc[i] += tmp
        return xp.ascontiguousarray(xp.moveaxis(acc.reshape(kh, o, c, kw), 0, 2))

    flops = 2.0 * g.shape[0] * o * c * kh * kw * ho * wo
    return _summed_over_samples(xp, part, x, g, flops)


def _rowfold_plan(x: Any, kw: int) -> bool:
    """Whether a stride-1 conv of one group runs as ``_conv_rowfold``: kernels wider than one
    column on inputs of at least ROWFOLD_MIN_C channels (below, C*kw is too short a product
    and the per-sample columns of all kh*kw taps are faster)."""
    return kw > 1 and x.shape[1] >= ROWFOLD_MIN_C


ROWFOLD_MIN_C = 4


def _rowfold_few_channels(x: Any, w: Any) -> bool:
    """Whether a stride-1 conv (one group) on fewer than ROWFOLD_MIN_C channels runs as
    ``_conv_rowfold`` all the same: a wide kernel into few outputs, 4*O <= C*kh*kw, where the
    per-sample columns' copy of C*kh*kw rows costs more than the short products (measured
    1.30 -> 0.54 ms for x (8, 3, 32, 32), w (9, 3, 7, 7); 0.29 -> 0.43 ms, slower, for
    w (32, 3, 3, 3))."""
    o, c, kh, kw = w.shape
    return kw > 1 and 4 * o <= c * kh * kw


# The weight gradient's row-folded products beat the shifted ones from about this many columns
# Ho*Wp per sample (measured: 0.9x at 32x32 images, 1.8x slower at 16x16 and 14x14).
ROWFOLD_WEIGHT_MIN_COLS = 512


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
    xp: Any, x: Any, w: Any, ho: int, wo: int, padding: Any, dilation: Any, b: Any = None
) -> Any:
    """Stride-1 conv (one group) as w (O, C*kh*kw) @ per-sample columns: one GEMM per
    sample into (N, O, Ho, Wp), then the junk columns cropped and the bias added. The batch
    is split over the thread pool."""
    o, _, kh, kw = w.shape
    wp = x.shape[3] + padding[1][0] + padding[1][1]
    w2 = w.reshape(o, -1)

    def part(xs: Any, dest: Any) -> Any:
        cols, _ = _sample_cols(xp, xs, kh, kw, ho, padding, dilation)
        out = xp.matmul(w2, cols).reshape(xs.shape[0], o, ho, wp)
        return _finish(xp, out, wo, dest, b)

    return _by_samples(xp, part, x, (x.shape[0], o, ho, wo), _conv_flops(x, w, ho, wp))


def _weight_sample_cols(
    xp: Any, x: Any, g: Any, kh: int, kw: int, padding: Any, dilation: Any
) -> Any:
    """Weight gradient of a stride-1 conv (one group) as sum_n gpad[n] @ cols[n]^T, with g
    zero-padded to the Wp-wide rows of the per-sample columns. The batch is split over the
    thread pool."""
    _, o, ho, wo = g.shape
    c = x.shape[1]

    def part(xs: Any, gs: Any) -> Any:
        n = xs.shape[0]
        cols, wp = _sample_cols(xp, xs, kh, kw, ho, padding, dilation)
        gp = gs
        if wp != wo:
            gp = xp.zeros((n, o, ho, wp), dtype=gs.dtype)
            gp[..., :wo] = gs
        return xp.matmul(gp.reshape(n, o, ho * wp), xp.swapaxes(cols, 1, 2)).sum(axis=0)

    flops = 2.0 * g.shape[0] * o * c * kh * kw * ho * wo
    return _summed_over_samples(xp, part, x, g, flops).reshape(o, c, kh, kw)


# Per-sample columns beat the shifted products for the weight gradient up to this many rows
# C*kh*kw (measured: 1.6x at C = 1, 3x3; even at 75; 2x slower at 147).
SAMPLE_COLS_MAX_K = 48


def _weight_shifted(xp: Any, x: Any, g: Any, kh: int, kw: int, padding: Any, dilation: Any) -> Any:
    """Weight gradient of a stride-1 conv: gw[:, :, i, j] = sum_n gpad[n] @ run(i, j)^T, with g
    zero-padded to the Wp-wide rows of the shifted input. The batch is split over the thread
    pool."""
    _, o, ho, wo = g.shape
    c = x.shape[1]

    def part(xs: Any, gs: Any) -> Any:
        n = xs.shape[0]
        xf, wp = _shifted_input(xp, xs, kw, padding, dilation)
        length = ho * wp
        gp = xp.zeros((n, o, ho, wp), dtype=gs.dtype)
        gp[..., :wo] = gs
        gp = gp.reshape(n, o, length)
        gw = xp.empty((o, c, kh, kw), dtype=gs.dtype)
        for i in range(kh):
            for j in range(kw):
                off = dilation[0] * i * wp + dilation[1] * j
                run = xp.swapaxes(xf[:, :, off : off + length], 1, 2)
                gw[:, :, i, j] = xp.matmul(gp, run).sum(axis=0)
        return gw

    flops = 2.0 * g.shape[0] * o * c * kh * kw * ho * wo
    return _summed_over_samples(xp, part, x, g, flops)


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
