"""Writes and reductions into positions of a tensor: ``scatter_reduce`` and ``index_reduce``
(sum, prod, mean, amax, amin), ``index_copy``, ``index_fill``, ``masked_scatter``, ``put``,
and the view scatters (``diagonal_scatter``, ``select_scatter``, ``slice_scatter``). The order
statistics built on the same helpers are in ``order_stats.py``.

``scatter_reduce`` is a registered op (node ``ScatterReduceBackward0``) whose VJP follows
PyTorch's: the gradient of a sum goes to every contributor, a mean's is divided by the count,
amax/amin share it evenly among the elements equal to the result, and a product's is the
product of the other contributors (exact with zeros, through masks computed in the forward).
The other functions compose registered ops (``index_put``, ``masked_fill``, ``take``,
``copy_`` into a view of a clone), so their gradients, and double backward, come from those
ops; their graphs show the composed ops' nodes.

Why this file is over 400 lines: ``scatter_reduce``'s forward and VJP (five reductions, ties
and zeros handled exactly) and the composites built on the same index checks are one topic.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule.backends import backend_of
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import apply_op, defop, ns

__all__ = [
    "scatter_reduce",
    "index_reduce",
    "index_copy",
    "index_fill",
    "masked_scatter",
    "put",
    "diagonal_scatter",
    "select_scatter",
    "slice_scatter",
]

_NAMES = {
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "uint8": "Byte",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def _name(t: Any) -> str:
    return _NAMES.get(np.dtype(t._data.dtype).name, str(t.dtype))


def _ops() -> Any:
    from chainrule._dispatch import ops

    return ops


def _is_t(x: Any) -> bool:
    return hasattr(x, "_data")


def _host(t: Any) -> np.ndarray:
    return t._backend.to_host(t._data)


def _const(a: Any, device: Any = None) -> Any:
    """A tensor (no grad) of the array ``a`` on ``device``."""
    from chainrule._creation import tensor

    return tensor(np.ascontiguousarray(a), device=device)


# scatter_reduce ----------------------------------------------------------------------------

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _identity(dtype: Any, reduce: str) -> Any:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if _kinds.is_floating(dtype):
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype) if _kinds.is_integral(dtype) else None
    if info is None:  # bool
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


@defop(
    name="scatter_reduce",
    promote=None,
    saves=("x", "src", "out"),
    aux=True,
    node_name="ScatterReduceBackward0",
)
def _scatter_reduce(
    xp: Any, x: Any, src: Any, *, index: tuple[Any, ...], reduce: str, include_self: bool
) -> Any:
    ishape = np.broadcast_shapes(*(i.shape for i in index))
    s = src[tuple(slice(0, n) for n in ishape)] if src.shape != ishape else src
    out = x.copy()
    hit = xp.zeros(x.shape, dtype=bool)
    hit[index] = True
    if not include_self:
        out[hit] = _identity(x.dtype, reduce)
    count = None
    if reduce in ("sum", "mean"):
        backend_of(out).scatter_add(out, index, s)
        if reduce == "mean":
            count = xp.zeros(x.shape, dtype=np.int64)
            backend_of(count).scatter_add(count, index, 1)
            count = count + (1 if include_self else 0)
            count = xp.maximum(count, 1)
            if _kinds.is_floating(out):
                count = count.astype(x.dtype)
                out = out / count
            else:
                out = xp.floor_divide(out, count).astype(x.dtype)
    elif reduce == "prod":
        backend_of(out).scatter_reduce(out, index, s, "multiply")
    elif reduce == "amax":
        backend_of(out).scatter_reduce(out, index, s, "maximum")
    else:
        backend_of(out).scatter_reduce(out, index, s, "minimum")
    aux = {"hit": hit}
    if reduce == "mean":
        aux["count"] = count
    if _kinds.is_floating(x) and reduce in ("amax", "amin"):
        # The elements equal to the result share its gradient evenly (PyTorch's rule).
        o_at = out[index]
        src_eq = s == o_at
        # self's elements equal to the result count among the ties even with
        # include_self=False (PyTorch's rule; they then get no gradient themselves).
        self_eq = x == out
        n = self_eq.astype(x.dtype)
        backend_of(n).scatter_add(n, index, src_eq.astype(x.dtype))
        aux.update(src_eq=src_eq, self_eq=self_eq, n=n)
    if _kinds.is_floating(x) and reduce == "prod":
        # Products of the other contributors, exact when some contributors are zero: the
        # product of the non-zero values and the count of zeros at each output position.
        nz = (x if include_self else xp.where(hit, xp.ones((), x.dtype), x)).copy()
        zeros = ((x == 0) & (~hit | include_self)).astype(np.int64)
        nz[nz == 0] = 1
        backend_of(nz).scatter_reduce(
            nz, index, xp.where(s == 0, xp.ones((), s.dtype), s), "multiply"
        )
        backend_of(zeros).scatter_add(zeros, index, (s == 0).astype(np.int64))
        aux.update(nz=nz, zeros=zeros)
    return out, aux


def _arr(v: Any) -> Any:
    """An aux array as an array (under create_graph the VJP receives it as a Tensor)."""
    return v._data if hasattr(v, "_data") else v


def _prod_others(ctx: Any, v: Any, at: Any) -> Any:
    """For contributors ``v`` (at output positions ``at``, None: self's own positions): the
    product of the other contributors to the same output."""
    out_at = ctx.out if at is None else ns.gather(ctx.out, index=at)
    nz, zeros = _arr(ctx.nz), _arr(ctx.zeros)
    if at is not None:
        nz, zeros = nz[at], zeros[at]
    vzero = (v._data if _is_t(v) else v) == 0
    # v != 0: out / v (0 when another contributor is zero). v == 0: the product of the
    # non-zero others when v is the only zero, else 0 (a constant: exact first derivative).
    alt = np.where(vzero & (zeros == 1), nz, 0).astype(nz.dtype)
    return ns.masked_fill(ns.div(out_at, ns.masked_fill(v, 1, mask=vzero)), 0, mask=vzero) + alt


@_scatter_reduce.vjp
def _scatter_reduce_vjp(ctx: Any, g: Any) -> Any:
    nx, nsrc = ctx.needs_input_grad
    red, idx, hit = ctx.reduce, ctx.index, _arr(ctx.hit)
    # input_shapes[1] is known only when src needs a gradient (and only then is it used)
    src_shape = tuple(ctx.input_shapes[1]) if nsrc else None
    ishape = np.broadcast_shapes(*(i.shape for i in idx))
    sub = tuple(slice(0, n) for n in ishape)
    partial = nsrc and src_shape != tuple(ishape)
    gx = gs = None
    if red in ("sum", "mean"):
        gc = g if red == "sum" else ns.div(g, ctx.count)
        if nx:
            gx = gc if ctx.include_self else ns.masked_fill(gc, 0, mask=hit)
        if nsrc:
            gs = ns.gather(gc, index=idx)
    elif red in ("amax", "amin"):
        gn = ns.div(g, ctx.n)
        if nx:
            gx = ns.masked_fill(gn, 0, mask=~_arr(ctx.self_eq))
            if not ctx.include_self:
                gx = ns.masked_fill(gx, 0, mask=hit)
        if nsrc:
            gs = ns.masked_fill(ns.gather(gn, index=idx), 0, mask=~_arr(ctx.src_eq))
    else:  # prod
        if nx:
            gx = g * _prod_others(ctx, ctx.x, None)
            if not ctx.include_self:
                gx = ns.masked_fill(gx, 0, mask=hit)
        if nsrc:
            s = ns.index(ctx.src, index=sub) if partial else ctx.src
            gs = ns.gather(g, index=idx) * _prod_others(ctx, s, idx)
    if gs is not None and partial:
        gs = ns.index_grad(gs, shape=src_shape, index=sub)
    return gx, gs


def _along(index: np.ndarray, dim: int) -> tuple[Any, ...]:
    """The advanced index reaching ``x[.., index[i0, .., ik], ..]`` for each position of
    ``index`` (``index`` at ``dim``, ``arange``s elsewhere)."""
    nd = index.ndim
    out = []
    for d in range(nd):
        if d == dim:
            out.append(index.astype(np.intp, copy=False))
        else:
            shape = [1] * nd
            shape[d] = index.shape[d]
            out.append(np.arange(index.shape[d]).reshape(shape))
    return tuple(out)


def _scatter_index(input: Any, dim: int, index: Any, src: Any) -> tuple[int, tuple[Any, ...]]:
    """Validate scatter-style arguments with PyTorch's messages; the advanced index."""
    if not _is_t(index):
        raise TypeError(
            f"scatter_reduce(): argument 'index' must be Tensor, not {type(index).__name__}"
        )
    if not _is_t(src):
        raise TypeError(
            f"scatter_reduce(): argument 'src' must be Tensor, not {type(src).__name__}"
        )
    ia = _host(index)
    if not _kinds.is_integral(ia):
        raise RuntimeError("scatter(): Expected dtype int64 for index")
    shp, ishp, sshp = tuple(input.shape), ia.shape, tuple(src.shape)
    nd = max(len(shp), 1)
    if max(ia.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if max(len(sshp), 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    dim = wrap_dim(int(dim), len(shp))
    if len(shp) == 0:
        return dim, ()
    for d in range(nd):
        if (d != dim and ishp[d] > shp[d]) or ishp[d] > sshp[d]:
            raise RuntimeError(
                f"Expected index {list(ishp)} to be no larger than self {list(shp)} apart from "
                f"dimension {dim} and to be no larger size than src {list(sshp)}"
            )
    if ia.size:
        bad = ia[(ia < 0) | (ia >= shp[dim])]
        if bad.size:
            raise RuntimeError(
                f"index {int(bad.flat[0])} is out of bounds for dimension {dim} with size "
                f"{shp[dim]}"
            )
    return dim, _along(ia, dim)


def scatter_reduce(
    input: Any, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
) -> Any:
    """``input`` with each ``src[i][j]`` combined into ``out[index[i][j]][j]`` (dim 0) by
    ``reduce``: ``'sum'``, ``'prod'``, ``'mean'``, ``'amax'`` or ``'amin'``; with
    ``include_self=False`` the positions written to start from the reduction's identity
    instead of ``input``'s value. Integer means round down, as PyTorch's.

    VJP (PyTorch's): sum: g to both; mean: g / count; amax/amin: g shared evenly among the
    elements equal to the result; prod: g times the product of the other contributors."""
    if reduce not in _REDUCES:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    dim, idx = _scatter_index(input, dim, index, src)
    if src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if input.ndim == 0:  # a 0-d self is reduced as a 1-element vector
        out = scatter_reduce(
            input.reshape(1),
            0,
            index.reshape(-1),
            src.reshape(-1),
            reduce,
            include_self=include_self,
        )
        return out.reshape(())
    return apply_op(
        _scatter_reduce,
        (input, src),
        {"index": idx, "reduce": reduce, "include_self": bool(include_self)},
    )


def _dim_index(who: str, input: Any, dim: int, index: Any) -> tuple[int, np.ndarray]:
    """Validate a 1-D ``index`` into ``dim`` of ``input``: (wrapped dim, host index)."""
    if not _is_t(index):
        raise TypeError(f"{who}(): argument 'index' must be Tensor, not {type(index).__name__}")
    ia = _host(index)
    if ia.ndim > 1:
        raise IndexError(f"{who}(): Index should have dimension 1 or 0 (got {ia.ndim})")
    if ia.dtype != np.int64:
        if who == "index_fill_":
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        raise RuntimeError(f"{who}(): Expected a long tensor for index, but got {_name(index)}")
    dim = wrap_dim(int(dim), input.ndim)
    n = input.shape[dim] if input.ndim else 1
    bad = ia[(ia < -n) | (ia >= n)] if who == "index_fill_" else ia[(ia < 0) | (ia >= n)]
    if bad.size:
        pre = "" if who == "index_fill_" else f"{who}(): "
        raise IndexError(
            f"{pre}index {int(bad.flat[0])} is out of bounds for dimension {dim} with size {n}"
        )
    return dim, ia.reshape(-1)


def index_reduce(
    input: Any, dim: int, index: Any, source: Any, reduce: str, *, include_self: bool = True
) -> Any:
    """``input`` with the slices ``source.select(dim, j)`` combined into
    ``input.select(dim, index[j])`` by ``reduce`` (``'prod'``, ``'mean'``, ``'amax'``,
    ``'amin'``); ``include_self`` as in :func:`scatter_reduce`, which computes it (its
    gradients)."""
    warnings.warn(
        "index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=2
    )
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    dim, ia = _dim_index("index_reduce_", input, dim, index)
    _check_source("index_reduce_", input, dim, ia, source)
    shape = [1] * max(source.ndim, 1)
    shape[dim] = ia.size
    full = np.broadcast_to(ia.reshape(shape), tuple(source.shape) or (1,))
    idx = _const(np.ascontiguousarray(full), device=input.device)
    if input.ndim == 0:
        idx = idx.reshape(())
    return scatter_reduce(input, dim, idx, source, reduce, include_self=include_self)


def _check_source(who: str, input: Any, dim: int, ia: np.ndarray, source: Any) -> None:
    if not _is_t(source):
        raise TypeError(f"{who}(): argument 'source' must be Tensor, not {type(source).__name__}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"{who}(): self and source expected to have the same dtype, but got (self) "
            f"{_name(input)} and (source) {_name(source)}"
        )
    ss, s = tuple(source.shape), tuple(input.shape)
    if len(ss) != len(s) and not (len(ss) <= 1 and len(s) <= 1):
        raise IndexError(
            f"{who}(): When source and destination are not scalars, their "
            "dimensionality must match. Source dimensionality "
            f"({len(ss)}), destination dimensionality ({len(s)})"
        )
    for d in range(len(s)):
        if d != dim and d < len(ss) and ss[d] != s[d]:
            k = d if d < dim else d - 1  # PyTorch numbers the dims of the slice
            raise RuntimeError(
                f"{who}(): Source/destination tensor must have same slice shapes. Destination "
                f"slice shape: {s[d]} at dimension {k} and source slice shape: {ss[d]} at "
                f"dimension {k}."
            )
    n_src = ss[dim] if ss else 1
    if ia.size != n_src:
        raise IndexError(
            f"{who}(): Number of indices ({ia.size}) should be equal to source.size(dim) ({n_src})"
        )


def index_copy(input: Any, dim: int, index: Any, source: Any) -> Any:
    """``input`` with ``input.select(dim, index[j]) = source.select(dim, j)`` for each j.

    Gradient: g with the copied slices zeroed to ``input``; g's slices at ``index`` to
    ``source`` (through ``index_put``)."""
    dim, ia = _dim_index("index_copy_", input, dim, index)
    _check_source("index_copy_", input, dim, ia, source)
    ops = _ops()
    if input.ndim == 0:
        return source.reshape(()) + 0 * input if ia.size else input.clone()
    idx = _const(ia, device=input.device)
    moved = ops.movedim(input, dim, 0)
    src = ops.movedim(source, dim, 0) if source.ndim else source.reshape(1)
    return ops.movedim(ops.index_put(moved, (idx,), src), 0, dim)


def index_fill(input: Any, dim: int, index: Any, value: Any) -> Any:
    """``input`` with the slices ``input.select(dim, i)``, i in ``index``, set to ``value`` (a
    number or a 0-d tensor, which then gets the sum of the filled gradients)."""
    if _is_t(value) and value.ndim != 0:
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.ndim} dimension(s)."
        )
    dim, ia = _dim_index("index_fill_", input, dim, index)
    v: Any = value
    if (type(v) is complex or (_is_t(v) and _kinds.is_complex(v._data))) and (
        not _kinds.is_complex(input._data)
    ):  # PyTorch refuses any complex value, even one with a zero imaginary part
        raise RuntimeError(
            "index_fill_(): Converting complex Scalar to non-complex type is not supported"
        )
    shape = tuple(input.shape)
    mask = np.zeros(shape[dim] if shape else 1, dtype=bool)
    mask[ia] = True
    if shape:
        view = [1] * len(shape)
        view[dim] = shape[dim]
        mask = np.broadcast_to(mask.reshape(view), shape)
    else:
        mask = mask.reshape(())
    m = _const(np.ascontiguousarray(mask), device=input.device)
    if _is_t(value) and value._data.dtype != input._data.dtype:
        value = value.to(input.dtype)
    return input.masked_fill(m, value)


def masked_scatter(input: Any, mask: Any, source: Any) -> Any:
    """``input`` with the positions where ``mask`` (broadcast to ``input``) is True filled,
    in row-major order, from the first elements of ``source``.

    Gradient: g where mask is False to ``input``; g's masked elements, in order, to the first
    elements of ``source`` (zeros for the rest)."""
    ops = _ops()
    if not _is_t(mask) or not _kinds.is_bool(mask._data):
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_name(mask) if _is_t(mask) else type(mask).__name__}"
        )
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_name(input)} and {_name(source)}"
        )
    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    m = np.broadcast_to(_host(mask), shape)
    n = int(m.sum())
    if n > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    pos = np.cumsum(m.reshape(-1)) - 1
    pos = np.where(m.reshape(-1), pos, 0).reshape(shape)
    src = ops.take(source, _const(pos.astype(np.int64), device=input.device))
    return ops.where(
        _const(np.ascontiguousarray(m), device=input.device), src, ops.broadcast_to(input, shape)
    )


