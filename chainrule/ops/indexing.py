"""Indexing: ``x[idx]`` and ``x[idx] = v``.

Basic indices (ints, slices, None, Ellipsis) give views; integer arrays and boolean masks give
copies. The VJP of indexing scatters g into zeros of the input's shape (``index_grad``), whose
own VJP is indexing again, so higher derivatives work.

Long because it holds the whole indexing family (getitem/setitem, gather/scatter, index and
masked ops): one place per op.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

from chainrule._tensor import Tensor
from chainrule.backends import backend_of
from chainrule.ops._registry import OpDef, apply_op, defop, ns
from chainrule.ops.shape._common import _type
from chainrule.ops.shape.reshaping import expand_shape
from chainrule.ops.views import apply_inplace
from chainrule.ops.views import forget_view

__all__ = ["getitem", "setitem", "index_put_", "gather", "scatter", "scatter_", "scatter_add",
           "scatter_add_", "index_add_", "masked_fill_", "index_put",
           "index_select", "index_add", "masked_fill", "masked_select", "take_along_dim"]


def scatter_add_into(target: Any, index: Any, values: Any) -> None:
    """``target[index] += values`` where repeated indices all contribute, via the backend
    (``np.add.at`` on NumPy, an atomic scatter-add on GPU backends)."""
    backend_of(target).scatter_add(target, index, values)

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
    if a.dtype.kind == "f":
        return a.astype(np.intp)
    if a.dtype == np.uint8:
        return a.astype(np.bool_)
    if a.dtype.kind not in "iub":
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
        scatter_add_into(z, index, g)
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
        raise IndexError(_index_error(input._data.shape, parts)
                         or str(e).replace("axis", "dimension")) from None


def _index_error(shape: tuple[int, ...], parts: tuple[Any, ...]) -> str | None:
    """PyTorch's message for an index that NumPy rejected (None when none applies).

    PyTorch applies ints and slices first, as views; an int out of range is reported with its
    dim in the input. Index tensors are then applied together: an out-of-range entry is reported
    with the tensor's position among the index tensors, a mask mismatch with the positions in
    the mask and in the tensor left by the basic indices."""
    def consumed(p: Any) -> int:
        if p is None or p is Ellipsis:
            return 0
        if isinstance(p, np.ndarray) and p.dtype.kind == "b":
            return p.ndim
        return 1

    nd = len(shape)
    used = sum(consumed(p) for p in parts)
    if used > nd:
        return f"too many indices for tensor of dimension {nd}"
    cur: list[Any] = list(shape)
    dim = cdim = adv = 0
    # Shape left after the ints are applied, for mask messages.
    d = 0
    for p in parts:
        if p is Ellipsis:
            d += nd - used
        elif isinstance(p, int):
            cur[d] = None
            d += 1
        else:
            d += consumed(p)
    left = [n for n in cur if n is not None]
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
        elif p.dtype.kind == "b":
            for j in range(p.ndim):
                if p.shape[j] != left[cdim + j]:
                    return (f"The shape of the mask {list(p.shape)} at index {j} does not match "
                            f"the shape of the indexed tensor {left} at index {cdim + j}")
            dim += p.ndim
            cdim += p.ndim
            adv += p.ndim
        else:
            n = shape[dim]
            bad = p[(p < -n) | (p >= n)]
            if bad.size:
                return (f"index {int(bad.flat[0])} is out of bounds for dimension {adv} with size "
                        f"{n}")
            dim += 1
            cdim += 1
            adv += 1
    # Index tensors (a mask as its nonzero positions, one per dim) must broadcast together.
    shapes = []
    for p in parts:
        if isinstance(p, np.ndarray):
            shapes += [(int(p.sum()),)] * p.ndim if p.dtype.kind == "b" else [p.shape]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return ("shape mismatch: indexing tensors could not be broadcast together with shapes "
                + ", ".join(str(list(sh)) for sh in shapes))
    return None


def _is_bool(i: Any) -> bool:
    d = i._data.dtype if isinstance(i, Tensor) else i.dtype
    return d.kind == "b"


def _index_put_fwd(xp: Any, x: Any, v: Any, *, index: tuple[Any, ...], accumulate: bool) -> Any:
    out = x.copy()
    if accumulate:
        scatter_add_into(out, index, v)
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
    if not isinstance(value, (Tensor, numbers.Number)):
        cls = type(value)
        name = cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"
        raise TypeError(f"can't assign a {name} to a {_type(input)}")
    parts, basic = normalize_index(index)
    if basic:
        from chainrule.ops.inplace import copy_

        try:
            view = apply_op(_getitem, (input,), {"index": parts})
        except IndexError as e:
            raise IndexError(_index_error(input._data.shape, parts)
                             or str(e).replace("axis", "dimension")) from None
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
    index_put_(input, parts, value)


# gather / scatter family ----------------------------------------------------------------------
#
# Each op turns its ``index`` tensor and ``dim`` into a full NumPy advanced index ``idx`` (the
# index array along ``dim``, broadcast ``arange``s along the other dims), computed once by the
# public wrapper and kept as a parameter. Then gather is ``x[idx]``, its VJP scatter-adds g into
# zeros (``index_grad``), whose VJP is indexing again: derivatives of every order stay in ops.


def _host(t: Any) -> np.ndarray:
    return t._backend.to_host(t._data) if isinstance(t, Tensor) else np.asarray(t)


def _wrap(dim: int, nd: int) -> int:
    from chainrule.ops._broadcast import wrap_dim

    return wrap_dim(dim, nd)


def _along(xp: Any, index: Any, dim: int) -> tuple[Any, ...]:
    """The advanced index selecting ``x[i0, .., index[i0, .., ik], .., ik]`` for every position
    of ``index`` (``index`` sits at ``dim``, ``arange``s elsewhere)."""
    nd = index.ndim
    out = []
    for d in range(nd):
        if d == dim:
            out.append(index.astype(np.intp, copy=False))
        else:
            shape = [1] * nd
            shape[d] = index.shape[d]
            out.append(xp.arange(index.shape[d]).reshape(shape))
    return tuple(out)


def _check_bounds(index: np.ndarray, dim: int, n: int) -> None:
    if index.size:
        bad = index[(index < 0) | (index >= n)]
        if bad.size:
            raise RuntimeError(
                f"index {int(bad.flat[0])} is out of bounds for dimension {dim} with size {n}"
            )


def _gather_index(name: str, input: Tensor, dim: int, index: Tensor,
                  src: Any = None) -> tuple[int, tuple[Any, ...], Any]:
    """Validate gather/scatter arguments as PyTorch does; returns (dim, idx, src slices)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    ia = index._data
    if ia.dtype.kind not in "iu":
        who = "gather" if name == "gather" else "scatter"
        raise RuntimeError(f"{who}(): Expected dtype int32/int64 for index")
    shp = input._data.shape
    nd = max(len(shp), 1)
    dim = _wrap(dim, len(shp))
    if max(ia.ndim, 1) != nd:
        who = "input" if name == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {who} tensor")
    ishp = ia.shape
    src_shape = src._data.shape if isinstance(src, Tensor) else None
    if src_shape is not None and max(len(src_shape), 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for d in range(nd):
        if d != dim and ishp[d] > shp[d] or (src_shape is not None and ishp[d] > src_shape[d]):
            if name == "gather":
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {list(ishp)} to be no "
                    f"larger than self {list(shp)} apart from dimension {dim}"
                )
            msg = (f"Expected index {list(ishp)} to be no larger than self {list(shp)} apart "
                   f"from dimension {dim}")
            if src_shape is not None:
                msg += f" and to be no larger size than src {list(src_shape)}"
            raise RuntimeError(msg)
    _check_bounds(_host(index), dim, shp[dim])
    idx = _along(input._backend.xp, ia, dim)
    src_sl = None
    if src_shape is not None and tuple(src_shape) != tuple(ishp):
        src_sl = tuple(slice(0, n) for n in ishp)
    return dim, idx, src_sl


