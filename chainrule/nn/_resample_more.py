"""Resampling beyond ``_functional_sample.py``: ``grid_sample`` on 5-d inputs (trilinear and
nearest) and with ``mode="bicubic"`` (4-d), and ``interpolate(antialias=True)`` for bilinear
and bicubic.

``grid_sample`` gathers the tap pixels of each sample point (integer taps found on arrays)
and weights them with Tensor arithmetic on the grid, so gradients reach the input and the
grid. Bicubic reads a 4x4 neighbourhood with Keys' cubic (A = -0.75); as in PyTorch, the
padding mode is applied to each tap's integer coordinate, not to the sample point.

The antialiased ``interpolate`` is separable like the other modes: per axis, output i
averages the inputs around centre c = s (i + 0.5) (s = in / out) with the filter stretched
by max(s, 1) (triangle for bilinear, Keys' cubic with A = -0.5 for bicubic, as PIL and
PyTorch) and the weights normalized to sum 1.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.backends import backend_of
from chainrule.nn import _functional_sample as _fs
from chainrule.nn._functional import adaptive_pooling as _ap
from chainrule.nn._functional.pooling import _sep_apply
from chainrule.ops.composite_node import composite

__all__ = [
    "GRID_SAMPLE_INTERPOLATION_MODES",
    "GRID_SAMPLE_PADDING_MODES",
    "grid_sample",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
]

# PyTorch's enumerations of grid_sample's string arguments.
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def _arr(t: Tensor) -> Any:
    """The array behind ``t``, on its device: the index arithmetic below runs there (NumPy's
    functions dispatch to CuPy's for GPU arrays)."""
    return t._data


def _const(a: Any, like: Tensor) -> Tensor:
    """A constant of ``like``'s dtype on ``like``'s device (host arrays are copied there)."""
    d = like._data
    be = backend_of(d)
    return _new_tensor(be.asarray(a, dtype=d.dtype, device=be.device_index(d)))


def _gather(input: Tensor, flat_idx: np.ndarray, inside: np.ndarray, out_shape: tuple) -> Tensor:
    """``input`` (N, C, *S) read at flat spatial indices (N, P), zeros where not ``inside``."""
    n, c = input.shape[:2]
    flat = _ops.reshape(input, (n, c, -1))
    idx = np.broadcast_to(flat_idx.reshape(n, 1, -1), (n, c, flat_idx[0].size)).copy()
    vals = _ops.gather(flat, 2, _new_tensor(idx))
    vals = _ops.reshape(vals, (n, c, *out_shape))
    return vals * _const(inside[:, None].astype(_arr(input).dtype), input)


def _grid_sample_3d(input: Tensor, grid: Tensor, mode: str, padding_mode: str, ac: bool) -> Tensor:
    n, c, d, h, w = input.shape
    out_shape = tuple(grid.shape[1:4])
    coords = [
        _fs._source(grid[..., k], size, padding_mode, ac) for k, size in enumerate((w, h, d))
    ]  # x, y, z: (N, Do, Ho, Wo)

    def tap(xi: np.ndarray, yi: np.ndarray, zi: np.ndarray) -> Tensor:
        inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h) & (zi >= 0) & (zi < d)
        flat = (
            (np.clip(zi, 0, d - 1) * h + np.clip(yi, 0, h - 1)) * w + np.clip(xi, 0, w - 1)
        ).reshape(n, -1)
        return _gather(input, flat, inside, out_shape)

    if mode == "nearest":
        # Piecewise constant in the grid: no gradient reaches it (torch gives zeros).
        return tap(*(np.rint(_arr(q)).astype(np.int64) for q in coords))
    lo = [np.floor(_arr(q)).astype(np.int64) for q in coords]
    frac = [_ops.unsqueeze(q - _const(f.astype(np.float64), q), 1) for q, f in zip(coords, lo)]
    out = None
    for corner in range(8):
        bits = [(corner >> k) & 1 for k in range(3)]
        weight = None
        for b, t in zip(bits, frac):
            f = t if b else 1.0 - t
            weight = f if weight is None else weight * f
        term = tap(lo[0] + bits[0], lo[1] + bits[1], lo[2] + bits[2]) * weight
        out = term if out is None else out + term
    return out  # type: ignore[return-value]


