"""gather, scatter/scatter_ (src or value, with the legacy ``reduce``), scatter_add/scatter_add_
and take_along_dim.

Each op turns its ``index`` tensor and ``dim`` into a full NumPy advanced index ``idx`` (the
index array along ``dim``, broadcast ``arange``s along the other dims), computed once by the
public wrapper and kept as a parameter. Then gather is ``x[idx]``, its VJP scatter-adds g into
zeros (``index_grad``), whose VJP is indexing again: derivatives of every order stay in ops."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule._scalar_convert import checked_scalar, complex_scalar_value
from chainrule._tensor import Tensor
from chainrule.backends import backend_of
from chainrule.ops._registry import OpDef, apply_op, defop, ns
from chainrule.ops.indexing._common import _legacy, scatter_add_into
from chainrule.ops.indexing.subscript import _getitem_vjp
from chainrule.ops.views import apply_inplace

__all__ = ["gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "take_along_dim"]


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


def _gather_index(
    name: str, input: Tensor, dim: int, index: Tensor, src: Any = None
) -> tuple[int, tuple[Any, ...], Any]:
    """Validate gather/scatter arguments as PyTorch does; returns (dim, idx, src slices)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    ia = index._data
    if not _kinds.is_integral(ia):
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
            msg = (
                f"Expected index {list(ishp)} to be no larger than self {list(shp)} apart "
                f"from dimension {dim}"
            )
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
def _scatter_reduce_legacy(
    xp: Any, x: Any, src: Any, *, index: tuple[Any, ...], src_index: Any, reduce: str
) -> Any:
    """scatter(..., reduce='add'|'multiply'): combine src into x at index. PyTorch defines no
    derivative for it; the VJP raises its error."""
    out = x.copy()
    s = src if src_index is None else src[src_index]
    s = (
        xp.broadcast_to(s, index[0].shape)
        if not hasattr(s, "shape") or s.shape != index[0].shape
        else s
    )
    if reduce == "add":
        scatter_add_into(out, index, s)
    else:
        backend_of(out).scatter_reduce(out, index, s, "multiply")
    return out


@_scatter_reduce_legacy.vjp
def _scatter_reduce_legacy_vjp(ctx: Any, g: Any) -> Any:
    raise RuntimeError("derivative for aten::scatter is not implemented")


def _check_same_dtype(input: Tensor, src: Tensor) -> None:
    if src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")


def _scatter_args(
    input: Tensor, dim: int, index: Tensor, src: Any, value: Any, reduce: str | None
) -> tuple[OpDef, tuple[Any, ...], dict[str, Any]]:
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
    if type(value) is complex:  # PyTorch's error for a nonzero imaginary part
        value = complex_scalar_value(value, input._data.dtype)
    elif type(value) is float or type(value) is int:  # its range check (Note [checked
        # scalar conversion] in _scalar_convert.py)
        value = checked_scalar(value, input._data.dtype)
    _, idx, src_sl = _gather_index("scatter", input, dim, index, src)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
        if src is not None:
            _check_same_dtype(input, src)
            warnings.warn(
                "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
                "reduction options.",
                UserWarning,
                stacklevel=3,
            )
        return (
            _scatter_reduce_legacy,
            (input, src if src is not None else value),
            {"index": idx, "src_index": src_sl, "reduce": reduce},
        )
    if src is None:
        return _scatter_value, (input,), {"index": idx, "value": value}
    _check_same_dtype(input, src)
    return _scatter, (input, src), {"index": idx, "src_index": src_sl}


def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or a number ``value``) written at ``index``
    along ``dim``. Repeated indices keep one of the written values (PyTorch leaves which
    undefined; here the last). ``reduce='add'|'multiply'`` combines instead (no gradient)."""
    op, inputs, params = _scatter_args(input, dim, index, src, value, reduce)
    return apply_op(op, inputs, params)


def scatter_(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Tensor:
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


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``input`` gathered along ``dim`` at ``indices`` (broadcast against each other apart from
    ``dim``); with no ``dim``, over the flattened tensors. PyTorch records it as a gather."""
    ia = indices._data
    if ia.dtype != np.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {_legacy(ia.dtype)}"
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
