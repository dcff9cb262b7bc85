"""Elementwise ops of two inputs, as a table. VJPs are written as if nothing broadcasts; the
engine sums each gradient back to its input's shape.

Shapes that cannot broadcast raise PyTorch's error ("The size of tensor a (3) must match the
size of tensor b (4) at non-singleton dimension 1"): the forwards catch NumPy's ValueError, so
the common path pays nothing for the check.

Long because it holds the whole elementwise two-input family: one place per op (ARCHITECTURE.md
section 5).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule.ops._registry import OpDef, apply_op, binary, ns

__all__ = ["add", "sub", "rsub", "mul", "div", "rdiv", "pow", "rpow", "float_power",
           "eq", "ne", "lt", "le", "gt", "ge",
           "greater", "greater_equal", "less", "less_equal", "not_equal",
           "where", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
           "maximum", "minimum", "fmax", "fmin", "lerp", "atan2", "arctan2",
           "remainder", "fmod", "floor_divide",
           "logical_and", "logical_or", "logical_xor",
           "equal", "isclose", "allclose", "result_type", "can_cast"]


# Broadcasting errors ------------------------------------------------------------------------


def broadcast_error(*arrays: Any) -> RuntimeError | None:
    """PyTorch's error for operands whose shapes do not broadcast, or None if they do.

    Shapes are combined left to right, as PyTorch's TensorIterator does: "tensor a" is the shape
    accumulated so far, "tensor b" the next operand's.
    """
    shape: tuple[int, ...] | None = None
    for x in arrays:
        s = getattr(x, "shape", None)
        if s is None:
            continue
        if shape is None:
            shape = tuple(s)
            continue
        n = max(len(shape), len(s))
        a = (1,) * (n - len(shape)) + shape
        b = (1,) * (n - len(s)) + tuple(s)
        out = []
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return RuntimeError(
                    f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) "
                    f"at non-singleton dimension {i}"
                )
            out.append(b[i] if a[i] == 1 else a[i])
        shape = tuple(reversed(out))
    return None


def _checked(f: Any) -> Any:
    """Wrap a two-input forward so that a broadcasting failure raises PyTorch's error."""

    def fwd(xp: Any, a: Any, b: Any, **kw: Any) -> Any:
        try:
            return f(xp, a, b, **kw)
        except ValueError:
            err = broadcast_error(a, b)
            if err is None:
                raise
            raise err from None

    fwd.__name__ = getattr(f, "__name__", "fwd")
    return fwd


def _add_fwd(xp: Any, a: Any, b: Any) -> Any:
    try:
        return a + b
    except ValueError:
        raise broadcast_error(a, b) or ValueError("add failed") from None


_BOOL_SUB_MSG = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                 "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _check_bool_sub(a: Any, b: Any) -> None:
    # PyTorch refuses subtraction involving a bool tensor (NumPy would compute it).
    da = getattr(a, "dtype", None)
    db = getattr(b, "dtype", None)
    if (da is not None and da.kind == "b") or (db is not None and db.kind == "b"):
        if da is not None and db is not None and da.kind == db.kind:
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                "`^` or `logical_xor()` operator instead."
            )
        raise RuntimeError(_BOOL_SUB_MSG)


def _sub_fwd(xp: Any, a: Any, b: Any) -> Any:
    try:
        return a - b
    except ValueError:
        raise broadcast_error(a, b) or ValueError("sub failed") from None


def _rsub_fwd(xp: Any, a: Any, b: Any) -> Any:
    try:
        return b - a
    except ValueError:
        raise broadcast_error(a, b) or ValueError("sub failed") from None


def _mul_fwd(xp: Any, a: Any, b: Any) -> Any:
    try:
        return a * b
    except ValueError:
        raise broadcast_error(a, b) or ValueError("mul failed") from None


def _div_fwd(xp: Any, a: Any, b: Any) -> Any:
    try:
        return a / b
    except ValueError:
        raise broadcast_error(a, b) or ValueError("div failed") from None


_add = binary("add", _add_fwd, np_forward=np.add, vjp=(lambda ctx, g: g, lambda ctx, g: g),
              doc="a + b. VJP: g to both.")
