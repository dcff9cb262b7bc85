"""Fractional max pooling (2-d and 3-d): pseudo-random window intervals, then a gather of each
window's maximum."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.nn._functional._common import (
    _host,
    _ntuple,
    _xp,
)
from chainrule.nn._functional._device import on_input_device

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
]


def _intervals(u: np.ndarray, n_in: int, n_out: int, k: int) -> np.ndarray:
    """Window starts (..., n_out) of fractional max pooling for the samples u in [0, 1):
    floor((i + u) a) - floor(u a) with a = (n_in - k) / (n_out - 1), the last at n_in - k."""
    dt = u.dtype.type
    starts = np.empty(u.shape + (n_out,), dtype=np.int64)
    if n_out > 1:
        alpha = dt(n_in - k) / dt(n_out - 1)
        i = np.arange(n_out - 1, dtype=u.dtype)
        starts[..., :-1] = (
            np.floor((i + u[..., None]) * alpha) - np.floor(u[..., None] * alpha)
        ).astype(np.int64)
    starts[..., -1] = n_in - k
    return starts


def _fractional(
    fn: str,
    input: Tensor,
    kernel_size: Any,
    output_size: Any,
    output_ratio: Any,
    return_indices: bool,
    samples: Any,
    nd: int,
) -> Any:
    """Max over pseudo-random windows of fixed size ``kernel_size`` whose starts step by
    floor or ceil of (in - k) / (out - 1) (Graham's fractional max pooling); the argmax is
    found on arrays and gathered, so the VJP scatters to it."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}"
        )
    x = input if input.ndim == nd + 2 else _ops.unsqueeze(input, 0)
    n, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    k = _ntuple(kernel_size, nd)
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
        ratio = output_ratio if isinstance(output_ratio, (list, tuple)) else [output_ratio] * nd
        out = tuple(int(s * float(r)) for s, r in zip(spatial, ratio))
    else:
        out = _ntuple(output_size, nd)
    for kk, o, s in zip(k, out, spatial):
        if o + kk - 1 > s:
            raise RuntimeError(
                f"{fn}(): pool size {kk} too large relative to input size {s} for output size {o}"
            )
    if samples is None:
        from chainrule._creation import rand

        samples = rand(n, c, nd, dtype=input.dtype)
    # The windows' starts are worked out on the host (from the samples, read there); the
    # gathers run on x's device.
    u = _host(samples) if isinstance(samples, Tensor) else np.asarray(samples)
    if u.shape != (n, c, nd):
        raise RuntimeError(
            f"{fn}(): expected _random_samples of shape {[n, c, nd]}, got {list(u.shape)}"
        )
    # Which sample drives which axis, as torch: in 2-d sample 0 drives W and 1 drives H; in
    # 3-d sample a drives axis a (T, H, W).
    which = [1, 0] if nd == 2 else list(range(nd))
    starts = [_intervals(u[..., which[a]], spatial[a], out[a], k[a]) for a in range(nd)]
    xa = x._data.reshape(n, c, -1)
    strides = [int(np.prod(spatial[a + 1 :])) for a in range(nd)]
    flat_idx = np.zeros((n, c) + out + (1,) * nd, dtype=np.int64)
    for a in range(nd):
        # (N, C, o_a, k_a) positions of axis a, broadcast into (N, C, *out, *k) flattened.
        pos = starts[a][..., None] + np.arange(k[a])
        shape = [n, c] + [1] * nd + [1] * nd
        shape[2 + a] = out[a]
        shape[2 + nd + a] = k[a]
        term = (pos * strides[a]).reshape(shape)
        flat_idx = flat_idx + term
    cand = _xp(x).asarray(flat_idx.reshape(n, c, int(np.prod(out)), -1))
    vals = np.take_along_axis(xa, cand.reshape(n, c, -1), axis=2).reshape(cand.shape)
    best = np.argmax(vals, axis=-1)[..., None]
    idx = np.take_along_axis(cand, best, axis=-1)[..., 0]  # (N, C, prod(out))
    flat = _ops.reshape(x, (n, c, -1))
    res = _ops.reshape(_ops.gather(flat, 2, _new_tensor(idx)), (n, c) + out)
    ind = _new_tensor(idx.reshape((n, c) + out))
    if input.ndim == nd + 1:
        res, ind = _ops.squeeze(res, 0), _ops.squeeze(ind, 0)
    return (res, ind) if return_indices else res


@on_input_device
def fractional_max_pool2d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Any = None,
) -> Any:
    """2-d fractional max pooling over (N, C, H, W) or (C, H, W)."""
    return _fractional(
        "fractional_max_pool2d",
        input,
        kernel_size,
        output_size,
        output_ratio,
        return_indices,
        _random_samples,
        2,
    )


@on_input_device
def fractional_max_pool3d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Any = None,
) -> Any:
    """3-d fractional max pooling over (N, C, D, H, W) or (C, D, H, W)."""
    return _fractional(
        "fractional_max_pool3d",
        input,
        kernel_size,
        output_size,
        output_ratio,
        return_indices,
        _random_samples,
        3,
    )


@on_input_device
def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = True,
    _random_samples: Any = None,
) -> Any:
    """``fractional_max_pool2d`` returning (values, indices)."""
    return fractional_max_pool2d(
        input, kernel_size, output_size, output_ratio, True, _random_samples
    )


@on_input_device
def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = True,
    _random_samples: Any = None,
) -> Any:
    """``fractional_max_pool3d`` returning (values, indices)."""
    return fractional_max_pool3d(
        input, kernel_size, output_size, output_ratio, True, _random_samples
    )