def _cubic_weights(t: Tensor, a: float = -0.75) -> list[Tensor]:
    """Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for fractional offset t."""

    def near(x: Any) -> Any:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Any) -> Any:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def _tap_coords(i: np.ndarray, size: int, padding_mode: str, ac: bool) -> np.ndarray:
    """The padding mode applied to integer tap coordinates (border: clip; reflection:
    reflect, then clip)."""
    if padding_mode == "border":
        return np.clip(i, 0, size - 1)
    if padding_mode == "reflection":
        lo, hi = (0.0, size - 1.0) if ac else (-0.5, size - 0.5)
        span = hi - lo
        x = i.astype(np.float64)
        if span <= 0:
            x = np.zeros_like(x)
        else:
            dist = np.abs(x - lo)
            flips = np.floor(dist / span)
            extra = dist - flips * span
            x = np.where(flips % 2 == 0, extra + lo, span - extra + lo)
        return np.clip(x, 0, size - 1).astype(np.int64)
    return i


def _grid_sample_bicubic(input: Tensor, grid: Tensor, padding_mode: str, ac: bool) -> Tensor:
    n, c, h, w = input.shape
    out_shape = tuple(grid.shape[1:3])
    ix = _fs._unnormalize(grid[..., 0], w, ac)
    iy = _fs._unnormalize(grid[..., 1], h, ac)
    x0 = np.floor(_arr(ix)).astype(np.int64)
    y0 = np.floor(_arr(iy)).astype(np.int64)
    wx = _cubic_weights(_ops.unsqueeze(ix - _const(x0.astype(np.float64), ix), 1))
    wy = _cubic_weights(_ops.unsqueeze(iy - _const(y0.astype(np.float64), iy), 1))
    out = None
    for j in range(4):
        yi = _tap_coords(y0 - 1 + j, h, padding_mode, ac)
        row = None
        for i in range(4):
            xi = _tap_coords(x0 - 1 + i, w, padding_mode, ac)
            inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            flat = (np.clip(yi, 0, h - 1) * w + np.clip(xi, 0, w - 1)).reshape(n, -1)
            term = _gather(input, flat, inside, out_shape) * wx[i]
            row = term if row is None else row + term
        term = row * wy[j]  # type: ignore[operator]
        out = term if out is None else out + term
    return out  # type: ignore[return-value]


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample ``input`` at the normalized points of ``grid``: (N, C, H, W) at (N, Ho, Wo, 2)
    (x, y) points, or (N, C, D, H, W) at (N, Do, Ho, Wo, 3) (x, y, z) points. ``mode``:
    ``"bilinear"`` (trilinear on 5-d input), ``"nearest"`` or ``"bicubic"`` (4-d only);
    ``padding_mode``: ``"zeros"``, ``"border"`` or ``"reflection"``. Recorded as PyTorch's one
    ``GridSampler2DBackward0`` / ``GridSampler3DBackward0`` (Note [composite nodes])."""
    args = (mode, padding_mode, align_corners)
    if isinstance(input, Tensor) and isinstance(grid, Tensor) and input.ndim in (4, 5):
        node = f"GridSampler{input.ndim - 2}DBackward0"
        return composite(node, lambda x, g: _grid_sample(x, g, *args), (input, grid))
    return _grid_sample(input, grid, *args)


def _grid_sample(
    input: Tensor, grid: Tensor, mode: str, padding_mode: str, align_corners: bool | None
) -> Tensor:
    """See ``grid_sample``: the composed function."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if input.ndim == 4 and mode != "bicubic":
        return _fs.grid_sample(input, grid, mode, padding_mode, align_corners)
    if input.ndim not in (4, 5):
        return _fs.grid_sample(input, grid, mode, padding_mode, align_corners)
    nd = input.ndim - 2
    if grid.ndim != input.ndim or grid.shape[-1] != nd:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid "
            f"with sizes {list(grid.shape)}"
        )
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    ac = bool(align_corners)
    if nd == 3:
        if mode == "bicubic":
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        return _grid_sample_3d(input, grid, mode, padding_mode, ac)
    return _grid_sample_bicubic(input, grid, padding_mode, ac)