_sub = binary("sub", _sub_fwd, np_forward=np.subtract, vjp=(lambda ctx, g: g, lambda ctx, g: -g),
              doc="a - b. VJP: g, -g.")
_rsub = binary("rsub", _rsub_fwd,
               vjp=(lambda ctx, g: -g, lambda ctx, g: g), node_name="RsubBackward1",
               doc="b - a (for ``scalar - tensor``). VJP: -g, g.")
mul = binary("mul", _mul_fwd, np_forward=np.multiply, saves={"a": "b", "b": "a"},
             vjp=(lambda ctx, g: g * ctx.b, lambda ctx, g: g * ctx.a),
             doc="a * b. VJP: g b, g a.")
# The divisor's VJP reads the dividend, not the output, as PyTorch's (which saves no output,
# so that ``y = x / 2; y += 1`` is no error before a backward).
_div = binary("div", _div_fwd, np_forward=np.true_divide, saves={"a": "b", "b": ("a", "b")},
              promote="float",
              vjp=(lambda ctx, g: g / ctx.b, lambda ctx, g: -g * ((ctx.a / ctx.b) / ctx.b)),
              doc="a / b (true division). VJP: g / b, -g a / b**2.")
_rdiv = binary("rdiv", _checked(lambda xp, a, b: b / a), saves={"a": ("a", "b")},
               promote="float", vjp=(lambda ctx, g: -g * ((ctx.b / ctx.a) / ctx.a), None),
               node_name="DivBackward0",
               doc="b / a (for ``scalar / tensor``). VJP: -g b / a**2.")


# pow ------------------------------------------------------------------------------------------


def _pow_base_vjp(ctx: Any, g: Any) -> Any:
    # PyTorch: exponent * a**(exponent-1), masked to 0 where the exponent is 0 (0 * inf at a=0).
    b = ctx.b
    if isinstance(b, (int, float)):
        if b == 0:
            return g * 0
        # Grouped as PyTorch does (g * (b a**(b-1))); a**1 is a itself (the common x**2).
        return g * (b * (ctx.a if b == 2 else ns.pow(ctx.a, b - 1)))
    zero = b == 0
    # The masked entries use exponent 1, so that 0 ** -1 is never evaluated.
    return ns.where(zero, g * 0, g * b * ns.pow(ctx.a, ns.where(zero, b * 0 + 1, b) - 1))


def _pow_exp_vjp(ctx: Any, g: Any) -> Any:
    # d(a**b)/db = a**b log(a); PyTorch defines it as 0 where a == 0 and b >= 0.
    a = ctx.a
    if isinstance(a, (int, float)):
        return g * ctx.out * (math.log(a) if a > 0 else float("nan") if a < 0 else 0.0)
    mask = (a == 0) & (ctx.b >= 0)
    # log is taken of 1 where masked, so that log(0) is never evaluated.
    return ns.where(mask, g * 0, g * ctx.out * ns.log(ns.where(mask, a * 0 + 1, a)))


def _pow_fwd(xp: Any, a: Any, b: Any) -> Any:
    try:
        return xp.power(a, b)
    except ValueError as e:
        err = broadcast_error(a, b)
        if err is not None:
            raise err from None
        raise RuntimeError(str(e)) from None


_pow = binary("pow", _pow_fwd, saves={"a": ("a", "b"), "b": ("a", "b", "out")},
              vjp=(_pow_base_vjp, _pow_exp_vjp),
              node_name="PowBackward1",
              doc="a ** b. VJP: g b a**(b-1) (0 where b == 0); g a**b log(a) (0 where a == 0, "
                  "b >= 0).")
_pow_scalar = binary("pow_scalar", _pow_fwd, saves=("a", "b"), vjp=(_pow_base_vjp, None),
                     node_name="PowBackward0", doc="a ** b for a Python number b.")


def _rpow_vjp(ctx: Any, g: Any) -> Any:
    b = ctx.b
    return g * ctx.out * (math.log(b) if b > 0 else float("nan") if b < 0 else 0.0)


_rpow = binary("rpow", lambda xp, a, b: xp.power(b, a), saves=("b", "out"),
               vjp=(_rpow_vjp, None), node_name="PowBackward2",
               doc="b ** a for a scalar base b. VJP: g b**a log(b).")


