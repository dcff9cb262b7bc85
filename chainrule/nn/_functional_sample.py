"""Resampling in ``torch.nn.functional``: the ``interpolate`` modes beyond nearest / linear /
bilinear ('bicubic', 'trilinear', 'area'), ``grid_sample`` (4-d input, bilinear / nearest,
zeros / border / reflection padding) and ``affine_grid``.

``interpolate`` stays separable: one constant (out, in) matrix per spatial axis applied by
matmul, so its VJP is the transposed matrix. ``grid_sample`` gathers the corner pixels of
every sample point (integer corners found on arrays) and weights them with Tensor arithmetic
on the grid, so gradients reach both the input and the grid.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.backends import backend_of
from chainrule.nn._functional._device import on_input_device
from chainrule.nn._functional.adaptive_pooling import _adaptive_bounds
from chainrule.nn._functional.pooling import _sep_apply
from chainrule.nn._functional.vision import _interp_matrix, _interpolate_basic
from chainrule.ops.composite_node import composite as _composite_of

__all__ = [
    "interpolate",
    "grid_sample",
    "affine_grid",
]

_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"


def _cubic_matrix(n_in: int, n_out: int, align_corners: bool, scale: float | None) -> np.ndarray:
    """Keys' cubic convolution (A = -0.75) from 4 neighbours, indices clamped to the edge."""
    a = -0.75
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        sc = 1.0 / scale if scale is not None else n_in / n_out
        src = sc * (dst + 0.5) - 0.5  # not clamped at 0 for cubic (as torch)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    m = np.zeros((n_out, n_in))
    for off in (-1, 0, 1, 2):
        x = np.abs(t - off)
        w = np.where(
            x <= 1.0,
            ((a + 2) * x - (a + 3)) * x * x + 1,
            ((a * x - 5 * a) * x + 8 * a) * x - 4 * a,
        )
        np.add.at(m, (np.arange(n_out), np.clip(i0 + off, 0, n_in - 1)), w)
    return m


