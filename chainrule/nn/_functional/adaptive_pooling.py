"""Adaptive average and max pooling over 1-3 dims: window i of n inputs into o outputs spans
[floor(i n / o), ceil((i + 1) n / o))."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.nn._functional._common import (
    _data,
    _tensor_args,
    _xp,
)
from chainrule.nn._functional.pooling import _check_nd, _compose_depth, _sep_apply
from chainrule.ops import nn as _nnops
from chainrule.ops.composite_node import composite

__all__ = [
    "adaptive_avg_pool2d",
    "adaptive_max_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "adaptive_max_pool3d",
]


def _adaptive_bounds(n: int, o: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)


def _out_pair(output_size: Any, h: int, w: int) -> tuple[int, int]:
    if isinstance(output_size, (list, tuple)):
        a, b = output_size
        return (h if a is None else int(a)), (w if b is None else int(b))
    return int(output_size), int(output_size)


def _check_adaptive(fn: str, input: Tensor, colon: str) -> None:
    _tensor_args(fn, ("input", 1, input, False))
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{fn}(): Expected 3D or 4D tensor, but got{colon} {list(input.shape)}")
    for d in range(input.ndim - 3, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with "
                f"dimension {d} being empty"
            )


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Mean over the windows [floor(i n / o), ceil((i + 1) n / o)) per axis (separable),
    recorded as PyTorch records it: a ``MeanBackward1`` for a (1, 1) output, else one
    ``AdaptiveAvgPool2DBackward0`` (Note [composite nodes] in chainrule/ops/composite_node.py)."""
    _check_adaptive("adaptive_avg_pool2d", input, "")
    h, w = input.shape[-2:]
    oh, ow = _out_pair(output_size, h, w)
    if oh < 0 or ow < 0:
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or "
            f"equal to 0 but received {{{oh}, {ow}}}"
        )
    if (oh, ow) == (1, 1):
        return _ops.mean(input, (-1, -2), True)
    return composite(
        "AdaptiveAvgPool2DBackward0",
        lambda x: _adaptive_avg_pool2d(x, oh, ow),
        (input,),
        linear=True,
    )


