"""More of ``torch.nn.functional``: 3-d and 1-d (transposed) convolutions, 1-d / 3-d pooling,
unpooling, power-average pooling, instance and local response normalization, fold / unfold.

Everything here is composed from chainrule's differentiable ops (conv2d, conv_transpose2d,
the 2-d pools, pad, slicing, gather / scatter-add), so the VJPs, and double backward, come
from those ops:

- a 1-d op is the 2-d op on a height-1 image;
- conv3d(x, w) = sum_i conv2d(x[:, :, i*d + s*t], w[:, :, i]) over the depth taps i, with the
  output depths t folded into the batch (kd 2-d convs);
- conv_transpose3d, the adjoint of conv3d in x: per depth tap i, conv_transpose2d of every
  input depth slice, spread by the depth stride (zeros between) and shifted to depth
  i*d - padding by one constant pad (negative widths crop);
- max and average pooling over a box are separable: pool H and W first, then D (as a 2-d pool
  with a (kd, 1) kernel on (N, C, D, Ho*Wo)); the first maximum in (d, h, w) order is the first
  d holding a per-slice first maximum, so indices match PyTorch's.

Long because it holds a family of functionals that share argument parsing.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.ops import _conv_args
from chainrule.ops import conv as _conv

__all__ = [
    "conv3d",
    "conv_transpose1d",
    "conv_transpose3d",
    "max_pool1d",
    "max_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "instance_norm",
    "local_response_norm",
    "unfold",
    "fold",
]


def _F() -> Any:
    from chainrule.nn import functional

    return functional


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return (int(v[0]),) * n
        if len(v) != n:
            raise RuntimeError(f"expected {n} values, got {list(v)}")
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _const(a: np.ndarray, like: Tensor) -> Tensor:
    return _new_tensor(np.asarray(a, dtype=like._data.dtype))


# Convolutions ---------------------------------------------------------------------------------


def _same_pad(k: int, d: int) -> tuple[int, int]:
    total = d * (k - 1)
    return total // 2, total - total // 2


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """3-d cross-correlation, as ``torch.nn.functional.conv3d``:
    out[n, o, t] = b[o] + sum_{c, i, j, l} w[o, c, i, j, l] xpad[n, g(o) c, s t + d (i, j, l)].

    Computed as kd 2-d convolutions (one per depth tap, the output depths folded into the
    batch), summed."""
    _conv_args.check_tensor_args("conv3d", input, weight, bias)
    x, unbatched = _conv._batched(input, 3)
    _conv_args.check_conv_dtypes(input, weight, bias, False)
    _conv._check_conv(x, weight, groups, False, 3)
    _conv_args.check_bias(weight, bias, groups, False)
    st = _conv.conv_pair("conv3d", "stride", stride, 3)
    dl = _conv.conv_pair("conv3d", "dilation", dilation, 3)
    _conv_args.check_dilation(dl)
    if min(st) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    ks = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * 3
        elif padding == "same":
            if st != (1, 1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            if any(d * (k - 1) % 2 for k, d in zip(ks, dl)):
                warnings.warn(
                    "Using padding='same' with even kernel lengths and odd dilation "
                    "may require a zero-padded copy of the input be created",
                    UserWarning,
                    stacklevel=2,
                )
            pads = [_same_pad(k, d) for k, d in zip(ks, dl)]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        p = _conv.conv_pair("conv3d", "padding", padding, 3)
        if min(p) < 0:
            raise RuntimeError("negative padding is not supported")
        pads = [(q, q) for q in p]
    _conv._check_size(x, weight, pads, dl, 3)
    n, c, dd, h, w = x.shape
    o = weight.shape[0]
    (pd0, pd1), (ph0, ph1), (pw0, pw1) = pads
    if (ph0, pw0) != (ph1, pw1):
        # Asymmetric 'same' padding in H or W: pad explicitly, conv2d then pads nothing.
        x = _ops.pad(x, [pw0, pw1, ph0, ph1])
        ph0 = pw0 = 0
    if pd0 or pd1:
        x = _ops.pad(x, [0, 0, 0, 0, pd0, pd1])
    dp = x.shape[2]
    kd = ks[0]
    do = (dp - dl[0] * (kd - 1) - 1) // st[0] + 1
    out = None
    for i in range(kd):
        a = i * dl[0]
        sl = x[:, :, a : a + st[0] * (do - 1) + 1 : st[0]]  # (N, C, Do, H', W')
        sl = _ops.reshape(_ops.movedim(sl, 2, 1), (n * do, c, x.shape[3], x.shape[4]))
        part = _conv.conv2d(sl, weight[:, :, i], None, st[1:], (ph0, pw0), dl[1:], groups)
        out = part if out is None else out + part
    ho, wo = out.shape[2:]
    out = _ops.movedim(_ops.reshape(out, (n, do, o, ho, wo)), 1, 2)
    if bias is not None:
        out = out + _ops.reshape(bias, (1, o, 1, 1, 1))
    return _ops.squeeze(out, 0) if unbatched else out


def _check_output_padding(op: tuple[int, ...], st: tuple[int, ...], dl: tuple[int, ...]) -> None:
    names = ("depth", "height", "width")[3 - len(op) :]
    for i in range(len(op)):
        if op[i] >= st[i] and op[i] >= dl[i]:
            parts = [
                f"{what}_{nm}: {v}"
                for what, vals in (("output_padding", op), ("stride", st), ("dilation", dl))
                for nm, v in zip(names, vals)
            ]
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got "
                + " ".join(parts)
            )


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """1-d transposed convolution (the gradient of conv1d in its input):
    L_out = (L_in - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1; computed as
    conv_transpose2d on a height-1 image."""
    _conv_args.check_tensor_args("conv_transpose1d", input, weight, bias)
    x, unbatched = _conv._batched(input, 1)
    if x.ndim != 3 or weight.ndim != 3:
        raise RuntimeError(
            "Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, "
            f"but got input of size: {list(input.shape)}"
        )
    s, p, op, d = (
        _conv.conv_pair("conv_transpose1d", nm, v, 1)[0]
        for nm, v in (
            ("stride", stride),
            ("padding", padding),
            ("output_padding", output_padding),
            ("dilation", dilation),
        )
    )
    _check_output_padding((0, op), (1, s), (1, d))
    out = _conv.conv_transpose2d(
        _ops.unsqueeze(x, 2),
        _ops.unsqueeze(weight, 2),
        bias,
        (1, s),
        (0, p),
        (0, op),
        groups,
        (1, d),
    )
    out = _ops.squeeze(out, 2)
    return _ops.squeeze(out, 0) if unbatched else out


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """3-d transposed convolution (the gradient of conv3d in its input); per spatial dim
    out = (in - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1.

    Per depth tap i: conv_transpose2d of every input depth slice (depth folded into the
    batch), spread to depths s*t (zeros between), shifted by i*d - padding; summed."""
    _conv_args.check_tensor_args("conv_transpose3d", input, weight, bias)
    x, unbatched = _conv._batched(input, 3)
    _conv_args.check_conv_dtypes(input, weight, bias, True)
    _conv._check_conv(x, weight, groups, True, 3)
    _conv_args.check_bias(weight, bias, groups, True)
    st, pd, op, dl = (
        _conv.conv_pair("conv_transpose3d", nm, v, 3)
        for nm, v in (
            ("stride", stride),
            ("padding", padding),
            ("output_padding", output_padding),
            ("dilation", dilation),
        )
    )
    _conv_args.check_dilation(dl)
    _check_output_padding(op, st, dl)
    n, c, d, h, w = x.shape
    kd = weight.shape[2]
    dout = (d - 1) * st[0] - 2 * pd[0] + dl[0] * (kd - 1) + op[0] + 1
    if dout <= 0:
        raise RuntimeError(
            f"Given input size per channel: ({d} x {h} x {w}). Calculated output "
            "size per channel is too small"
        )
    flat = _ops.reshape(_ops.movedim(x, 2, 1), (n * d, c, h, w))
    out = None
    for i in range(kd):
        z = _conv.conv_transpose2d(
            flat, weight[:, :, i], None, st[1:], pd[1:], op[1:], groups, dl[1:]
        )
        co, ho, wo = z.shape[1:]
        z = _ops.movedim(_ops.reshape(z, (n, d, co, ho, wo)), 1, 2)  # (N, Co, D, Ho, Wo)
        if st[0] > 1:
            # Zeros between the depth slices: (N, Co, D, s, Ho, Wo) -> (N, Co, D s, Ho, Wo).
            z = _ops.pad(_ops.unsqueeze(z, 3), [0, 0, 0, 0, 0, st[0] - 1])
            z = _ops.reshape(z, (n, co, d * st[0], ho, wo))
        length = z.shape[2]
        left = i * dl[0] - pd[0]
        z = _ops.pad(z, [0, 0, 0, 0, left, dout - left - length])
        out = z if out is None else out + z
    if bias is not None:
        out = out + _ops.reshape(bias, (1, -1, 1, 1, 1))
    return _ops.squeeze(out, 0) if unbatched else out


# Pooling --------------------------------------------------------------------------------------


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
    dsel = np.asarray(idxd._data) // m  # the chosen depth of each output
    i2 = idx2.reshape(n, c, d, m)
    inner = np.take_along_axis(i2, dsel, axis=2)
    flat = dsel * hw + inner
    return (
        _ops.reshape(out, (n, c, do, ho, wo)),
        _new_tensor(flat.reshape(n, c, do, ho, wo).astype(np.int64)),
    )


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

    out, idx = _compose_depth(out2, np.asarray(idx2._data), n, c, d, h * w, pool_d)
    if input.ndim == 4:
        out, idx = _ops.squeeze(out, 0), _ops.squeeze(idx, 0)
    return out, idx


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
    out = _F().avg_pool2d(
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
    volume (``count_include_pad``), the number of real elements, or ``divisor_override``."""
    _check_nd("avg_pool3d", input, 3)
    F = _F()
    k = _ntuple(kernel_size, 3)
    s = _stride(stride, k, 3)
    p = _ntuple(padding, 3)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = input if input.ndim == 5 else _ops.unsqueeze(input, 0)
    n, c, d, h, w = x.shape
    sums = F.avg_pool2d(_ops.reshape(x, (n, c * d, h, w)), k[1:], s[1:], p[1:], ceil_mode, True, 1)
    ho, wo = sums.shape[-2:]
    sums = F.avg_pool2d(
        _ops.reshape(sums, (n, c, d, ho * wo)), (k[0], 1), (s[0], 1), (p[0], 0), ceil_mode, True, 1
    )
    do = sums.shape[2]
    inc, real = [], []
    for size, kk, ss, pp in zip((d, h, w), k, s, p):
        _, a, b = F._avg_matrix(size, kk, ss, pp, ceil_mode, count_include_pad)
        inc.append(a)
        real.append(b)
    if divisor_override is not None:
        div = np.full((do, ho, wo), float(divisor_override))
    else:
        v = inc if count_include_pad else real
        div = v[0][:, None, None] * v[1][None, :, None] * v[2][None, None, :]
    out = _ops.reshape(sums, (n, c, do, ho, wo)) * _const(1.0 / div, input)
    return _ops.squeeze(out, 0) if input.ndim == 4 else out


def _adaptive_matrix(n: int, o: int) -> np.ndarray:
    st, en = _F()._adaptive_bounds(n, o)
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


def _check_adaptive(fn: str, input: Tensor, nd: int) -> None:
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
    _check_adaptive("adaptive_avg_pool1d", input, 1)
    (o,) = _adaptive_sizes(output_size, tuple(input.shape[-1:]))
    return _F()._sep_apply(input, [_adaptive_matrix(input.shape[-1], o)])


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Mean over the adaptive windows of D, H and W (one constant matrix per axis)."""
    _check_adaptive("adaptive_avg_pool3d", input, 3)
    sizes = _adaptive_sizes(output_size, tuple(input.shape[-3:]))
    if min(sizes) < 0:
        raise RuntimeError(
            "adaptive_avg_pool3d: elements of output_size must be greater than or "
            f"equal to 0 but received {{{sizes[0]}, {sizes[1]},{sizes[2]}}}"  # torch's spacing
        )
    mats = [_adaptive_matrix(n, o) for n, o in zip(input.shape[-3:], sizes)]
    return _F()._sep_apply(input, mats)


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = True
) -> tuple[Tensor, Tensor]:
    """Max over the adaptive windows of L and their argmax positions."""
    _check_adaptive("adaptive_max_pool1d", input, 1)
    (o,) = _adaptive_sizes(output_size, tuple(input.shape[-1:]))
    out, idx = _F().adaptive_max_pool2d(_ops.unsqueeze(input, -2), (1, o), True)
    return _ops.squeeze(out, -2), _ops.squeeze(idx, -2)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over the adaptive windows of L."""
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = True
) -> tuple[Tensor, Tensor]:
    """Max over the adaptive windows of H, W and the flat argmax positions."""
    return _F().adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = True
) -> tuple[Tensor, Tensor]:
    """Max over the adaptive windows of D, H, W (separable, as max_pool3d) and the flat
    (d H W + h W + w) argmax positions."""
    _check_adaptive("adaptive_max_pool3d", input, 3)
    F = _F()
    x = input if input.ndim == 5 else _ops.unsqueeze(input, 0)
    n, c, d, h, w = x.shape
    od, oh, ow = _adaptive_sizes(output_size, (d, h, w))
    out2, idx2 = F.adaptive_max_pool2d(_ops.reshape(x, (n, c * d, h, w)), (oh, ow), True)

    def pool_d(t: Tensor) -> Any:
        return F.adaptive_max_pool2d(t, (od, t.shape[-1]), True)

    out, idx = _compose_depth(out2, np.asarray(idx2._data), n, c, d, h * w, pool_d)
    if input.ndim == 4:
        out, idx = _ops.squeeze(out, 0), _ops.squeeze(idx, 0)
    return out, idx


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over the adaptive windows of D, H, W."""
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


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
    idx = np.asarray(indices._data).reshape(lead + (-1,)).astype(np.int64)
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
    avg = _F().avg_pool2d(input**norm_type, k, stride, 0, ceil_mode)
    return _lp(avg, norm_type, k[0] * k[1])


def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling: (sum over the window of x^p)^(1/p)."""
    k = _ntuple(kernel_size, 3)
    avg = avg_pool3d(input**norm_type, k, stride, 0, ceil_mode)
    return _lp(avg, norm_type, k[0] * k[1] * k[2])