# Rounded division, remainders -----------------------------------------------------------------


def _int_zero_check(b: Any) -> None:
    # NumPy returns 0 (and warns) for an integer division by zero; PyTorch raises.
    if getattr(b, "dtype", None) is not None:
        if b.dtype.kind in "iub" and not b.all():
            raise RuntimeError("ZeroDivisionError")
    elif isinstance(b, int) and b == 0:
        raise RuntimeError("ZeroDivisionError")


def _is_int(a: Any, b: Any) -> bool:
    da = getattr(a, "dtype", None)
    db = getattr(b, "dtype", None)
    ka = da.kind if da is not None else ("f" if isinstance(a, float) else "i")
    kb = db.kind if db is not None else ("f" if isinstance(b, float) else "i")
    return ka in "iub" and kb in "iub"


@_checked
def _div_rounded_fwd(xp: Any, a: Any, b: Any, *, rounding_mode: str) -> Any:
    if _is_int(a, b):
        _int_zero_check(b)
        q = xp.floor_divide(a, b)
        if rounding_mode == "trunc":
            # floor and trunc differ where the division is inexact and the signs differ.
            q = q + ((xp.remainder(a, b) != 0) & ((a < 0) != (b < 0)))
        return q
    if rounding_mode == "floor":
        # PyTorch's div_floor: trunc division corrected towards -inf (matches Python's //).
        return xp.floor_divide(a, b)
    return xp.trunc(a / b)


# Rounded division is piecewise constant: its gradient is zero, as in PyTorch.
_div_rounded = OpDef("div_rounded", _div_rounded_fwd, ("a", "b"), promote="same",
                     vjps=(lambda ctx, g: g * 0, lambda ctx, g: g * 0),
                     node_name="DivBackward2")


@_checked
def _remainder_fwd(xp: Any, a: Any, b: Any) -> Any:
    if _is_int(a, b):
        _int_zero_check(b)
    return xp.remainder(a, b)


@_checked
def _fmod_fwd(xp: Any, a: Any, b: Any) -> Any:
    if _is_int(a, b):
        _int_zero_check(b)
    return xp.fmod(a, b)


_remainder = binary(
    "remainder", _remainder_fwd, saves={"b": ("a", "b")},
    vjp=(lambda ctx, g: g,
         lambda ctx, g: -g * ns.div_rounded(ctx.a, ctx.b, rounding_mode="floor")),
    node_name="RemainderBackward1",
    doc="a - b floor(a / b) (the sign of b, as Python's %). VJP: g, -g floor(a / b).")
_remainder_scalar = binary("remainder_scalar", _remainder_fwd, vjp=(lambda ctx, g: g, None),
                           node_name="RemainderBackward0",
                           doc="a % b for a Python number b. VJP: g.")
_fmod = binary(
    "fmod", _fmod_fwd, saves={"b": ("a", "b")},
    vjp=(lambda ctx, g: g,
         lambda ctx, g: -g * ns.div_rounded(ctx.a, ctx.b, rounding_mode="trunc")),
    node_name="FmodBackward1",
    doc="a - b trunc(a / b) (the sign of a, as C's fmod). VJP: g, -g trunc(a / b).")
_fmod_scalar = binary("fmod_scalar", _fmod_fwd, vjp=(lambda ctx, g: g, None),
                      node_name="FmodBackward0", doc="fmod(a, b) for a Python number b. VJP: g.")


def _scalar_as_tensor(v: Any, other: Any) -> Any:
    """A Python number in the first operand's place, as a 0-dim tensor of the dtype promotion
    gives the pair (so the result dtype is unchanged)."""
    from chainrule._creation import tensor
    from chainrule._dtype import result_type

    return tensor(v, dtype=result_type(v, other))


def remainder(input: Any, other: Any) -> Any:
    """Python-style modulus: the result has the sign of ``other``. Integer division by zero
    raises. VJP: g to input; -g floor(input / other) to a tensor ``other``.

    Differs from torch: with a Python number as ``input``, PyTorch has no derivative for
    ``other`` (backward fails); here it is computed by the formula above."""
    if not hasattr(input, "_data"):
        input = _scalar_as_tensor(input, other)
    if hasattr(other, "_data"):
        return apply_op(_remainder.op, (input, other))
    return apply_op(_remainder_scalar.op, (input, other))


