"""Tensor methods of the elementwise family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from chainrule._dispatch import ops as _ops
from chainrule._methods._base import foreign
from chainrule._scalar_convert import nan_to_num_args

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


def _not_implemented(other: Any) -> Any:
    """NotImplemented for a foreign operand, else re-raise (Note [foreign operands] in
    _tensor.py); called inside an ``except`` block."""
    if foreign(other):
        return NotImplemented
    raise


class ElementwiseMethods:
    __slots__ = ()

    # Operators not among the core dunders of _tensor.py.
    def __floordiv__(self, other: Any) -> Tensor:
        try:
            return _ops.floor_divide(self, other)
        except Exception:
            return _not_implemented(other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        try:
            return _ops.floor_divide(other, self)
        except Exception:
            return _not_implemented(other)

    def __mod__(self, other: Any) -> Tensor:
        try:
            return _ops.remainder(self, other)
        except Exception:
            return _not_implemented(other)

    def __rmod__(self, other: Any) -> Tensor:
        try:
            return _ops.remainder(other, self)
        except Exception:
            return _not_implemented(other)

    # Unary functions.
    def expm1(self) -> Tensor:
        return _ops.expm1(self)

    def log1p(self) -> Tensor:
        return _ops.log1p(self)

    def log2(self) -> Tensor:
        return _ops.log2(self)

    def log10(self) -> Tensor:
        return _ops.log10(self)

    def rsqrt(self) -> Tensor:
        return _ops.rsqrt(self)

    def square(self) -> Tensor:
        return _ops.square(self)

    def reciprocal(self) -> Tensor:
        return _ops.reciprocal(self)

    def tan(self) -> Tensor:
        return _ops.tan(self)

    def asin(self) -> Tensor:
        return _ops.asin(self)

    def acos(self) -> Tensor:
        return _ops.acos(self)

    def atan(self) -> Tensor:
        return _ops.atan(self)

    def arcsin(self) -> Tensor:
        return _ops.asin(self)

    def arccos(self) -> Tensor:
        return _ops.acos(self)

    def arctan(self) -> Tensor:
        return _ops.atan(self)

    def sinh(self) -> Tensor:
        return _ops.sinh(self)

    def cosh(self) -> Tensor:
        return _ops.cosh(self)

    def erf(self) -> Tensor:
        return _ops.erf(self)

    def erfc(self) -> Tensor:
        return _ops.erfc(self)

    def sign(self) -> Tensor:
        return _ops.sign(self)

    def absolute(self) -> Tensor:
        return _ops.abs(self)

    def floor(self) -> Tensor:
        return _ops.floor(self)

    def ceil(self) -> Tensor:
        return _ops.ceil(self)

    def round(self, decimals: int = 0) -> Tensor:
        return _ops.round(self, decimals=decimals)

    def trunc(self) -> Tensor:
        return _ops.trunc(self)

    def fix(self) -> Tensor:
        return _ops.trunc(self)

    def frac(self) -> Tensor:
        return _ops.frac(self)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp(self, min, max)

    def clip(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp(self, min, max)

    def clamp_min(self, min: Any) -> Tensor:
        return _ops.clamp_min(self, min)

    def clamp_max(self, max: Any) -> Tensor:
        return _ops.clamp_max(self, max)

    def nan_to_num(self, *args: Any, **kwargs: Any) -> Tensor:
        """``nan_to_num(nan=0.0, posinf=None, neginf=None)``."""
        v = nan_to_num_args("nan_to_num", 0, args, kwargs)
        return _ops.nan_to_num(self, *v)

    def nan_to_num_(self, *args: Any, **kwargs: Any) -> Tensor:
        """In-place ``nan_to_num(nan=0.0, posinf=None, neginf=None)``."""
        v = nan_to_num_args("nan_to_num_", 0, args, kwargs)
        return _ops.inplace_compute(cast("Tensor", self), lambda a: _ops.nan_to_num(a, *v))

    def isnan(self) -> Tensor:
        return _ops.isnan(self)

    def isinf(self) -> Tensor:
        return _ops.isinf(self)

    def isfinite(self) -> Tensor:
        return _ops.isfinite(self)

    def logical_not(self) -> Tensor:
        return _ops.logical_not(self)

    def bitwise_not(self) -> Tensor:
        return _ops.bitwise_not(self)

    def log_sigmoid(self) -> Tensor:
        return _ops.logsigmoid(self)

    # Binary functions.
    def maximum(self, other: Any) -> Tensor:
        return _ops.maximum(self, other)

    def minimum(self, other: Any) -> Tensor:
        return _ops.minimum(self, other)

    def fmax(self, other: Any) -> Tensor:
        return _ops.fmax(self, other)

    def fmin(self, other: Any) -> Tensor:
        return _ops.fmin(self, other)

    def lerp(self, end: Any, weight: Any) -> Tensor:
        return _ops.lerp(self, end, weight)

    def atan2(self, other: Any) -> Tensor:
        return _ops.atan2(self, other)

    def arctan2(self, other: Any) -> Tensor:
        return _ops.atan2(self, other)

    def remainder(self, other: Any) -> Tensor:
        return _ops.remainder(self, other)

    def fmod(self, other: Any) -> Tensor:
        return _ops.fmod(self, other)

    def floor_divide(self, other: Any) -> Tensor:
        return _ops.floor_divide(self, other)

    def float_power(self, exponent: Any) -> Tensor:
        return _ops.float_power(self, exponent)

    def rsub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.rsub(self, other, alpha=alpha)

    def true_divide(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def divide(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _ops.div(self, other, rounding_mode=rounding_mode)

    def multiply(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def subtract(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.sub(self, other, alpha=alpha)

    def where(self, condition: Any, other: Any) -> Tensor:
        return _ops.where(condition, self, other)

    def logical_and(self, other: Any) -> Tensor:
        return _ops.logical_and(self, other)

    def logical_or(self, other: Any) -> Tensor:
        return _ops.logical_or(self, other)

    def logical_xor(self, other: Any) -> Tensor:
        return _ops.logical_xor(self, other)

    def bitwise_and(self, other: Any) -> Tensor:
        return _ops.bitwise_and(self, other)

    def bitwise_or(self, other: Any) -> Tensor:
        return _ops.bitwise_or(self, other)

    def bitwise_xor(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(self, other)

    # Comparisons.
    def eq(self, other: Any) -> Tensor:
        return _ops.eq(self, other)

    def ne(self, other: Any) -> Tensor:
        return _ops.ne(self, other)

    def lt(self, other: Any) -> Tensor:
        return _ops.lt(self, other)

    def le(self, other: Any) -> Tensor:
        return _ops.le(self, other)

    def gt(self, other: Any) -> Tensor:
        return _ops.gt(self, other)

    def ge(self, other: Any) -> Tensor:
        return _ops.ge(self, other)

    def greater(self, other: Any) -> Tensor:
        return _ops.gt(self, other)

    def greater_equal(self, other: Any) -> Tensor:
        return _ops.ge(self, other)

    def less(self, other: Any) -> Tensor:
        return _ops.lt(self, other)

    def less_equal(self, other: Any) -> Tensor:
        return _ops.le(self, other)

    def not_equal(self, other: Any) -> Tensor:
        return _ops.ne(self, other)

    def equal(self, other: Any) -> bool:
        return _ops.equal(self, other)

    def isclose(
        self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
    ) -> Tensor:
        return _ops.isclose(self, other, rtol, atol, equal_nan)

    def allclose(
        self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
    ) -> bool:
        return _ops.allclose(self, other, rtol, atol, equal_nan)