def _sizes(
    input: Tensor, size: Any, scale_factor: Any, recompute: Any
) -> tuple[list[int], list[float | None]]:
    nd = input.ndim - 2
    spatial = tuple(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = [int(s) for s in (size if isinstance(size, (list, tuple)) else [size] * nd)]
        if len(sizes) != nd:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(spatial)} and output size of {sizes}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size "
                "in (o1, o2, ...,oK) format."
            )
        return sizes, [None] * nd
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    sf = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * nd
    sizes = [int(math.floor(float(n) * float(f))) for n, f in zip(spatial, sf)]
    return sizes, ([None] * nd if recompute else [float(f) for f in sf])


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims. 'nearest', 'nearest-exact', 'linear', 'bilinear' as before;
    'trilinear' (5-d), 'bicubic' (4-d, Keys' cubic with A = -0.75) and 'area' (adaptive average
    pooling) here: one constant interpolation matrix per axis."""
    if mode not in ("bicubic", "trilinear", "area"):
        # nearest, linear and bilinear: nn/_functional/vision.py's implementation.
        return _interpolate_basic(
            input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias
        )
    nd = input.ndim - 2
    if nd < 1 or nd > 3 or (mode == "bicubic" and nd != 2):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            f"the modes: {_MODES} (got {mode})"
        )
    need = {"bicubic": 2, "trilinear": 3}.get(mode)
    if need is not None and need != nd:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {need + 2}D input"
        )
    if mode == "area" and align_corners is not None:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if antialias:
        raise NotImplementedError("antialias=True is not implemented in chainrule")
    ac = bool(align_corners)
    sizes, scales = _sizes(input, size, scale_factor, recompute_scale_factor)
    mats = []
    for n, o, s in zip(input.shape[2:], sizes, scales):
        if mode == "area":
            st, en = _adaptive_bounds(n, o)
            m = np.zeros((o, n))
            for i in range(o):
                m[i, st[i] : en[i]] = 1.0 / (en[i] - st[i])
        elif mode == "bicubic":
            m = _cubic_matrix(n, o, ac, s)
        else:
            m = _interp_matrix(n, o, "linear", ac, s)
        mats.append(m)
    return _sep_apply(input, mats)


def _unnormalize(c: Tensor, n: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (c + 1.0) * ((n - 1) / 2.0)
    return ((c + 1.0) * n - 1.0) / 2.0


def _reflect(c: Tensor, lo: float, hi: float) -> Tensor:
    """Reflect coordinates into [lo, hi] (any number of bounces)."""
    span = hi - lo
    if span <= 0:
        return c * 0.0
    x = _ops.abs(c - lo)
    flips = backend_of(x._data).xp.floor(x._data / span)
    extra = x - _new_tensor(flips * span).to(x.dtype)
    even = _new_tensor(flips % 2 == 0)
    return _ops.where(even, extra + lo, (span - extra) + lo)


def _source(c: Tensor, n: int, padding_mode: str, align_corners: bool) -> Tensor:
    c = _unnormalize(c, n, align_corners)
    if padding_mode == "border":
        c = _ops.clamp(c, 0, n - 1)
    elif padding_mode == "reflection":
        c = _reflect(c, 0.0, n - 1.0) if align_corners else _reflect(c, -0.5, n - 0.5)
        c = _ops.clamp(c, 0, n - 1)
    return c


@on_input_device
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample (N, C, H, W) ``input`` at the (N, Ho, Wo, 2) normalized (x, y) points of
    ``grid`` ([-1, 1] spanning the corner pixels' centres with ``align_corners``, their outer
    edges without): bilinear weights of the 4 neighbours, or the nearest one; points outside
    read zeros, the border, or the reflection."""
    if mode not in ("bilinear", "nearest"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
            if mode != "bicubic"
            else "grid_sample mode 'bicubic' is not implemented in chainrule"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if input.ndim != 4:
        raise NotImplementedError("grid_sample in chainrule takes 4-D input only")
    if grid.ndim != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid to have size 2 in last dimension and the same batch "
            f"size as input, but got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}"
        )
    ac = bool(align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1:3]
    ix = _source(grid[..., 0], w, padding_mode, ac)  # (N, Ho, Wo)
    iy = _source(grid[..., 1], h, padding_mode, ac)
    flat = _ops.reshape(input, (n, c, h * w))
    xp = input._backend.xp  # the index arithmetic runs on the input's device

    def tap(xi: Any, yi: Any) -> Tensor:
        inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
        idx = (xp.clip(yi, 0, h - 1) * w + xp.clip(xi, 0, w - 1)).reshape(n, 1, ho * wo)
        vals = _ops.gather(flat, 2, _new_tensor(xp.broadcast_to(idx, (n, c, ho * wo)).copy()))
        vals = _ops.reshape(vals, (n, c, ho, wo))
        return vals * _new_tensor(inside[:, None].astype(input._data.dtype))

    if mode == "nearest":
        # Piecewise constant in the grid: no gradient reaches it (torch returns zeros).
        xn = xp.rint(ix._data).astype(np.int64)
        yn = xp.rint(iy._data).astype(np.int64)
        return tap(xn, yn)
    x0 = xp.floor(ix._data).astype(np.int64)
    y0 = xp.floor(iy._data).astype(np.int64)
    dt = ix.dtype
    tx = _ops.unsqueeze(ix - _new_tensor(x0).to(dt), 1)  # weight of the right neighbour
    ty = _ops.unsqueeze(iy - _new_tensor(y0).to(dt), 1)
    return (
        tap(x0, y0) * ((1.0 - tx) * (1.0 - ty))
        + tap(x0 + 1, y0) * (tx * (1.0 - ty))
        + tap(x0, y0 + 1) * ((1.0 - tx) * ty)
        + tap(x0 + 1, y0 + 1) * (tx * ty)
    )


def _base(n: int, align_corners: bool) -> np.ndarray:
    if n == 1:
        return np.zeros(1)
    v = np.linspace(-1.0, 1.0, n)
    return v if align_corners else v * (n - 1) / n


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of the affine maps ``theta`` (N, 2, 3) for a (N, C, H, W) ``size``,
    or (N, 3, 4) for (N, C, D, H, W): grid[n, ..., :] = theta[n] @ (x, y[, z], 1)."""
    given = size
    size = [int(s) for s in size]
    ac = bool(align_corners)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[1:]) != (2, 3):
            raise ValueError(
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{given}. Got {list(theta.shape)}."
            )
        n, _, h, w = size
        ys, xs = np.meshgrid(_base(h, ac), _base(w, ac), indexing="ij")
        base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(1, h * w, 3)
        out_shape: tuple[int, ...] = (n, h, w, 2)
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[1:]) != (3, 4):
            raise ValueError(
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{given}. Got {list(theta.shape)}."
            )
        n, _, d, h, w = size
        zs, ys, xs = np.meshgrid(_base(d, ac), _base(h, ac), _base(w, ac), indexing="ij")
        base = np.stack([xs, ys, zs, np.ones_like(xs)], -1).reshape(1, d * h * w, 4)
        out_shape = (n, d, h, w, 3)
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if min(size[2:]) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    b = _new_tensor(base.astype(theta._data.dtype))
    if type(theta._data) is not np.ndarray:  # the host-made base, on theta's device
        b = b.to(theta.device)

    def generate(t: Tensor) -> Tensor:
        return _ops.reshape(_ops.matmul(b, _ops.transpose(t, 1, 2)), out_shape)

    # Linear in theta: PyTorch's one AffineGridGeneratorBackward0, which saves nothing.
    return _composite_of("AffineGridGeneratorBackward0", generate, (theta,), linear=True)


# The deprecated aliases of interpolate.