def fmod(input: Any, other: Any) -> Any:
    """C-style remainder: the result has the sign of ``input``. VJP: g to input;
    -g trunc(input / other) to a tensor ``other``."""
    if hasattr(other, "_data"):
        return apply_op(_fmod.op, (input, other))
    return apply_op(_fmod_scalar.op, (input, other))


def floor_divide(input: Any, other: Any) -> Any:
    """floor(input / other); integers stay integers (division by zero raises).

    Differs from torch: PyTorch's floor_divide has no derivative (backward fails); here the
    gradient is zero, as for ``div(..., rounding_mode='floor')``."""
    if not hasattr(input, "_data"):
        input = _scalar_as_tensor(input, other)
    return apply_op(_div_rounded, (input, other), {"rounding_mode": "floor"})


# Comparisons and logical ops ------------------------------------------------------------------


def _cmp(name: str, f: Any) -> Any:
    return binary(name, _checked(f), differentiable=False,
                  doc=f"Elementwise {name}; a bool tensor.")


eq = _cmp("eq", lambda xp, a, b: xp.equal(a, b))
ne = _cmp("ne", lambda xp, a, b: xp.not_equal(a, b))
lt = _cmp("lt", lambda xp, a, b: xp.less(a, b))
le = _cmp("le", lambda xp, a, b: xp.less_equal(a, b))
gt = _cmp("gt", lambda xp, a, b: xp.greater(a, b))
ge = _cmp("ge", lambda xp, a, b: xp.greater_equal(a, b))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(name: str, f: Any) -> Any:
    return binary(name, _checked(f), differentiable=False, promote=None,
                  doc=f"Elementwise {name} of the inputs' truth values; a bool tensor.")


logical_and = _logical("logical_and", lambda xp, a, b: xp.logical_and(a, b))
logical_or = _logical("logical_or", lambda xp, a, b: xp.logical_or(a, b))
logical_xor = _logical("logical_xor", lambda xp, a, b: xp.logical_xor(a, b))


def _bitwise(name: str, f: Any) -> Any:
    return binary(name, _checked(f), differentiable=False,
                  doc=f"Elementwise {name} of integer or bool tensors.")


bitwise_and = _bitwise("bitwise_and", lambda xp, a, b: xp.bitwise_and(a, b))
bitwise_or = _bitwise("bitwise_or", lambda xp, a, b: xp.bitwise_or(a, b))
bitwise_xor = _bitwise("bitwise_xor", lambda xp, a, b: xp.bitwise_xor(a, b))


def _not_fwd(xp: Any, x: Any) -> Any:
    return xp.logical_not(x) if x.dtype.kind == "b" else xp.invert(x)


_bitwise_not = OpDef("bitwise_not", _not_fwd, ("x",), differentiable=False, promote=None)


def bitwise_not(input: Any) -> Any:
    """Bitwise NOT (logical NOT for bool tensors)."""
    return apply_op(_bitwise_not, (input,))


# maximum / minimum ----------------------------------------------------------------------------


def _mask(c: Any, g: Any) -> Any:
    return ns.where(c, g, g * 0)


def _max_vjp(ctx: Any, g: Any) -> Any:
    # PyTorch splits the gradient evenly between tied inputs.
    a, b = ctx.a, ctx.b
    half = ns.where(a == b, g * 0.5, g)
    need = ctx.needs_input_grad
    return (_mask(a >= b, half) if need[0] else None,
            _mask(b >= a, half) if need[1] else None)


def _min_vjp(ctx: Any, g: Any) -> Any:
    a, b = ctx.a, ctx.b
    half = ns.where(a == b, g * 0.5, g)
    need = ctx.needs_input_grad
    return (_mask(a <= b, half) if need[0] else None,
            _mask(b <= a, half) if need[1] else None)


_maximum = binary("maximum", _checked(lambda xp, a, b: xp.maximum(a, b)), saves=("a", "b"),
                  vjp=(None, None), doc="Elementwise max (NaN propagates).")
