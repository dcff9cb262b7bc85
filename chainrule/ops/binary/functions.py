"""Elementwise functions of two or three inputs that are no arithmetic operator: maximum/minimum,
fmax/fmin, atan2/arctan2 and lerp."""

from __future__ import annotations

from typing import Any

from chainrule import _kinds
from chainrule._dtype import result_type
from chainrule._scalar_convert import check_scalar_int, checked_scalar, complex_scalar_value
from chainrule.ops._registry import OpDef, apply_op, binary, ns
from chainrule.ops.binary._common import (
    _checked,
    _legacy,
    _tensor_pair,
    _torch_name,
    broadcast_error,
)
from chainrule.ops.complex_numbers import cj

__all__ = ["maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "lerp"]


# maximum / minimum ----------------------------------------------------------------------------


def _mask(c: Any, g: Any) -> Any:
    return ns.where(c, g, g * 0)


def _max_vjp(ctx: Any, g: Any) -> Any:
    # PyTorch splits the gradient evenly between tied inputs.
    a, b = ctx.a, ctx.b
    half = ns.where(a == b, g * 0.5, g)
    need = ctx.needs_input_grad
    return (_mask(a >= b, half) if need[0] else None, _mask(b >= a, half) if need[1] else None)


_maximum = binary(
    "maximum",
    # b first: on a tie (0.0 and -0.0) NumPy returns its second operand, PyTorch its first
    _checked(lambda xp, a, b: xp.maximum(b, a)),
    saves=("a", "b"),
    vjp=(None, None),
    doc="Elementwise max (NaN propagates).",
)
_maximum.op.vjp(_max_vjp)


def maximum(input: Any, other: Any) -> Any:
    """Elementwise maximum; NaN propagates. VJP: g to the larger input, g/2 to each on ties."""
    _tensor_pair("maximum", input, other)
    return _maximum(input, other)


def _min_vjp(ctx: Any, g: Any) -> Any:
    a, b = ctx.a, ctx.b
    half = ns.where(a == b, g * 0.5, g)
    need = ctx.needs_input_grad
    return (_mask(a <= b, half) if need[0] else None, _mask(b <= a, half) if need[1] else None)


_minimum = binary(
    "minimum",
    _checked(lambda xp, a, b: xp.minimum(b, a)),  # b first, as maximum
    saves=("a", "b"),
    vjp=(None, None),
    doc="Elementwise min (NaN propagates).",
)
_minimum.op.vjp(_min_vjp)


def minimum(input: Any, other: Any) -> Any:
    """Elementwise minimum; NaN propagates. VJP: g to the smaller input, g/2 to each on ties."""
    _tensor_pair("minimum", input, other)
    return _minimum(input, other)


def _fmax_vjp(ctx: Any, g: Any) -> Any:
    # PyTorch: all of g to input where input >= other or other is NaN, else to other.
    a, b = ctx.a, ctx.b
    first = (a >= b) | ns.isnan(b)
    return (
        _mask(first, g) if ctx.needs_input_grad[0] else None,
        ns.where(first, g * 0, g) if ctx.needs_input_grad[1] else None,
    )


_fmax = binary(
    "fmax",
    _checked(lambda xp, a, b: xp.fmax(a, b)),
    saves=("a", "b"),
    vjp=(None, None),
    doc="Elementwise max ignoring NaN. VJP: g to input where "
    "input >= other (ties included) or other is NaN, else to other.",
)
_fmax.op.vjp(_fmax_vjp)


def fmax(input: Any, other: Any) -> Any:
    """Elementwise maximum where NaN loses to a number. VJP: g to input on ties (PyTorch)."""
    _tensor_pair("fmax", input, other)
    return _fmax(input, other)


def _fmin_vjp(ctx: Any, g: Any) -> Any:
    a, b = ctx.a, ctx.b
    first = (a <= b) | ns.isnan(b)
    return (
        _mask(first, g) if ctx.needs_input_grad[0] else None,
        ns.where(first, g * 0, g) if ctx.needs_input_grad[1] else None,
    )


_fmin = binary(
    "fmin",
    _checked(lambda xp, a, b: xp.fmin(a, b)),
    saves=("a", "b"),
    vjp=(None, None),
    doc="Elementwise min ignoring NaN. VJP: as fmax, with <=.",
)
_fmin.op.vjp(_fmin_vjp)


def fmin(input: Any, other: Any) -> Any:
    """Elementwise minimum where NaN loses to a number. VJP: g to input on ties (PyTorch)."""
    _tensor_pair("fmin", input, other)
    return _fmin(input, other)


# atan2, lerp ----------------------------------------------------------------------------------


def _atan2_vjp(ctx: Any, g: Any) -> Any:
    a, b = ctx.a, ctx.b
    r = g / (a * a + b * b)
    need = ctx.needs_input_grad
    return (r * b if need[0] else None, -r * a if need[1] else None)


_atan2 = binary(
    "atan2",
    _checked(lambda xp, a, b: xp.arctan2(a, b)),
    saves=("a", "b"),
    promote="float",
    vjp=(None, None),
    doc="Angle of the point (b, a), in (-pi, pi]. VJP: g b / (a**2 + b**2), -g a / (a**2 + b**2).",
)
_atan2.op.vjp(_atan2_vjp)


def atan2(input: Any, other: Any) -> Any:
    """Elementwise atan2(input, other), the angle of (other, input)."""
    _tensor_pair("atan2", input, other)
    return _atan2(input, other)


arctan2 = atan2


def _lerp_fwd(xp: Any, a: Any, b: Any, w: Any) -> Any:
    # PyTorch's two-sided formula, exact at both ends.
    d = b - a
    if isinstance(w, (int, float)):
        out = a + w * d if abs(w) < 0.5 else b - d * (1 - w)
        return out.astype(a.dtype, copy=False)
    try:
        return xp.where(xp.abs(w) < 0.5, a + w * d, b - d * (1 - w))
    except ValueError:
        raise broadcast_error(a, b, w) or ValueError("lerp failed") from None


def _lerp_fwd_s(xp: Any, a: Any, b: Any, *, weight: float) -> Any:
    try:
        return _lerp_fwd(xp, a, b, weight)
    except ValueError:
        raise broadcast_error(a, b) or ValueError("lerp failed") from None


# Complex operands: g times the conjugate of each partial derivative (Note [Wirtinger
# gradients] in ops/complex_numbers.py), as PyTorch's LerpBackward.
def _lerp_s_vjp(ctx: Any, g: Any) -> Any:
    w = cj(ctx.weight)
    need = ctx.needs_input_grad
    return (g * (1 - w) if need[0] else None, g * w if need[1] else None)


def _lerp_vjp(ctx: Any, g: Any) -> Any:
    a, b, w = ctx.a, ctx.b, ctx.w
    need = ctx.needs_input_grad
    return (
        g * cj(1 - w) if need[0] else None,
        g * cj(w) if need[1] else None,
        g * cj(b - a) if need[2] else None,
    )


_lerp_s = OpDef("lerp_scalar", _lerp_fwd_s, ("a", "b"), promote="same", node_name="LerpBackward0")
_lerp_s.vjp(_lerp_s_vjp)
_lerp = OpDef(
    "lerp",
    _lerp_fwd,
    ("a", "b", "w"),
    saves={"a": "w", "b": "w", "w": ("a", "b")},
    promote="same",
    node_name="LerpBackward1",
)
_lerp.vjp(_lerp_vjp)


def lerp(input: Any, end: Any, weight: Any) -> Any:
    """input + weight (end - input), with a number or tensor ``weight`` (computed as
    end - (end - input)(1 - weight) for |weight| >= 0.5, as PyTorch). VJP: g (1 - w), g w,
    g (end - input)."""
    _tensor_pair("lerp", input, end)
    if input._data.dtype != end._data.dtype:
        raise RuntimeError(
            f"expected dtype {_torch_name(input)} for `end` but got dtype {_torch_name(end)}"
        )
    if hasattr(weight, "_data"):
        if weight._data.dtype != input._data.dtype:
            if weight._data.ndim:
                raise RuntimeError(
                    f"expected dtype {_torch_name(input)} for `weight` but got dtype "
                    f"{_torch_name(weight)}"
                )
            # a 0-dim weight takes part in type promotion, as in PyTorch: a complex (or, for
            # integer input, a floating) one makes the result complex (floating)
            rt = result_type(input, end, weight)
            if rt.np != input._data.dtype:
                input, end = input.to(rt), end.to(rt)
            weight = weight.to(rt)
        if not _kinds.is_inexact(input._data):
            raise NotImplementedError(
                f"\"lerp_kernel_tensor\" not implemented for '{_legacy(input)}'"
            )
        return apply_op(_lerp, (input, end, weight))
    if not _kinds.is_inexact(input._data):
        if type(weight) is int:  # (an int no 64-bit Scalar holds fails first, as in PyTorch)
            check_scalar_int(weight)
        raise NotImplementedError(f"\"lerp_kernel_scalar\" not implemented for '{_legacy(input)}'")
    if type(weight) is complex:  # PyTorch's error for a nonzero imaginary part on real input
        weight = complex_scalar_value(weight, input._data.dtype)
    elif type(weight) is float or type(weight) is int:  # its range check (Note [checked
        # scalar conversion] in _scalar_convert.py)
        weight = checked_scalar(weight, input._data.dtype)
    return apply_op(_lerp_s, (input, end), {"weight": weight})