def put(input: Any, index: Any, source: Any, accumulate: bool = False) -> Any:
    """``input`` with its flattened elements at ``index`` set to (or, with ``accumulate``,
    increased by) ``source``'s elements; negative indices count from the end."""
    if not _is_t(index) or index._data.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_name(index)}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{_name(input)} and source.dtype = {_name(source)}"
        )
    if source.numel() != index.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    n = input.numel()
    ia = _host(index)
    bad = ia[(ia < -n) | (ia >= n)]
    if bad.size:
        raise IndexError(
            f"out of range: tried to access index {int(bad.flat[0])} on a tensor of {n} elements."
        )
    ops = _ops()
    flat = ops.index_put(
        input.reshape(-1), (index.reshape(-1),), source.reshape(-1), accumulate=accumulate
    )
    return flat.reshape(tuple(input.shape))


# View scatters: the view's region of a clone, overwritten -----------------------------------


def _scatter_into_view(input: Any, src: Any, view: Any) -> Any:
    out = input.clone()
    region = view(out)
    if tuple(src.shape) != tuple(region.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(region.shape)}"
        )
    region.copy_(src)
    return out


def diagonal_scatter(input: Any, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    """``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``.
    Gradient: g with the diagonal zeroed to ``input``; g's diagonal to ``src``."""
    return _scatter_into_view(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def select_scatter(input: Any, src: Any, dim: int, index: int) -> Any:
    """``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    return _scatter_into_view(input, src, lambda t: t.select(dim, index))


def slice_scatter(
    input: Any,
    src: Any,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> Any:
    """``input`` with the slice ``start:end:step`` of ``dim`` replaced by ``src``."""

    def view(t: Any) -> Any:
        d = wrap_dim(int(dim), t.ndim)
        return t[(slice(None),) * d + (slice(start, end, step),)]

    return _scatter_into_view(input, src, view)