_maximum.op.vjp(_max_vjp)
_minimum = binary("minimum", _checked(lambda xp, a, b: xp.minimum(a, b)), saves=("a", "b"),
                  vjp=(None, None), doc="Elementwise min (NaN propagates).")
_minimum.op.vjp(_min_vjp)


def _fmax_vjp(ctx: Any, g: Any) -> Any:
    # PyTorch: all of g to input where input >= other or other is NaN, else to other.
    a, b = ctx.a, ctx.b
    first = (a >= b) | ns.isnan(b)
    return (_mask(first, g) if ctx.needs_input_grad[0] else None,
            ns.where(first, g * 0, g) if ctx.needs_input_grad[1] else None)


def _fmin_vjp(ctx: Any, g: Any) -> Any:
    a, b = ctx.a, ctx.b
    first = (a <= b) | ns.isnan(b)
    return (_mask(first, g) if ctx.needs_input_grad[0] else None,
            ns.where(first, g * 0, g) if ctx.needs_input_grad[1] else None)


_fmax = binary("fmax", _checked(lambda xp, a, b: xp.fmax(a, b)), saves=("a", "b"),
               vjp=(None, None), doc="Elementwise max ignoring NaN. VJP: g to input where "
               "input >= other (ties included) or other is NaN, else to other.")
_fmax.op.vjp(_fmax_vjp)
_fmin = binary("fmin", _checked(lambda xp, a, b: xp.fmin(a, b)), saves=("a", "b"),
               vjp=(None, None), doc="Elementwise min ignoring NaN. VJP: as fmax, with <=.")
_fmin.op.vjp(_fmin_vjp)


def _tensor_pair(name: str, input: Any, other: Any) -> None:
    if not hasattr(other, "_data"):
        raise TypeError(
            f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}"
        )
    if not hasattr(input, "_data"):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )


def maximum(input: Any, other: Any) -> Any:
    """Elementwise maximum; NaN propagates. VJP: g to the larger input, g/2 to each on ties."""
    _tensor_pair("maximum", input, other)
    return _maximum(input, other)


def minimum(input: Any, other: Any) -> Any:
    """Elementwise minimum; NaN propagates. VJP: g to the smaller input, g/2 to each on ties."""
    _tensor_pair("minimum", input, other)
    return _minimum(input, other)


def fmax(input: Any, other: Any) -> Any:
    """Elementwise maximum where NaN loses to a number. VJP: g to input on ties (PyTorch)."""
    _tensor_pair("fmax", input, other)
    return _fmax(input, other)


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


_atan2 = binary("atan2", _checked(lambda xp, a, b: xp.arctan2(a, b)), saves=("a", "b"),
                promote="float", vjp=(None, None),
                doc="Angle of the point (b, a), in (-pi, pi]. VJP: g b / (a**2 + b**2), "
                    "-g a / (a**2 + b**2).")
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


def _lerp_s_vjp(ctx: Any, g: Any) -> Any:
    w = ctx.weight
    need = ctx.needs_input_grad
    return (g * (1 - w) if need[0] else None, g * w if need[1] else None)


def _lerp_vjp(ctx: Any, g: Any) -> Any:
    a, b, w = ctx.a, ctx.b, ctx.w
    need = ctx.needs_input_grad
    return (g * (1 - w) if need[0] else None, g * w if need[1] else None,
            g * (b - a) if need[2] else None)


_lerp_s = OpDef("lerp_scalar", _lerp_fwd_s, ("a", "b"), promote="same",
                node_name="LerpBackward0")
_lerp_s.vjp(_lerp_s_vjp)
_lerp = OpDef("lerp", _lerp_fwd, ("a", "b", "w"), saves={"a": "w", "b": "w", "w": ("a", "b")},
              promote="same",
              node_name="LerpBackward1")
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
            weight = weight.to(input.dtype)
        return apply_op(_lerp, (input, end, weight))
    return apply_op(_lerp_s, (input, end), {"weight": weight})


def _torch_name(t: Any) -> str:
    return t.dtype.name.replace("float32", "float").replace("float64", "double")


# Public wrappers of the arithmetic ops --------------------------------------------------------