@defop(name="gather", promote=None)
def _gather(xp: Any, x: Any, *, index: tuple[Any, ...]) -> Any:
    """out[i][j] = x[i][index[i][j]] (for dim 1). VJP: g scatter-added into zeros."""
    return x[index]


_gather.vjp(_getitem_vjp)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """Values of ``input`` along ``dim`` at ``index`` (same number of dims as ``input``)."""
    if input._data.ndim == 0:
        # A 0-dim input is gathered as a 1-element vector.
        from chainrule.ops.shape import reshape

        flat = gather(reshape(input, (1,)), 0, reshape(index, (-1,)))
        return reshape(flat, index._data.shape)
    _, idx, _ = _gather_index("gather", input, dim, index)
    return apply_op(_gather, (input,), {"index": idx})


def _src_grad(ctx: Any, g: Any) -> Any:
    """Gradient of the ``src`` of a scatter: g gathered at ``index``, in zeros of src's shape
    when src is larger than index."""
    gs = ns.gather(g, index=ctx.index)
    if ctx.src_index is not None:
        gs = ns.index_grad(gs, shape=tuple(ctx.input_shapes[1]), index=ctx.src_index)
    return gs


@defop(name="scatter_add", promote=None)
def _scatter_add(xp: Any, x: Any, src: Any, *, index: tuple[Any, ...], src_index: Any) -> Any:
    """out = x, then out[..index..] += src (repeated indices accumulate).
    VJP: g for x, g gathered at index for src."""
    out = x.copy()
    scatter_add_into(out, index, src if src_index is None else src[src_index])
    return out


