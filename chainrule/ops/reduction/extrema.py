"""Extrema: max, min (whole tensor, along a dim with indices, or elementwise), amax, amin,
argmax, argmin (their ``(values, indices)`` results are ``chainrule.return_types``' types)."""

from __future__ import annotations

import builtins
from typing import Any

from chainrule import return_types
from chainrule.ops._broadcast import restore_reduced, wrap_dim
from chainrule.ops._registry import OpDef, apply_op, ns
from chainrule.ops.reduction._common import _check_nonempty, _dims, _is_tensor, _keep

__all__ = ["max", "min", "amax", "amin", "argmax", "argmin"]


# max / min / amax / amin ---------------------------------------------------------------------


def _extreme_fwd(kind: str) -> Any:
    def fwd(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
        """Max (min) over ``dim``. VJP: g split evenly among the tied extremes."""
        f = xp.max if kind == "max" else xp.min
        return f(x, axis=dim, keepdims=keepdim)

    return fwd


def _evenly_vjp(ctx: Any, g: Any) -> Any:
    """Gradient of amax/amin (and full max/min): g split evenly among the tied extremes."""
    shape = ctx.input_shapes[0]
    x = ctx.x
    out = _keep(ctx.out, shape, ctx.dim, ctx.keepdim)
    mask = ns.eq(x, out)
    count = ns.sum(mask, dim=ctx.dim, keepdim=True)
    ge = restore_reduced(g, shape, ctx.dim, ctx.keepdim)
    return (ns.where(mask, ge, 0.0) / count,)


def _extreme_op(name: str, kind: str, node: str) -> OpDef:
    op = OpDef(name, _extreme_fwd(kind), ("x",), saves=("x", "out"), promote=None, node_name=node)
    op.vjp(_evenly_vjp)
    return op


_amax = _extreme_op("amax", "max", "AmaxBackward0")
_amin = _extreme_op("amin", "min", "AminBackward0")
_max_all = _extreme_op("max", "max", "MaxBackward1")
_min_all = _extreme_op("min", "min", "MinBackward1")


def _evenly_all_vjp(ctx: Any, g: Any) -> Any:
    """Gradient of full max/min: g split evenly among the elements equal to the result, or,
    when the result is NaN, among the NaNs (PyTorch's rule: one-hot at a single NaN; amax and
    amin, whose mask has no NaN case, give NaN everywhere there, as in PyTorch)."""
    x, out = ctx.x, ctx.out
    mask = ns.eq(x, out) | (ns.isnan(x) & ns.isnan(out))
    count = ns.sum(mask, dim=None, keepdim=False)
    return (ns.where(mask, g, 0.0) / count,)


_max_all.vjp(_evenly_all_vjp)
_min_all.vjp(_evenly_all_vjp)


def _select_fwd(kind: str) -> Any:
    def fwd(xp: Any, x: Any, *, dim: int, keepdim: bool = False) -> Any:
        if x.ndim == 0:
            return (x.copy(), xp.zeros((), dtype="int64")), {"where": (Ellipsis,)}
        arg = xp.argmax if kind == "max" else xp.argmin
        idx = arg(x, axis=dim, keepdims=True)
        # The advanced index of the selected elements, for the VJP's scatter (index_grad).
        where = tuple(
            idx if i == dim else xp.arange(s).reshape((-1,) + (1,) * (x.ndim - 1 - i))
            for i, s in enumerate(x.shape)
        )
        vals = x[where]
        if not keepdim:
            vals = xp.squeeze(vals, axis=dim)
            idx = xp.squeeze(idx, axis=dim)
        return (vals, idx.astype("int64", copy=False)), {"where": where}

    return fwd


def _select_vjp(ctx: Any, g: Any) -> Any:
    """Gradient of max/min along a dim: g scattered to the selected index (one per slice)."""
    g = g[0]
    shape = ctx.input_shapes[0]
    if len(shape):
        g = _keep(g, shape, (ctx.dim,), ctx.keepdim)
    return (ns.index_grad(g, shape=shape, index=ctx.where),)


def _select_op(name: str, kind: str, node: str) -> OpDef:
    op = OpDef(
        name, _select_fwd(kind), ("x",), promote=None, node_name=node, num_outputs=2, aux=True
    )
    op.vjp(_select_vjp)
    return op


_max_dim = _select_op("max_dim", "max", "MaxBackward0")
_min_dim = _select_op("min_dim", "min", "MinBackward0")


def _extreme(kind: str, input: Any, dim: Any, keepdim: Any, other: Any) -> Any:
    if other is not None or (_is_tensor(dim) and keepdim is False):
        from chainrule.ops.binary import maximum, minimum

        other = dim if other is None else other
        return (maximum if kind == "max" else minimum)(input, other)
    if dim is None:
        _check_nonempty(kind, input, None)
        return apply_op(
            _max_all if kind == "max" else _min_all, (input,), {"dim": None, "keepdim": False}
        )
    d = wrap_dim(int(dim), input.ndim)
    _check_nonempty(kind, input, (d,))
    op = _max_dim if kind == "max" else _min_dim
    v, i = apply_op(op, (input,), {"dim": d, "keepdim": builtins.bool(keepdim)})
    return getattr(return_types, kind)._make_of(v, i)


def max(input: Any, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    """``max(input)``: the largest element (0-d; ties share the gradient evenly).
    ``max(input, dim, keepdim=False)``: ``(values, indices)`` along ``dim``; the gradient goes
    to the selected (first) index. ``max(input, other)``: elementwise ``maximum``."""
    return _extreme("max", input, dim, keepdim, other)


def min(input: Any, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    """``min(input)``, ``min(input, dim, keepdim=False)`` or ``min(input, other)``; see max."""
    return _extreme("min", input, dim, keepdim, other)


def _amaxmin(kind: str, input: Any, dim: Any, keepdim: bool) -> Any:
    dims = _dims(dim, input.ndim)
    _check_nonempty("a" + kind, input, dims)
    return apply_op(_amax if kind == "max" else _amin, (input,), {"dim": dims, "keepdim": keepdim})


def amax(input: Any, dim: Any = (), keepdim: bool = False) -> Any:
    """Max over ``dim`` (``()`` = all dims). VJP: g split evenly among tied maxima."""
    return _amaxmin("max", input, dim, keepdim)


def amin(input: Any, dim: Any = (), keepdim: bool = False) -> Any:
    """Min over ``dim`` (``()`` = all dims). VJP: g split evenly among tied minima."""
    return _amaxmin("min", input, dim, keepdim)


def _arg_fwd(kind: str) -> Any:
    def fwd(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
        f = xp.argmax if kind == "max" else xp.argmin
        if x.ndim == 0:
            return xp.zeros((), dtype="int64")
        if dim is None:
            r = f(x.reshape(-1))
            if keepdim:
                r = xp.reshape(r, (1,) * x.ndim)
        else:
            r = f(x, axis=dim, keepdims=keepdim)
        return xp.asarray(r).astype("int64", copy=False)

    return fwd


_argmax = OpDef("argmax", _arg_fwd("max"), ("x",), promote=None, differentiable=False)
_argmin = OpDef("argmin", _arg_fwd("min"), ("x",), promote=None, differentiable=False)


def argmax(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """Index of the (first) maximum along ``dim``, or in the flattened input; int64."""
    d = None if dim is None else wrap_dim(int(dim), input.ndim)
    _check_nonempty("argmax", input, None if d is None else (d,))
    return apply_op(_argmax, (input,), {"dim": d, "keepdim": keepdim})


def argmin(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """Index of the (first) minimum along ``dim``, or in the flattened input; int64."""
    d = None if dim is None else wrap_dim(int(dim), input.ndim)
    _check_nonempty("argmin", input, None if d is None else (d,))
    return apply_op(_argmin, (input,), {"dim": d, "keepdim": keepdim})