def add(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """input + alpha * other, broadcasting. VJP: g, alpha g."""
    if alpha != 1:
        other = other * alpha
    if not hasattr(input, "_data"):
        return _add(other, input)
    return _add(input, other)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """input - alpha * other, broadcasting. VJP: g, -alpha g."""
    _check_bool_sub(getattr(input, "_data", None), getattr(other, "_data", None))
    if alpha != 1:
        other = other * alpha
    if not hasattr(input, "_data"):
        return _rsub(other, input)
    return _sub(input, other)


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """other - alpha * input (PyTorch's ``rsub``)."""
    _check_bool_sub(getattr(input, "_data", None), getattr(other, "_data", None))
    if alpha != 1:
        input = input * alpha
    return _rsub(input, other)


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Any:
    """input / other. With ``rounding_mode`` 'trunc' or 'floor', the rounded quotient (its
    gradient is zero; integers stay integers). Integer inputs give a float result unless
    rounding."""
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                f"'{rounding_mode}'"
            )
        if not hasattr(input, "_data"):
            input = _scalar_as_tensor(input, other)
        return apply_op(_div_rounded, (input, other), {"rounding_mode": rounding_mode})
    if not hasattr(input, "_data"):
        return _rdiv(other, input)
    return _div(input, other)


def rdiv(input: Any, other: Any) -> Any:
    """other / input."""
    return _rdiv(input, other)


def pow(input: Any, exponent: Any) -> Any:
    """input ** exponent (either may be a scalar). VJP: see ``_pow``."""
    if not hasattr(input, "_data"):
        return _rpow(exponent, input)
    if not hasattr(exponent, "_data"):
        return _pow_scalar(input, exponent)
    return _pow(input, exponent)


def rpow(input: Any, other: Any) -> Any:
    """other ** input, for a scalar ``other``."""
    if hasattr(other, "_data"):
        return pow(other, input)
    return _rpow(input, other)


def float_power(input: Any, exponent: Any) -> Any:
    """input ** exponent computed in float64 (PyTorch's float_power)."""
    from chainrule import _dtype

    if hasattr(input, "_data"):
        input = input.to(_dtype.float64)
    else:
        input = float(input)
    if hasattr(exponent, "_data"):
        exponent = exponent.to(_dtype.float64)
    else:
        exponent = float(exponent)
    return pow(input, exponent)


# where ----------------------------------------------------------------------------------------


def _where_fwd(xp: Any, c: Any, a: Any, b: Any) -> Any:
    try:
        if xp is np:
            return select(c, a, b)
        return xp.where(c, a, b)
    except ValueError:
        raise broadcast_error(c, a, b) or ValueError("where failed") from None


# NumPy's where branches on each element: on a mask of random signs (an activation's) the
# branch is mispredicted half the time, 1.5 ms per 400k float32 elements here against 0.09 ms
# for a multiply. From this size on, a float select is done on the bits instead.
_SELECT_MIN = 4096
_BITS = {4: np.int32, 8: np.int64}


def select(c: Any, a: Any, b: Any) -> Any:
    """``np.where(c, a, b)`` with the same result, bit for bit (NaNs, signed zeros), for a
    boolean ``c``: on float arrays of one dtype (or a float array and a Python number) it is
    b ^ ((a ^ b) & -c) on the integer view of the bits, five branch-free passes."""
    fa, fb = type(a) is np.ndarray, type(b) is np.ndarray
    if c.size < _SELECT_MIN or c.dtype.kind != "b" or not (fa or fb):
        return np.where(c, a, b)
    dt = a.dtype if fa else b.dtype
    it = _BITS.get(dt.itemsize)
    if dt.kind != "f" or it is None:
        return np.where(c, a, b)
    if not fa:
        if type(a) not in (float, int):
            return np.where(c, a, b)
        a = np.asarray(a, dtype=dt)
    elif not fb:
        if type(b) not in (float, int):
            return np.where(c, a, b)
        b = np.asarray(b, dtype=dt)
    elif b.dtype != dt:
        return np.where(c, a, b)
    bb = b.view(it)
    x = np.bitwise_xor(a.view(it), bb)
    if x.shape != c.shape:  # c broadcasts further than a and b: the output has its shape
        x = np.broadcast_to(x, np.broadcast_shapes(x.shape, c.shape)).copy()
    m = c.astype(it)
    np.negative(m, out=m)  # all bits set where c
    x &= m  # x has the full shape: m broadcasts over it
    np.bitwise_xor(x, bb, out=x)
    return x.view(dt)


