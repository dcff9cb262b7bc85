"""Ops of the nn family: softmax, log_softmax, a gather/scatter pair along one dim (used by
nll_loss and the max pools) and the stable ``-log(sigmoid(x))`` used by the logits losses.

The losses, normalizations and poolings built from these live in ``chainrule.nn.functional``
as compositions of registered ops, so their higher derivatives come for free.
"""

from __future__ import annotations

import warnings
from typing import Any

from chainrule import _kinds
from chainrule.backends import backend_of
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import apply_op, defop, ns

__all__ = ["softmax", "log_softmax"]


@defop(name="softmax", saves=("out",), node_name="SoftmaxBackward0")
def _softmax(xp: Any, x: Any, *, dim: Any) -> Any:
    """s = exp(x - max x) / sum exp(x - max x) along ``dim``. VJP: s (g - sum(g s))."""
    m = xp.max(x, axis=dim, keepdims=True) if x.size else x
    e = xp.exp(x - m)
    return e / xp.sum(e, axis=dim, keepdims=True)


@_softmax.vjp
def _softmax_vjp(ctx: Any, g: Any) -> Any:
    s = ctx.out
    d = ctx.dim
    gs = g * s
    return (gs - s * ns.sum(gs, dim=d, keepdim=True),)


@defop(name="safe_softmax", saves=("out",), node_name="SafeSoftmaxBackward0")
def _safe_softmax(xp: Any, x: Any, *, dim: Any) -> Any:
    """softmax(x) along ``dim``, with 0 (not NaN) where every entry along ``dim`` is -inf
    (PyTorch's ``_safe_softmax``, of scaled_dot_product_attention's math path). VJP: that of
    softmax (0 on those rows, whose output is 0)."""
    if not x.size:
        return _softmax.forward(xp, x, dim=dim)
    m = xp.max(x, axis=dim, keepdims=True)
    dead = xp.isneginf(m)
    e = xp.exp(x - xp.where(dead, 0, m))
    return xp.where(dead, 0, e / xp.where(dead, 1, xp.sum(e, axis=dim, keepdims=True)))


_safe_softmax.vjp(_softmax_vjp)


def safe_softmax(input: Any, dim: int) -> Any:
    """Softmax along ``dim`` that gives 0 on slices that are all -inf (``_safe_softmax``)."""
    return apply_op(_safe_softmax, (input,), {"dim": _softmax_dim(input, dim)})


@defop(name="log_softmax", saves=("out",), node_name="LogSoftmaxBackward0")
def _log_softmax(xp: Any, x: Any, *, dim: Any) -> Any:
    """x - max x - log sum exp(x - max x) along ``dim``. VJP: g - softmax(x) sum(g)."""
    m = xp.max(x, axis=dim, keepdims=True) if x.size else x
    z = x - m
    return z - xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))


@_log_softmax.vjp
def _log_softmax_vjp(ctx: Any, g: Any) -> Any:
    return (g - ns.exp(ctx.out) * ns.sum(g, dim=ctx.dim, keepdim=True),)


def _softmax_dim(input: Any, dim: int) -> Any:
    # A 0-d tensor reduces over "all" (itself); otherwise one normalized axis as a tuple.
    d = wrap_dim(int(dim), input.ndim)
    return None if input.ndim == 0 else (d,)


def _cast(input: Any, dtype: Any, dim: Any = -1, name: str = "softmax") -> Any:
    if dtype is not None:
        input = input.to(dtype)
    if not _kinds.is_inexact(input._data) or _kinds.is_complex(input._data):
        # torch's type and kernel name (the last-dim kernel or the general one).
        last = input.ndim == 0 or wrap_dim(int(dim), input.ndim) == input.ndim - 1
        kernel = f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_legacy(input._data.dtype)}'"
        )
    return input


def _legacy(d: Any) -> str:
    from chainrule.ops._registry import _legacy_name

    return _legacy_name(d)


