"""Max, average, power-average pooling over 1-3 dims, and max unpooling.

Average pooling is linear and separable: two matmuls with constant (out, in) matrices, one
per spatial axis (``_sep_apply``). Max pooling gathers the argmax of each window
(``chainrule.ops.conv.max_pool2d_with_indices``). Pooling over a box is separable too: pool
H and W first, then D (as a 2-d pool with a (kd, 1) kernel on (N, C, D, Ho*Wo)); the first
maximum in (d, h, w) order is the first d holding a per-slice first maximum, so indices
match PyTorch's.

Long because the 1-, 2- and 3-d forms share their argument parsing and window matrices;
adaptive and fractional pooling are in their own modules.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.nn._functional._common import (
    _const,
    _ntuple,
    _tensor_args,
)
from chainrule.nn._functional._device import on_input_device
from chainrule.ops import _conv_args
from chainrule.ops import conv as _conv
from chainrule.ops.composite_node import composite

__all__ = [
    "max_pool2d",
    "avg_pool2d",
    "max_pool1d_with_indices",
    "max_pool1d",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
]


@on_input_device
def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Max over windows; with ``return_indices`` also the flat (h * W + w) argmax indices.
    VJP: g scattered to each window's argmax."""
    _tensor_args("max_pool2d", ("input", 1, input, False))
    out, idx = _conv.max_pool2d_with_indices(
        input, kernel_size, stride, padding, dilation, ceil_mode
    )
    return (out, idx) if return_indices else out


def _sep_apply(x: Tensor, mats: Sequence[np.ndarray | None]) -> Tensor:
    """Apply one constant (out, in) matrix per trailing spatial axis (None: identity)."""
    nd = len(mats)
    for i, m in enumerate(mats):
        if m is None:
            continue
        axis = x.ndim - nd + i
        if axis == x.ndim - 1:
            x = _ops.matmul(x, _const(m.T, x))
        else:
            # (..., in, rest) -> contract the axis by moving it last.
            x = _ops.movedim(x, axis, -1)
            x = _ops.matmul(x, _const(m.T, x))
            x = _ops.movedim(x, -1, axis)
    return x