def _where_vjp(ctx: Any, g: Any) -> Any:
    z = g * 0
    c = ctx.c
    return (None, ns.where(c, g, z) if ctx.needs_input_grad[1] else None,
            ns.where(c, z, g) if ctx.needs_input_grad[2] else None)


_where = OpDef("where", _where_fwd, ("c", "a", "b"), saves=("c",), promote=None)
_where.vjp(_where_vjp)


def where(condition: Any, input: Any = None, other: Any = None) -> Any:
    """Elementwise ``input if condition else other``. VJP: g routed by the condition.
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``."""
    from chainrule._dtype import result_type

    if not hasattr(condition, "_data"):
        raise TypeError("where(): argument 'condition' must be Tensor")
    if input is None and other is None:
        from chainrule._dispatch import ops  # the op table: indexing imports this module

        if hasattr(ops, "nonzero"):  # owned by the indexing family
            return ops.nonzero(condition, as_tuple=True)
        raise TypeError("where() missing required arguments 'input' and 'other'")
    rt = result_type(input, other)
    if hasattr(input, "_data") and input._data.dtype != rt.np:
        input = input.to(rt)
    if hasattr(other, "_data") and other._data.dtype != rt.np:
        other = other.to(rt)
    if not hasattr(input, "_data") and not hasattr(other, "_data"):
        from chainrule._creation import tensor

        input = tensor(input, dtype=rt)
    if condition._data.dtype.kind != "b":
        if condition._data.dtype == "uint8":
            import warnings

            warnings.warn(
                "where received a uint8 condition tensor. This behavior is deprecated and will "
                "be removed in a future version of PyTorch. Use a boolean condition instead.",
                UserWarning, stacklevel=2,
            )
        else:
            raise RuntimeError(
                "where expected condition to be a boolean tensor, but got a tensor with dtype "
                f"{_legacy(condition)}"
            )
        condition = condition.bool()
    return apply_op(_where, (condition, input, other))


# Whole-tensor comparisons ---------------------------------------------------------------------


def _isclose_fwd(xp: Any, a: Any, b: Any, *, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> Any:
    try:
        if a.dtype.kind == "b":
            return xp.equal(a, b)
        if a.dtype.kind in "iu":
            # Exact in float64 for the integer ranges tests use; PyTorch computes in the
            # tensors' dtype with the same formula.
            a = a.astype(xp.float64)
            b = b.astype(xp.float64)
        return xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except ValueError:
        raise broadcast_error(a, b) or ValueError("isclose failed") from None


_isclose = OpDef("isclose", _isclose_fwd, ("a", "b"), promote=None, differentiable=False)


def isclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Any:
    """|input - other| <= atol + rtol |other| elementwise (infinities equal when equal; NaN
    equal to NaN only with ``equal_nan``). Both tensors must have the same dtype."""
    _tensor_pair("isclose", input, other)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_legacy(input)} did not match {_legacy(other)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return apply_op(_isclose, (input, other),
                    {"rtol": rtol, "atol": atol, "equal_nan": equal_nan})


def allclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True if ``isclose`` holds everywhere (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Any, other: Any) -> bool:
    """True if both tensors have the same shape and equal elements (NaN is never equal)."""
    _tensor_pair("equal", input, other)
    a, b = input._data, other._data
    if a.shape != b.shape:
        return False
    return bool((a == b).all())


def _legacy(t: Any) -> str:
    from chainrule.ops._registry import _legacy_name

    return _legacy_name(t._data.dtype)


# dtype queries --------------------------------------------------------------------------------


def result_type(tensor1: Any, tensor2: Any) -> Any:
    """The dtype an arithmetic op on the two operands (tensors or numbers) would produce."""
    from chainrule import _dtype

    return _dtype.result_type(tensor1, tensor2)


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` (no downcast of category)."""
    from chainrule import _dtype

    return _dtype.can_cast(from_, to)
