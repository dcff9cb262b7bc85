"""Indexing: ``x[idx]`` and ``x[idx] = v``.

Basic indices (ints, slices, None, Ellipsis) give views; integer arrays and boolean masks give
copies. The VJP of indexing scatters g into zeros of the input's shape (``index_grad``), whose
own VJP is indexing again, so higher derivatives work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule._tensor import Tensor
from chainrule.ops._registry import OpDef, apply_inplace, apply_op, defop, ns

__all__ = ["getitem", "setitem", "index_put_"]

ZERO_DIM_MSG = (
    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
    "C++ to convert a 0-dim tensor to a number"
)


def _norm_elem(i: Any) -> Any:
    if isinstance(i, Tensor):
        a = i._backend.to_host(i._data)
        if a.dtype.kind == "b":
            return a
        if a.dtype.kind not in "iu":
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors"
            )
        return a.astype(np.intp) if a.ndim else int(a)
    if isinstance(i, (list, tuple)):
        a = np.asarray([_norm_elem(e) for e in i])
        if a.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return a
    if isinstance(i, np.ndarray):
        return i
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
    parts = [i for i in p["index"] if i is not Ellipsis]
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
        np.add.at(z, index, g)
    return z


@_index_grad.vjp
def _index_grad_vjp(ctx: Any, g: Any) -> Any:
    return (ns.index(g, index=ctx.index),)


def getitem(input: Tensor, index: Any) -> Tensor:
    """``input[index]`` with NumPy/PyTorch semantics."""
    if input._data.ndim == 0 and not (
        index is None or index is Ellipsis or (isinstance(index, tuple) and len(index) == 0)
        or isinstance(index, (Tensor, np.ndarray)) and getattr(index, "dtype", None) is not None
        and _is_bool(index)
    ):
        raise IndexError(ZERO_DIM_MSG)
    parts, basic = normalize_index(index)
    try:
        if basic:
            return apply_op(_getitem, (input,), {"index": parts})
        return apply_op(_index, (input,), {"index": parts})
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None


def _is_bool(i: Any) -> bool:
    d = i._data.dtype if isinstance(i, Tensor) else i.dtype
    return d.kind == "b"


def _index_put_fwd(xp: Any, x: Any, v: Any, *, index: tuple[Any, ...], accumulate: bool) -> Any:
    out = x.copy()
    if accumulate:
        np.add.at(out, index, v)
    else:
        out[index] = v
    return out


_index_put = OpDef("index_put", _index_put_fwd, ("x", "v"), promote=None,
                   node_name="IndexPutBackward0")


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

        values = tensor(values, dtype=input.dtype)
    elif values._data.dtype != input._data.dtype:
        values = values.to(input.dtype)
    return apply_inplace(_index_put, input, (values,), {"index": parts, "accumulate": accumulate})


def setitem(input: Tensor, index: Any, value: Any) -> None:
    """``input[index] = value``. A basic index writes through a view (the base records a
    ``CopySlices`` node); an advanced one records ``IndexPutBackward0``."""
    if input._data.ndim == 0 and index is not None and index is not Ellipsis and not (
        isinstance(index, tuple) and len(index) == 0
    ) and not isinstance(index, (Tensor, np.ndarray)):
        raise IndexError(ZERO_DIM_MSG)
    parts, basic = normalize_index(index)
    if basic:
        from chainrule.ops.inplace import copy_

        view = apply_op(_getitem, (input,), {"index": parts})
        copy_(view, value)
        return
    index_put_(input, parts, value)
