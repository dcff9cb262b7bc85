"""Reordering dimensions (views): transpose, t, permute and movedim/moveaxis."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.shape._common import _ints

__all__ = ["transpose", "t", "permute", "movedim", "moveaxis"]


@defop(name="transpose", view=True)
def _transpose(xp: Any, x: Any, *, dim0: int, dim1: int) -> Any:
    """x with dims ``dim0`` and ``dim1`` swapped (a view). VJP: swap them back."""
    return xp.swapaxes(x, dim0, dim1)


@_transpose.vjp
def _transpose_vjp(ctx: Any, g: Any) -> Any:
    return (ns.transpose(g, dim0=ctx.dim0, dim1=ctx.dim1),)


def transpose(input: Any, dim0: int, dim1: int) -> Any:
    """Swap two dimensions (a view)."""
    nd = input._data.ndim
    return apply_op(_transpose, (input,), {"dim0": wrap_dim(dim0, nd), "dim1": wrap_dim(dim1, nd)})


@defop(name="t", view=True)
def _t(xp: Any, x: Any) -> Any:
    """Transpose of a matrix (<= 2-D). VJP: transpose g."""
    return x.T


@_t.vjp
def _t_vjp(ctx: Any, g: Any) -> Any:
    return (ns.t(g),)


def t(input: Any) -> Any:
    """Transpose of a tensor with at most 2 dims."""
    if input._data.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D"
        )
    return apply_op(_t, (input,))


@defop(name="permute", view=True)
def _permute(xp: Any, x: Any, *, dims: tuple[int, ...]) -> Any:
    """x with its dims reordered (a view). VJP: the inverse permutation of g."""
    return xp.transpose(x, dims)


@_permute.vjp
def _permute_vjp(ctx: Any, g: Any) -> Any:
    inv = tuple(int(i) for i in np.argsort(ctx.dims))
    return (ns.permute(g, dims=inv),)


def permute(input: Any, dims: Sequence[int]) -> Any:
    """Reorder dimensions; ``dims`` must be a permutation of ``range(ndim)``."""
    nd = input._data.ndim
    dims = tuple(wrap_dim(int(d), nd) for d in dims)
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply_op(_permute, (input,), {"dims": dims})


def movedim(input: Any, source: Any, destination: Any) -> Any:
    """Move dims ``source`` to positions ``destination`` (a view; PyTorch records a permute)."""
    nd = input._data.ndim
    src, dst = _ints(source), _ints(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    src_w = tuple(wrap_dim(d, nd) for d in src)
    dst_w = tuple(wrap_dim(d, nd) for d in dst)
    if len(set(src_w)) != len(src_w):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(dst_w)) != len(dst_w):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    if nd == 0:
        return apply_op(_permute, (input,), {"dims": ()})
    order: list[Any] = [None] * nd
    for s, d in zip(src_w, dst_w):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in src_w)
    perm = tuple(o if o is not None else next(rest) for o in order)
    return apply_op(_permute, (input,), {"dims": perm})


moveaxis = movedim
