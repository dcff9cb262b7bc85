"""Reshaping views: reshape/view, flatten/unflatten, squeeze/unsqueeze and expand. Each keeps
the elements in order and changes only the shape; all but ``reshape`` (when strides force a
copy) are views sharing the base's version counter."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.shape._common import _ints, _type

__all__ = ["reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "expand"]


def _infer_shape(shape: Sequence[int], numel: int) -> tuple[int, ...]:
    shape = tuple(int(s) for s in shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[: neg[0]] + (numel // known,) + shape[neg[0] + 1 :]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _reshape_vjp(ctx: Any, g: Any) -> Any:
    return (ns.reshape(g, shape=ctx.input_shapes[0]),)


@defop(name="reshape", node_name="ViewBackward0")
def _reshape(xp: Any, x: Any, *, shape: tuple[int, ...]) -> Any:
    """x with a new shape; a view when the strides allow, else a copy. VJP: reshape g back."""
    return xp.reshape(x, shape)


_reshape.vjp(_reshape_vjp)


@defop(name="view", view=True)
def _view(xp: Any, x: Any, *, shape: tuple[int, ...]) -> Any:
    """x seen with a new shape, sharing memory; fails when that needs a copy."""
    try:
        return xp.reshape(x, shape, copy=False)
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None


_view.vjp(_reshape_vjp)


def reshape(input: Any, shape: Sequence[int]) -> Any:
    """``input`` with shape ``shape`` (one entry may be -1)."""
    shape = _infer_shape(shape, input._data.size)
    if shape == input._data.shape:
        return apply_op(_view, (input,), {"shape": shape})
    try:
        np.reshape(input._data, shape, copy=False)
        return apply_op(_view, (input,), {"shape": shape})
    except ValueError:
        return apply_op(_reshape, (input,), {"shape": shape})


def view(input: Any, shape: Sequence[int]) -> Any:
    """A view of ``input`` with shape ``shape``, sharing memory and version counter."""
    return apply_op(_view, (input,), {"shape": _infer_shape(shape, input._data.size)})


def flatten(input: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    """Merge dims ``start_dim..end_dim`` into one."""
    nd = input._data.ndim
    if nd == 0:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = input._data.shape
    if s == e:
        return input
    # The merged size written out, not -1: -1 is ambiguous for a tensor with no elements.
    merged = 1
    for n in shp[s : e + 1]:
        merged *= n
    return reshape(input, shp[:s] + (merged,) + shp[e + 1 :])


def unflatten(input: Any, dim: int, sizes: Sequence[int]) -> Any:
    """Split dim ``dim`` into ``sizes`` (one entry may be -1); a view when strides allow."""
    shp = input._data.shape
    dim = wrap_dim(dim, len(shp))
    sizes = _ints(sizes)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    inferred = -1 in sizes
    if (inferred and (known == 0 or shp[dim] % known)) or (not inferred and known != shp[dim]):
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
            f"({shp[dim]}) in the input tensor"
        )
    if -1 in sizes:
        sizes = tuple(shp[dim] // known if s == -1 else s for s in sizes)
    return reshape(input, shp[:dim] + sizes + shp[dim + 1 :])


@defop(
    name="squeeze", view=True, name_fn=lambda p: f"SqueezeBackward{0 if p['dim'] is None else 1}"
)
def _squeeze(xp: Any, x: Any, *, dim: Any) -> Any:
    """Drop size-1 dims (all, or those in ``dim``). VJP: reshape g back."""
    if dim is None:
        return xp.squeeze(x)
    return xp.squeeze(x, axis=dim)


_squeeze.vjp(_reshape_vjp)


def squeeze(input: Any, dim: Any = None) -> Any:
    """Remove dims of size 1; with ``dim``, only those listed (others are kept silently)."""
    nd = input._data.ndim
    if dim is not None:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = tuple(d for d in (wrap_dim(int(d), nd) for d in dims) if input._data.shape[d] == 1)
        return apply_op(_squeeze, (input,), {"dim": dims})
    return apply_op(_squeeze, (input,), {"dim": None})


@defop(name="unsqueeze", view=True)
def _unsqueeze(xp: Any, x: Any, *, dim: int) -> Any:
    """Insert a size-1 dim at ``dim``. VJP: reshape g back."""
    return xp.expand_dims(x, dim)


_unsqueeze.vjp(_reshape_vjp)


def unsqueeze(input: Any, dim: int) -> Any:
    """Insert a dimension of size 1 at ``dim`` (which may be ``ndim``)."""
    return apply_op(_unsqueeze, (input,), {"dim": wrap_dim(dim, input._data.ndim + 1)})


@defop(name="expand", view=True)
def _expand(xp: Any, x: Any, *, shape: tuple[int, ...]) -> Any:
    """x broadcast to ``shape`` without copying (a read-only view). VJP: sum g back."""
    return xp.broadcast_to(x, shape)


@_expand.vjp
def _expand_vjp(ctx: Any, g: Any) -> Any:
    return (ns.sum_to_size(g, shape=ctx.input_shapes[0]),)


def expand(input: Any, shape: Sequence[int]) -> Any:
    """Broadcast ``input`` to ``shape``; -1 keeps a dim's size; new dims go in front."""
    return apply_op(_expand, (input,), {"shape": expand_shape(input, shape)})


def expand_shape(input: Any, shape: Sequence[int]) -> tuple[int, ...]:
    """The shape ``input.expand(shape)`` has (-1 resolved), or PyTorch's error for it."""
    shape = tuple(int(s) for s in shape)
    src = input._data.shape
    if len(shape) < len(src):
        raise RuntimeError(
            f"expand({_type(input)}{{{list(src)}}}, size={list(shape)}): the number of sizes "
            "provided "
            f"({len(shape)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(src)})"
        )
    lead = len(shape) - len(src)
    out = []
    for i, s in enumerate(shape):
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                    "non-existing dimension 0"
                )
            out.append(s)
            continue
        have = src[i - lead]
        if s == -1:
            s = have
        if have != s and have != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(shape)}.  Tensor sizes: "
                f"{list(src)}"
            )
        out.append(s)
    return tuple(out)
