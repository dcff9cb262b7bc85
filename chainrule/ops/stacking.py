"""Stacking, splitting and rearranging, composed from the shape and indexing ops: hstack,
vstack, dstack, column_stack, row_stack, hsplit, vsplit, dsplit, tensor_split, atleast_1d/2d/3d,
meshgrid, cartesian_prod, combinations, block_diag, rot90, fliplr, flipud, diag_embed, diagflat,
kron, repeat_interleave, broadcast_to, broadcast_tensors, broadcast_shapes.

Each is written with differentiable ops, so gradients (and higher ones) come from theirs; the
recorded nodes are those ops' nodes (``CatBackward0``, ``IndexBackward0`` ...) rather than one
node named after the composite.
"""

from __future__ import annotations

import builtins
import itertools
from typing import Any, Sequence

import numpy as np

from chainrule.backends import backend_of
from chainrule.ops._broadcast import wrap_dim

__all__ = [
    "hstack",
    "vstack",
    "dstack",
    "column_stack",
    "row_stack",
    "hsplit",
    "vsplit",
    "dsplit",
    "tensor_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "meshgrid",
    "cartesian_prod",
    "combinations",
    "block_diag",
    "rot90",
    "fliplr",
    "flipud",
    "diag_embed",
    "diagflat",
    "kron",
    "repeat_interleave",
    "broadcast_to",
    "broadcast_tensors",
    "broadcast_shapes",
]


def _ops() -> Any:
    # The sibling op families, reached through the op table (chainrule/_dispatch.py; filled by
    # the time these run), not the package, which imports this module.
    from chainrule._dispatch import ops

    return ops


def _seq(tensors: Any, name: str) -> list[Any]:
    if hasattr(tensors, "_data"):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"
        )
    return list(tensors)


def _atleast(tensors: tuple[Any, ...], n: int) -> Any:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast(tuple(tensors[0]), n))
    out = []
    for t in tensors:
        if t.ndim >= n:
            out.append(t)
        elif n == 1:
            out.append(t.reshape(1))
        elif n == 2:
            out.append(t.reshape(1, -1) if t.ndim < 2 else t)
        else:
            if t.ndim == 0:
                out.append(t.reshape(1, 1, 1))
            elif t.ndim == 1:
                out.append(t.reshape(1, -1, 1))
            else:
                out.append(t.unsqueeze(-1))
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors: Any) -> Any:
    """Each input viewed with at least one dim (0-d -> shape (1,))."""
    return _atleast(tensors, 1)


def atleast_2d(*tensors: Any) -> Any:
    """Each input viewed with at least two dims ((n,) -> (1, n))."""
    return _atleast(tensors, 2)


