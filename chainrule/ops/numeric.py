"""Elementwise number functions PyTorch has beside the basic ones: the inverse hyperbolic
functions (``asinh``, ``acosh``, ``atanh`` and their ``arc*`` aliases), integer arithmetic
(``gcd``, ``lcm``, ``bitwise_left_shift``, ``bitwise_right_shift``), floating-point
decomposition (``frexp``, ``ldexp``, ``nextafter``), and the vector products ``vdot`` and
``cross``.

The inverse hyperbolics and ``ldexp`` are registered ops with VJPs written with ``ns`` (double
backward works). Differs from torch: the in-place ``asinh_``/``acosh_``/``atanh_`` are
differentiable (PyTorch's backward raises "not implemented" for them). The integer and
bit-level functions have no derivative in PyTorch and none here. ``vdot`` and ``cross`` are
compositions of registered ops (for real tensors ``vdot`` is ``dot``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule import _kinds, return_types
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import OpDef, apply_op, binary, ns, unary
from chainrule.ops.complex_numbers import cj

__all__ = [
    "asinh",
    "acosh",
    "atanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "gcd",
    "lcm",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "frexp",
    "ldexp",
    "nextafter",
    "vdot",
    "cross",
]

_LN2 = math.log(2.0)

# PyTorch's scalar type names, for its "not implemented for 'Float'" kernel errors.
_SCALAR_NAMES = {
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "uint8": "Byte",
    "bool": "Bool",
}


def _scalar_name(dt: Any) -> str:
    return _SCALAR_NAMES.get(np.dtype(dt).name, str(dt))


def _arrays(xp: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """The operands as arrays: a Python number takes the other operand's dtype (PyTorch's
    scalar promotion; the fast path hands numbers to the forward as they are)."""
    if not hasattr(a, "dtype"):
        a = xp.asarray(a, dtype=b.dtype)
    if not hasattr(b, "dtype"):
        b = xp.asarray(b, dtype=a.dtype)
    return a, b


def _broadcast_check(a: Any, b: Any) -> None:
    """Raise PyTorch's error when the shapes of arrays ``a`` and ``b`` do not broadcast."""
    sa, sb = np.shape(a), np.shape(b)
    for i in range(1, min(len(sa), len(sb)) + 1):
        x, y = sa[-i], sb[-i]
        if x != y and x != 1 and y != 1:
            dim = max(len(sa), len(sb)) - i
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {dim}"
            )


# Inverse hyperbolic functions --------------------------------------------------------------

asinh = unary(
    "asinh",
    "arcsinh",
    saves="x",
    vjp=lambda ctx, g: g / cj(ns.sqrt(ctx.x * ctx.x + 1)),
    doc="Inverse hyperbolic sine, log(x + sqrt(x**2 + 1)). VJP: g / conj(sqrt(x**2 + 1)).",
)
acosh = unary(
    "acosh",
    "arccosh",
    saves="x",
    vjp=lambda ctx, g: g / cj(ns.sqrt((ctx.x - 1) * (ctx.x + 1))),
    doc="Inverse hyperbolic cosine, log(x + sqrt(x**2 - 1)) (nan below 1). "
    "VJP: g / conj(sqrt((x - 1)(x + 1))).",
)
atanh = unary(
    "atanh",
    "arctanh",
    saves="x",
    vjp=lambda ctx, g: g / cj(1 - ctx.x * ctx.x),
    doc="Inverse hyperbolic tangent, log((1 + x) / (1 - x)) / 2 (+-inf at +-1). "
    "VJP: g / conj(1 - x**2).",
)
arcsinh, arccosh, arctanh = asinh, acosh, atanh


# Integer arithmetic and shifts ---------------------------------------------------------------


def _integer_fwd(kernel: str, f: Any) -> Any:
    shift = kernel in ("lshift", "rshift")

    def fwd(xp: Any, a: Any, b: Any) -> Any:
        a, b = _arrays(xp, a, b)
        for x in (a, b):
            if not _kinds.is_integral(x, include_bool=True) or (_kinds.is_bool(x) and not shift):
                raise NotImplementedError(
                    f"\"{kernel}_cpu\" not implemented for '{_scalar_name(x.dtype)}'"
                )
        _broadcast_check(a, b)
        if shift and _kinds.is_bool(a):  # bools shift as int64, as PyTorch promotes them
            a = a.astype(np.int64)
        return f(xp, a, b)

    return fwd


