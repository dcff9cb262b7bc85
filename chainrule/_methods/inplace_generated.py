"""The in-place ``_`` forms of Tensor methods, generated from their out-of-place forms.

Each ``x.f_(*args)`` runs ``x.f(*args)`` through ``inplace_compute`` (ops/views.py), the
in-place mechanism every hand-written in-place op uses: PyTorch's leaf and inference checks
first, the result cast into ``x`` (PyTorch's "result type ... can't be cast" and broadcast
errors), ``x``'s version bumped, its history rebased onto the new node (through ``CopySlices``
when ``x`` is a view). One helper makes them all (``_make``); the hand-written in-place ops in
ops/inplace.py and _tensor.py (``add_``, ``exp_``, ``clamp_`` ...) stay as they are, since they
reuse their OpDef directly (cheaper saved values).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from chainrule import _dtype
from chainrule._dispatch import ops as _ops
from chainrule._methods._base import TensorBase

if TYPE_CHECKING:
    from chainrule._tensor import Tensor

__all__ = ["GeneratedInplaceMethods", "INPLACE_OF"]

# in-place name -> the out-of-place method it writes back (same arguments).
INPLACE_OF: dict[str, str] = {
    **{
        f"{n}_": n
        for n in (
            "acos",
            "arccos",
            "asin",
            "arcsin",
            "atan",
            "arctan",
            "atan2",
            "arctan2",
            "cosh",
            "sinh",
            "tan",
            "ceil",
            "floor",
            "round",
            "trunc",
            "fix",
            "frac",
            "sign",
            "sgn",
            "erf",
            "erfc",
            "exp2",
            "expm1",
            "log10",
            "log1p",
            "log2",
            "rsqrt",
            "reciprocal",
            "square",
            "sinc",
            "deg2rad",
            "rad2deg",
            "absolute",
            "copysign",
            "heaviside",
            "hypot",
            "fmod",
            "remainder",
            "floor_divide",
            "true_divide",
            "divide",
            "multiply",
            "subtract",
            "float_power",
            "lerp",
            "renorm",
            "cumsum",
            "cumprod",
            "addmm",
            "addmv",
            "addr",
            "addbmm",
            "baddbmm",
            "bitwise_and",
            "bitwise_or",
            "bitwise_xor",
            "bitwise_not",
            "logical_and",
            "logical_or",
            "logical_xor",
            "logical_not",
            "eq",
            "ne",
            "not_equal",
            "lt",
            "less",
            "le",
            "less_equal",
            "gt",
            "greater",
            "ge",
            "greater_equal",
        )
    },
    "negative_": "neg",
}

# Ops whose result carries no gradient (comparisons, logical and bitwise ops). Written into a
# tensor that requires grad, the new value gets a zero gradient to the old one, as PyTorch's
# EqBackward0 and friends give.
_NON_DIFFERENTIABLE = {
    "eq",
    "ne",
    "not_equal",
    "lt",
    "less",
    "le",
    "less_equal",
    "gt",
    "greater",
    "ge",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
}


def _float_power_check(self: Any, args: tuple[Any, ...]) -> None:
    # float_power computes in float64 (complex128); its in-place form needs that dtype.
    if self.dtype != _dtype.float64:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {_scalar_name(self)} but the operation's "
            "result requires dtype Double"
        )


def _scalar_name(t: Any) -> str:
    names = {
        "float32": "Float",
        "float64": "Double",
        "float16": "Half",
        "int64": "Long",
        "int32": "Int",
        "int16": "Short",
        "int8": "Char",
        "uint8": "Byte",
        "bool": "Bool",
    }
    return names.get(str(t.dtype).split(".")[-1], str(t.dtype))


_CHECKS: dict[str, Callable[[Any, tuple[Any, ...]], None]] = {"float_power": _float_power_check}


def _make(name: str, base: str) -> Callable[..., Any]:
    check = _CHECKS.get(base)
    no_grad = base in _NON_DIFFERENTIABLE

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if check is not None:
            check(self, args)
        others = [a for a in (*args, *kwargs.values()) if isinstance(a, TensorBase)]

        def compute(a: Any) -> Any:
            r = getattr(a, base)(*args, **kwargs)
            if no_grad and a.requires_grad:
                r = a * 0 + r.to(a.dtype)  # a zero gradient to the overwritten value
            return r

        return _ops.inplace_compute(self, compute, others)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (
        f"In-place ``{base}``: ``self = self.{base}(*args, **kwargs)``, written into ``self``."
    )
    return method


class GeneratedInplaceMethods:
    __slots__ = ()

    def negative(self: Any) -> Tensor:
        """Alias of ``neg``."""
        return self.neg()


for _name, _base in INPLACE_OF.items():
    setattr(GeneratedInplaceMethods, _name, _make(_name, _base))
del _name, _base