def atleast_3d(*tensors: Any) -> Any:
    """Each input viewed with at least three dims ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _atleast(tensors, 3)


def hstack(tensors: Sequence[Any]) -> Any:
    """Concatenate along dim 1, or dim 0 for 1-d inputs (as NumPy's hstack)."""
    ts = [atleast_1d(t) for t in _seq(tensors, "hstack")]
    return _ops().cat(ts, 0 if ts and ts[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Any]) -> Any:
    """Concatenate along dim 0 after making every input at least 2-d."""
    return _ops().cat([atleast_2d(t) for t in _seq(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors: Sequence[Any]) -> Any:
    """Concatenate along dim 2 after making every input at least 3-d."""
    return _ops().cat([atleast_3d(t) for t in _seq(tensors, "dstack")], 2)


def column_stack(tensors: Sequence[Any]) -> Any:
    """Stack as columns: 0-d and 1-d inputs become (n, 1) columns, then concatenate on dim 1."""
    cols = []
    for t in _seq(tensors, "column_stack"):
        cols.append(t.reshape(-1, 1) if t.ndim <= 1 else t)
    return _ops().cat(cols, 1)


def tensor_split(input: Any, indices_or_sections: Any, dim: int = 0) -> tuple[Any, ...]:
    """Split into ``n`` nearly equal parts (the first ``size % n`` one longer), or at the given
    indices, along ``dim``; every part is a view (a slice of ``input``)."""
    d = wrap_dim(int(dim), input.ndim)
    size = input.shape[d]
    ios = indices_or_sections
    if hasattr(ios, "_data"):
        if ios.ndim == 0:
            ios = int(ios.item())
        else:
            ios = [int(v) for v in ios.tolist()]
    if isinstance(ios, (int, np.integer)):
        n = int(ios)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds, start = [], 0
        for i in range(n):
            stop = start + q + (1 if i < r else 0)
            bounds.append((start, stop))
            start = stop
    else:
        idx = [int(v) for v in ios]
        edges = [0, *idx, size]
        bounds = [
            (builtins.min(builtins.max(a, 0), size), builtins.min(builtins.max(b, 0), size))
            for a, b in zip(edges[:-1], edges[1:])
        ]
    out = []
    for a, b in bounds:
        sl = [slice(None)] * input.ndim
        sl[d] = slice(a, builtins.max(a, b))
        out.append(input[tuple(sl)])
    return tuple(out)


def _dir_split(name: str, input: Any, ios: Any, dim: int, min_dim: int) -> tuple[Any, ...]:
    if input.ndim < min_dim:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
            f"with {input.ndim} dimensions!"
        )
    if isinstance(ios, (int, np.integer)) and input.shape[dim] % int(ios) != 0:
        raise RuntimeError(
            f"torch.{name} attempted to split along dimension {dim}, but the size of the "
            f"dimension {input.shape[dim]} is not divisible by the split_size {int(ios)}!"
        )
    return tensor_split(input, ios, dim)


def hsplit(input: Any, indices_or_sections: Any) -> tuple[Any, ...]:
    """``tensor_split`` along dim 1 (dim 0 for 1-d inputs); sections must divide evenly."""
    return _dir_split("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


def vsplit(input: Any, indices_or_sections: Any) -> tuple[Any, ...]:
    """``tensor_split`` along dim 0 of an at-least-2-d input; sections must divide evenly."""
    return _dir_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Any, indices_or_sections: Any) -> tuple[Any, ...]:
    """``tensor_split`` along dim 2 of an at-least-3-d input; sections must divide evenly."""
    return _dir_split("dsplit", input, indices_or_sections, 2, 3)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Any, ...]:
    """Coordinate grids from 1-d inputs. ``indexing='ij'`` (PyTorch's default, which warns when
    not given) gives shape (len(t0), len(t1), ...); ``'xy'`` swaps the first two dims."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings

        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t!r}"
            )
    ts = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    n = len(ts)
    grids = []
    for i, t in enumerate(ts):
        view = [1] * n
        view[i] = shape[i]
        grids.append(t.reshape(*view).expand(*shape))
    if swap:
        # 'xy' is 'ij' on the first two inputs swapped, with their outputs swapped back.
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors: Any) -> Any:
    """All tuples of one element from each 1-d input, as rows (a 1-d input is returned as is)."""
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return _ops().stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Any, r: int = 2, with_replacement: bool = False) -> Any:
    """Rows of ``r`` elements of the 1-d ``input`` taken without (or with) replacement, in
    lexicographic order of their positions, as ``itertools.combinations``."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    n = input.shape[0]
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(gen(range(n), r))
    if r == 0:
        return _ops().getitem(input, slice(0, 0))
    if not rows:
        return input[:0].reshape(0, r)
    from chainrule._tensor import _new_tensor

    idx = _new_tensor(np.asarray(rows, dtype=np.int64))
    return input[idx]


def block_diag(*tensors: Any) -> Any:
    """A block-diagonal matrix from 0-d, 1-d (one row) and 2-d blocks; zeros elsewhere."""
    ops = _ops()
    blocks = []
    for t in tensors:
        if t.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{len(blocks)} has {t.ndim} dimensions"
            )
        blocks.append(t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t)
    if not blocks:
        from chainrule._creation import zeros

        return zeros(0, 0)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        from chainrule._dtype import promote_types

        dtype = promote_types(dtype, b.dtype)
    cols = builtins.sum(b.shape[1] for b in blocks)
    rows = []
    left = 0
    for b in blocks:
        b = b.to(dtype)
        right = cols - left - b.shape[1]
        rows.append(ops.pad(b, (left, right)) if (left or right) else b)
        left += b.shape[1]
    return ops.cat(rows, 0)


