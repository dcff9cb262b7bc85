"""``x[idx]`` and ``x[idx] = v``: index normalizing (PyTorch's errors), getitem (a view for basic
indices) with its VJP ``index_grad``, index_put_/index_put and setitem."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule._scalar_convert import checked_scalar, complex_scalar_value
from chainrule._tensor import Tensor
from chainrule.ops._registry import OpDef, apply_op, defop, ns
from chainrule.ops.indexing._common import ZERO_DIM_MSG, _legacy, scatter_add_into
from chainrule.ops.shape._common import _type
from chainrule.ops.shape.reshaping import expand_shape
from chainrule.ops.views import apply_inplace, forget_view

__all__ = ["getitem", "setitem", "index_put_", "index_put"]


def _norm_elem(i: Any) -> Any:
    if isinstance(i, Tensor):
        a = i._backend.to_host(i._data)
        if _kinds.is_bool(a):
            return a
        if not _kinds.is_integral(a):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return a.astype(np.intp) if a.ndim else int(a)
    if isinstance(i, range):  # a sequence of ints, as PyTorch reads it
        return np.arange(i.start, i.stop, i.step, dtype=np.intp)
    if isinstance(i, (list, tuple)):
        if not i:  # an empty sequence selects nothing (an int index, not NumPy's float array)
            return np.zeros(0, dtype=np.intp)
        return _array_index(np.asarray([e if isinstance(e, float) else _norm_elem(e) for e in i]))
    if isinstance(i, np.ndarray):
        return _array_index(i)
    if isinstance(i, (bool, np.bool_)):
        return np.asarray(i)
    if i is None or i is Ellipsis or isinstance(i, slice):
        if isinstance(i, slice) and i.step is not None and int(i.step) <= 0:
            raise ValueError("step must be greater than zero")
        return i
    if isinstance(i, (int, np.integer)):
        return int(i)
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
        f"valid indices (got {type(i).__name__})"
    )


def _array_index(a: np.ndarray) -> np.ndarray:
    """A NumPy array or Python sequence as PyTorch reads it: converted to a tensor, floats
    truncated to int64 (``x[[0.5]]`` is ``x[[0]]``), uint8 a byte mask."""
    if _kinds.is_floating(a):
        return a.astype(np.intp)
    if a.dtype == np.uint8:
        return a.astype(np.bool_)
    if not _kinds.is_integral(a, include_bool=True):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return a


def normalize_index(index: Any) -> tuple[tuple[Any, ...], bool]:
    """The index as a tuple of NumPy-ready parts, and whether it is basic (gives a view)."""
    if not isinstance(index, tuple):
        index = (index,)
    parts = tuple(_norm_elem(i) for i in index)
    basic = all(p is None or p is Ellipsis or isinstance(p, (int, slice)) for p in parts)
    if basic and Ellipsis not in parts:
        # A trailing Ellipsis keeps NumPy from returning a scalar instead of a 0-d view.
        parts = parts + (Ellipsis,)
    return parts, basic


def _index_name(p: dict[str, Any]) -> str:
    index = p["index"]
    if len(index) == 2 and type(index[0]) is int and index[1] is Ellipsis:
        return "SelectBackward0"  # x[i] (normalized to (i, ...)), the commonest: no list built
    parts = [i for i in index if i is not Ellipsis]
    if parts and all(isinstance(i, int) for i in parts):
        return "SelectBackward0"
    if parts and all(i is None for i in parts):
        return "UnsqueezeBackward0"
    if parts and isinstance(parts[-1], int):
        return "SelectBackward0"
    return "SliceBackward0"


def _getitem_fwd(xp: Any, x: Any, *, index: tuple[Any, ...]) -> Any:
    return x[index]


def _getitem_vjp(ctx: Any, g: Any) -> Any:
    return (ns.index_grad(g, shape=ctx.input_shapes[0], index=ctx.index),)


_getitem = OpDef("getitem", _getitem_fwd, ("x",), view=True, promote=None, name_fn=_index_name)
_getitem.vjp(_getitem_vjp)
_index = OpDef("index", _getitem_fwd, ("x",), promote=None, node_name="IndexBackward0")
_index.vjp(_getitem_vjp)


@defop(name="index_grad", node_name="IndexBackward0")
def _index_grad(xp: Any, g: Any, *, shape: tuple[int, ...], index: tuple[Any, ...]) -> Any:
    """Zeros of ``shape`` with g added at ``index`` (repeated indices accumulate).
    VJP: indexing again."""
    z = xp.zeros(shape, dtype=g.dtype)
    if all(p is None or p is Ellipsis or isinstance(p, (int, slice)) for p in index):
        z[index] = g
    else:
        scatter_add_into(z, index, g)
    return z


@_index_grad.vjp
def _index_grad_vjp(ctx: Any, g: Any) -> Any:
    return (ns.index(g, index=ctx.index),)


def getitem(input: Tensor, index: Any) -> Tensor:
    """``input[index]`` with NumPy/PyTorch semantics."""
    if input._data.ndim == 0 and not (
        index is None
        or index is Ellipsis
        or (isinstance(index, tuple) and len(index) == 0)
        or isinstance(index, (Tensor, np.ndarray))
        and getattr(index, "dtype", None) is not None
        and _is_bool(index)
    ):
        raise IndexError(ZERO_DIM_MSG)
    parts, basic = normalize_index(index)
    try:
        if basic:
            return apply_op(_getitem, (input,), {"index": parts})
        return apply_op(_index, (input,), {"index": parts})
    except IndexError as e:
        raise IndexError(
            _index_error(input._data.shape, parts) or str(e).replace("axis", "dimension")
        ) from None


def _index_error(shape: tuple[int, ...], parts: tuple[Any, ...]) -> str | None:
    """PyTorch's message for an index that NumPy rejected (None when none applies).

    PyTorch applies ints and slices first, as views; an int out of range is reported with its
    dim in the input. Index tensors are then applied together: an out-of-range entry is reported
    with the tensor's position among the index tensors, a mask mismatch with the positions in
    the mask and in the tensor left by the basic indices."""
    nd = len(shape)
    used = sum(_consumed(p) for p in parts)
    if used > nd:
        return f"too many indices for tensor of dimension {nd}"
    left = _left_after_ints(shape, parts, used)
    dim = cdim = adv = 0
    for p in parts:
        if p is Ellipsis:
            dim += nd - used
            cdim += nd - used
        elif p is None:
            left.insert(cdim, 1)
            cdim += 1
        elif isinstance(p, int):
            n = shape[dim]
            if not -n <= p < n:
                return f"index {p} is out of bounds for dimension {dim} with size {n}"
            dim += 1
        elif isinstance(p, slice):
            dim += 1
            cdim += 1
        elif _kinds.is_bool(p):
            err = _mask_error(p, left, cdim)
            if err is not None:
                return err
            dim += p.ndim
            cdim += p.ndim
            adv += p.ndim
        else:
            n = shape[dim]
            bad = p[(p < -n) | (p >= n)]
            if bad.size:
                return (
                    f"index {int(bad.flat[0])} is out of bounds for dimension {adv} with size {n}"
                )
            dim += 1
            cdim += 1
            adv += 1
    return _broadcast_error(parts)


def _consumed(p: Any) -> int:
    """How many dims of the input an index part uses."""
    if p is None or p is Ellipsis:
        return 0
    if isinstance(p, np.ndarray) and _kinds.is_bool(p):
        return p.ndim
    return 1


def _left_after_ints(shape: tuple[int, ...], parts: tuple[Any, ...], used: int) -> list[int]:
    """The shape left after the int parts are applied (for mask messages)."""
    cur: list[Any] = list(shape)
    d = 0
    for p in parts:
        if p is Ellipsis:
            d += len(shape) - used
        elif isinstance(p, int):
            cur[d] = None
            d += 1
        else:
            d += _consumed(p)
    return [n for n in cur if n is not None]


def _mask_error(p: np.ndarray, left: list[int], cdim: int) -> str | None:
    """PyTorch's message for a bool mask whose shape differs from the dims it covers."""
    for j in range(p.ndim):
        if p.shape[j] != left[cdim + j]:
            return (
                f"The shape of the mask {list(p.shape)} at index {j} does not match "
                f"the shape of the indexed tensor {left} at index {cdim + j}"
            )
    return None


