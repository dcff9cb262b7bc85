"""Sums and products: sum, mean, sum_to_size, prod and logsumexp."""

from __future__ import annotations

import builtins
from typing import Any

from chainrule import _kinds
from chainrule._autocast_state import state as _ac
from chainrule.ops import _autocast
from chainrule.ops._broadcast import reduced_count, restore_reduced
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.complex_numbers import cj
from chainrule.ops.reduction._common import (
    _cast,
    _dims,
    _dtype_name,
    _errstate,
    _keep,
    _out_dtype,
    _reduce_name,
)

__all__ = ["sum", "mean", "sum_to_size", "prod", "logsumexp"]


# sum / mean ----------------------------------------------------------------------------------


@defop(name="sum", name_fn=_reduce_name("Sum"))
def _sum(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
    """Sum of x over ``dim``. VJP: g spread back over the reduced axes."""
    r = xp.sum(x, axis=dim, keepdims=keepdim)
    if _kinds.is_integral(x, include_bool=True):
        r = r.astype("int64", copy=False)
    return r


@_sum.vjp
def _sum_vjp(ctx: Any, g: Any) -> Any:
    return (restore_reduced(g, ctx.input_shapes[0], ctx.dim, ctx.keepdim),)


@defop(name="mean", name_fn=_reduce_name("Mean"))
def _mean(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
    """Mean of x over ``dim``. VJP: g / n spread back over the reduced axes."""
    if reduced_count(x.shape, dim) == 0:
        with _errstate(xp):  # the mean of nothing is NaN, silently, as in PyTorch
            return xp.sum(x, axis=dim, keepdims=keepdim) / x.dtype.type(0)
    return xp.mean(x, axis=dim, keepdims=keepdim, dtype=x.dtype)


@_mean.vjp
def _mean_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    n = reduced_count(shape, ctx.dim)
    return (
        restore_reduced(g, shape, ctx.dim, ctx.keepdim) / builtins.max(n, 1)
        if n
        else restore_reduced(g, shape, ctx.dim, ctx.keepdim),
    )


def sum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Sum over ``dim`` (int, tuple, or None for all). Integer and bool inputs sum to int64."""
    input = _cast(input, dtype)
    out = apply_op(_sum, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})
    return _out_dtype(out, dtype)


def mean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Arithmetic mean over ``dim``; needs a floating dtype (or ``dtype=``), as in PyTorch."""
    input = _cast(input, dtype)
    if not _kinds.is_inexact(input._data):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_dtype_name(input)}"
        )
    return apply_op(_mean, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


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
        raise RuntimeError(
            f"size {{{', '.join(map(str, shape))}}} is not expandable to size "
            f"{{{', '.join(map(str, input.shape))}}}."
        )
    if tuple(input.shape) == shape:
        return input
    return apply_op(_sum_to_size, (input,), {"shape": shape})


# prod ----------------------------------------------------------------------------------------


@defop(name="prod", saves=("x", "out"), name_fn=_reduce_name("Prod"))
def _prod(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
    """Product of x over ``dim``.

    VJP: g * prod_{j != i} x_j. Without zeros that is g * out / x. With zeros it is built from
    z = (x == 0), the count c of zeros per slice, the product P of the non-zero entries and
    the product Z of the zero entries: prod_{j != i} x_j = T_i * P / xn_i, where xn is x with
    zeros replaced by 1 and T_i is the product of the zeros other than x_i (Z at a non-zero
    position; 1 if c == 1, the other zero if c == 2, 0 if c >= 3 at a zero position). Written
    this way the formula is exact to second order, so double backward is right at zeros too.
    """
    r = xp.prod(x, axis=dim, keepdims=keepdim)
    if _kinds.is_integral(x, include_bool=True):
        r = r.astype("int64", copy=False)
    return r


@_prod.vjp
def _prod_vjp(ctx: Any, g: Any) -> Any:
    # complex x: g conj(prod_{j != i} x_j) (Note [Wirtinger gradients]), the same formulas in
    # conj(x) and conj(out)
    x = cj(ctx.x)
    shape = ctx.input_shapes[0]
    dims = ctx.dim
    ge = restore_reduced(g, shape, dims, ctx.keepdim)
    z = ns.eq(x, 0.0)
    if not builtins.bool(ns.sum(z)):
        return (ge * _keep(cj(ctx.out), shape, dims, ctx.keepdim) / x,)
    c = ns.sum(z, dim=dims, keepdim=True)
    xn = ns.where(z, 1.0, x)
    xz = ns.where(z, x, 1.0)
    pn = ns.prod(xn, dim=dims, keepdim=True)
    pz = ns.prod(xz, dim=dims, keepdim=True)
    sz = ns.sum(ns.where(z, x, 0.0), dim=dims, keepdim=True)
    at_zero = ns.where(ns.eq(c, 1), 1.0, ns.where(ns.eq(c, 2), sz - x, 0.0))
    t = ns.where(z, at_zero, pz)
    return (ge * t * pn / xn,)


def prod(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Product over one ``dim`` (or all elements). Integer and bool inputs give int64."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input = _autocast.fp32_1(input)
    if dim is not None and not isinstance(dim, int):
        raise TypeError(
            f"prod() received an invalid combination of arguments - got (Tensor, "
            f"{type(dim).__name__}), but expected one of:\n * (Tensor input, *, torch.dtype dtype"
            " = None)\n * (Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = "
            "None, Tensor out = None)\n"
        )
    input = _cast(input, dtype)
    out = apply_op(_prod, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})
    return _out_dtype(out, dtype)


# logsumexp -----------------------------------------------------------------------------------


@defop(name="logsumexp", saves=("x", "out"), promote="float")
def _logsumexp(xp: Any, x: Any, *, dim: Any, keepdim: bool = False) -> Any:
    """m + log(sum(exp(x - m))) with m = max over ``dim`` (0 where infinite); for complex x,
    m is the max of the real parts (PyTorch's shift), so the imaginary part is the principal
    log's, in (-pi, pi]. VJP: g exp(x - out) = g softmax(x)."""
    if x.size == 0:
        return xp.log(xp.sum(xp.exp(x), axis=dim, keepdims=keepdim))
    m = xp.max(x.real if xp.iscomplexobj(x) else x, axis=dim, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    with _errstate(xp):
        s = xp.log(xp.sum(xp.exp(x - m), axis=dim, keepdims=True)) + m
    if not keepdim:
        s = xp.squeeze(s, axis=dim) if dim is not None else s.reshape(())
    return s


@_logsumexp.vjp
def _logsumexp_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    ge = restore_reduced(g, shape, ctx.dim, ctx.keepdim)
    return (ge * cj(ns.exp(ctx.x - _keep(ctx.out, shape, ctx.dim, ctx.keepdim))),)


def logsumexp(input: Any, dim: Any, keepdim: bool = False) -> Any:
    """log(sum(exp(input))) over ``dim``, computed stably. Integer inputs give floats."""
    return apply_op(_logsumexp, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})
