"""Weight gradients of stride-1 convolutions on the transposed output gradient
(``ops/conv.py`` chooses the plan): g copied once as gt (N, Ho*Wp, O), zero against the
junk columns of the padded input's rows, so that every product is (K, Ho*Wp) @ (Ho*Wp, O) with
both operands in BLAS's plain layout.

Why: the other weight-gradient kernels multiply g (O, L) by the transposed view of an input
run, (L, K); OpenBLAS (SkylakeX kernels, one thread) runs that layout at 83-94 GFLOP/s against
134-172 GFLOP/s for the same shapes with a plain second operand (measured on (32, 96) @
(96, 288), (32, 384) @ (384, 288), (32, 288) @ (288, 256)). The transposing copy of g costs
less than that for O >= ``WGRAD_T_MIN_O`` (below, a product with O columns is too narrow).

- ``weight_shifted_t``: per kernel offset (i, j), sum_n run(i, j)[n] (C, L) @ gt[n], the batch
  in one batched call (the shifted runs of ``_conv_kernels._shifted_input``, read in place);
- ``weight_rowfold_t``: per sample, the kw column shifts stacked as (C*kw, span) (as
  ``_conv_kernels._weight_rowfold``) and per kernel row one product (C*kw, L) @ gt[n]; faster
  where C*O is large (fewer, longer products).

The result is gw^T, turned to (O, C, kh, kw) by one small copy. The batch splits over the
thread pool as the other per-sample kernels."""

from __future__ import annotations

from typing import Any

from chainrule.ops._conv_kernels import _scratch_array, _shifted_input, _summed_over_samples

__all__: list[str] = []

# Below this many output channels the transposed-g products are too narrow (measured: O = 3,
# x (8, 32, 32, 32), 3x3: 0.32 -> 0.44 ms).
WGRAD_T_MIN_O = 16
# From this much work per sample, C*O*Ho*Wp, the row-folded products beat the shifted ones
# (measured, thread CPU, one thread, 3x3 kernels, batch 8 unless said, shifted / row-folded:
# C, O, 16x16 images: 32, 32: 0.33 / 0.38 ms; 32, 64: 0.59 / 0.76; 64, 32: 0.61 / 0.84;
# 32, 128: 1.84 / 1.45; 64, 64: 1.45 / 1.36; 32x32 images: 32, 16: 0.84 / 1.11; 32, 32:
# 2.00 / 1.65; 64, 64 on 8x8: 0.37 / 0.42; batch 32, 16, 32 on 14x14: 0.64 / 0.76).
WGRAD_ROWFOLD_MIN_WORK = 1_000_000


def plan(x: Any, o: int, kw: int, ho: int, wp: int) -> str | None:
    """The transposed-g kernel for a stride-1 weight gradient (one group): "rowfold",
    "shifted", or None (O below WGRAD_T_MIN_O: the other kernels)."""
    if o < WGRAD_T_MIN_O:
        return None
    if kw > 1 and x.shape[1] * o * ho * wp >= WGRAD_ROWFOLD_MIN_WORK:
        return "rowfold"
    return "shifted"


def _transposed_g(xp: Any, g: Any, wp: int) -> Any:
    """g (N, O, Ho, Wo) as (N, Ho*Wp, O), contiguous, zero in the columns w >= Wo."""
    n, o, ho, wo = g.shape
    gt = xp.empty((n, ho, wp, o), dtype=g.dtype)
    if wp != wo:
        gt[:, :, wo:] = 0
    gt[:, :, :wo] = xp.moveaxis(g, 1, 3)
    return gt.reshape(n, ho * wp, o)


def weight_shifted_t(xp: Any, x: Any, g: Any, kh: int, kw: int, padding: Any, dilation: Any) -> Any:
    """Weight gradient of a stride-1 conv (one group): gw[:, :, i, j]^T = sum_n
    run(i, j)[n] @ gt[n]."""
    _, o, ho, wo = g.shape
    c = x.shape[1]

    def part(xs: Any, gs: Any) -> Any:
        xf, wp = _shifted_input(xp, xs, kw, padding, dilation)
        length = ho * wp
        gt = _transposed_g(xp, gs, wp)
        gwt = xp.empty((c, kh, kw, o), dtype=gs.dtype)
        for i in range(kh):
            for j in range(kw):
                off = dilation[0] * i * wp + dilation[1] * j
                gwt[:, i, j] = xp.matmul(xf[:, :, off : off + length], gt).sum(axis=0)
        return gwt

    flops = 2.0 * g.shape[0] * o * c * kh * kw * ho * wo
    gwt = _summed_over_samples(xp, part, x, g, flops)
    return xp.ascontiguousarray(xp.moveaxis(gwt, 3, 0))


def weight_rowfold_t(xp: Any, x: Any, g: Any, kh: int, kw: int, padding: Any, dilation: Any) -> Any:
    """Weight gradient of a stride-1 conv (one group): per sample and kernel row i,
    gw[:, :, i, :]^T += (its columns of the stacked column shifts from d0*i*Wp) @ gt[n]."""
    _, o, ho, wo = g.shape
    c = x.shape[1]

    def part(xs: Any, gs: Any) -> Any:
        n = xs.shape[0]
        xf, wp = _shifted_input(xp, xs, kw, padding, dilation)
        length = ho * wp
        span = length + dilation[0] * (kh - 1) * wp
        gt = _transposed_g(xp, gs, wp)
        cols = _scratch_array(xp, (c, kw, span), xs.dtype, "cols")
        flat = cols.reshape(c * kw, span)
        acc = xp.empty((kh, c * kw, o), dtype=gs.dtype)
        tmp = xp.empty((c * kw, o), dtype=gs.dtype)
        for s in range(n):
            for j in range(kw):
                off = dilation[1] * j
                cols[:, j, :] = xf[s, :, off : off + span]
            for i in range(kh):
                off = dilation[0] * i * wp
                if s == 0:
                    xp.matmul(flat[:, off : off + length], gt[s], out=acc[i])
                else:
                    xp.matmul(flat[:, off : off + length], gt[s], out=tmp)
                    acc[i] += tmp
        return acc

    flops = 2.0 * g.shape[0] * o * c * kh * kw * ho * wo
    acc = _summed_over_samples(xp, part, x, g, flops)
    # acc[i, (c, j), o] -> gw[o, c, i, j]
    return xp.ascontiguousarray(acc.reshape(kh, c, kw, o).transpose(3, 1, 0, 2))
