"""Truth reductions: all, any and count_nonzero (not differentiable)."""

from __future__ import annotations

from typing import Any

from chainrule.ops._registry import OpDef, apply_op, defop
from chainrule.ops.reduction._common import _dims

__all__ = ["all", "any", "count_nonzero"]


# all / any / count_nonzero -------------------------------------------------------------------


def _logical_fwd(kind: str) -> Any:
    def fwd(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
        f = xp.all if kind == "all" else xp.any
        r = xp.asarray(f(x, axis=dim, keepdims=keepdim))
        return r.astype("uint8") if x.dtype == "uint8" else r

    return fwd


_all = OpDef("all", _logical_fwd("all"), ("x",), promote=None, differentiable=False)
_any = OpDef("any", _logical_fwd("any"), ("x",), promote=None, differentiable=False)


def all(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """True where every element over ``dim`` is non-zero (uint8 inputs give uint8)."""
    return apply_op(_all, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


def any(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """True where some element over ``dim`` is non-zero (uint8 inputs give uint8)."""
    return apply_op(_any, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


@defop(name="count_nonzero", differentiable=False)
def _count_nonzero(xp: Any, x: Any, *, dim: Any = None) -> Any:
    """Number of non-zero elements over ``dim``; int64."""
    return xp.asarray(xp.sum(x != 0, axis=dim)).astype("int64", copy=False)


def count_nonzero(input: Any, dim: Any = None) -> Any:
    """Number of non-zero elements over ``dim`` (int or tuple; all by default); int64."""
    return apply_op(_count_nonzero, (input,), {"dim": _dims(dim, input.ndim)})