def _adaptive_avg_pool2d(input: Tensor, oh: int, ow: int) -> Tensor:
    h, w = input.shape[-2:]
    mats = []
    for n, o in ((h, oh), (w, ow)):
        st, en = _adaptive_bounds(n, o)
        m = np.zeros((o, n))
        for i in range(o):
            m[i, st[i] : en[i]] = 1.0 / (en[i] - st[i])
        mats.append(m)
    return _sep_apply(input, mats)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over the adaptive windows, recorded as PyTorch's one ``AdaptiveMaxPool2DBackward0``
    (Note [composite nodes])."""
    _check_adaptive("adaptive_max_pool2d", input, ":")
    out, ind = composite(
        "AdaptiveMaxPool2DBackward0",
        lambda x: _adaptive_max_pool2d(x, output_size),
        (input,),
    )
    return (out, ind) if return_indices else out


def _adaptive_max_pool2d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """Max over the adaptive windows and the argmax; the argmax is found on arrays (windows
    padded to the largest size with -inf), then gathered, so the VJP scatters to it."""
    x = input if input.ndim == 4 else _ops.unsqueeze(input, 0)
    n, c, h, w = x.shape
    oh, ow = _out_pair(output_size, h, w)
    if oh < 0 or ow < 0:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(oh, ow)}: "
            f"{list(x.shape[:2]) + [oh, ow]}"
            if input.ndim == 4
            else f"Trying to create tensor with negative dimension {min(oh, ow)}: {[c, oh, ow]}"
        )
    if oh == 0 or ow == 0:
        # An empty output size: nothing to pick, an empty result (as torch).
        out = _ops.reshape(_ops.reshape(x, (n, c, h * w))[:, :, :0], (n, c, oh, ow))
        ind = _new_tensor(np.zeros((n, c, oh, ow), dtype=np.int64))
        if input.ndim == 3:
            out, ind = _ops.squeeze(out, 0), _ops.squeeze(ind, 0)
        return out, ind
    xa = _data(x)
    sh, eh = _adaptive_bounds(h, oh)
    sw, ew = _adaptive_bounds(w, ow)
    kh, kw = int((eh - sh).max()), int((ew - sw).max())
    rows = sh[:, None] + np.arange(kh)  # (oh, kh)
    cols = sw[:, None] + np.arange(kw)  # (ow, kw)
    vr = rows < eh[:, None]
    vc = cols < ew[:, None]
    rows = np.minimum(rows, h - 1)
    cols = np.minimum(cols, w - 1)
    # The window geometry is shape-only, built on the host; it goes to x's device once.
    xp = _xp(x)
    rows, cols = xp.asarray(rows), xp.asarray(cols)
    win = xa[:, :, rows[:, :, None, None], cols[None, None, :, :]]  # (n, c, oh, kh, ow, kw)
    valid = xp.asarray(vr[:, :, None, None] & vc[None, None, :, :])
    fill = -np.inf if _kinds.is_floating(xa) else np.iinfo(xa.dtype).min
    win = xp.where(valid, win, fill).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, oh, ow, kh * kw)
    am = xp.argmax(win, axis=-1)
    i, j = xp.divmod(am, kw)
    r = xp.asarray(sh)[:, None] + i
    cc = xp.asarray(sw)[None, :] + j
    idx = (r * w + cc).astype(np.int64)
    flat = _ops.reshape(x, (n, c, h * w))
    out = _ops.reshape(_nnops.gather_along(flat, 2, idx.reshape(n, c, oh * ow)), (n, c, oh, ow))
    ind = _new_tensor(idx)
    if input.ndim == 3:
        out, ind = _ops.squeeze(out, 0), _ops.squeeze(ind, 0)
    return out, ind


def _adaptive_matrix(n: int, o: int) -> np.ndarray:
    st, en = _adaptive_bounds(n, o)
    m = np.zeros((o, n))
    for i in range(o):
        m[i, st[i] : en[i]] = 1.0 / (en[i] - st[i])
    return m


def _adaptive_sizes(output_size: Any, spatial: tuple[int, ...]) -> tuple[int, ...]:
    nd = len(spatial)
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != nd:
            raise ValueError(f"output_size must be {nd}, but got {len(output_size)}")
        return tuple(s if o is None else int(o) for o, s in zip(output_size, spatial))
    return (int(output_size),) * nd


def _check_adaptive_nd(fn: str, input: Tensor, nd: int) -> None:
    _check_nd(fn, input, nd)
    for dim in range(input.ndim - nd, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with "
                f"dimension {dim} being empty"
            )


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Mean over the windows [floor(i L / o), ceil((i + 1) L / o))."""
    _check_adaptive_nd("adaptive_avg_pool1d", input, 1)
    (o,) = _adaptive_sizes(output_size, tuple(input.shape[-1:]))
    # PyTorch's: the 2-d pool of a height-1 image (Squeeze, AdaptiveAvgPool2D, Unsqueeze nodes)
    return _ops.squeeze(adaptive_avg_pool2d(_ops.unsqueeze(input, -2), (1, o)), -2)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Mean over the adaptive windows of D, H and W (one constant matrix per axis)."""
    _check_adaptive_nd("adaptive_avg_pool3d", input, 3)
    sizes = _adaptive_sizes(output_size, tuple(input.shape[-3:]))
    if min(sizes) < 0:
        raise RuntimeError(
            "adaptive_avg_pool3d: elements of output_size must be greater than or "
            f"equal to 0 but received {{{sizes[0]}, {sizes[1]},{sizes[2]}}}"  # torch's spacing
        )
    if sizes == (1, 1, 1):
        return _ops.mean(input, (-1, -2, -3), True)
    mats = [_adaptive_matrix(n, o) for n, o in zip(input.shape[-3:], sizes)]
    return composite(
        "AdaptiveAvgPool3DBackward0", lambda x: _sep_apply(x, mats), (input,), linear=True
    )


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = True
) -> tuple[Tensor, Tensor]:
    """Max over the adaptive windows of L and their argmax positions."""
    _check_adaptive_nd("adaptive_max_pool1d", input, 1)
    (o,) = _adaptive_sizes(output_size, tuple(input.shape[-1:]))
    out, idx = adaptive_max_pool2d(_ops.unsqueeze(input, -2), (1, o), True)
    return _ops.squeeze(out, -2), _ops.squeeze(idx, -2)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over the adaptive windows of L."""
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = True
) -> tuple[Tensor, Tensor]:
    """Max over the adaptive windows of H, W and the flat argmax positions."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = True
) -> tuple[Tensor, Tensor]:
    """Max over the adaptive windows of D, H, W (separable, as max_pool3d) and the flat
    (d H W + h W + w) argmax positions."""
    _check_adaptive_nd("adaptive_max_pool3d", input, 3)
    return composite(
        "AdaptiveMaxPool3DBackward0", lambda x: _adaptive_max_pool3d(x, output_size), (input,)
    )


def _adaptive_max_pool3d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    x = input if input.ndim == 5 else _ops.unsqueeze(input, 0)
    n, c, d, h, w = x.shape
    od, oh, ow = _adaptive_sizes(output_size, (d, h, w))
    out2, idx2 = _adaptive_max_pool2d(_ops.reshape(x, (n, c * d, h, w)), (oh, ow))

    def pool_d(t: Tensor) -> Any:
        return _adaptive_max_pool2d(t, (od, t.shape[-1]))

    out, idx = _compose_depth(out2, np.asarray(idx2._data), n, c, d, h * w, pool_d)
    if input.ndim == 4:
        out, idx = _ops.squeeze(out, 0), _ops.squeeze(idx, 0)
    return out, idx


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over the adaptive windows of D, H, W."""
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out