def rot90(input: Any, k: int = 1, dims: Sequence[int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from the first towards the
    second axis)."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = wrap_dim(int(dims[0]), input.ndim), wrap_dim(int(dims[1]), input.ndim)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    k = int(k) % 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0, d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def fliplr(input: Any) -> Any:
    """Reverse the order of columns (dim 1); needs at least 2 dims."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip(1)


def flipud(input: Any) -> Any:
    """Reverse the order of rows (dim 0); needs at least 1 dim."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip(0)


def diag_embed(input: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    """Matrices whose ``offset`` diagonal (in dims ``dim1``, ``dim2`` of the output) holds the
    last dim of ``input``; zeros elsewhere. VJP: the diagonal of g."""
    n = input.shape[-1] + builtins.abs(int(offset))
    nd = input.ndim + 1
    d1, d2 = wrap_dim(int(dim1), nd), wrap_dim(int(dim2), nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    from chainrule.ops._registry import ns

    k = input.shape[-1]
    off = int(offset)
    pos = np.arange(k)
    rows, cols = (pos, pos + off) if off >= 0 else (pos - off, pos)
    # Zeros with the input's last dim written on the diagonal (index_grad's VJP reads it back).
    out = ns.index_grad(input, shape=tuple(input.shape[:-1]) + (n, n), index=(Ellipsis, rows, cols))
    return _ops().movedim(out, (nd - 2, nd - 1), (d1, d2))


def diagflat(input: Any, offset: int = 0) -> Any:
    """A 2-d matrix with the flattened ``input`` on its ``offset`` diagonal."""
    return diag_embed(input.reshape(-1), offset, 0, 1)


def kron(input: Any, other: Any) -> Any:
    """Kronecker product: ``out[i*m + k, j*n + l] = a[i, j] * b[k, l]`` (any number of dims,
    the shorter padded with leading 1s)."""
    nd = builtins.max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (nd - other.ndim) + tuple(other.shape))
    # Interleave the dims: a -> (a0, 1, a1, 1, ...), b -> (1, b0, 1, b1, ...).
    a_shape, b_shape, out_shape = [], [], []
    for sa, sb in zip(a.shape, b.shape):
        a_shape += [sa, 1]
        b_shape += [1, sb]
        out_shape.append(sa * sb)
    return (a.reshape(*a_shape) * b.reshape(*b_shape)).reshape(*out_shape)


def repeat_interleave(
    input: Any, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
) -> Any:
    """Repeat each element (``dim=None``: of the flattened input) ``repeats`` times along
    ``dim``; ``repeats`` is an int or a 1-d tensor with one count per element. With only a
    tensor argument, ``repeat_interleave(r)`` gives each index ``i`` repeated ``r[i]`` times."""
    from chainrule._tensor import _new_tensor

    # The counts decide the output's size: they are read on the host (one copy from a GPU, a
    # sync, as in PyTorch without output_size); the index goes back to the input's device.
    be = backend_of(input._data)
    if repeats is None:
        counts = be.to_host(input._data).astype(np.int64).reshape(-1)
        idx = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
        return _new_tensor(be.from_host(idx, be.device_index(input._data)))
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else wrap_dim(int(dim), x.ndim)
    size = x.shape[d] if x.ndim else 1
    if hasattr(repeats, "_data"):
        counts = backend_of(repeats._data).to_host(repeats._data).astype(np.int64).reshape(-1)
        if counts.shape[0] == 1:
            counts = np.full(size, counts[0])
        elif counts.shape[0] != size:
            raise RuntimeError("repeats must have the same size as input along dim")
    else:
        counts = np.full(size, int(repeats))
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    idx = np.repeat(np.arange(size, dtype=np.int64), counts)
    idx = _new_tensor(be.from_host(idx, be.device_index(input._data)))
    if x.ndim == 0:
        x = x.reshape(1)
    return _ops().index_select(x, d, idx)


def broadcast_shapes(*shapes: Any) -> Any:
    """The shape that all ``shapes`` broadcast to, as a ``Size``."""
    from chainrule._tensor import Size

    norm = []
    for s in shapes:
        norm.append((int(s),) if isinstance(s, (int, np.integer)) else tuple(int(v) for v in s))
    try:
        return Size(np.broadcast_shapes(*norm))
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
            f"between {list(norm[0])} and {list(norm[-1])}"
        ) from None


def broadcast_to(input: Any, size: Sequence[int]) -> Any:
    """``input.expand(size)``: a broadcast view (``-1`` keeps a dim's size)."""
    return input.expand(*size)


def broadcast_tensors(*tensors: Any) -> tuple[Any, ...]:
    """The inputs expanded to their common broadcast shape (views)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(*shape) for t in tensors)