@_scatter_add.vjp
def _scatter_add_vjp(ctx: Any, g: Any) -> Any:
    nx, ns_ = ctx.needs_input_grad
    return (g if nx else None, _src_grad(ctx, g) if ns_ else None)


@defop(name="scatter", promote=None)
def _scatter(xp: Any, x: Any, src: Any, *, index: tuple[Any, ...], src_index: Any) -> Any:
    """out = x, then out[..index..] = src. VJP: g with the written places zeroed for x; g
    gathered at index for src."""
    out = x.copy()
    out[index] = src if src_index is None else src[src_index]
    return out


@_scatter.vjp
def _scatter_vjp(ctx: Any, g: Any) -> Any:
    nx, ns_ = ctx.needs_input_grad
    gx = ns.scatter_value(g, index=ctx.index, value=0) if nx else None
    return (gx, _src_grad(ctx, g) if ns_ else None)


@defop(name="scatter_value", promote=None, node_name="ScatterBackward1")
def _scatter_value(xp: Any, x: Any, *, index: tuple[Any, ...], value: Any) -> Any:
    """out = x, then out[..index..] = value. VJP: g with the written places zeroed."""
    out = x.copy()
    out[index] = value
    return out


_scatter_value.vjp(lambda ctx, g: (ns.scatter_value(g, index=ctx.index, value=0),))


@defop(name="scatter_reduce_legacy", promote=None, node_name="ScatterBackward0")
def _scatter_reduce_legacy(xp: Any, x: Any, src: Any, *, index: tuple[Any, ...],
                           src_index: Any, reduce: str) -> Any:
    """scatter(..., reduce='add'|'multiply'): combine src into x at index. PyTorch defines no
    derivative for it; the VJP raises its error."""
    out = x.copy()
    s = src if src_index is None else src[src_index]
    s = xp.broadcast_to(s, index[0].shape) if not hasattr(s, "shape") or s.shape != index[0].shape \
        else s
    if reduce == "add":
        scatter_add_into(out, index, s)
    else:
        backend_of(out).xp.multiply.at(out, index, s)
    return out


@_scatter_reduce_legacy.vjp
def _scatter_reduce_legacy_vjp(ctx: Any, g: Any) -> Any:
    raise RuntimeError("derivative for aten::scatter is not implemented")


def _check_same_dtype(input: Tensor, src: Tensor) -> None:
    if src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")


