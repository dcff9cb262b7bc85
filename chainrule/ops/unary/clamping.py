"""Clamping: clamp/clip (number or tensor bounds), clamp_min and clamp_max."""

from __future__ import annotations

from typing import Any

from chainrule import _kinds
from chainrule._scalar_convert import checked_scalar, complex_scalar_value
from chainrule.ops._registry import OpDef, apply_op, ns

__all__ = ["clamp", "clip", "clamp_min", "clamp_max"]


# clamp ----------------------------------------------------------------------------------------


# The bound is maximum's/minimum's first operand: where x equals it (0.0 and -0.0), NumPy
# returns the second, so x is kept, with its sign, as PyTorch's clamp keeps it.
def _clamp_fwd(xp: Any, x: Any, *, min: Any = None, max: Any = None) -> Any:
    out = x
    if min is not None:
        out = xp.maximum(min, out)
    if max is not None:
        out = xp.minimum(max, out)
    return out.astype(x.dtype, copy=False) if out is not x else x.copy()


def _clamp_vjp(ctx: Any, g: Any) -> Any:
    x = ctx.x
    if ctx.min is None:
        return g * (x <= ctx.max)
    if ctx.max is None:
        return g * (x >= ctx.min)
    return g * ((x >= ctx.min) & (x <= ctx.max))


_clamp = OpDef(
    "clamp",
    _clamp_fwd,
    ("x",),
    saves=("x",),
    promote="same",
    vjps=(_clamp_vjp,),
    node_name="ClampBackward1",
)


def _clamp_t_fwd(xp: Any, x: Any, lo: Any, hi: Any) -> Any:
    out = x
    if lo is not None:
        out = xp.maximum(lo, out)
    if hi is not None:
        out = xp.minimum(hi, out)
    return out


def _mask(c: Any, g: Any) -> Any:
    return ns.where(c, g, g * 0)


def _clamp_t_vjp(ctx: Any, g: Any) -> Any:
    # PyTorch's clamp_backward_min_max.
    x, lo, hi = ctx.x, ctx.lo, ctx.hi
    need = ctx.needs_input_grad
    gx = glo = ghi = None
    if lo is not None and hi is not None:
        if need[0]:
            gx = _mask((x >= lo) & (x <= hi), g)
        if need[1]:
            glo = _mask((x < lo) & (lo < hi), g)
        if need[2]:
            ghi = _mask((x > hi) | (hi < lo), g)
    elif lo is not None:
        gx = _mask(x >= lo, g) if need[0] else None
        glo = _mask(x < lo, g) if need[1] else None
    else:
        gx = _mask(x <= hi, g) if need[0] else None
        ghi = _mask(x > hi, g) if need[2] else None
    return gx, glo, ghi


_clamp_t = OpDef(
    "clamp_tensor",
    _clamp_t_fwd,
    ("x", "lo", "hi"),
    saves=("x", "lo", "hi"),
    promote="same",
    node_name="ClampBackward0",
)
_clamp_t.vjp(_clamp_t_vjp)


