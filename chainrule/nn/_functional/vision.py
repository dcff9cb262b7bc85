"""Rearranging and resizing images: pixel_shuffle/unshuffle, channel_shuffle, pad, one_hot,
fold/unfold, and interpolate's nearest and (bi)linear modes with the deprecated upsample names
(the other modes, grid_sample and affine_grid are in chainrule/nn/_functional_sample.py)."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from chainrule import ops as _ops
from chainrule._scalar_convert import checked_scalar
from chainrule._tensor import Tensor
from chainrule.nn._functional._common import (
    _ntuple,
)
from chainrule.nn._functional._device import on_input_device
from chainrule.nn._functional.pooling import _sep_apply
from chainrule.ops import fused_nn as _fused
from chainrule.ops.composite_node import composite as _composite_of

__all__ = [
    "pixel_shuffle",
    "pixel_unshuffle",
    "pad",
    "one_hot",
    "channel_shuffle",
    "native_channel_shuffle",
    "unfold",
    "fold",
]


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got "
            f"input with {input.ndim} dimension(s)"
        )
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be "
            f"divisible by the square of upscale_factor, but input.size(-3)={c} "
            f"is not divisible by {r * r}"
        )
    if r > 0:
        return _fused.pixel_shuffle(input, r)  # one PixelShuffleBackward0 node, as torch
    nl = len(lead)
    x = _ops.reshape(input, (*lead, c // (r * r), r, r, h, w))
    perm = list(range(nl)) + [nl, nl + 3, nl + 1, nl + 4, nl + 2]
    x = _ops.permute(x, perm)
    return _ops.reshape(x, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got "
            f"input with {input.ndim} dimension(s)"
        )
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(
            "pixel_unshuffle expects height to be divisible by downscale_factor, "
            f"but input.size(-2)={h} is not divisible by {r}"
            if h % r
            else "pixel_unshuffle expects width to be divisible by downscale_factor, "
            f"but input.size(-1)={w} is not divisible by {r}"
        )
    if r > 0:
        return _fused.pixel_unshuffle(input, r)  # one PixelUnshuffleBackward0 node, as torch
    nl = len(lead)
    x = _ops.reshape(input, (*lead, c, h // r, r, w // r, r))
    perm = list(range(nl)) + [nl, nl + 2, nl + 4, nl + 1, nl + 3]
    x = _ops.permute(x, perm)
    return _ops.reshape(x, (*lead, c * r * r, h // r, w // r))


def _interp_matrix(
    n_in: int, n_out: int, mode: str, align_corners: bool | None, scale: float | None
) -> np.ndarray | None:
    if n_in == n_out and mode in ("nearest", "nearest-exact") and scale is None:
        return None
    m = np.zeros((n_out, n_in))
    dst = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        # PyTorch computes the source index in float32.
        sc = np.float32(1.0 / scale) if scale is not None else np.float32(n_in) / np.float32(n_out)
        off = np.float32(0.5) if mode == "nearest-exact" else np.float32(0.0)
        src = np.floor((dst.astype(np.float32) + off) * sc).astype(np.int64)
        src = np.minimum(src, n_in - 1)
        m[dst, src] = 1.0
        return m
    if align_corners:
        sc = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = sc * dst
    else:
        sc = 1.0 / scale if scale is not None else n_in / n_out
        src = np.maximum(sc * (dst + 0.5) - 0.5, 0.0)
    i0 = np.floor(src).astype(np.int64)
    i0 = np.minimum(i0, n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    np.add.at(m, (dst, i0), 1.0 - lam)
    np.add.at(m, (dst, i1), lam)
    return m


def _interpolate_basic(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the trailing spatial dims (nearest, nearest-exact, linear, bilinear): a constant
    interpolation matrix per axis, applied with matmul (so the VJP is its transpose)."""
    nd = input.ndim - 2
    if nd < 1:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
            f"trilinear | lanczos | area | nearest-exact (got {mode})"
        )
    lin = {"linear": 1, "bilinear": 2}
    if mode in lin and lin[mode] != nd:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {lin[mode] + 2}D input"
        )
    if mode not in ("nearest", "nearest-exact", "linear", "bilinear"):
        raise NotImplementedError(f"interpolate mode {mode!r} is not implemented in chainrule")
    if mode in ("nearest", "nearest-exact") and align_corners is not None:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if antialias:
        raise NotImplementedError("antialias=True is not implemented in chainrule")
    if mode in lin and align_corners is None:
        align_corners = False
    spatial = tuple(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = [int(s) for s in (size if isinstance(size, (list, tuple)) else [size] * nd)]
        if len(sizes) != nd:
            raise ValueError(
                f"Input and output must have the same number of spatial "
                f"dimensions, but got input with spatial dimensions of "
                f"{list(spatial)} and output size of {sizes}. Please provide input "
                "tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, "
                "o2, ...,oK) format."
            )
        scales: list[float | None] = [None] * nd
    elif scale_factor is not None:
        sf = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * nd
        sizes = [int(math.floor(float(n) * float(f))) for n, f in zip(spatial, sf)]
        scales = [None] * nd if recompute_scale_factor else [float(f) for f in sf]
    else:
        raise ValueError("either size or scale_factor should be defined")
    mats = [_interp_matrix(n, o, mode, align_corners, s) for n, o, s in zip(spatial, sizes, scales)]
    if all(m is None for m in mats):
        return _ops.clone(input)  # a new tensor, as PyTorch, never an alias of the input
    return _sep_apply(input, mats)


@on_input_device
def pad(
    input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Tensor:
    """Pad the trailing dims by ``pad`` (last dim first), as torch.nn.functional.pad. A number
    ``value`` is a double to PyTorch, range-checked against the input's dtype."""
    t = type(value)
    if isinstance(value, (float, int)) and t is not bool:
        d = getattr(input, "_data", None)
        if d is not None:
            checked_scalar(float(value), d.dtype)
    elif t is complex:
        raise TypeError("pad(): argument 'value' (position 4) must be float, not complex")
    return _ops.pad(input, pad, mode, value)


@on_input_device
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim."""
    return _ops.one_hot(tensor, num_classes)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the C channels into ``groups`` groups and interleave them: (N, g, C/g, *) ->
    (N, C/g, g, *) -> (N, C, *)."""
    if input.ndim <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with "
            f"sizes {list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = tuple(input.shape[2:])

    def shuffle(t: Tensor) -> Tensor:
        x = _ops.reshape(t, (n, groups, c // groups) + rest)
        return _ops.reshape(_ops.transpose(x, 1, 2), (n, c) + rest)

    # PyTorch's one ChannelShuffleBackward0 (a permutation: linear, saves nothing).
    return _composite_of("ChannelShuffleBackward0", shuffle, (input,), linear=True)


native_channel_shuffle = channel_shuffle


def _fold_args(
    fn: str, kernel_size: Any, dilation: Any, padding: Any, stride: Any
) -> tuple[tuple[int, ...], ...]:
    return tuple(_ntuple(v, 2) for v in (kernel_size, dilation, padding, stride))


def unfold(
    input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """See ``_unfold``; recorded as PyTorch\'s one ``Im2ColBackward0``
    (Note [composite nodes] in chainrule/ops/composite_node.py)."""
    inputs = (input,)
    return _composite_of(
        "Im2ColBackward0",
        lambda *ts: _unfold(ts[0], kernel_size, dilation, padding, stride),
        inputs,
        linear=True,
    )


def _unfold(
    input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """im2col: (N, C, H, W) -> (N, C kh kw, L), column l the (dilated) window at block l,
    rows in (c, i, j) order."""
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)"
        )
    k, d, p, s = _fold_args("unfold", kernel_size, dilation, padding, stride)
    x = input if input.ndim == 4 else _ops.unsqueeze(input, 0)
    n, c, h, w = x.shape
    lh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    lw = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if lh < 1 or lw < 1:
        raise RuntimeError(
            f"Given input with spatial size ({h}, {w}), kernel_size={k}, "
            f"dilation={d}, padding={p}, calculated shape of the array of "
            f"sliding blocks as ({lh}, {lw}), but its components must be at "
            "least one."
        )
    if p != (0, 0):
        x = _ops.pad(x, [p[1], p[1], p[0], p[0]])
    taps = []
    for i in range(k[0]):
        for j in range(k[1]):
            a, b = i * d[0], j * d[1]
            taps.append(
                x[:, :, a : a + s[0] * (lh - 1) + 1 : s[0], b : b + s[1] * (lw - 1) + 1 : s[1]]
            )
    out = _ops.reshape(_ops.stack(taps, 2), (n, c * k[0] * k[1], lh * lw))
    return out if input.ndim == 4 else _ops.squeeze(out, 0)


def fold(
    input: Tensor,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """See ``_fold``; recorded as PyTorch\'s one ``Col2ImBackward0``
    (Note [composite nodes] in chainrule/ops/composite_node.py)."""
    inputs = (input,)
    return _composite_of(
        "Col2ImBackward0",
        lambda *ts: _fold(ts[0], output_size, kernel_size, dilation, padding, stride),
        inputs,
        linear=True,
    )


def _fold(
    input: Tensor,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """col2im, the adjoint of unfold: (N, C kh kw, L) -> (N, C, H, W), every column's entries
    summed back into their window positions."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            "Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
            f"supported (got {input.ndim}D)"
        )
    o = _ntuple(output_size, 2)
    k, d, p, s = _fold_args("fold", kernel_size, dilation, padding, stride)
    x = input if input.ndim == 3 else _ops.unsqueeze(input, 0)
    n, ckk, length = x.shape
    kk = k[0] * k[1]
    if ckk % kk:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product "
            f"of kernel_size, but got input.size(1)={ckk} and kernel_size={k}"
        )
    lh = (o[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    lw = (o[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if lh * lw != length:
        raise RuntimeError(
            f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, "
            f"stride={s}, expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {lh} * {lw} = {lh * lw}, but "
            f"got input.size(2)={length}."
        )
    c = ckk // kk
    cols = _ops.reshape(x, (n, c, k[0], k[1], lh, lw))
    hp, wp = o[0] + 2 * p[0], o[1] + 2 * p[1]
    out = None
    for i in range(k[0]):
        for j in range(k[1]):
            z = cols[:, :, i, j]  # (N, C, Lh, Lw) -> spread by the stride, then shifted
            if s != (1, 1):
                z = _ops.reshape(z, (n, c, lh, 1, lw, 1))
                z = _ops.pad(z, [0, s[1] - 1, 0, 0, 0, s[0] - 1])
                z = _ops.reshape(z, (n, c, lh * s[0], lw * s[1]))
            top, left = i * d[0], j * d[1]
            z = _ops.pad(z, [left, wp - left - z.shape[3], top, hp - top - z.shape[2]])
            out = z if out is None else out + z
    assert out is not None  # the kernel has at least one element
    if p != (0, 0):
        out = out[:, :, p[0] : p[0] + o[0], p[1] : p[1] + o[1]]
    return out if input.ndim == 3 else _ops.squeeze(out, 0)
