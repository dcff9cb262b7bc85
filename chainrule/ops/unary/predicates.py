"""The float predicates isnan, isinf, isfinite and logical_not; nan_to_num; square."""

from __future__ import annotations

from typing import Any

from chainrule import _kinds
from chainrule._scalar_convert import nan_to_num_args
from chainrule.ops._registry import OpDef, apply_op, ns, unary

__all__ = ["square", "nan_to_num", "isnan", "isinf", "isfinite", "logical_not"]


# nan_to_num and the float predicates ------------------------------------------------------


def _pred(name: str, f: Any) -> Any:
    return unary(
        name,
        lambda xp, x: f(xp, x),
        promote=None,
        differentiable=False,
        doc=f"Elementwise {name}; a bool tensor (not differentiable).",
    )


isnan = _pred("isnan", lambda xp, x: xp.isnan(x))
isinf = _pred("isinf", lambda xp, x: xp.isinf(x))
isfinite = _pred("isfinite", lambda xp, x: xp.isfinite(x))
logical_not = _pred("logical_not", lambda xp, x: xp.logical_not(x))


def _nan_to_num_fwd(
    xp: Any, x: Any, *, nan: float = 0.0, posinf: Any = None, neginf: Any = None
) -> Any:
    if not _kinds.is_floating(x):
        return x.copy()
    return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_nan_to_num = OpDef(
    "nan_to_num",
    _nan_to_num_fwd,
    ("x",),
    saves=("x",),
    promote=None,
    vjps=(lambda ctx, g: g * ns.isfinite(ctx.x),),
)


def nan_to_num(input: Any, *args: Any, **kwargs: Any) -> Any:
    """``nan_to_num(input, nan=0.0, posinf=None, neginf=None)``: NaN -> ``nan``, +inf ->
    ``posinf``, -inf -> ``neginf`` (defaults: 0 and the dtype's largest/lowest finite
    values). VJP: g where x is finite, else 0. The arguments are read as PyTorch's parser
    reads them (``nan_to_num_args``), so that its errors say "(position 2)" for a positional
    argument."""
    nan, posinf, neginf = nan_to_num_args("nan_to_num", 1, args, kwargs)
    return apply_op(_nan_to_num, (input,), {"nan": nan, "posinf": posinf, "neginf": neginf})


def square(input: Any) -> Any:
    """x * x, as ``pow(x, 2)`` (so integer tensors stay integer, bool becomes int64, and the
    node is PowBackward0 as in PyTorch). VJP: 2 g x."""
    from chainrule.ops.binary import pow

    if _kinds.is_bool(input._data):
        from chainrule import _dtype

        input = input.to(_dtype.int64)
    return pow(input, 2)
