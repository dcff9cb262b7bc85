"""Shape ops: reshape/view, transpose/permute, squeeze/unsqueeze, expand, stack/unbind,
clone and dtype conversion. Views share the base's version counter (``view=True``)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import apply_op, defop, ns

__all__ = ["reshape", "view", "transpose", "t", "permute", "squeeze", "unsqueeze", "expand",
           "flatten", "stack", "unbind", "clone", "to_dtype", "to_device"]


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
    return reshape(input, shp[:s] + (-1,) + shp[e + 1 :])


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


@defop(name="squeeze", view=True, name_fn=lambda p: f"SqueezeBackward{0 if p['dim'] is None else 1}")
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
    return apply_op(_expand, (input,), {"shape": tuple(out)})


def _type(t: Any) -> str:
    from chainrule._tensor import _type_name

    return "torch." + _type_name(t._data.dtype)


def _stack_fwd(xp: Any, *xs: Any, dim: int) -> Any:
    return xp.stack(xs, axis=dim)


from chainrule.ops._registry import OpDef  # noqa: E402

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
    return tuple(xp.moveaxis(x, dim, 0))


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


@defop(name="clone")
def _clone(xp: Any, x: Any) -> Any:
    """A copy of x with its own memory. VJP: g."""
    return x.copy()


_clone.vjp(lambda ctx, g: (g,))


def clone(input: Any) -> Any:
    """A copy of ``input`` (differentiable: gradients flow back to ``input``)."""
    return apply_op(_clone, (input,))


@defop(name="to_dtype", node_name="ToCopyBackward0")
def _to_dtype(xp: Any, x: Any, *, dtype: Any) -> Any:
    """x cast to ``dtype``. VJP: g (the engine casts it back to the input's dtype)."""
    return x.astype(dtype)


_to_dtype.vjp(lambda ctx, g: (g,))


def to_dtype(input: Any, dtype: Any) -> Any:
    """``input`` cast to NumPy dtype ``dtype``."""
    return apply_op(_to_dtype, (input,), {"dtype": np.dtype(dtype)})


def to_device(input: Any, backend: Any) -> Any:
    """``input`` copied to another backend's device."""
    raise RuntimeError(
        f"cannot move a tensor to {backend.device}: no such backend is available"
    )