def _lshift(xp: Any, a: Any, b: Any) -> Any:
    # C++'s shift by at least the bit width is undefined; PyTorch gives 0 there (NumPy may
    # wrap the count), and a negative count gives 0 as well.
    bits = a.dtype.itemsize * 8
    b64 = b.astype(np.int64)
    out = xp.left_shift(a, xp.clip(b64, 0, bits - 1).astype(a.dtype))
    return xp.where((b64 >= bits) | (b64 < 0), xp.zeros((), a.dtype), out).astype(a.dtype)


def _rshift(xp: Any, a: Any, b: Any) -> Any:
    # An arithmetic shift: past the bit width, negative numbers give -1 and others 0.
    bits = a.dtype.itemsize * 8
    b64 = b.astype(np.int64)
    out = xp.right_shift(a, xp.clip(b64, 0, bits - 1).astype(a.dtype))
    return xp.where((b64 >= bits) | (b64 < 0), xp.right_shift(a, bits - 1), out).astype(a.dtype)


_gcd = binary(
    "gcd",
    _integer_fwd("gcd", lambda xp, a, b: xp.gcd(a, b)),
    differentiable=False,
    doc="Greatest common divisor of integer tensors (non-negative; gcd(0, 0) = 0).",
)
_lcm = binary(
    "lcm",
    _integer_fwd("lcm", lambda xp, a, b: xp.lcm(a, b)),
    differentiable=False,
    doc="Least common multiple of integer tensors (non-negative; 0 if either is 0).",
)


def _tensors_only(name: str, input: Any, other: Any) -> None:
    """PyTorch's argument errors for the functions that take no Python numbers."""
    for pos, (arg, x) in enumerate((("input", input), ("other", other)), 1):
        if not hasattr(x, "_data"):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                f"{type(x).__name__}"
            )


def gcd(input: Any, other: Any) -> Any:
    """Greatest common divisor of integer tensors (non-negative; gcd(0, 0) = 0)."""
    _tensors_only("gcd", input, other)
    return _gcd(input, other)


def lcm(input: Any, other: Any) -> Any:
    """Least common multiple of integer tensors (non-negative; 0 if either is 0)."""
    _tensors_only("lcm", input, other)
    return _lcm(input, other)


bitwise_left_shift = binary(
    "bitwise_left_shift",
    _integer_fwd("lshift", _lshift),
    differentiable=False,
    doc="input << other for integer tensors (0 when other is negative or >= the bit width).",
)
bitwise_right_shift = binary(
    "bitwise_right_shift",
    _integer_fwd("rshift", _rshift),
    differentiable=False,
    doc="Arithmetic input >> other for integer tensors.",
)


# Floating-point decomposition ----------------------------------------------------------------


def _nextafter_fwd(xp: Any, a: Any, b: Any) -> Any:
    a, b = _arrays(xp, a, b)
    for x in (a, b):
        if not _kinds.is_floating(x):
            raise NotImplementedError(
                f"\"nextafter_cpu\" not implemented for '{_scalar_name(x.dtype)}'"
            )
    _broadcast_check(a, b)
    return xp.nextafter(a, b)


_nextafter = binary(
    "nextafter",
    _nextafter_fwd,
    differentiable=False,
    doc="The next floating-point value after input towards other.",
)


def nextafter(input: Any, other: Any) -> Any:
    """The next floating-point value after ``input`` towards ``other``. No gradient."""
    _tensors_only("nextafter", input, other)
    return _nextafter(input, other)


def _frexp_fwd(xp: Any, x: Any) -> Any:
    m, e = xp.frexp(x)
    return m, e.astype(np.int32)


_frexp = OpDef("frexp", _frexp_fwd, ("x",), promote=None, differentiable=False, num_outputs=2)


def frexp(input: Any) -> Any:
    """Decompose ``input = mantissa * 2**exponent`` with ``0.5 <= |mantissa| < 1`` (and 0, inf,
    nan kept as the mantissa with exponent 0); ``exponent`` is int32. No gradient."""
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = apply_op(_frexp, (input,))
    return return_types.frexp._make_of(m, e)