def _avg_matrix(
    n: int, k: int, s: int, p: int, ceil_mode: bool, count_include_pad: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """0/1 window matrix (out, n) and the per-output divisors with and without padding."""
    o = _conv_args.pool_out_size(n, k, s, p, 1, ceil_mode)
    m = np.zeros((o, n))
    inc = np.zeros(o)
    real = np.zeros(o)
    for i in range(o):  # one row per output position along one axis, not per pixel
        start = i * s - p
        end = min(start + k, n + p)
        inc[i] = end - start
        a, b = max(start, 0), min(end, n)
        m[i, a:b] = 1.0
        real[i] = b - a
    return m, inc, real


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """2-d average pooling, recorded as PyTorch's one ``AvgPool2DBackward0`` (Note [composite
    nodes] in chainrule/ops/composite_node.py); ``_avg_pool2d`` computes it."""
    args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    _tensor_args("avg_pool2d", ("input", 1, input, False))
    return composite("AvgPool2DBackward0", lambda x: _avg_pool2d(x, *args), (input,), linear=True)


def _avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over windows: the window sums are a conv2d of each (n, c) plane with a ones kernel
    (zero padding, extra zeros on the right for ``ceil_mode``), then scaled by 1 / divisor."""
    _tensor_args("avg_pool2d", ("input", 1, input, False))
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    k = _conv.pool_pair("avg_pool2d", "kernel_size", kernel_size, 2)
    s = (
        k
        if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
        else _conv.pool_pair("avg_pool2d", "stride", stride, 3)
    )
    p = _conv.pool_pair("avg_pool2d", "padding", padding, 4)
    _conv.check_pool2d(tuple(input.shape), k, s, p, (1, 1), ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    h, w = input.shape[-2:]
    mh, inch, realh = _avg_matrix(h, k[0], s[0], p[0], ceil_mode, count_include_pad)
    mw, incw, realw = _avg_matrix(w, k[1], s[1], p[1], ceil_mode, count_include_pad)
    if divisor_override is not None:
        div = np.full((len(mh), len(mw)), float(divisor_override))
    elif count_include_pad:
        div = np.outer(inch, incw)
    else:
        div = np.outer(realh, realw)
    oh, ow = len(mh), len(mw)
    lead = tuple(input.shape[:-2])
    planes = _ops.reshape(input, (int(np.prod(lead)), 1, h, w))  # not -1: N may be 0
    extra = [
        max(0, (o - 1) * st + kk - (n + 2 * pp))
        for o, st, kk, n, pp in ((oh, s[0], k[0], h, p[0]), (ow, s[1], k[1], w, p[1]))
    ]
    ones = _const(np.ones((1, 1, k[0], k[1])), input)
    sums = _ops.apply_op(
        _conv._conv2d,
        (planes, ones, None),
        {
            "stride": s,
            "padding": ((p[0], p[0] + extra[0]), (p[1], p[1] + extra[1])),
            "dilation": (1, 1),
            "groups": 1,
        },
    )
    out = _ops.reshape(sums, lead + (oh, ow))
    return out * _const(1.0 / div, input)


def _stride(stride: Any, kernel: tuple[int, ...], n: int) -> tuple[int, ...]:
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return kernel
    return _ntuple(stride, n)


def _check_nd(fn: str, input: Tensor, nd: int) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if input.ndim not in (nd + 1, nd + 2):
        if nd == 3:
            raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
        raise RuntimeError(
            f"{fn}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim "
            f"batch size for input, but got:{list(input.shape)}"
        )


@on_input_device
def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple[Tensor, Tensor]:
    """1-d max pooling and the argmax positions (as a 2-d pool of a height-1 image)."""
    _check_nd("max_pool1d", input, 1)
    k = _ntuple(kernel_size, 1)
    s = _stride(stride, k, 1)
    p, d = _ntuple(padding, 1), _ntuple(dilation, 1)
    for what, v in (("kernel_size", k), ("stride", s), ("dilation", d)):
        if v[0] <= 0:
            raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {v[0]}")
    out, idx = _conv.max_pool2d_with_indices(
        _ops.unsqueeze(input, -2), (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]), ceil_mode
    )
    return _ops.squeeze(out, -2), _ops.squeeze(idx, -2)


@on_input_device
def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """1-d max pooling over (N, C, L) or (C, L)."""
    out, idx = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


@on_input_device
def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple[Tensor, Tensor]:
    """2-d max pooling and the flat (h W + w) argmax positions."""
    return _conv.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def _compose_depth(
    out2: Tensor, idx2: np.ndarray, n: int, c: int, d: int, hw: int, pool_d: Any
) -> tuple[Tensor, Tensor]:
    """Finish a separable 3-d max pool: pool the (N, C, D, Ho*Wo) per-slice maxima over D with
    ``pool_d`` (a 2-d pool with a (kd, 1) window returning flat indices), and compose the
    indices: flat d H W + (per-slice index of that d)."""
    ho, wo = out2.shape[-2:]
    m = ho * wo
    t = _ops.reshape(out2, (n, c, d, m))
    out, idxd = pool_d(t)
    do = out.shape[2]
    dsel = idxd._data // m  # the chosen depth of each output
    i2 = idx2.reshape(n, c, d, m)
    inner = np.take_along_axis(i2, dsel, axis=2)
    flat = dsel * hw + inner
    return (
        _ops.reshape(out, (n, c, do, ho, wo)),
        _new_tensor(flat.reshape(n, c, do, ho, wo).astype(np.int64)),
    )


@on_input_device
def max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple[Tensor, Tensor]:
    """3-d max pooling and the flat (d H W + h W + w) argmax positions (separable: H, W first,
    then D)."""
    _check_nd("max_pool3d", input, 3)
    k = _ntuple(kernel_size, 3)
    s = _stride(stride, k, 3)
    p, dl = _ntuple(padding, 3), _ntuple(dilation, 3)
    x = input if input.ndim == 5 else _ops.unsqueeze(input, 0)
    n, c, d, h, w = x.shape
    out2, idx2 = _conv.max_pool2d_with_indices(
        _ops.reshape(x, (n, c * d, h, w)), k[1:], s[1:], p[1:], dl[1:], ceil_mode
    )

    def pool_d(t: Tensor) -> Any:
        return _conv.max_pool2d_with_indices(
            t, (k[0], 1), (s[0], 1), (p[0], 0), (dl[0], 1), ceil_mode
        )

    out, idx = _compose_depth(out2, idx2._data, n, c, d, h * w, pool_d)
    if input.ndim == 4:
        out, idx = _ops.squeeze(out, 0), _ops.squeeze(idx, 0)
    return out, idx


@on_input_device
def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W)."""
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """1-d average pooling (a 2-d pool of a height-1 image)."""
    _check_nd("avg_pool1d", input, 1)
    k = _ntuple(kernel_size, 1)
    s = _stride(stride, k, 1)
    p = _ntuple(padding, 1)
    out = avg_pool2d(
        _ops.unsqueeze(input, -2), (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode, count_include_pad
    )
    return _ops.squeeze(out, -2)


def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """3-d average pooling: box sums (H, W then D, separable) over a divisor: the window
    volume (``count_include_pad``), the number of real elements, or ``divisor_override``;
    recorded as PyTorch's one ``AvgPool3DBackward0`` (Note [composite nodes])."""
    _check_nd("avg_pool3d", input, 3)
    args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return composite("AvgPool3DBackward0", lambda x: _avg_pool3d(x, *args), (input,), linear=True)


def _avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Tensor:
    k = _ntuple(kernel_size, 3)
    s = _stride(stride, k, 3)
    p = _ntuple(padding, 3)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = input if input.ndim == 5 else _ops.unsqueeze(input, 0)
    n, c, d, h, w = x.shape
    sums = _avg_pool2d(_ops.reshape(x, (n, c * d, h, w)), k[1:], s[1:], p[1:], ceil_mode, True, 1)
    ho, wo = sums.shape[-2:]
    sums = _avg_pool2d(
        _ops.reshape(sums, (n, c, d, ho * wo)), (k[0], 1), (s[0], 1), (p[0], 0), ceil_mode, True, 1
    )
    do = sums.shape[2]
    inc, real = [], []
    for size, kk, ss, pp in zip((d, h, w), k, s, p):
        _, a, b = _avg_matrix(size, kk, ss, pp, ceil_mode, count_include_pad)
        inc.append(a)
        real.append(b)
    if divisor_override is not None:
        div = np.full((do, ho, wo), float(divisor_override))
    else:
        v = inc if count_include_pad else real
        div = v[0][:, None, None] * v[1][None, :, None] * v[2][None, None, :]
    out = _ops.reshape(sums, (n, c, do, ho, wo)) * _const(1.0 / div, input)
    return _ops.squeeze(out, 0) if input.ndim == 4 else out


def _unpool(
    fn: str,
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    output_size: Any,
    nd: int,
) -> Tensor:
    """Zeros of the output size with input[n, c, j] written at flat position indices[n, c, j]
    (a scatter-add, whose VJP gathers g at the indices)."""
    k = _ntuple(kernel_size, nd)
    s = _stride(stride, k, nd)
    p = _ntuple(padding, nd)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{fn}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor for "
            f"input, but got: {list(input.shape)}"
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: "
            f"{list(indices.shape)}"
        )
    spatial = tuple(input.shape[-nd:])
    default = [(spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd)]
    if output_size is None:
        size = default
    else:
        size = [int(v) for v in output_size][-nd:]
        if len(size) != nd:
            raise ValueError(
                f"output_size should be a sequence containing {nd} or {nd + 2} "
                f"elements, but it has a length of '{len(list(output_size))}'"
            )
        for i in range(nd):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < size[i] < hi:
                raise ValueError(
                    f'invalid output_size "{size}" (dim {i} must be between {lo} and {hi})'
                )
    lead = tuple(input.shape[:-nd])
    total = int(np.prod(size))
    idx = indices._data.reshape(lead + (-1,)).astype(np.int64)
    wrong = (idx < 0) | (idx >= total)
    if wrong.any():
        bad = int(idx.reshape(-1)[np.argmax(wrong.reshape(-1))])  # the first, as torch
        raise RuntimeError(
            f"Found an invalid max index: {bad} (output volumes are of size "
            f"{'x'.join(map(str, size))})"
        )
    flat = _ops.reshape(input, lead + (-1,))
    zeros = _const(np.zeros(lead + (total,)), input)
    out = _ops.scatter_add(zeros, -1, _new_tensor(idx), flat)
    return _ops.reshape(out, lead + tuple(size))


@on_input_device
def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The partial inverse of max_pool1d: maxima back at their positions, zeros elsewhere."""
    return _unpool("max_unpool1d", input, indices, kernel_size, stride, padding, output_size, 1)


@on_input_device
def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The partial inverse of max_pool2d: maxima back at their positions, zeros elsewhere."""
    return _unpool("max_unpool2d", input, indices, kernel_size, stride, padding, output_size, 2)


@on_input_device
def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The partial inverse of max_pool3d: maxima back at their positions, zeros elsewhere."""
    return _unpool("max_unpool3d", input, indices, kernel_size, stride, padding, output_size, 3)


def _lp(avg: Tensor, norm_type: float, volume: int) -> Tensor:
    # (sum x^p)^(1/p) = (volume * mean x^p)^(1/p); sign * relu(|.|) keeps the root real.
    return (_ops.sign(avg) * _ops.relu(_ops.abs(avg)) * float(volume)) ** (1.0 / norm_type)


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling: (sum over the window of x^p)^(1/p)."""
    k = _ntuple(kernel_size, 1)
    return _lp(avg_pool1d(input**norm_type, k, stride, 0, ceil_mode), norm_type, k[0])


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling: (sum over the window of x^p)^(1/p)."""
    k = _ntuple(kernel_size, 2)
    avg = avg_pool2d(input**norm_type, k, stride, 0, ceil_mode)
    return _lp(avg, norm_type, k[0] * k[1])


def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling: (sum over the window of x^p)^(1/p)."""
    k = _ntuple(kernel_size, 3)
    avg = avg_pool3d(input**norm_type, k, stride, 0, ceil_mode)
    return _lp(avg, norm_type, k[0] * k[1] * k[2])