def implicit_dim(name: str, ndim: int) -> int:
    """The dim PyTorch picks when ``dim=None`` (with its deprecation warning)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call "
        "to include dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Any, dim: int, dtype: Any = None) -> Any:
    """Softmax along ``dim``, numerically stable (the max is subtracted first)."""
    input = _cast(input, dtype, dim)
    return apply_op(_softmax, (input,), {"dim": _softmax_dim(input, dim)})


def log_softmax(input: Any, dim: int, dtype: Any = None) -> Any:
    """log(softmax(x)) along ``dim``, computed as x - logsumexp(x) for stability."""
    input = _cast(input, dtype, dim, "log_softmax")
    return apply_op(_log_softmax, (input,), {"dim": _softmax_dim(input, dim)})


# Gather / scatter along one dim -------------------------------------------------------------


@defop(name="gather_along", node_name="GatherBackward0")
def _gather_along(xp: Any, x: Any, *, dim: int, index: Any) -> Any:
    """out[..., i, ...] = x[..., index[..., i, ...], ...] along ``dim`` (``index`` is a constant
    int array of x's shape except along ``dim``). VJP: ``scatter_along`` of g."""
    if (
        x.ndim
        and dim % x.ndim == x.ndim - 1
        and x.size
        and x.flags.c_contiguous
        and index.shape[:-1] == x.shape[:-1]
    ):
        # Last axis of a contiguous x: one flat take, ~4x faster than take_along_axis's
        # broadcast fancy index.
        size = x.shape[-1]
        rows = x.size // size
        offs = xp.arange(0, rows * size, size, dtype=xp.int64).reshape(x.shape[:-1] + (1,))
        return xp.take(x.reshape(-1), offs + index)
    return xp.take_along_axis(x, index, axis=dim)


@_gather_along.vjp
def _gather_along_vjp(ctx: Any, g: Any) -> Any:
    return (ns.scatter_along(g, dim=ctx.dim, index=ctx.index, size=ctx.input_shapes[0][ctx.dim]),)


@defop(name="scatter_along", node_name="ScatterAddBackward0")
def _scatter_along(xp: Any, g: Any, *, dim: int, index: Any, size: int) -> Any:
    """Zeros with ``size`` entries along ``dim``, g added at ``index`` (repeats accumulate).
    The adjoint of ``gather_along``; VJP: ``gather_along`` of g."""
    gm = xp.moveaxis(g, dim, -1)
    im = xp.moveaxis(index, dim, -1)
    lead = gm.shape[:-1]
    rows = 1
    for s in lead:
        rows *= s
    flat = (xp.arange(rows, dtype=im.dtype).reshape(lead + (1,)) * size + im).reshape(-1)
    # ufunc.at accumulates in g's dtype (as PyTorch's scatter_add), with no float64 buffer.
    out = xp.zeros(rows * size, dtype=g.dtype)
    backend_of(out).scatter_add(out, flat, gm.reshape(-1))
    out = out.reshape(lead + (size,))
    return xp.ascontiguousarray(xp.moveaxis(out, -1, dim))


@_scatter_along.vjp
def _scatter_along_vjp(ctx: Any, g: Any) -> Any:
    return (ns.gather_along(g, dim=ctx.dim, index=ctx.index),)


def gather_along(input: Any, dim: int, index: Any) -> Any:
    """``take_along_dim`` with a constant NumPy int index (internal helper of the losses)."""
    return apply_op(_gather_along, (input,), {"dim": dim, "index": index})


# Stable -log(sigmoid(x)) ----------------------------------------------------------------------


@defop(name="neg_log_sigmoid", saves=("x",), promote="float")
def _neg_log_sigmoid(xp: Any, x: Any) -> Any:
    """softplus(-x) = max(-x, 0) + log1p(exp(-|x|)), overflow-free.
    VJP: g (sigmoid(x) - 1), exact at x == 0 too."""
    return (xp.maximum(-x, 0) + xp.log1p(xp.exp(-xp.abs(x)))).astype(x.dtype, copy=False)


@_neg_log_sigmoid.vjp
def _neg_log_sigmoid_vjp(ctx: Any, g: Any) -> Any:
    return (g * (ns.sigmoid(ctx.x) - 1),)


def neg_log_sigmoid(input: Any) -> Any:
    """-log(sigmoid(x)) (internal helper of binary_cross_entropy_with_logits)."""
    return apply_op(_neg_log_sigmoid, (input,))
