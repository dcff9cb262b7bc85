"""Comparisons, logical and bitwise ops (none differentiable): eq/ne/lt/le/gt/ge and their
aliases, logical_and/or/xor, bitwise_and/or/xor/not, and the whole-tensor isclose, allclose and
equal; the dtype queries result_type and can_cast."""

from __future__ import annotations

from typing import Any

from chainrule import _kinds
from chainrule.ops._registry import OpDef, apply_op, binary
from chainrule.ops.binary._common import _checked, _legacy, _tensor_pair, broadcast_error

__all__ = [
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "isclose",
    "allclose",
    "equal",
    "result_type",
    "can_cast",
]


def _cmp(name: str, f: Any) -> Any:
    return binary(
        name, _checked(f), differentiable=False, doc=f"Elementwise {name}; a bool tensor."
    )


eq = _cmp("eq", lambda xp, a, b: xp.equal(a, b))
ne = _cmp("ne", lambda xp, a, b: xp.not_equal(a, b))


def _ordered(name: str, f: Any) -> Any:
    """An ordering comparison: complex numbers have no order (PyTorch's kernel error)."""

    def fwd(xp: Any, a: Any, b: Any) -> Any:
        for x in (a, b):
            k = getattr(x, "dtype", None)
            if (k is not None and k.kind == "c") or type(x) is complex:
                ct = "ComplexDouble" if k is not None and k.itemsize == 16 else "ComplexFloat"
                raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{ct}'")
        return f(xp, a, b)

    return fwd


lt = _cmp("lt", _ordered("lt", lambda xp, a, b: xp.less(a, b)))
le = _cmp("le", _ordered("le", lambda xp, a, b: xp.less_equal(a, b)))
gt = _cmp("gt", _ordered("gt", lambda xp, a, b: xp.greater(a, b)))
ge = _cmp("ge", _ordered("ge", lambda xp, a, b: xp.greater_equal(a, b)))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(name: str, f: Any) -> Any:
    return binary(
        name,
        _checked(f),
        differentiable=False,
        promote=None,
        doc=f"Elementwise {name} of the inputs' truth values; a bool tensor.",
    )


logical_and = _logical("logical_and", lambda xp, a, b: xp.logical_and(a, b))
logical_or = _logical("logical_or", lambda xp, a, b: xp.logical_or(a, b))
logical_xor = _logical("logical_xor", lambda xp, a, b: xp.logical_xor(a, b))


def _bitwise(name: str, f: Any) -> Any:
    g = _checked(f)

    def fwd(xp: Any, a: Any, b: Any) -> Any:
        try:
            return g(xp, a, b)
        except TypeError:  # a floating operand: PyTorch's kernel error names the dtype
            raise NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{_float_name(a, b)}'"
            ) from None

    return binary(
        name,
        fwd,
        differentiable=False,
        doc=f"Elementwise {name} of integer or bool tensors.",
    )


def _float_name(a: Any, b: Any) -> str:
    """PyTorch's legacy name of the floating dtype a bitwise op on ``a`` and ``b`` computes in:
    the floating arrays' promoted dtype, else the default dtype (a Python float operand)."""
    from chainrule._dtype import get_default_dtype
    from chainrule.ops._registry import _legacy_name

    fl = [x.dtype for x in (a, b) if hasattr(x, "dtype") and x.dtype.kind in "fcV"]
    d = fl[0] if len(fl) == 1 else get_default_dtype().np if not fl else max(fl, key=_size)
    return _legacy_name(d)


def _size(d: Any) -> int:
    return int(d.itemsize)


bitwise_and = _bitwise("bitwise_and", lambda xp, a, b: xp.bitwise_and(a, b))
bitwise_or = _bitwise("bitwise_or", lambda xp, a, b: xp.bitwise_or(a, b))
bitwise_xor = _bitwise("bitwise_xor", lambda xp, a, b: xp.bitwise_xor(a, b))


def _not_fwd(xp: Any, x: Any) -> Any:
    return xp.logical_not(x) if _kinds.is_bool(x) else xp.invert(x)


_bitwise_not = OpDef("bitwise_not", _not_fwd, ("x",), differentiable=False, promote=None)


def bitwise_not(input: Any) -> Any:
    """Bitwise NOT (logical NOT for bool tensors)."""
    return apply_op(_bitwise_not, (input,))


# Whole-tensor comparisons ---------------------------------------------------------------------


def _isclose_fwd(
    xp: Any, a: Any, b: Any, *, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Any:
    try:
        if _kinds.is_bool(a):
            return xp.equal(a, b)
        if _kinds.is_integral(a):
            # Exact in float64 for the integer ranges tests use; PyTorch computes in the
            # tensors' dtype with the same formula.
            a = a.astype(xp.float64)
            b = b.astype(xp.float64)
        return xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except ValueError:
        raise broadcast_error(a, b) or ValueError("isclose failed") from None


_isclose = OpDef("isclose", _isclose_fwd, ("a", "b"), promote=None, differentiable=False)


def isclose(
    input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Any:
    """|input - other| <= atol + rtol |other| elementwise (infinities equal when equal; NaN
    equal to NaN only with ``equal_nan``). Both tensors must have the same dtype."""
    _tensor_pair("isclose", input, other)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_legacy(input)} did not match {_legacy(other)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return apply_op(_isclose, (input, other), {"rtol": rtol, "atol": atol, "equal_nan": equal_nan})


def allclose(
    input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """True if ``isclose`` holds everywhere (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Any, other: Any) -> bool:
    """True if both tensors have the same shape and equal elements (NaN is never equal)."""
    _tensor_pair("equal", input, other)
    a, b = input._data, other._data
    if a.shape != b.shape:
        return False
    return bool((a == b).all())


# dtype queries --------------------------------------------------------------------------------


def result_type(tensor1: Any, tensor2: Any) -> Any:
    """The dtype an arithmetic op on the two operands (tensors or numbers) would produce."""
    from chainrule import _dtype

    return _dtype.result_type(tensor1, tensor2)


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` (no downcast of category)."""
    from chainrule import _dtype

    return _dtype.can_cast(from_, to)