def clamp(input: Any, min: Any = None, max: Any = None) -> Any:
    """min(max(x, min), max); ``min``/``max`` are numbers or tensors (broadcast), either may be
    None. The result dtype follows type promotion with the bounds. VJP: g where
    min <= x <= max; with tensor bounds, g flows to the bound that is active."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if (
        type(min) is complex
        or type(max) is complex
        or hasattr(min, "_data")
        or hasattr(max, "_data")
    ):
        min, max = _real_input_bounds(input, min, max)
    if hasattr(min, "_data") or hasattr(max, "_data"):
        return apply_op(_clamp_t, (input, min, max))
    from chainrule._dtype import result_type

    rt = result_type(input, min, max)
    # each number bound is converted to the result's dtype with PyTorch's range check
    # (Note [checked scalar conversion]): clamp(float32, min=1e300) raises; a complex
    # result raises clamp's own error first (in the op)
    try:
        t = type(min)
        if t is float or t is int:
            min = checked_scalar(min, rt.np)
        t = type(max)
        if t is float or t is int:
            max = checked_scalar(max, rt.np)
    except RuntimeError:
        if rt.np.kind != "c":
            raise
    if input._data.dtype != rt.np:
        input = input.to(rt)
    return apply_op(_clamp, (input,), {"min": min, "max": max})


clip = clamp


def _real_input_bounds(input: Any, min: Any, max: Any) -> tuple[Any, Any]:
    """PyTorch's handling of complex bounds when ``input`` is not complex. With a number
    among the bounds PyTorch takes its Scalar overload (a 0-dim tensor bound becomes a number)
    and, for a floating input, converts each bound to a double: a nonzero imaginary part
    raises "value cannot be converted to type double without overflow", a zero one leaves the
    real part. Complex tensor bounds raise the error of the kernel PyTorch picks (maximum,
    minimum or clamp) for the promoted complex dtype."""
    if _kinds.is_complex(input._data):
        return min, max
    tmin, tmax = hasattr(min, "_data"), hasattr(max, "_data")
    if min is not None and max is not None and tmin != tmax:
        t = min if tmin else max
        if t._data.ndim == 0 and _kinds.is_complex(t._data):
            if tmin:
                min, tmin = complex(t.item()), False
            else:
                max, tmax = complex(t.item()), False
    if _kinds.is_floating(input._data):
        if type(min) is complex:
            min = complex_scalar_value(min, "double")
        if type(max) is complex:
            max = complex_scalar_value(max, "double")
    lo: Any = min
    hi: Any = max
    if (tmin and _kinds.is_complex(lo._data)) or (tmax and _kinds.is_complex(hi._data)):
        from chainrule._dtype import result_type

        kernel = "clamp_cpu" if tmin and tmax else "maximum_cpu" if tmin else "minimum_cpu"
        name = {"complex128": "ComplexDouble"}.get(
            result_type(input, min, max).np.name, "ComplexFloat"
        )
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")
    return min, max


def _clamp_min_fwd(xp: Any, x: Any, *, min: Any) -> Any:
    return xp.maximum(min, x).astype(x.dtype, copy=False)


def _clamp_max_fwd(xp: Any, x: Any, *, max: Any) -> Any:
    return xp.minimum(max, x).astype(x.dtype, copy=False)


_clamp_min = OpDef(
    "clamp_min",
    _clamp_min_fwd,
    ("x",),
    saves=("x",),
    promote="same",
    vjps=(lambda ctx, g: g * (ctx.x >= ctx.min),),
)
_clamp_max = OpDef(
    "clamp_max",
    _clamp_max_fwd,
    ("x",),
    saves=("x",),
    promote="same",
    vjps=(lambda ctx, g: g * (ctx.x <= ctx.max),),
)


def _bound_promote(input: Any, bound: Any) -> tuple[Any, Any]:
    """``input`` promoted with a number ``bound``, and the bound converted to the result's
    dtype with PyTorch's range check (Note [checked scalar conversion])."""
    from chainrule._dtype import result_type

    rt = result_type(input, bound)
    t = type(bound)
    if t is int or (t is float and rt.np.kind != "c"):
        bound = checked_scalar(bound, rt.np)
    return (input if input._data.dtype == rt.np else input.to(rt)), bound


def clamp_min(input: Any, min: Any) -> Any:
    """max(x, min). VJP: g where x >= min (the bound included, as PyTorch)."""
    if hasattr(min, "_data"):
        if _kinds.is_complex(min._data):
            _real_input_bounds(input, min, None)
        return apply_op(_clamp_t, (input, min, None))
    input, min = _bound_promote(input, min)
    return apply_op(_clamp_min, (input,), {"min": min})


def clamp_max(input: Any, max: Any) -> Any:
    """min(x, max). VJP: g where x <= max (the bound included, as PyTorch)."""
    if hasattr(max, "_data"):
        if _kinds.is_complex(max._data):
            _real_input_bounds(input, None, max)
        return apply_op(_clamp_t, (input, None, max))
    input, max = _bound_promote(input, max)
    return apply_op(_clamp_max, (input,), {"max": max})