def _ldexp_b_vjp(ctx: Any, g: Any) -> Any:
    return g * ctx.out * _LN2


_ldexp = binary(
    "ldexp",
    lambda xp, a, b: a * xp.exp2(b),
    saves={"a": "b", "b": "out"},
    promote="float",
    vjp=(lambda ctx, g: g * ns.exp(ctx.b * _LN2), _ldexp_b_vjp),
    doc="input * 2**other.",
)


def ldexp(input: Any, other: Any) -> Any:
    """``input * 2**other`` in the default float dtype for integers (PyTorch's promotion).

    VJP: g 2**other to ``input``; g out ln 2 to a floating ``other``.
    Differs from torch: for a negative integer ``other`` PyTorch's gradient to ``input`` is 0
    (it computes 2**other in integers); here it is 2**other."""
    if not hasattr(input, "_data"):
        raise TypeError(
            "ldexp(): argument 'input' (position 1) must be Tensor, not " + type(input).__name__
        )
    if not hasattr(other, "_data"):
        raise TypeError(
            "ldexp(): argument 'other' (position 2) must be Tensor, not " + type(other).__name__
        )
    if input.is_floating_point() and not other.is_floating_point():
        other = other.to(input.dtype)  # the exponent takes the mantissa's float dtype
    return _ldexp(input, other)


# Vector products ---------------------------------------------------------------------------


def vdot(input: Any, other: Any) -> Any:
    """sum(conj(input) * other) of two 1-D tensors; for real tensors this is ``dot``."""
    from chainrule._dispatch import ops

    if input.is_complex() and input.dtype == other.dtype:
        input = ops.conj(input)
    return ops.dot(input, other)


def cross(input: Any, other: Any, dim: int | None = None) -> Any:
    """The cross product of 3-vectors along ``dim`` (broadcasting the other dims):
    ``(a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0)``.

    ``dim=None`` takes the first dim of size 3 and warns, as PyTorch does. Gradients come from
    the composed ops: ``b x g`` to ``a`` and ``g x a`` to ``b``."""
    import warnings

    from chainrule._dispatch import ops

    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if dim is not None:
        d = wrap_dim(int(dim), input.ndim)
        if input.shape[d] != 3 or other.shape[d] != 3:
            raise RuntimeError(
                f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                f"{input.shape[d]} and {other.shape[d]}"
            )
    shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
            "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
            "dim will change to agree with that of linalg.cross in a future release.",
            UserWarning,
            stacklevel=2,
        )
        dims3 = [i for i, s in enumerate(shape) if s == 3]
        if not dims3:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims3[0]
    d = wrap_dim(int(dim), len(shape))
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{input.shape[d]} and {other.shape[d]}"
        )
    a = ops.broadcast_to(input, shape)
    b = ops.broadcast_to(other, shape)
    a0, a1, a2 = a.unbind(d)
    b0, b1, b2 = b.unbind(d)
    return ops.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


# The argument of a real number ---------------------------------------------------------------


def _angle_fwd(xp: Any, x: Any) -> Any:
    if x.dtype.kind == "c":
        return xp.angle(x)
    # arg(x) of a real x: pi for x < 0, 0 otherwise; nan stays nan.
    out = xp.where(x < 0, xp.asarray(math.pi, dtype=x.dtype), xp.zeros((), dtype=x.dtype))
    return xp.where(xp.isnan(x), x, out)


def _angle_vjp(ctx: Any, g: Any) -> Any:
    z = ctx.x
    if getattr(z, "_data", z).dtype.kind != "c":
        return g * 0.0
    # atan2(y, x): d/dx + i d/dy = (-y + i x) / |z|**2 = i z / |z|**2; 0 at z == 0 (PyTorch).
    a2 = ns.real(z * ns.conj(z))
    zero = a2 == 0
    return ns.where(zero, z * 0, g * (z * 1j) / ns.where(zero, a2 * 0 + 1, a2))


angle = unary(
    "angle",
    _angle_fwd,
    saves="x",
    vjp=_angle_vjp,
    doc="The argument of each element: atan2(imag, real) for complex tensors; for real ones "
    "pi for negatives, 0 otherwise (nan kept); integers give the default float dtype. VJP: "
    "g i z / |z|**2 for complex z (0 at 0); 0 for real x (piecewise constant).",
)
__all__.append("angle")