def _scatter_args(input: Tensor, dim: int, index: Tensor, src: Any, value: Any,
                  reduce: str | None) -> tuple[OpDef, tuple[Any, ...], dict[str, Any]]:
    if src is None and value is None:
        raise TypeError("scatter() missing required argument: 'src' or 'value'")
    if src is not None and value is not None:
        raise TypeError("scatter() got both 'src' and 'value'")
    if src is not None and not isinstance(src, Tensor):
        value, src = src, None
    if value is not None and isinstance(value, Tensor):
        if value._data.ndim:
            raise TypeError("scatter(): argument 'value' must be Number, not Tensor")
        value = value.item()
    _, idx, src_sl = _gather_index("scatter", input, dim, index, src)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(
                f"reduce argument must be either add or multiply. Got {reduce}"
            )
        if src is not None:
            _check_same_dtype(input, src)
            warnings.warn(
                "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
                "reduction options.", UserWarning, stacklevel=3)
        return (_scatter_reduce_legacy, (input, src if src is not None else value),
                {"index": idx, "src_index": src_sl, "reduce": reduce})
    if src is None:
        return _scatter_value, (input,), {"index": idx, "value": value}
    _check_same_dtype(input, src)
    return _scatter, (input, src), {"index": idx, "src_index": src_sl}


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or a number ``value``) written at ``index``
    along ``dim``. Repeated indices keep one of the written values (PyTorch leaves which
    undefined; here the last). ``reduce='add'|'multiply'`` combines instead (no gradient)."""
    op, inputs, params = _scatter_args(input, dim, index, src, value, reduce)
    return apply_op(op, inputs, params)


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
             reduce: str | None = None) -> Tensor:
    """In-place :func:`scatter`."""
    op, inputs, params = _scatter_args(input, dim, index, src, value, reduce)
    return apply_inplace(op, input, inputs[1:], params)


def _scatter_add_args(input: Tensor, dim: int, index: Tensor, src: Tensor) -> dict[str, Any]:
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' must be Tensor, not {type(src).__name__}")
    _check_same_dtype(input, src)
    _, idx, src_sl = _gather_index("scatter_add", input, dim, index, src)
    return {"index": idx, "src_index": src_sl}


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeats accumulate)."""
    return apply_op(_scatter_add, (input, src), _scatter_add_args(input, dim, index, src))


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In-place :func:`scatter_add`."""
    return apply_inplace(_scatter_add, input, (src,), _scatter_add_args(input, dim, index, src))


# index_select / index_add ---------------------------------------------------------------------


def _dim_index(input: Tensor, dim: int, index: Any, who: str) -> tuple[int, tuple[Any, ...]]:
    if not isinstance(index, Tensor):
        raise TypeError(f"{who}(): argument 'index' must be Tensor, not {type(index).__name__}")
    ia = index._data
    if ia.ndim > 1:
        raise IndexError(f"{who}(): Index is supposed to be a vector")
    nd = input._data.ndim
    d = _wrap(dim, nd)
    n = input._data.shape[d] if nd else 1
    return d, ia, n


_index_select = OpDef("index_select", _getitem_fwd, ("x",), promote=None,
                      node_name="IndexSelectBackward0")
_index_select.vjp(_getitem_vjp)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` along ``dim`` at the positions in 1-D ``index`` (a copy).
    VJP: g scatter-added into zeros at those positions."""
    d, ia, n = _dim_index(input, dim, index, "index_select")
    if ia.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    h = _host(index)
    bad = h[(h < 0) | (h >= n)]
    if bad.size:
        # PyTorch's CPU kernels word this differently along dim 0 and along other dims.
        if d == 0:
            raise IndexError("index out of range in self")
        raise RuntimeError(
            f"INDICES element is out of DATA bounds, id={int(bad.flat[0])} axis_dim={n}")
    if input._data.ndim == 0:
        if ia.size != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got {ia.size} value(s)")
        from chainrule.ops.shape import reshape

        out = apply_op(_index_select, (reshape(input, (1,)),),
                       {"index": (ia.reshape(-1).astype(np.intp),)})
        return reshape(out, ())
    idx = (slice(None),) * d + (ia.reshape(-1).astype(np.intp),)
    return apply_op(_index_select, (input,), {"index": idx})


@defop(name="index_add", promote=None)
def _index_add(xp: Any, x: Any, src: Any, *, index: tuple[Any, ...], alpha: Any) -> Any:
    """out = x; out[.., index[i], ..] += alpha * src[.., i, ..] (repeats accumulate).
    VJP: g for x; alpha * index_select(g) for src."""
    out = x.copy()
    scatter_add_into(out, index, src if alpha == 1 else src * alpha)
    return out


@_index_add.vjp
def _index_add_vjp(ctx: Any, g: Any) -> Any:
    nx, ns_ = ctx.needs_input_grad
    gs = None
    if ns_:
        gs = ns.index_select(g, index=ctx.index)
        if ctx.alpha != 1:
            gs = gs * ctx.alpha
    return (g if nx else None, gs)


def _index_add_args(input: Tensor, dim: int, index: Tensor, source: Tensor,
                    alpha: Any) -> dict[str, Any]:
    d, ia, n = _dim_index(input, dim, index, "index_add_")
    if ia.dtype.kind not in "iu":
        raise RuntimeError(
            "index_add_(): Expected dtype int32/int64 for index but got: "
            f"{_legacy(index._data.dtype)}"
        )
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_legacy(input._data.dtype)}) and source "
            f"({_legacy(source._data.dtype)}) must have the same scalar type"
        )
    k = ia.size
    ns_ = source._data.shape[d] if source._data.ndim else 1
    if k != ns_:
        raise RuntimeError(
            f"index_add_(): Number of indices ({k}) should be equal to source.size(dim): "
            f"({ns_}), for dim: {d}"
        )
    _check_bounds(_host(index), d, n)
    idx = (slice(None),) * d + (ia.reshape(-1).astype(np.intp),)
    return {"index": idx, "alpha": alpha}