def _aa_matrix(
    n_in: int, n_out: int, mode: str, align_corners: bool, scale: float | None
) -> np.ndarray:
    """The (out, in) antialiasing interpolation matrix of one axis."""
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        s = 1.0 / scale if scale is not None else n_in / n_out
    support = (1.0 if mode == "bilinear" else 2.0) * (s if s >= 1.0 else 1.0)
    inv = 1.0 / s if s >= 1.0 else 1.0

    def filt(x: np.ndarray) -> np.ndarray:
        x = np.abs(x)
        if mode == "bilinear":
            return np.maximum(0.0, 1.0 - x)
        a = -0.5
        return np.where(
            x < 1.0,
            ((a + 2) * x - (a + 3)) * x * x + 1,
            np.where(x < 2.0, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0),
        )

    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        centre = s * (i + 0.5)
        lo = max(int(centre - support + 0.5), 0)
        hi = min(int(centre + support + 0.5), n_in)
        j = np.arange(lo, hi)
        wts = filt((j - centre + 0.5) * inv)
        total = wts.sum()
        if total != 0:
            m[i, lo:hi] = wts / total
    return m


def _interp_node(input: Any, mode: str, antialias: bool) -> str | None:
    """PyTorch's node for ``interpolate`` in ``mode`` on ``input`` (None: the call raises)."""
    nd = input.ndim - 2 if isinstance(input, Tensor) else 0
    if not 1 <= nd <= 3 or not _kinds.is_floating(input._data):
        return None
    aa = "Aa" if antialias else ""
    names = {
        "nearest": f"UpsampleNearest{nd}DBackward0",
        "nearest-exact": f"UpsampleNearestExact{nd}DBackward0",
        "linear": "UpsampleLinear1DBackward0" if nd == 1 else None,
        "bilinear": f"UpsampleBilinear2D{aa}Backward0" if nd == 2 else None,
        "bicubic": f"UpsampleBicubic2D{aa}Backward0" if nd == 2 else None,
        "trilinear": "UpsampleTrilinear3DBackward0" if nd == 3 else None,
    }
    return names.get(mode)


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims (``_interpolate``), recorded as PyTorch records it: one
    ``UpsampleNearest2DBackward0``, ``UpsampleBilinear2DBackward0``... (Note [composite nodes]
    in chainrule/ops/composite_node.py), and ``"area"`` as ``adaptive_avg_pool{1,2,3}d``."""
    args = (size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)
    if (
        mode == "area"
        and isinstance(input, Tensor)
        and input.ndim in (3, 4, 5)
        and align_corners is None
        and not antialias
    ):
        sizes, _ = _fs._sizes(input, size, scale_factor, recompute_scale_factor)
        pool = (_ap.adaptive_avg_pool1d, _ap.adaptive_avg_pool2d, _ap.adaptive_avg_pool3d)
        return pool[input.ndim - 3](input, tuple(sizes))
    node = _interp_node(input, mode, antialias)
    if node is None:
        return _interpolate(input, *args)
    return composite(node, lambda x: _interpolate(x, *args), (input,), linear=True)


def _interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims (see ``_functional_sample.interpolate`` for the modes).

    With ``antialias=True`` (``"bilinear"`` / ``"bicubic"``, 4-d input) the filter widens by
    the downscaling factor, so every input pixel contributes (see the module docstring)."""
    if not antialias:
        return _fs.interpolate(
            input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias
        )
    if mode not in ("bilinear", "bicubic") or input.ndim != 4:
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    sizes, scales = _fs._sizes(input, size, scale_factor, recompute_scale_factor)
    mats = [
        _aa_matrix(n, o, mode, bool(align_corners), s)
        for n, o, s in zip(input.shape[2:], sizes, scales)
    ]
    return _sep_apply(input, mats)


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of ``interpolate`` (with PyTorch's warning)."""

    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(mode='nearest')`` (with PyTorch's warning)."""

    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(mode='bilinear', align_corners=True)`` (with PyTorch's
    warning)."""

    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
