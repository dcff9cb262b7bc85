"""Joining and splitting along a dimension: stack/unbind (a new dim) and cat/split/chunk (an
existing one).

Differs from torch: ``split``/``chunk``/``unbind`` return copies, not views (a multi-output op
cannot be marked as a view yet); their values and gradients are the same.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import OpDef, apply_op, ns
from chainrule.ops.shape._common import _ints, _slice_index

__all__ = ["stack", "unbind", "cat", "concat", "concatenate", "split", "chunk"]


def _stack_fwd(xp: Any, *xs: Any, dim: int) -> Any:
    return xp.stack(xs, axis=dim)


_stack = OpDef("stack", _stack_fwd, (), promote="same")


@_stack.vjp
def _stack_vjp(ctx: Any, g: Any) -> Any:
    return ns.unbind(g, dim=ctx.dim)


def stack(tensors: Sequence[Any], dim: int = 0) -> Any:
    """Join tensors of one shape along a new dimension ``dim``."""
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tensors[0].shape
    for i, x in enumerate(tensors):
        if x.shape != s0:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(s0)} at entry 0 and "
                f"{list(x.shape)} at entry {i}"
            )
    return apply_op(_stack, tensors, {"dim": wrap_dim(dim, len(s0) + 1)})


def _unbind_fwd(xp: Any, x: Any, *, dim: int) -> Any:
    # Copies: the pieces are not tracked as views, so they must not alias x.
    return tuple(a.copy() for a in xp.moveaxis(x, dim, 0))


_unbind = OpDef("unbind", _unbind_fwd, ("x",), promote=None, num_outputs=-1)


@_unbind.vjp
def _unbind_vjp(ctx: Any, g: Any) -> Any:
    return (ns.stack(*g, dim=ctx.dim),)


def unbind(input: Any, dim: int = 0) -> tuple[Any, ...]:
    """Split ``input`` into the tuple of its slices along ``dim``."""
    nd = input._data.ndim
    if nd == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return apply_op(_unbind, (input,), {"dim": wrap_dim(dim, nd)})


def _cat_fwd(xp: Any, *xs: Any, dim: int, sizes: tuple[int | None, ...]) -> Any:
    # PyTorch's legacy rule: 1-D empty tensors (size None here) are skipped whatever the others'
    # shapes.
    keep = [x for x, n in zip(xs, sizes) if n is not None]
    return xp.concatenate(keep or list(xs), axis=dim)


_cat = OpDef("cat", _cat_fwd, (), promote="same")


@_cat.vjp
def _cat_vjp(ctx: Any, g: Any) -> Any:
    """Each input gets its slice of g along ``dim``."""
    dim = ctx.dim
    out = []
    pos = 0
    for n, shp, need in zip(ctx.sizes, ctx.input_shapes, ctx.needs_input_grad):
        if need:
            part = ns.getitem(g, index=_slice_index(dim, slice(pos, pos + (n or 0))))
            out.append(ns.reshape(part, shape=tuple(shp)) if n is None else part)
        else:
            out.append(None)
        pos += n or 0
    return tuple(out)


def _cat_sizes(shapes: list[tuple[int, ...]], d: int) -> tuple[int | None, ...]:
    legacy = [len(s) == 1 and s[0] == 0 for s in shapes]
    if all(legacy):
        return tuple(0 for _ in shapes)
    return tuple(None if lg else s[d] for lg, s in zip(legacy, shapes))


def cat(tensors: Sequence[Any], dim: int = 0) -> Any:
    """Join ``tensors`` along the existing dim ``dim`` (dtypes promoted). VJP: slices of g."""
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    shapes = [t._data.shape for t in tensors]
    real = [(i, s) for i, s in enumerate(shapes) if not (len(s) == 1 and s[0] == 0)]
    if not real:
        d = wrap_dim(dim, 1)
        return apply_op(_cat, tensors, {"dim": d, "sizes": _cat_sizes(shapes, d)})
    i0, s0 = real[0]
    if len(s0) == 0:
        raise RuntimeError(f"zero-dimensional tensor (at position {i0}) cannot be concatenated")
    d = wrap_dim(dim, len(s0))
    for i, s in real[1:]:
        if len(s) == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if len(s) != len(s0):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(s0)} and {len(s)}"
            )
        for k in range(len(s0)):
            if k != d and s[k] != s0[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{s0[k]} but got size {s[k]} for tensor number {i} in the list."
                )
    return apply_op(_cat, tensors, {"dim": d, "sizes": _cat_sizes(shapes, d)})


def concat(tensors: Sequence[Any], dim: int = 0) -> Any:
    """Alias of :func:`cat`."""
    return cat(tensors, dim)


def concatenate(tensors: Sequence[Any], dim: int = 0, *, axis: int | None = None) -> Any:
    """Alias of :func:`cat` (``axis`` is accepted as NumPy spells it)."""
    return cat(tensors, dim if axis is None else axis)


def _split_fwd(xp: Any, x: Any, *, sizes: tuple[int, ...], dim: int, by_size: bool) -> Any:
    out = []
    pos = 0
    for n in sizes:
        out.append(x[_slice_index(dim, slice(pos, pos + n))].copy())
        pos += n
    return tuple(out)


_split = OpDef(
    "split",
    _split_fwd,
    ("x",),
    promote=None,
    num_outputs=-1,
    name_fn=lambda p: "SplitBackward0" if p["by_size"] else "SplitWithSizesBackward0",
)


@_split.vjp
def _split_vjp(ctx: Any, g: Any) -> Any:
    """The pieces' gradients (zeros for unused pieces) joined back along ``dim``."""
    return (ns.cat(*g, dim=ctx.dim, sizes=ctx.sizes),)


def split(tensor: Any, split_size_or_sections: Any, dim: int = 0) -> tuple[Any, ...]:
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the listed sizes.

    Differs from torch: the pieces are copies, not views (values and gradients agree)."""
    shp = tensor._data.shape
    if len(shp) == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, len(shp))
    n = shp[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size < 0:
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={size}"
            )
        if size == 0:
            if n != 0:
                raise RuntimeError(
                    "split_size can only be 0 if dimension size is 0, but got dimension size "
                    f"of {n}"
                )
            sizes: tuple[int, ...] = (0,)
        else:
            sizes = tuple(min(size, n - p) for p in range(0, n, size)) or (0,)
        by_size = True
    else:
        sizes = _ints(split_size_or_sections)
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={list(sizes)}"
            )
        by_size = False
    return apply_op(_split, (tensor,), {"sizes": sizes, "dim": d, "by_size": by_size})


def chunk(input: Any, chunks: int, dim: int = 0) -> tuple[Any, ...]:
    """At most ``chunks`` pieces of size ``ceil(n / chunks)`` along ``dim``."""
    shp = input._data.shape
    if len(shp) == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, len(shp))
    n = shp[d]
    size = -(-n // chunks)
    if size == 0:
        # Every piece is empty: PyTorch returns `chunks` of them.
        return split(input, [0] * chunks, d)
    return split(input, size, d)