def _legacy(dt: Any) -> str:
    from chainrule.ops._registry import _legacy_name

    return _legacy_name(dt)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha: Any = 1) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim``."""
    return apply_op(_index_add, (input, source),
                    _index_add_args(input, dim, index, source, alpha))


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
               alpha: Any = 1) -> Tensor:
    """In-place :func:`index_add`."""
    return apply_inplace(_index_add, input, (source,),
                         _index_add_args(input, dim, index, source, alpha))


# masks ----------------------------------------------------------------------------------------


def _masked_fill_fwd(xp: Any, x: Any, v: Any, *, mask: Any) -> Any:
    return xp.where(mask, v, x).astype(x.dtype, copy=False)


def _masked_fill_vjp(ctx: Any, g: Any) -> Any:
    nx, nv = ctx.needs_input_grad
    kept = ns.masked_fill(g, 0, mask=ctx.mask)
    return (kept if nx else None, ns.sum(g - kept, dim=None, keepdim=False) if nv else None)


_masked_fill = OpDef("masked_fill", _masked_fill_fwd, ("x", "v"), promote=None)
_masked_fill.vjp(_masked_fill_vjp)
_masked_fill_t = OpDef("masked_fill_tensor", _masked_fill_fwd, ("x", "v"), promote=None,
                       node_name="MaskedFillBackward1")
_masked_fill_t.vjp(_masked_fill_vjp)


def _masked_fill_args(input: Tensor, mask: Tensor, value: Any) -> tuple[OpDef, Any]:
    if not isinstance(mask, Tensor) or mask._data.dtype.kind != "b":
        dt = mask._data.dtype.name if isinstance(mask, Tensor) else type(mask).__name__
        dt = {"float32": "float", "float64": "double", "int64": "long"}.get(dt, dt)
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {dt}")
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        return _masked_fill_t, value
    return _masked_fill, value


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``value`` where ``mask`` is True, ``input`` elsewhere (broadcast to a common shape).
    VJP: g where the mask is False for input; the sum of g where it is True for a tensor value."""
    op, value = _masked_fill_args(input, mask, value)
    try:
        shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
    except ValueError:
        shape = None
    if shape is None:
        a, b = input._data.shape, mask._data.shape
        n = max(len(a), len(b))
        a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and 1 not in (a[i], b[i]):
                raise RuntimeError(
                    f"The size of tensor a ({b[i]}) must match the size of tensor b ({a[i]}) at "
                    f"non-singleton dimension {i}"
                )
    return apply_op(op, (input, value), {"mask": mask._data})


def masked_fill_(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """In-place :func:`masked_fill` (``mask`` must broadcast to ``input``'s shape)."""
    op, value = _masked_fill_args(input, mask, value)
    return apply_inplace(op, input, (value,), {"mask": mask._data})


@defop(name="masked_select", promote=None)
def _masked_select(xp: Any, x: Any, *, mask: Any) -> Any:
    """The elements of x (broadcast to the mask's shape) where ``mask`` is True, as 1-D.
    VJP: g scattered back to those places in zeros."""
    return xp.broadcast_to(x, mask.shape)[mask]


@_masked_select.vjp
def _masked_select_vjp(ctx: Any, g: Any) -> Any:
    return (ns.index_grad(g, shape=tuple(ctx.mask.shape), index=(ctx.mask,)),)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """1-D tensor of the elements of ``input`` where ``mask`` (broadcast) is True."""
    if not isinstance(mask, Tensor) or mask._data.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    xp = input._backend.xp
    shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
    return apply_op(_masked_select, (input,), {"mask": xp.broadcast_to(mask._data, shape)})


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``input`` gathered along ``dim`` at ``indices`` (broadcast against each other apart from
    ``dim``); with no ``dim``, over the flattened tensors. PyTorch records it as a gather."""
    ia = indices._data
    if ia.dtype != np.int64:
        raise RuntimeError(
            "torch.take_along_dim(): dtype of indices should be Long but got "
            f"{_legacy(ia.dtype)}"
        )
    from chainrule.ops.shape import expand, reshape

    if dim is None:
        return gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)))
    nd = input._data.ndim
    if ia.ndim != nd:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {nd} dimensions for input, and {ia.ndim} dimensions for indices"
        )
    d = _wrap(dim, nd)
    s_in = list(input._data.shape)
    s_ix = list(ia.shape)
    s_in[d] = s_ix[d] = 1
    b = list(np.broadcast_shapes(tuple(s_in), tuple(s_ix)))
    bi, bx = list(b), list(b)
    bi[d], bx[d] = input._data.shape[d], ia.shape[d]
    if tuple(bi) != input._data.shape:
        input = expand(input, bi)
    if tuple(bx) != ia.shape:
        indices = expand(indices, bx)
    return gather(input, d, indices)


def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """Out-of-place :func:`index_put_` (on a copy of ``input``)."""
    from chainrule.ops.shape import clone

    return index_put_(clone(input), indices, values, accumulate)
