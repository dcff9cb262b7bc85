"""Argument checks for the convolutions and pooling, in PyTorch's order and with its texts.

Kept apart from ``conv.py`` (the kernels) so that each stays readable: every check here runs
before any array work, so that a bad call fails with PyTorch's error type and message rather
than a NumPy error from inside a kernel or, worse, a silently wrong (empty, promoted) result.
"""

from __future__ import annotations

import numbers
from typing import Any

__all__ = [
    "arg_type",
    "check_bias",
    "check_conv_dtypes",
    "check_dilation",
    "check_pool2d",
    "check_tensor_args",
    "conv_pair",
    "pool_out_size",
    "pool_pair",
    "shape_str",
]


def arg_type(x: Any) -> str:
    t = type(x)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _ints(fn: str, name: str, v: Any, pos: int | None = None) -> list[int]:
    """``v`` (an int or a sequence of ints) as a list, or torch's TypeError (not int()'s
    ValueError for a string, nor a silent truncation of a float)."""
    items = list(v) if isinstance(v, (list, tuple)) else [v]
    if not all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in items):
        where = f" (position {pos})" if pos is not None else ""
        raise TypeError(
            f"{fn}(): argument '{name}'{where} must be tuple of ints, not {arg_type(v)}"
        )
    return [int(i) for i in items]


def conv_pair(fn: str, name: str, v: Any, nd: int = 2) -> tuple[int, ...]:
    """A conv's stride/padding/dilation: one value or one per spatial dim (torch's texts)."""
    try:
        items = _ints(fn, name, v)
    except TypeError:
        raise TypeError(
            f"{fn}() received an invalid combination of arguments - got "
            f"{name}={arg_type(v)}, but expected a tuple of ints for '{name}'"
        ) from None
    if len(items) not in (1, nd):
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {nd} "
            "values to match the convolution dimensions, but got "
            f"{name}={items}"
        )
    return tuple(items * nd if len(items) == 1 else items)


def pool_pair(fn: str, name: str, v: Any, pos: int) -> tuple[int, int]:
    """A pooling argument: one int or two (torch's texts for anything else)."""
    items = _ints(fn, name, v, pos)
    if len(items) not in (1, 2):
        what = {
            "stride": "must either be omitted, a single int, or a tuple of two ints",
            "dilation": "must be either a single int, or a tuple of two ints",
        }.get(name, "must either be a single int, or a tuple of two ints")
        raise RuntimeError(f"{fn}: {name} {what}")
    return (items[0], items[0]) if len(items) == 1 else (items[0], items[1])


def check_tensor_args(fn: str, input: Any, weight: Any, bias: Any) -> None:
    from chainrule._tensor import Tensor

    for name, x in (("input", input), ("weight", weight), ("bias", bias)):
        if not isinstance(x, Tensor) and not (name == "bias" and x is None):
            raise TypeError(
                f"{fn}() received an invalid combination of arguments - got "
                f"{name}={arg_type(x)}, but expected Tensor for '{name}'"
            )


def check_dilation(dl: tuple[int, ...]) -> None:
    if any(d <= 0 for d in dl):
        raise RuntimeError(
            "dilation should be greater than zero"
            + (f", but got {list(dl)}" if all(d == 0 for d in dl) else "")
        )


def shape_str(t: Any) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def check_conv_dtypes(input: Any, weight: Any, bias: Any, transposed: bool) -> None:
    """One dtype for input, weight and (for conv2d) bias, as torch: no promotion."""
    from chainrule.ops.linalg import _c_name, _type_name

    if bias is not None and not transposed and bias.dtype != input.dtype:
        raise RuntimeError(
            f"Input type ({_c_name(input)}) and bias type ({_c_name(bias)}) should be the same"
        )
    if weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {_type_name(input)} but found {_type_name(weight)}"
        )


def check_bias(weight: Any, bias: Any, groups: int, transposed: bool) -> None:
    """The bias is one value per output channel (torch's text, not NumPy's reshape error)."""
    if bias is None:
        return
    n = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias.ndim != 1 or bias.shape[0] != n:
        head = "Given transposed=1, weight" if transposed else "Given weight"
        raise RuntimeError(
            f"{head} of size {shape_str(weight)}, expected bias to be "
            f"1-dimensional with {n} elements, but got bias of size "
            f"{shape_str(bias)} instead"
        )


def pool_out_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size (a last window must start inside the input or left pad)."""
    num = n + 2 * p - d * (k - 1) - 1
    o = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def check_pool2d(
    shape: tuple[int, ...],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    ceil_mode: bool,
) -> tuple[int, int]:
    """PyTorch's pooling argument checks, in its order and with its texts, for a 3-d or 4-d
    ``shape``; returns the output size. An empty batch is valid, an empty plane is not, and a
    window that fits nowhere (output size 0) is an error rather than an empty result."""
    if any(n == 0 for n in shape[-3:]):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(shape)}"
        )
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    if sh == 0 or sw == 0:
        raise RuntimeError("stride should not be zero")
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if sh < 0 or sw < 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {dh} dilationW: {dw}"
        )
    for pp in (ph, pw):
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
    for pp, kk, dd in ((ph, kh, dh), (pw, kw, dw)):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={pp}, kernel_size={kk} and dilation={dd}"
            )
    if ph > kh // 2 or pw > kw // 2:
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}"
        )
    c, h, w = shape[-3:]
    ho = pool_out_size(h, kh, sh, ph, dh, ceil_mode)
    wo = pool_out_size(w, kw, sw, pw, dw, ceil_mode)
    if ho < 1 or wo < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: "
            f"({c}x{ho}x{wo}). Output size is too small"
        )
    return ho, wo
