"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, cummax,
cummin, unique, unique_consecutive, searchsorted, bucketize.

The differentiable ones pick elements of ``x`` along ``dim``: the forward computes the picked
indices, and the values are ``x`` at those indices. Their VJP scatters g back to the picked
positions (``index_grad``, which accumulates repeated positions), so higher derivatives work.

Order and ties, as PyTorch's CPU kernels: ``sort`` is stable (equal values keep their order,
also when descending) and puts NaN last ascending, first descending; ``cummax``/``cummin`` take
the latest index of a tie and stick at the first NaN; ``mode`` gives the smallest of the most
frequent values and its last index. Differs from PyTorch: where PyTorch selects with a
quickselect (``topk``, ``kthvalue``, ``median`` along a dim), the index returned for tied values
may be another of the tied positions (the values, and the gradient's sum, are the same).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from chainrule import _kinds, return_types
from chainrule.autograd.grad_mode import is_grad_enabled
from chainrule.backends import backend_of
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops._registry import OpDef, apply_op, ns

__all__ = [
    "sort",
    "argsort",
    "msort",
    "topk",
    "kthvalue",
    "median",
    "nanmedian",
    "mode",
    "cummax",
    "cummin",
    "unique",
    "unique_consecutive",
    "searchsorted",
    "bucketize",
]


def _where(xp: Any, idx: Any, dim: int) -> tuple[Any, ...]:
    """The advanced index that picks ``x``'s elements at ``idx`` along ``dim``."""
    nd = idx.ndim
    return tuple(
        idx if i == dim else xp.arange(s).reshape((-1,) + (1,) * (nd - 1 - i))
        for i, s in enumerate(idx.shape)
    )


def _stable_argsort(xp: Any, x: Any, dim: int, descending: bool) -> Any:
    """Stable argsort along ``dim``; NaN last ascending and first descending, as PyTorch."""
    if not descending:
        return xp.argsort(x, axis=dim, kind="stable")
    if x.dtype == bool:
        return xp.argsort(~x, axis=dim, kind="stable")
    # Descending and stable: sort the reversed array ascending and reverse the result; ties
    # then keep their original order and NaN (last ascending) comes first.
    n = x.shape[dim]
    rev = xp.flip(xp.argsort(xp.flip(x, axis=dim), axis=dim, kind="stable"), axis=dim)
    return (n - 1) - rev


def _pick_vjp(ctx: Any, g: Any) -> Any:
    """g on the picked values, scattered back to where they came from."""
    g = g[0]
    if tuple(g.shape) != ctx.kept:
        g = ns.reshape(g, shape=ctx.kept)  # put back a dim that keepdim=False dropped
    return (ns.index_grad(g, shape=ctx.input_shapes[0], index=ctx.where),)


def _pick_op(name: str, node: str, select: Any) -> OpDef:
    """A (values, indices) op whose ``select(xp, x, **params)`` gives ``(idx, dim, keep)``:
    the picked indices with ``dim`` kept, and whether to keep ``dim`` in the outputs."""

    def fwd(xp: Any, x: Any, **params: Any) -> Any:
        if x.ndim == 0:
            z = xp.zeros((), dtype="int64")
            return (x.copy(), z), {"where": (Ellipsis,), "kept": ()}
        idx, dim, keep = select(xp, x, **params)
        where = _where(xp, idx, dim)
        kept = tuple(idx.shape)
        vals = x[where]
        if not keep:
            vals = xp.squeeze(vals, axis=dim)
            idx = xp.squeeze(idx, axis=dim)
        return (vals, idx.astype("int64", copy=False)), {"where": where, "kept": kept}

    op = OpDef(name, fwd, ("x",), promote=None, node_name=node, num_outputs=2, aux=True)
    op.vjp(_pick_vjp)
    return op


def _sel_sort(xp: Any, x: Any, *, dim: int, descending: bool) -> Any:
    return _stable_argsort(xp, x, dim, descending), dim, True


def _sel_topk(xp: Any, x: Any, *, k: int, dim: int, largest: bool) -> Any:
    order = _stable_argsort(xp, x, dim, largest)
    return xp.take(order, xp.arange(k), axis=dim), dim, True


def _sel_kth(xp: Any, x: Any, *, k: int, dim: int, keepdim: bool) -> Any:
    order = _stable_argsort(xp, x, dim, False)
    return xp.take(order, xp.asarray([k - 1]), axis=dim), dim, keepdim


def _sel_median(xp: Any, x: Any, *, dim: int, keepdim: bool, ignore_nan: bool) -> Any:
    order = _stable_argsort(xp, x, dim, False)
    n = x.shape[dim]
    if ignore_nan and _kinds.is_floating(x):
        # The lower median of the non-NaN values (NaN sort last); all-NaN slices give NaN.
        valid = xp.sum(~xp.isnan(x), axis=dim, keepdims=True)
        pos = xp.where(valid > 0, (valid - 1) // 2, 0)
        return xp.take_along_axis(order, pos.astype("int64"), axis=dim), dim, keepdim
    pos = xp.asarray([(n - 1) // 2])
    idx = xp.take(order, pos, axis=dim)
    if _kinds.is_floating(x):
        # A slice holding NaN has median NaN, at its first NaN (sorted last).
        has_nan = xp.any(xp.isnan(x), axis=dim, keepdims=True)
        first_nan = xp.argmax(xp.isnan(x), axis=dim, keepdims=True)
        idx = xp.where(has_nan, first_nan, idx)
    return idx, dim, keepdim


def _sel_mode(xp: Any, x: Any, *, dim: int, keepdim: bool) -> Any:
    xs = xp.moveaxis(x, dim, -1)
    order = xp.argsort(xs, axis=-1, kind="stable")
    s = xp.take_along_axis(xs, order, axis=-1)
    n = s.shape[-1]
    # Runs of equal values in the sorted slice: the longest run, the first (smallest) on ties.
    new = xp.ones(s.shape, dtype=bool)
    new[..., 1:] = s[..., 1:] != s[..., :-1]
    run_id = xp.cumsum(new, axis=-1) - 1
    flat_rows = run_id.reshape(-1, n)
    counts = xp.zeros(flat_rows.shape, dtype="int64")
    rows = xp.arange(flat_rows.shape[0])[:, None]
    ones = xp.ones(flat_rows.shape, dtype="int64")
    backend_of(counts).scatter_add(
        counts, (xp.broadcast_to(rows, flat_rows.shape), flat_rows), ones
    )
    best = xp.argmax(counts, axis=-1)
    # The last position (in stable sorted order: the largest original index) of the best run.
    in_best = flat_rows == best[:, None]
    last = (n - 1) - xp.argmax(in_best[:, ::-1], axis=-1)
    idx = order.reshape(-1, n)[xp.arange(flat_rows.shape[0]), last]
    idx = xp.expand_dims(idx.reshape(xs.shape[:-1]), dim)
    return idx, dim, keepdim


_sort = _pick_op("sort", "SortBackward0", _sel_sort)
_topk = _pick_op("topk", "TopkBackward0", _sel_topk)
_kthvalue = _pick_op("kthvalue", "KthvalueBackward0", _sel_kth)
_median_dim = _pick_op("median_dim", "MedianBackward1", _sel_median)
_mode = _pick_op("mode", "ModeBackward0", _sel_mode)


def _cum_fwd(kind: str) -> Any:
    def fwd(xp: Any, x: Any, *, dim: int) -> Any:
        if x.ndim == 0:
            return (x.copy(), xp.zeros((), dtype="int64")), {"where": (Ellipsis,), "kept": ()}
        be = backend_of(x)
        run = be.accumulate(x, dim, "maximum" if kind == "max" else "minimum")
        n = x.shape[dim]
        shape = [1] * x.ndim
        shape[dim] = n
        pos = xp.broadcast_to(xp.arange(n).reshape(shape), x.shape)
        # A position takes the running extreme when it equals it (the latest of a tie) or is
        # NaN (NaN propagates, and each later NaN takes the index, as PyTorch).
        hit = x == run
        if _kinds.is_floating(x):
            hit = hit | xp.isnan(x)
        idx = be.accumulate(xp.where(hit, pos, 0), dim, "maximum")
        idx = idx.astype("int64")
        return (run, idx), {"where": _where(xp, idx, dim), "kept": tuple(idx.shape)}

    return fwd


def _cum_op(name: str, kind: str, node: str) -> OpDef:
    op = OpDef(name, _cum_fwd(kind), ("x",), promote=None, node_name=node, num_outputs=2, aux=True)
    op.vjp(_pick_vjp)
    return op


_cummax = _cum_op("cummax", "max", "CummaxBackward0")
_cummin = _cum_op("cummin", "min", "CumminBackward0")


def sort(input: Any, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
    """``(values, indices)`` of ``input`` sorted along ``dim`` (stable; see the module notes).

    VJP: g scattered back to each value's original position.
    """
    d = wrap_dim(int(dim), input.ndim)
    v, i = apply_op(_sort, (input,), {"dim": d, "descending": builtins.bool(descending)})
    return return_types.sort._make_of(v, i)


def argsort(input: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """Indices that sort ``input`` along ``dim`` (int64; stable)."""
    return sort(input, dim, descending, stable=stable)[1]


def msort(input: Any) -> Any:
    """``input`` sorted along its first dim: ``sort(input, dim=0).values``."""
    return sort(input, 0)[0]


def topk(input: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """The ``k`` largest (``largest=False``: smallest) values along ``dim`` and their indices,
    in sorted order. VJP: g scattered back to the picked positions."""
    d = wrap_dim(int(dim), input.ndim)
    size = input.shape[d] if input.ndim else 1
    if not 0 <= int(k) <= size:
        raise RuntimeError("selected index k out of range")
    v, i = apply_op(_topk, (input,), {"k": int(k), "dim": d, "largest": builtins.bool(largest)})
    return return_types.topk._make_of(v, i)


def kthvalue(input: Any, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest value along ``dim`` (1-based) and its index."""
    d = wrap_dim(int(dim), input.ndim)
    size = input.shape[d] if input.ndim else 1
    if not 1 <= int(k) <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    v, i = apply_op(_kthvalue, (input,), {"k": int(k), "dim": d, "keepdim": keepdim})
    return return_types.kthvalue._make_of(v, i)


def _median_all_fwd(xp: Any, x: Any, *, ignore_nan: bool) -> Any:
    flat = x.reshape(-1)
    if flat.shape[0] == 0:
        return xp.asarray(xp.nan, dtype=x.dtype)
    idx, _, _ = _sel_median(xp, flat, dim=0, keepdim=False, ignore_nan=ignore_nan)
    return flat[idx[0]]


def _median_all_vjp(ctx: Any, g: Any) -> Any:
    """g split evenly among the elements equal to the median (the NaNs, if it is NaN), as
    PyTorch's median without a dim does."""
    x, out = ctx.x, ctx.out
    # Only floating inputs get here (they alone can require grad), so NaN is possible.
    mask = ns.logical_or(ns.eq(x, out), ns.logical_and(ns.isnan(x), ns.isnan(out)))
    return (ns.where(mask, g, 0.0) / ns.sum(mask),)


_median_all = OpDef(
    "median_all",
    _median_all_fwd,
    ("x",),
    saves=("x", "out"),
    promote=None,
    node_name="MedianBackward0",
)
_median_all.vjp(_median_all_vjp)


def _median(name: str, input: Any, dim: Any, keepdim: bool, ignore_nan: bool) -> Any:
    # (an empty complex input gets here past @refuses_complex: NaN, as PyTorch's, and its
    # IndexError; nanmedian's IndexError names median, as PyTorch's does)
    if dim is None:
        if input.numel() == 0 and not _kinds.is_floating(input._data):
            if _kinds.is_complex(input._data):
                if input.requires_grad and is_grad_enabled():
                    raise RuntimeError(
                        f"{name} does not support automatic differentiation for outputs with "
                        "complex dtype."
                    )
            else:
                raise IndexError("median(): Expected reduction dim 0 to have non-zero size.")
        return apply_op(_median_all, (input,), {"ignore_nan": ignore_nan})
    d = wrap_dim(int(dim), input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    v, i = apply_op(
        _median_dim,
        (input,),
        {"dim": d, "keepdim": builtins.bool(keepdim), "ignore_nan": ignore_nan},
    )
    return getattr(return_types, name)._make_of(v, i)


@refuses_complex("median", 1)
def median(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """``median(input)``: the lower median of all elements (NaN if any is NaN).
    ``median(input, dim)``: ``(values, indices)`` along ``dim``. VJP: g to the picked element."""
    return _median("median", input, dim, keepdim, False)


@refuses_complex("nanmedian", 1)
def nanmedian(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """``median`` ignoring NaN (NaN only where a slice is all NaN)."""
    return _median("nanmedian", input, dim, keepdim, True)


def mode(input: Any, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest on ties) and its last index."""
    d = wrap_dim(int(dim), input.ndim)
    v, i = apply_op(_mode, (input,), {"dim": d, "keepdim": builtins.bool(keepdim)})
    return return_types.mode._make_of(v, i)


def cummax(input: Any, dim: int) -> Any:
    """Running maximum along ``dim`` and the index where it was reached (the latest on ties).
    VJP: each output's g goes to the element it came from."""
    d = wrap_dim(int(dim), input.ndim)
    v, i = apply_op(_cummax, (input,), {"dim": d})
    return return_types.cummax._make_of(v, i)


def cummin(input: Any, dim: int) -> Any:
    """Running minimum along ``dim`` and its index; see cummax."""
    d = wrap_dim(int(dim), input.ndim)
    v, i = apply_op(_cummin, (input,), {"dim": d})
    return return_types.cummin._make_of(v, i)


# Non-differentiable: unique values, searches ------------------------------------------------


def _unique_fwd(xp: Any, x: Any, *, dim: Any, inverse: bool, counts: bool) -> Any:
    if dim is None:
        vals, inv, cnt = xp.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(x.shape)
    else:
        vals, inv, cnt = xp.unique(x, axis=dim, return_inverse=True, return_counts=True)
        inv = inv.reshape(-1)
    out = [vals]
    if inverse:
        out.append(inv.astype("int64"))
    if counts:
        out.append(cnt.astype("int64"))
    return tuple(out) if len(out) > 1 else vals


def _unique_consecutive_fwd(xp: Any, x: Any, *, dim: Any, inverse: bool, counts: bool) -> Any:
    if dim is None:
        flat = x.reshape(-1)
        n = flat.shape[0]
        new = xp.ones(n, dtype=bool)
        if n:
            new[1:] = flat[1:] != flat[:-1]
        vals = flat[new]
        inv = (xp.cumsum(new) - 1).reshape(x.shape)
    else:
        xs = xp.moveaxis(x, dim, 0)
        n = xs.shape[0]
        new = xp.ones(n, dtype=bool)
        if n:
            new[1:] = xp.any((xs[1:] != xs[:-1]).reshape(n - 1, -1), axis=1)
        vals = xp.moveaxis(xs[new], 0, dim)
        inv = xp.cumsum(new) - 1
    starts = xp.nonzero(new)[0]
    total = inv.size if dim is None else n
    cnt = xp.diff(xp.append(starts, total))
    out = [vals]
    if inverse:
        out.append(inv.astype("int64"))
    if counts:
        out.append(cnt.astype("int64"))
    return tuple(out) if len(out) > 1 else vals


def _multi(name: str, fwd: Any, n: int) -> OpDef:
    return OpDef(name, fwd, ("x",), promote=None, differentiable=False, num_outputs=n)


_UNIQUE = {n: _multi(f"unique{n}", _unique_fwd, n) for n in (1, 2, 3)}
_UNIQUE_C = {n: _multi(f"unique_consecutive{n}", _unique_consecutive_fwd, n) for n in (1, 2, 3)}


def _unique_call(
    table: Any, input: Any, return_inverse: bool, return_counts: bool, dim: Any
) -> Any:
    d = None if dim is None else wrap_dim(int(dim), input.ndim)
    n = 1 + builtins.int(builtins.bool(return_inverse)) + builtins.int(builtins.bool(return_counts))
    out = apply_op(
        table[n],
        (input,),
        {
            "dim": d,
            "inverse": builtins.bool(return_inverse),
            "counts": builtins.bool(return_counts),
        },
    )
    return out if n == 1 else tuple(out)


@refuses_complex("unique", 1)
def unique(
    input: Any,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: Any = None,
) -> Any:
    """The sorted unique elements (or unique slices along ``dim``), optionally with the inverse
    indices (``unique[inverse]`` rebuilds ``input``) and the counts. Not differentiable."""
    return _unique_call(_UNIQUE, input, return_inverse, return_counts, dim)


@refuses_complex("unique_consecutive", 1)
def unique_consecutive(
    input: Any, return_inverse: bool = False, return_counts: bool = False, dim: Any = None
) -> Any:
    """Collapse runs of equal consecutive elements (or slices along ``dim``) to one."""
    return _unique_call(_UNIQUE_C, input, return_inverse, return_counts, dim)


def _searchsorted_fwd(xp: Any, seq: Any, v: Any, *, right: bool, int32: bool) -> Any:
    side = "right" if right else "left"
    if seq.ndim == 1:
        out = xp.searchsorted(seq, v, side=side)
    else:
        rows = seq.reshape(-1, seq.shape[-1])
        vals = v.reshape(rows.shape[0], -1)
        out = xp.stack([xp.searchsorted(r, q, side=side) for r, q in zip(rows, vals)])
        out = out.reshape(v.shape)
    return out.astype("int32" if int32 else "int64")


_searchsorted = OpDef(
    "searchsorted",
    _searchsorted_fwd,
    ("sorted_sequence", "values"),
    promote=None,
    differentiable=False,
)


@refuses_complex("searchsorted", 2)
def searchsorted(
    sorted_sequence: Any,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Any = None,
) -> Any:
    """Indices where ``input``'s values would be inserted into ``sorted_sequence`` (along its
    last dim) to keep it sorted; ``right``/``side='right'`` puts them after equal values."""
    from chainrule._tensor import Tensor, _new_tensor

    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of "
                "left while right was True"
            )
        right = side == "right"
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    scalar = not isinstance(input, Tensor)
    if scalar:
        input = _new_tensor(np.asarray(input, dtype=sorted_sequence._data.dtype))
    if sorted_sequence.ndim > 1 and tuple(sorted_sequence.shape[:-1]) != tuple(input.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(sorted_sequence.shape)} and input value tensor "
            f"{list(input.shape)}"
        )
    return apply_op(
        _searchsorted,
        (sorted_sequence, input),
        {"right": builtins.bool(right), "int32": builtins.bool(out_int32)},
    )


@refuses_complex("bucketize", 2)
def bucketize(input: Any, boundaries: Any, *, out_int32: bool = False, right: bool = False) -> Any:
    """Index of the bucket of each element of ``input`` given 1-D sorted ``boundaries``."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
