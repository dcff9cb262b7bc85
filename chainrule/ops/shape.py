"""Shape ops: reshape/view, transpose/permute/movedim, squeeze/unsqueeze, expand, stack/unbind,
cat/split, repeat/flip/roll, narrow/select, tril/triu/diag/diagonal, padding, one_hot, clone and
dtype conversion. Views share the base's version counter (``view=True``).

Differs from torch: ``split``/``chunk``/``unbind`` return copies, not views (a multi-output op
cannot be marked as a view yet); their values and gradients are the same.

Long because it holds the whole shape family: one place per op (ARCHITECTURE.md section 5).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import apply_op, defop, ns

__all__ = ["reshape", "view", "transpose", "t", "permute", "squeeze", "unsqueeze", "expand",
           "flatten", "stack", "unbind", "clone", "to_dtype", "to_device", "unflatten", "movedim",
           "moveaxis", "repeat", "tile", "flip", "roll", "cat", "concat", "concatenate", "split",
           "chunk", "narrow", "select", "tril", "triu", "tril_", "triu_", "diag", "diagonal",
           "pad", "one_hot"]
# ``pad`` and ``one_hot`` are torch.nn.functional's; chainrule.nn.functional re-exports them.


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


@defop(name="squeeze", view=True,
       name_fn=lambda p: f"SqueezeBackward{0 if p['dim'] is None else 1}")
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


# Views built from existing view ops -----------------------------------------------------------


def _ints(seq: Any) -> tuple[int, ...]:
    if isinstance(seq, (int, np.integer)) or (hasattr(seq, "ndim") and seq.ndim == 0):
        return (int(seq),)
    return tuple(int(s) for s in seq)


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


def _slice_index(dim: int, part: Any) -> tuple[Any, ...]:
    return (slice(None),) * dim + (part, Ellipsis)


def narrow(input: Any, dim: int, start: Any, length: int) -> Any:
    """Elements ``start .. start+length-1`` along ``dim`` (a view). VJP: g placed in zeros."""
    from chainrule._dispatch import defs  # getitem's OpDef: ops/indexing.py imports this module

    _getitem = defs.getitem
    shp = input._data.shape
    if len(shp) == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shp))
    start, length = int(start), int(length)
    n = shp[dim]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -n <= start <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start})"
        )
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({n})."
        )
    return apply_op(_getitem, (input,),
                    {"index": _slice_index(dim, slice(start, start + length))})


def select(input: Any, dim: int, index: Any) -> Any:
    """The slice at ``index`` along ``dim``, with that dim removed (a view)."""
    from chainrule._dispatch import defs  # getitem's OpDef: ops/indexing.py imports this module

    _getitem = defs.getitem
    shp = input._data.shape
    if len(shp) == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shp))
    index = int(index)
    n = shp[dim]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(shp)} at dimension "
            f"{dim}"
        )
    if index < 0:
        index += n
    return apply_op(_getitem, (input,), {"index": _slice_index(dim, index)})


# repeat / tile --------------------------------------------------------------------------------


@defop(name="repeat", promote=None)
def _repeat(xp: Any, x: Any, *, repeats: tuple[int, ...]) -> Any:
    """x tiled ``repeats[i]`` times along dim i (new leading dims for extra repeats).
    VJP: g reshaped to (r0, s0, r1, s1, ...) and summed over the r axes."""
    return xp.tile(x, repeats)


@_repeat.vjp
def _repeat_vjp(ctx: Any, g: Any) -> Any:
    reps = ctx.repeats
    src = ctx.input_shapes[0]
    padded = (1,) * (len(reps) - len(src)) + tuple(src)
    inter: list[int] = []
    for r, s in zip(reps, padded):
        inter += [r, s]
    g = ns.reshape(g, shape=tuple(inter))
    g = ns.sum(g, dim=tuple(range(0, 2 * len(reps), 2)), keepdim=False)
    return (ns.reshape(g, shape=tuple(src)),)


def repeat(input: Any, repeats: Sequence[int]) -> Any:
    """``input`` tiled; ``len(repeats)`` must be at least ``input.dim()`` (Tensor.repeat)."""
    reps = _ints(repeats)
    if len(reps) < input._data.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    if any(r < 0 for r in reps):
        padded = (1,) * (len(reps) - input._data.ndim) + input._data.shape
        out = [r * s for r, s in zip(reps, padded)]
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {out}")
    return apply_op(_repeat, (input,), {"repeats": reps})


def tile(input: Any, dims: Sequence[int]) -> Any:
    """Like ``repeat``, with ``dims`` padded with leading 1s when shorter than ``input.dim()``."""
    reps = _ints(dims)
    reps = (1,) * (input._data.ndim - len(reps)) + reps
    return repeat(input, reps)


# flip / roll ----------------------------------------------------------------------------------


@defop(name="flip", promote=None)
def _flip(xp: Any, x: Any, *, dims: tuple[int, ...]) -> Any:
    """x reversed along ``dims`` (a copy, as in PyTorch). VJP: flip g back."""
    return xp.flip(x, axis=dims).copy()


_flip.vjp(lambda ctx, g: (ns.flip(g, dims=ctx.dims),))


def flip(input: Any, dims: Sequence[int]) -> Any:
    """Reverse the order of elements along each of ``dims``."""
    nd = input._data.ndim
    d = tuple(wrap_dim(int(i), nd) for i in _ints(dims))
    if nd == 0:
        d = ()  # dim 0 of a 0-dim tensor names the tensor itself
    for i, a in enumerate(d):
        if a in d[:i]:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    return apply_op(_flip, (input,), {"dims": d})


@defop(name="roll", promote=None)
def _roll(xp: Any, x: Any, *, shifts: tuple[int, ...], dims: Any) -> Any:
    """x shifted circularly by ``shifts`` along ``dims`` (flattened when ``dims`` is None).
    VJP: roll g by ``-shifts``."""
    if dims is None:
        return xp.roll(x, shifts[0])
    return xp.roll(x, shifts, axis=dims)


@_roll.vjp
def _roll_vjp(ctx: Any, g: Any) -> Any:
    return (ns.roll(g, shifts=tuple(-s for s in ctx.shifts), dims=ctx.dims),)


def roll(input: Any, shifts: Any, dims: Any = None) -> Any:
    """Roll ``input`` by ``shifts`` along ``dims``; with no dims, over the flattened tensor."""
    sh = _ints(shifts)
    nd = input._data.ndim
    if dims is None or (isinstance(dims, (tuple, list)) and len(dims) == 0):
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        return apply_op(_roll, (input,), {"shifts": sh, "dims": None})
    d = _ints(dims)
    if len(sh) != len(d):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(d)}")
    d = tuple(wrap_dim(i, nd) for i in d)
    return apply_op(_roll, (input,), {"shifts": sh, "dims": d})


# cat / split / chunk --------------------------------------------------------------------------


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
    nd = len(g.shape)
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
        raise RuntimeError(
            f"zero-dimensional tensor (at position {i0}) cannot be concatenated"
        )
    d = wrap_dim(dim, len(s0))
    for i, s in real[1:]:
        if len(s) == 0:
            raise RuntimeError(
                f"zero-dimensional tensor (at position {i}) cannot be concatenated"
            )
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


_split = OpDef("split", _split_fwd, ("x",), promote=None, num_outputs=-1,
               name_fn=lambda p: "SplitBackward0" if p["by_size"] else "SplitWithSizesBackward0")


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
                f"split expects split_size be non-negative, but got split_size={size}")
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


# tril / triu / diag / diagonal ----------------------------------------------------------------


def _tri(name: str, fn: str) -> Any:
    def fwd(xp: Any, x: Any, *, diagonal: int) -> Any:
        return getattr(xp, fn)(x, diagonal)

    fwd.__doc__ = f"x with elements {'above' if fn == 'tril' else 'below'} the diagonal zeroed."
    op = OpDef(name, fwd, ("x",), promote=None)
    op.vjp(lambda ctx, g: (getattr(ns, name)(g, diagonal=ctx.diagonal),))
    return op


_tril = _tri("tril", "tril")
_triu = _tri("triu", "triu")


def tril(input: Any, diagonal: int = 0) -> Any:
    """Lower triangle of the last two dims (elements j - i <= diagonal). VJP: tril(g)."""
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply_op(_tril, (input,), {"diagonal": int(diagonal)})


def triu(input: Any, diagonal: int = 0) -> Any:
    """Upper triangle of the last two dims (elements j - i >= diagonal). VJP: triu(g)."""
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply_op(_triu, (input,), {"diagonal": int(diagonal)})


def tril_(input: Any, diagonal: int = 0) -> Any:
    """In-place :func:`tril`."""
    from chainrule.ops.views import apply_inplace

    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply_inplace(_tril, input, (), {"diagonal": int(diagonal)})


def triu_(input: Any, diagonal: int = 0) -> Any:
    """In-place :func:`triu`."""
    from chainrule.ops.views import apply_inplace

    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply_inplace(_triu, input, (), {"diagonal": int(diagonal)})


def _diag_view(xp: Any, x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """A writable strided view of the diagonal (NumPy's own ``diagonal`` is read-only)."""
    n1, n2 = x.shape[dim1], x.shape[dim2]
    r0, c0 = max(0, -offset), max(0, offset)
    length = max(0, min(n1 - r0, n2 - c0))
    idx = [slice(None)] * x.ndim
    idx[dim1] = slice(min(r0, n1), None)
    idx[dim2] = slice(min(c0, n2), None)
    sub = x[tuple(idx)]
    others = [i for i in range(x.ndim) if i not in (dim1, dim2)]
    shape = tuple(x.shape[i] for i in others) + (length,)
    strides = tuple(sub.strides[i] for i in others) + (sub.strides[dim1] + sub.strides[dim2],)
    return xp.lib.stride_tricks.as_strided(sub, shape, strides)


@defop(name="diagonal", view=True, promote=None)
def _diagonal(xp: Any, x: Any, *, offset: int, dim1: int, dim2: int) -> Any:
    """The diagonal of x over (dim1, dim2), as a last dim (a view).
    VJP: g written on the diagonal of zeros (``diagonal_backward``)."""
    return _diag_view(xp, x, offset, dim1, dim2)


@_diagonal.vjp
def _diagonal_vjp(ctx: Any, g: Any) -> Any:
    return (ns.diagonal_backward(g, shape=tuple(ctx.input_shapes[0]), offset=ctx.offset,
                                 dim1=ctx.dim1, dim2=ctx.dim2),)


@defop(name="diagonal_backward", node_name="DiagonalBackwardBackward0", promote=None)
def _diagonal_backward(xp: Any, g: Any, *, shape: tuple[int, ...], offset: int, dim1: int,
                       dim2: int) -> Any:
    """Zeros of ``shape`` with g on the diagonal. VJP: the diagonal of g."""
    z = xp.zeros(shape, dtype=g.dtype)
    _diag_view(xp, z, offset, dim1, dim2)[...] = g
    return z


@_diagonal_backward.vjp
def _diagonal_backward_vjp(ctx: Any, g: Any) -> Any:
    return (ns.diagonal(g, offset=ctx.offset, dim1=ctx.dim1, dim2=ctx.dim2),)


def diagonal(input: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    """Diagonal ``offset`` of the (dim1, dim2) planes, appended as the last dim (a view)."""
    nd = input._data.ndim
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply_op(_diagonal, (input,), {"offset": int(offset), "dim1": d1, "dim2": d2})


@defop(name="diag", promote=None,
       name_fn=lambda p: "DiagEmbedBackward0" if p["embed"] else "DiagonalBackward0_copy")
def _diag(xp: Any, x: Any, *, diagonal: int, embed: bool) -> Any:
    """1-D x: a square matrix with x on diagonal ``diagonal``; 2-D x: that diagonal (a copy).
    VJP: the diagonal of g, or g placed on the diagonal of zeros."""
    return xp.diag(x, diagonal) if embed else _diag_view(xp, x, diagonal, 0, 1).copy()


@_diag.vjp
def _diag_vjp(ctx: Any, g: Any) -> Any:
    if ctx.embed:
        return (ns.diagonal(g, offset=ctx.diagonal, dim1=0, dim2=1),)
    return (ns.diagonal_backward(g, shape=tuple(ctx.input_shapes[0]), offset=ctx.diagonal,
                                 dim1=0, dim2=1),)


def diag(input: Any, diagonal: int = 0) -> Any:
    """Vector -> matrix with it on diagonal ``diagonal``; matrix -> that diagonal (a copy)."""
    nd = input._data.ndim
    if nd not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    return apply_op(_diag, (input,), {"diagonal": int(diagonal), "embed": nd == 1})


# pad / one_hot (torch.nn.functional) ----------------------------------------------------------


def _pad_widths(pad: tuple[int, ...], nd: int) -> list[tuple[int, int]]:
    """F.pad's (last-dim-first) pairs as NumPy-style (before, after) widths for every dim."""
    w = [(0, 0)] * nd
    for k in range(len(pad) // 2):
        w[nd - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    return w


@defop(name="constant_pad_nd", promote=None)
def _constant_pad_nd(xp: Any, x: Any, *, pad: tuple[int, ...], value: Any) -> Any:
    """x padded with ``value`` (negative widths crop). VJP: the same op with negated widths."""
    w = _pad_widths(pad, x.ndim)
    crop = tuple(slice(-b if b < 0 else 0, x.shape[i] + a if a < 0 else None)
                 for i, (b, a) in enumerate(w))
    x = x[crop]
    pos = [(max(b, 0), max(a, 0)) for b, a in w]
    return xp.pad(x, pos, mode="constant", constant_values=value)


_constant_pad_nd.vjp(
    lambda ctx, g: (ns.constant_pad_nd(g, pad=tuple(-p for p in ctx.pad), value=0),))


def _pad_gather_fwd(xp: Any, x: Any, *, index: tuple[Any, ...], mode: str) -> Any:
    return x[index]


def _pad_name(p: dict[str, Any]) -> str:
    k = len([i for i in p["index"] if i is not Ellipsis])
    base = {"reflect": "ReflectionPad", "replicate": "ReplicationPad"}.get(p["mode"])
    return f"{base}{k}DBackward0" if base else "IndexBackward0"


# Reflect, replicate and circular padding read each output element from one input element: a
# gather with a fixed index, whose VJP scatter-adds g back (index_grad).
_pad_gather = OpDef("pad_gather", _pad_gather_fwd, ("x",), promote=None, name_fn=_pad_name)


@_pad_gather.vjp
def _pad_gather_vjp(ctx: Any, g: Any) -> Any:
    return (ns.index_grad(g, shape=tuple(ctx.input_shapes[0]), index=ctx.index),)


def _pad_source(n: int, before: int, after: int, mode: str) -> np.ndarray:
    j = np.arange(-before, n + after)
    if mode == "reflect":
        j = np.abs(j)
        j = np.where(j >= n, 2 * (n - 1) - j, j)
    elif mode == "replicate":
        j = np.clip(j, 0, n - 1)
    else:
        j = np.mod(j, n)
    return j


def pad(input: Any, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Any:
    """torch.nn.functional.pad: pad the last ``len(pad) // 2`` dims (last dim first).

    ``constant`` pads with ``value`` (negative widths crop); ``reflect``, ``replicate`` and
    ``circular`` repeat input elements, and their VJP scatter-adds g back."""
    pad = _ints(pad)
    shp = input._data.shape
    nd = len(shp)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > nd:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length " f"{len(pad)} and input of dimension "
                           f"{nd}")
    if mode == "constant":
        w = _pad_widths(pad, nd)
        for i, (b, a) in enumerate(w):
            if shp[i] + b + a < 0:
                # PyTorch crops negative widths with narrow and reports its error.
                raise RuntimeError("narrow(): length must be non-negative.")
        return apply_op(_constant_pad_nd, (input,),
                        {"pad": pad, "value": 0 if value is None else value})
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(
            f"Unrecognised padding mode {mode}"
        )
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument.')
    k = len(pad) // 2
    if not (1 <= k <= 3 and nd in (k + 1, k + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    w = _pad_widths(pad, nd)[nd - k:]
    for j, (b, a) in enumerate(w):
        n = shp[nd - k + j]
        if mode == "reflect" and (b >= n or a >= n):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({b}, {a}) at dimension {nd - k + j} of input "
                f"{list(shp)}"
            )
        if mode == "circular" and (b > n or a > n):
            raise RuntimeError(
                "Padding value causes wrapping around more than once."
            )
        if mode == "replicate" and n == 0:
            raise RuntimeError("padding size should be less than the corresponding input "
                               "dimension")
    srcs = [_pad_source(shp[nd - k + j], b, a, mode) for j, (b, a) in enumerate(w)]
    xp = input._backend.xp
    index = (Ellipsis,) + tuple(
        xp.asarray(s.reshape((-1,) + (1,) * (k - 1 - j))) for j, s in enumerate(srcs))
    return apply_op(_pad_gather, (input,), {"index": index, "mode": mode})


@defop(name="one_hot", differentiable=False, promote=None)
def _one_hot(xp: Any, x: Any, *, num_classes: int) -> Any:
    """x[..., None] == arange(num_classes), as int64 (not differentiable)."""
    return (x[..., None] == xp.arange(num_classes)).astype(xp.int64)


def one_hot(tensor: Any, num_classes: int = -1) -> Any:
    """torch.nn.functional.one_hot: int64 tensor with a new last dim of size ``num_classes``."""
    d = tensor._data
    if d.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    num_classes = int(num_classes)
    if d.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        lo, hi = int(d.min()), int(d.max())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return apply_op(_one_hot, (tensor,), {"num_classes": num_classes})