def _broadcast_error(parts: tuple[Any, ...]) -> str | None:
    """PyTorch's message when the index tensors (a mask as its nonzero positions, one per dim)
    do not broadcast together."""
    shapes = []
    for p in parts:
        if isinstance(p, np.ndarray):
            shapes += [(int(p.sum()),)] * p.ndim if _kinds.is_bool(p) else [p.shape]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return (
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(list(sh)) for sh in shapes)
        )
    return None


def _is_bool(i: Any) -> bool:
    d = i._data.dtype if isinstance(i, Tensor) else i.dtype
    return _kinds.is_bool(d)


def _index_put_fwd(xp: Any, x: Any, v: Any, *, index: tuple[Any, ...], accumulate: bool) -> Any:
    out = x.copy()
    if accumulate:
        scatter_add_into(out, index, v)
    else:
        out[index] = v
    return out


_index_put = OpDef(
    "index_put", _index_put_fwd, ("x", "v"), promote=None, node_name="IndexPutBackward0"
)


@_index_put.vjp
def _index_put_vjp(ctx: Any, g: Any) -> Any:
    need_x, need_v = ctx.needs_input_grad
    gx = None
    if need_x:
        gx = g if ctx.accumulate else ns.index_put(g, 0.0, index=ctx.index, accumulate=False)
    gv = ns.index(g, index=ctx.index) if need_v else None
    return gx, gv


