"""Convolutions: conv1d/conv2d/conv_transpose2d/conv_transpose1d (ops with their own VJPs,
chainrule.ops.conv and chainrule.ops.fused_nn) and conv3d, conv_transpose3d composed from them:

- a 1-d op is the 2-d op's forward on a height-1 image, recorded as one op (one
  ConvolutionBackward0, as PyTorch);
- conv3d(x, w) = sum_i conv2d(x[:, :, i*d + s*t], w[:, :, i]) over the depth taps i, with the
  output depths t folded into the batch (kd 2-d convs);
- conv_transpose3d, the adjoint of conv3d in x: per depth tap i, conv_transpose2d of every
  input depth slice, spread by the depth stride (zeros between) and shifted to depth
  i*d - padding by one constant pad (negative widths crop).
"""

from __future__ import annotations

import warnings
from typing import Any

from chainrule import ops as _ops
from chainrule._autocast_state import state as _ac
from chainrule._tensor import Tensor
from chainrule.ops import _autocast, _conv_args
from chainrule.ops import conv as _conv
from chainrule.ops import fused_nn as _fused

__all__ = ["conv1d", "conv2d", "conv_transpose2d", "conv3d", "conv_transpose1d", "conv_transpose3d"]


conv1d = _conv.conv1d
conv2d = _conv.conv2d


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """2-d transposed convolution (see chainrule.ops.conv)."""
    return _conv.conv_transpose2d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )


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
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, weight, bias = _autocast.lower(input, weight, bias)
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
    assert out is not None  # the kernel has a depth of at least 1
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
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, weight, bias = _autocast.lower(input, weight, bias)
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
    # conv_transpose2d's checks on the height-1 images (its texts, as before)
    x4 = _conv._Shape((*x.shape[:2], 1, x.shape[2]))
    w4 = _conv._Shape((*weight.shape[:2], 1, weight.shape[2]))
    _conv_args.check_conv_dtypes(input, weight, bias, True)
    _conv._check_conv(x4, w4, groups, True, 2)
    _conv_args.check_bias(weight, bias, groups, True)
    _conv_args.check_dilation((d,))
    out_l = (x.shape[2] - 1) * s - 2 * p + d * (weight.shape[2] - 1) + op + 1
    params = {
        "stride": (1, s),
        "padding": ((0, 0), (p, p)),
        "dilation": (1, d),
        "groups": int(groups),
        "out_hw": (1, out_l),
    }
    out = _fused.conv_transpose1d(x, weight, bias, params)  # one ConvolutionBackward0, as torch
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
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, weight, bias = _autocast.lower(input, weight, bias)
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
    assert out is not None  # the kernel has a depth of at least 1
    if bias is not None:
        out = out + _ops.reshape(bias, (1, -1, 1, 1, 1))
    return _ops.squeeze(out, 0) if unbatched else out
