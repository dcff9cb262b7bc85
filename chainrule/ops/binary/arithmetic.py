"""Arithmetic of two inputs: add, sub/rsub, mul, div/rdiv (with rounding modes), pow/rpow/
float_power, remainder, fmod and floor_divide.

Note [one declaration per arithmetic op]
    Each arithmetic op is declared once, by ``binary`` (forward, NumPy forward, saves, VJPs),
    and that one declaration serves all its callers:
    - the operators: ``a + b`` calls the op function itself (``_add``: Tensor binds its
      ``.op``), one Python call, with no ``alpha`` to test and no operand to swap;
    - the public function beside it (``add(input, other, *, alpha=1)``), which folds ``alpha``
      into ``other`` and swaps a Python number in first place (``torch.add(2, x)`` is
      ``_add(x, 2)``; sub and div hand it to their reflected ops, rsub and rdiv), then calls
      the op function;
    - the in-place forms (``add_``, ``+=``), which apply ``_add.op`` in place (ops/inplace.py).
    Only the public function is written beside the declaration: the forward is Python's
    operator (``_operator``), and NumPy's function (``np_forward``) on NumPy arrays.

Long because the arithmetic ops come in reflected and scalar variants (rsub, rdiv, rpow,
pow_scalar, remainder_scalar ...), each with PyTorch's node name, declared beside their op.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule._dispatch import upper
from chainrule._dtype import result_type
from chainrule._scalar_convert import check_scalar_int, checked_scalar, pow_exponent
from chainrule.ops._complex_guard import refuse_complex_scalar, refuses_complex
from chainrule.ops._registry import OpDef, apply_op, binary, ns
from chainrule.ops.binary._common import _checked, _scalar_as_tensor, broadcast_error
from chainrule.ops.complex_numbers import cj

_ndarray = np.ndarray
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)

__all__ = [
    "add",
    "sub",
    "rsub",
    "mul",
    "div",
    "rdiv",
    "pow",
    "rpow",
    "float_power",
    "remainder",
    "fmod",
    "floor_divide",
]


def _operator(name: str, f: Any, *, reflected: bool = False) -> Any:
    """The forward ``f(a, b)`` (``f(b, a)`` when ``reflected``) for Python's operator ``f``, with
    NumPy's broadcasting ValueError raised as PyTorch's error. Runs where ``np_forward`` does
    not: other array modules, mixed dtypes, ``rsub`` and ``rdiv``."""
    if reflected:

        def fwd(xp: Any, a: Any, b: Any) -> Any:
            try:
                return f(b, a)
            except ValueError:
                err = broadcast_error(a, b)
                if err is None:
                    raise
                raise err from None
    else:

        def fwd(xp: Any, a: Any, b: Any) -> Any:
            try:
                return f(a, b)
            except ValueError:
                err = broadcast_error(a, b)
                if err is None:
                    raise
                raise err from None

    fwd.__name__ = f"_{name}_fwd"
    return fwd


# add ------------------------------------------------------------------------------------------

_add = binary(
    "add",
    _operator("add", operator.add),
    np_forward=np.add,
    vjp=(lambda ctx, g: g, lambda ctx, g: g),
    doc="a + b. VJP: g to both.",
)


def check_alpha(input: Any, other: Any, alpha: Any) -> Any:
    """PyTorch's checks of add's and sub's ``alpha`` against the result's dtype (a bool alpha
    for a bool result only; no floating or complex alpha for an integer one, no complex alpha
    for a real one); the alpha to scale by (a bool for a bool result). Callers skip it for
    the default ``alpha=1``."""
    d = getattr(input, "_data", None)
    if d is not None and _kinds.category(d) >= 2 and type(alpha) in (int, float):
        # the common case (a real alpha, an inexact result): an alpha that every floating
        # dtype holds needs no more; a larger one gets PyTorch's range check against the
        # result's dtype (Note [checked scalar conversion])
        if -65504.0 <= alpha <= 65504.0:
            return alpha
        from chainrule._dtype import result_type

        return checked_scalar(alpha, result_type(input, other).np)
    from chainrule._dtype import result_type

    rt = result_type(input, other).np
    cat = _kinds.category(rt)
    if type(alpha) is bool and cat != 0:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if type(alpha) is int:
        alpha = checked_scalar(alpha, rt)
    if cat < 2 and isinstance(alpha, (float, complex)):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if cat == 0:
        return builtins.bool(alpha)
    if cat != 3 and isinstance(alpha, complex):
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number."
        )
    return alpha


def add(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """input + alpha * other, broadcasting. VJP: g, alpha g. A sparse COO operand fails in
    the dense op and goes to chainrule/sparse/ (the try block costs nothing until then)."""
    o = other
    try:
        if alpha != 1 or type(alpha) is not int:
            alpha = check_alpha(input, other, alpha)
            o = other * alpha
        if not hasattr(input, "_data"):
            return _add(o, input)
        return _add(input, o)
    except NotImplementedError:
        if _has_sparse(input, other):
            return upper.sparse_add(input, other, alpha)
        raise


def _has_sparse(a: Any, b: Any) -> bool:
    return getattr(a, "_sparse", False) or getattr(b, "_sparse", False)


# sub / rsub -----------------------------------------------------------------------------------

_BOOL_SUB_MSG = (
    "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
    "trying to invert a mask, use the `~` or `logical_not()` operator instead."
)


def check_bool_sub(a: Any, b: Any, other: Any = None) -> None:
    # PyTorch refuses subtraction involving a bool tensor (NumPy would compute it), after its
    # argument parser has refused an int ``other`` that no 64-bit Scalar holds.
    da = getattr(a, "dtype", None)
    db = getattr(b, "dtype", None)
    if (da is not None and _kinds.is_bool(da)) or (db is not None and _kinds.is_bool(db)):
        if type(other) is int:
            check_scalar_int(other)
        if da is not None and db is not None and _kinds.is_bool(da) and _kinds.is_bool(db):
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                "`^` or `logical_xor()` operator instead."
            )
        raise RuntimeError(_BOOL_SUB_MSG)


_sub = binary(
    "sub",
    _operator("sub", operator.sub),
    np_forward=np.subtract,
    vjp=(lambda ctx, g: g, lambda ctx, g: -g),
    doc="a - b. VJP: g, -g.",
)
_rsub = binary(
    "rsub",
    _operator("rsub", operator.sub, reflected=True),
    vjp=(lambda ctx, g: -g, lambda ctx, g: g),
    node_name="RsubBackward1",
    doc="b - a (for ``scalar - tensor``). VJP: -g, g.",
)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """input - alpha * other, broadcasting. VJP: g, -alpha g."""
    check_bool_sub(getattr(input, "_data", None), getattr(other, "_data", None), other)
    o = other
    try:
        if alpha != 1 or type(alpha) is not int:
            alpha = check_alpha(input, other, alpha)
            o = other * alpha
        if not hasattr(input, "_data"):
            return _rsub(o, input)
        return _sub(input, o)
    except NotImplementedError:  # a sparse COO operand: chainrule/sparse/ (as in ``add``)
        if _has_sparse(input, other):
            return upper.sparse_add(input, other, -alpha)
        raise


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """other - alpha * input (PyTorch's ``rsub``)."""
    check_bool_sub(getattr(input, "_data", None), getattr(other, "_data", None), other)
    if alpha != 1 or type(alpha) is not int:
        alpha = check_alpha(input, other, alpha)
        input = input * alpha
    return _rsub(input, other)


# mul (the public function is the op function: no alpha) ---------------------------------------

mul = binary(
    "mul",
    _operator("mul", operator.mul),
    np_forward=np.multiply,
    saves={"a": "b", "b": "a"},
    # The real-array test is written inline (no call to cj): mul is the commonest VJP.
    vjp=(
        lambda ctx, g: (
            g
            * (
                b
                if type(b := ctx.b) is _ndarray and (t := b.dtype) is not _C64 and t is not _C128
                else cj(b)
            )
        ),
        lambda ctx, g: (
            g
            * (
                a
                if type(a := ctx.a) is _ndarray and (t := a.dtype) is not _C64 and t is not _C128
                else cj(a)
            )
        ),
    ),
    doc="a * b. VJP: g conj(b), g conj(a) (Note [Wirtinger gradients]).",
)


# div / rdiv and rounded division --------------------------------------------------------------

# The divisor's VJP reads the dividend, not the output, as PyTorch's (which saves no output,
# so that ``y = x / 2; y += 1`` is no error before a backward).
_div = binary(
    "div",
    _operator("div", operator.truediv),
    np_forward=np.true_divide,
    saves={"a": "b", "b": ("a", "b")},
    promote="float",
    vjp=(lambda ctx, g: g / cj(ctx.b), lambda ctx, g: -g * cj((ctx.a / ctx.b) / ctx.b)),
    doc="a / b (true division). VJP: g / conj(b), -g conj(a / b**2).",
)
_rdiv = binary(
    "rdiv",
    _operator("rdiv", operator.truediv, reflected=True),
    saves={"a": ("a", "b")},
    promote="float",
    vjp=(lambda ctx, g: -g * cj((ctx.b / ctx.a) / ctx.a), None),
    node_name="DivBackward0",
    doc="b / a (for ``scalar / tensor``). VJP: -g b / a**2.",
)


def _int_zero_check(b: Any) -> None:
    # NumPy returns 0 (and warns) for an integer division by zero; PyTorch raises.
    if getattr(b, "dtype", None) is not None:
        if _kinds.is_integral(b, include_bool=True) and not b.all():
            raise RuntimeError("ZeroDivisionError")
    elif isinstance(b, int) and b == 0:
        raise RuntimeError("ZeroDivisionError")


def _is_int(a: Any, b: Any) -> bool:
    ia = _kinds.is_integral(a, include_bool=True) if hasattr(a, "dtype") else isinstance(a, int)
    ib = _kinds.is_integral(b, include_bool=True) if hasattr(b, "dtype") else isinstance(b, int)
    return ia and ib


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
_div_rounded = OpDef(
    "div_rounded",
    _div_rounded_fwd,
    ("a", "b"),
    promote="same",
    vjps=(lambda ctx, g: g * 0, lambda ctx, g: g * 0),
    node_name="DivBackward2",
)


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
        for v in (input, other):  # PyTorch's kernels of both modes refuse complex
            d = getattr(v, "_data", v)
            if type(v) is complex or getattr(d, "dtype", None) is not None and d.dtype.kind == "c":
                refuse_complex_scalar(f"div_{rounding_mode}", input, other)
        if not hasattr(input, "_data"):
            input = _scalar_as_tensor(input, other)
        return apply_op(_div_rounded, (input, other), {"rounding_mode": rounding_mode})
    if not hasattr(input, "_data"):
        return _rdiv(other, input)
    return _div(input, other)


def rdiv(input: Any, other: Any) -> Any:
    """other / input."""
    return _rdiv(input, other)


# pow / rpow / float_power ---------------------------------------------------------------------


def _pow_base_vjp(ctx: Any, g: Any) -> Any:
    # PyTorch: exponent * a**(exponent-1), masked to 0 where the exponent is 0 (0 * inf at a=0).
    b = ctx.b
    if isinstance(b, (int, float)):
        if b == 0:
            return g * 0
        # Grouped as PyTorch does (g * (b a**(b-1))); a**1 is a itself (the common x**2).
        return g * cj(b * (ctx.a if b == 2 else ns.pow(ctx.a, b - 1)))
    if isinstance(b, builtins.complex):
        return g * cj(b * ns.pow(ctx.a, b - 1))
    zero = b == 0
    # The masked entries use exponent 1, so that 0 ** -1 is never evaluated.
    return ns.where(zero, g * 0, g * cj(b * ns.pow(ctx.a, ns.where(zero, b * 0 + 1, b) - 1)))


def _pow_exp_vjp(ctx: Any, g: Any) -> Any:
    # d(a**b)/db = a**b log(a); PyTorch defines it as 0 where a == 0 and b >= 0.
    a = ctx.a
    if isinstance(a, (int, float)):
        return g * ctx.out * (math.log(a) if a > 0 else float("nan") if a < 0 else 0.0)
    if _complex_kind(a) or _complex_kind(ctx.b):
        # Complex: 0 where a == 0 (PyTorch's mask), else g conj(a**b log(a)).
        mask = a == 0
        return ns.where(mask, g * 0, g * cj(ctx.out * ns.log(ns.where(mask, a * 0 + 1, a))))
    mask = (a == 0) & (ctx.b >= 0)
    # log is taken of 1 where masked, so that log(0) is never evaluated.
    return ns.where(mask, g * 0, g * ctx.out * ns.log(ns.where(mask, a * 0 + 1, a)))


def _complex_kind(x: Any) -> bool:
    return getattr(getattr(x, "_data", x), "dtype", np.dtype(float)).kind == "c"


def _pow_fwd(xp: Any, a: Any, b: Any) -> Any:
    try:
        return xp.power(a, b)
    except ValueError as e:
        err = broadcast_error(a, b)
        if err is not None:
            raise err from None
        raise RuntimeError(str(e)) from None


_pow = binary(
    "pow",
    _pow_fwd,
    saves={"a": ("a", "b"), "b": ("a", "b", "out")},
    vjp=(_pow_base_vjp, _pow_exp_vjp),
    node_name="PowBackward1",
    doc="a ** b. VJP: g b a**(b-1) (0 where b == 0); g a**b log(a) (0 where a == 0, b >= 0).",
)
_pow_scalar = binary(
    "pow_scalar",
    _pow_fwd,
    saves=("a", "b"),
    vjp=(_pow_base_vjp, None),
    node_name="PowBackward0",
    doc="a ** b for a Python number b.",
)


def _rpow_vjp(ctx: Any, g: Any) -> Any:
    b = ctx.b
    return g * ctx.out * (math.log(b) if b > 0 else float("nan") if b < 0 else 0.0)


_rpow = binary(
    "rpow",
    lambda xp, a, b: xp.power(b, a),
    saves=("b", "out"),
    vjp=(_rpow_vjp, None),
    node_name="PowBackward2",
    doc="b ** a for a scalar base b. VJP: g b**a log(b).",
)


def checked_exponent(input: Any, exponent: Any) -> Any:
    """A Python-number ``exponent`` of ``input`` as PyTorch checks it (pow_exponent); the
    common exponents pass two comparisons."""
    te = type(exponent)
    if (te is int and not 0 <= exponent <= 127) or (
        te is float and not -65504.0 <= exponent <= 65504.0
    ):
        return pow_exponent(exponent, result_type(input, exponent).np)
    return exponent


def pow(input: Any, exponent: Any) -> Any:
    """input ** exponent (either may be a scalar). VJP: see ``_pow``."""
    if not hasattr(input, "_data"):
        return _rpow(exponent, input)
    if not hasattr(exponent, "_data"):
        te = type(exponent)  # (checked_exponent's test inline: x ** 2 pays two comparisons)
        if te is int:
            if not 0 <= exponent <= 127:
                exponent = pow_exponent(exponent, result_type(input, exponent).np)
        elif te is float and not -65504.0 <= exponent <= 65504.0:
            exponent = pow_exponent(exponent, result_type(input, exponent).np)
        return _pow_scalar(input, exponent)
    return _pow(input, exponent)


def rpow(input: Any, other: Any) -> Any:
    """other ** input, for a scalar ``other``."""
    if hasattr(other, "_data"):
        return pow(other, input)
    return _rpow(input, other)


def float_power(input: Any, exponent: Any) -> Any:
    """input ** exponent computed in float64, or in complex128 when either operand (a tensor
    or a Python number) is complex (PyTorch's float_power)."""
    from chainrule import _dtype

    def is_complex(v: Any) -> bool:
        return v.is_complex() if hasattr(v, "_data") else isinstance(v, complex)

    wide = _dtype.complex128 if is_complex(input) or is_complex(exponent) else _dtype.float64
    scalar = complex if wide is _dtype.complex128 else float

    def cast(v: Any) -> Any:
        return v.to(wide) if hasattr(v, "_data") else scalar(v)

    return pow(cast(input), cast(exponent))


# remainder / fmod / floor_divide --------------------------------------------------------------


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
    "remainder",
    _remainder_fwd,
    saves={"b": ("a", "b")},
    vjp=(lambda ctx, g: g, lambda ctx, g: -g * ns.div_rounded(ctx.a, ctx.b, rounding_mode="floor")),
    node_name="RemainderBackward1",
    doc="a - b floor(a / b) (the sign of b, as Python's %). VJP: g, -g floor(a / b).",
)
_remainder_scalar = binary(
    "remainder_scalar",
    _remainder_fwd,
    vjp=(lambda ctx, g: g, None),
    node_name="RemainderBackward0",
    doc="a % b for a Python number b. VJP: g.",
)
_fmod = binary(
    "fmod",
    _fmod_fwd,
    saves={"b": ("a", "b")},
    vjp=(lambda ctx, g: g, lambda ctx, g: -g * ns.div_rounded(ctx.a, ctx.b, rounding_mode="trunc")),
    node_name="FmodBackward1",
    doc="a - b trunc(a / b) (the sign of a, as C's fmod). VJP: g, -g trunc(a / b).",
)
_fmod_scalar = binary(
    "fmod_scalar",
    _fmod_fwd,
    vjp=(lambda ctx, g: g, None),
    node_name="FmodBackward0",
    doc="fmod(a, b) for a Python number b. VJP: g.",
)


@refuses_complex("remainder", 2, scalars=True)
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


@refuses_complex("fmod", 2, scalars=True)
def fmod(input: Any, other: Any) -> Any:
    """C-style remainder: the result has the sign of ``input``. VJP: g to input;
    -g trunc(input / other) to a tensor ``other``."""
    if hasattr(other, "_data"):
        return apply_op(_fmod.op, (input, other))
    return apply_op(_fmod_scalar.op, (input, other))


@refuses_complex("floor_divide", 2, scalars=True)
def floor_divide(input: Any, other: Any) -> Any:
    """floor(input / other); integers stay integers (division by zero raises).

    Differs from torch: PyTorch's floor_divide has no derivative (backward fails); here the
    gradient is zero, as for ``div(..., rounding_mode='floor')``."""
    if not hasattr(input, "_data"):
        input = _scalar_as_tensor(input, other)
    return apply_op(_div_rounded, (input, other), {"rounding_mode": "floor"})
