"""Reductions. ``dim`` is normalized by the public wrapper into a sorted tuple (or None)."""

from __future__ import annotations

import builtins
from typing import Any

from chainrule import _dtype
from chainrule.ops._broadcast import normalize_dims, reduced_count, restore_reduced
from chainrule.ops._registry import apply_op, defop, ns

__all__ = ["sum", "mean", "sum_to_size"]


def _reduce_name(base: str) -> Any:
    return lambda p: f"{base}Backward{0 if p.get('dim') is None else 1}"


@defop(name="sum", name_fn=_reduce_name("Sum"))
def _sum(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
    """Sum of x over ``dim``. VJP: g spread back over the reduced axes."""
    r = xp.sum(x, axis=dim, keepdims=keepdim)
    if x.dtype.kind in "biu":
        r = r.astype("int64", copy=False)
    return r


@_sum.vjp
def _sum_vjp(ctx: Any, g: Any) -> Any:
    return (restore_reduced(g, ctx.input_shapes[0], ctx.dim, ctx.keepdim),)


@defop(name="mean", name_fn=_reduce_name("Mean"))
def _mean(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
    """Mean of x over ``dim``. VJP: g / n spread back over the reduced axes."""
    return xp.mean(x, axis=dim, keepdims=keepdim, dtype=x.dtype)


@_mean.vjp
def _mean_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    n = reduced_count(shape, ctx.dim)
    return (restore_reduced(g, shape, ctx.dim, ctx.keepdim) / builtins.max(n, 1) if n else
            restore_reduced(g, shape, ctx.dim, ctx.keepdim),)


def sum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Sum over ``dim`` (int, tuple, or None for all). Integer and bool inputs sum to int64."""
    if dtype is not None:
        input = input.to(dtype)
    return apply_op(_sum, (input,), {"dim": normalize_dims(dim, input.ndim), "keepdim": keepdim})


def mean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Arithmetic mean over ``dim``; needs a floating dtype (or ``dtype=``), as in PyTorch."""
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_dtype.from_np(input._data.dtype).name.capitalize()}"
        )
    return apply_op(_mean, (input,), {"dim": normalize_dims(dim, input.ndim), "keepdim": keepdim})


@defop(name="sum_to_size", node_name="SumBackward1")
def _sum_to_size(xp: Any, x: Any, *, shape: tuple[int, ...]) -> Any:
    """Sum a broadcast array back down to ``shape``. VJP: expand g to the input shape."""
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1
    )
    if axes:
        x = xp.sum(x, axis=axes, keepdims=True)
    return x.reshape(shape)


@_sum_to_size.vjp
def _sum_to_size_vjp(ctx: Any, g: Any) -> Any:
    return (ns.expand(g, shape=ctx.input_shapes[0]),)


def sum_to_size(input: Any, shape: Any) -> Any:
    """Sum ``input`` to ``shape``, which it must be expandable from (used by broadcast VJPs)."""
    from chainrule.autograd.engine import _expandable

    shape = tuple(shape)
    if not _expandable(shape, tuple(input.shape)):
        raise RuntimeError(f"size {{{', '.join(map(str, shape))}}} is not expandable to size "
                           f"{{{', '.join(map(str, input.shape))}}}.")
    if tuple(input.shape) == shape:
        return input
    return apply_op(_sum_to_size, (input,), {"shape": shape})