# Normalization --------------------------------------------------------------------------------


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each (sample, channel) over its spatial dims:
    y = (x - mean) / sqrt(var + eps) * w[c] + b[c] (biased variance). With ``use_input_stats``
    the running stats, if given, move towards the batch mean of the per-instance stats
    (unbiased variance); otherwise they normalize."""
    if input.ndim < 3:
        raise ValueError(f"Expected 2D+ input for instance_norm, got {input.ndim}D")
    n, c = input.shape[:2]
    spatial = tuple(range(2, input.ndim))
    count = int(np.prod(input.shape[2:]))
    shape = (1, c) + (1,) * len(spatial)
    if use_input_stats:
        if count <= 1:
            raise ValueError(
                "Expected more than 1 spatial element when training, got input "
                f"size {list(input.shape)}"
            )
        mean = _ops.mean(input, dim=spatial, keepdim=True)
        cen = input - mean
        var = _ops.mean(cen * cen, dim=spatial, keepdim=True)
        y = cen * (var + eps) ** -0.5
        with _grad_mode.no_grad():
            m = float(momentum)
            if running_mean is not None:
                bm = np.asarray(mean._data).reshape(n, c).mean(axis=0)
                running_mean._data[...] = (1 - m) * np.asarray(running_mean._data) + m * bm
                running_mean._bump_version()
            if running_var is not None:
                bv = np.asarray(var._data).reshape(n, c).mean(axis=0) * (count / (count - 1))
                running_var._data[...] = (1 - m) * np.asarray(running_var._data) + m * bv
                running_var._bump_version()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(
                "Expected running_mean and running_var to be defined when use_input_stats is false"
            )
        y = (input - _ops.reshape(running_mean, shape)) * (
            _ops.reshape(running_var, shape) + eps
        ) ** -0.5
    if weight is not None:
        y = y * _ops.reshape(weight, shape)
    if bias is not None:
        y = y + _ops.reshape(bias, shape)
    return y


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Normalize over neighbouring channels:
    y[c] = x[c] / (k + alpha / size * sum_{c' in [c - size//2, c + (size-1)//2]} x[c']^2)^beta
    (zeros beyond the channel range)."""
    if input.ndim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)"
        )
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    x = _ops.movedim(sq, 1, -1)
    x = _ops.pad(x, [size // 2, (size - 1) // 2])
    acc = None
    for j in range(size):  # one slice per window offset, never per element
        part = x[..., j : j + c]
        acc = part if acc is None else acc + part
    div = _ops.movedim(acc, -1, 1) * (float(alpha) / size) + float(k)
    return input / div ** float(beta)


# Fold / unfold --------------------------------------------------------------------------------


def _fold_args(
    fn: str, kernel_size: Any, dilation: Any, padding: Any, stride: Any
) -> tuple[tuple[int, int], ...]:
    return tuple(_ntuple(v, 2) for v in (kernel_size, dilation, padding, stride))


def unfold(
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
    if p != (0, 0):
        out = out[:, :, p[0] : p[0] + o[0], p[1] : p[1] + o[1]]
    return out if input.ndim == 3 else _ops.squeeze(out, 0)


# Fractional max pooling -----------------------------------------------------------------------


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
    u = np.asarray(samples._data if isinstance(samples, Tensor) else samples)
    if u.shape != (n, c, nd):
        raise RuntimeError(
            f"{fn}(): expected _random_samples of shape {[n, c, nd]}, got {list(u.shape)}"
        )
    # Which sample drives which axis, as torch: in 2-d sample 0 drives W and 1 drives H; in
    # 3-d sample a drives axis a (T, H, W).
    which = [1, 0] if nd == 2 else list(range(nd))
    starts = [_intervals(u[..., which[a]], spatial[a], out[a], k[a]) for a in range(nd)]
    xa = np.asarray(x._data).reshape(n, c, -1)
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
    cand = flat_idx.reshape(n, c, int(np.prod(out)), -1)
    vals = np.take_along_axis(xa, cand.reshape(n, c, -1), axis=2).reshape(cand.shape)
    best = np.argmax(vals, axis=-1)[..., None]
    idx = np.take_along_axis(cand, best, axis=-1)[..., 0]  # (N, C, prod(out))
    flat = _ops.reshape(x, (n, c, -1))
    res = _ops.reshape(_ops.gather(flat, 2, _new_tensor(idx)), (n, c) + out)
    ind = _new_tensor(idx.reshape((n, c) + out))
    if input.ndim == nd + 1:
        res, ind = _ops.squeeze(res, 0), _ops.squeeze(ind, 0)
    return (res, ind) if return_indices else res


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


__all__ += [
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
]