def index_put_(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """``input[indices] = values`` (or ``+=`` with ``accumulate``), in place."""
    parts, _ = normalize_index(tuple(indices))
    if not isinstance(values, Tensor):
        from chainrule._creation import tensor

        if type(values) is complex:
            values = complex_scalar_value(values, input._data.dtype)
        values = tensor(values, dtype=input.dtype)
    elif values._data.dtype != input._data.dtype:
        # no cast, as PyTorch (``x[idx] = v`` too, unless idx is one bool mask and v 0-dim)
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_legacy(input._data.dtype)} for the destination and "
            f"{_legacy(values._data.dtype)} for the source."
        )
    return apply_inplace(_index_put, input, (values,), {"index": parts, "accumulate": accumulate})


def setitem(input: Tensor, index: Any, value: Any) -> None:
    """``input[index] = value``. A basic index writes through a view (the base records a
    ``CopySlices`` node); an advanced one records ``IndexPutBackward0``."""
    if (
        input._data.ndim == 0
        and index is not None
        and index is not Ellipsis
        and not (isinstance(index, tuple) and len(index) == 0)
        and not isinstance(index, (Tensor, np.ndarray))
    ):
        raise IndexError(ZERO_DIM_MSG)
    if not isinstance(value, (Tensor, numbers.Number)):
        cls = type(value)
        name = cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"
        raise TypeError(f"can't assign a {name} to a {_type(input)}")
    if type(value) is float or type(value) is int:  # PyTorch's range check (Note [checked
        # scalar conversion] in _scalar_convert.py)
        if type(value) is int and not -(2**63) <= value < 2**63:  # (its binding's long long)
            raise ValueError("Overflow when unpacking long long")
        d = input._data.dtype
        if d.itemsize != 2 or d.kind in "iu":  # (float16/bfloat16: PyTorch stores inf)
            value = checked_scalar(value, d)
    elif type(value) is complex:  # PyTorch's error for a nonzero imaginary part
        value = complex_scalar_value(value, input._data.dtype)
    parts, basic = normalize_index(index)
    if basic:
        from chainrule.ops.inplace import copy_

        try:
            view = apply_op(_getitem, (input,), {"index": parts})
        except IndexError as e:
            raise IndexError(
                _index_error(input._data.shape, parts) or str(e).replace("axis", "dimension")
            ) from None
        forget_view(view)  # the user never sees this view: see Note [temporary views]
        if not isinstance(value, Tensor):
            from chainrule._creation import tensor

            value = tensor(value, dtype=view.dtype)
        if value._data.shape != view._data.shape:
            expand_shape(value, view._data.shape)  # PyTorch words setitem's errors as expand's
        copy_(view, value)
        return
    msg = _index_error(input._data.shape, parts)
    if msg is not None:
        raise IndexError(msg)
    if (
        isinstance(value, Tensor)
        and value._data.ndim == 0
        and value._data.dtype != input._data.dtype
        and isinstance(index, Tensor)
        and _kinds.is_bool(index._data)
    ):
        # one bool mask and a 0-dim value: PyTorch's masked_fill_, which converts the value
        if _kinds.is_complex(value._data) and not _kinds.is_complex(input._data):
            complex_scalar_value(complex(value.item()), input._data.dtype)
            value = value.real
        value = value.to(input.dtype)
    index_put_(input, parts, value)


def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """Out-of-place :func:`index_put_` (on a copy of ``input``)."""
    from chainrule.ops.shape import clone

    return index_put_(clone(input), indices, values, accumulate)
