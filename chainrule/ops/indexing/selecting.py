"""Selecting along a dim or by a mask: index_select, index_add/index_add_, masked_fill/
masked_fill_ and masked_select."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule._scalar_convert import checked_scalar, complex_scalar_value
from chainrule._tensor import Tensor
from chainrule.ops._registry import OpDef, apply_op, defop, ns
from chainrule.ops.indexing._common import _legacy, scatter_add_into
from chainrule.ops.indexing.gather_scatter import _check_bounds, _host, _wrap
from chainrule.ops.indexing.subscript import _getitem_fwd, _getitem_vjp
from chainrule.ops.views import apply_inplace

__all__ = [
    "index_add_",
    "masked_fill_",
    "index_select",
    "index_add",
    "masked_fill",
    "masked_select",
]


# index_select / index_add ---------------------------------------------------------------------


def _dim_index(input: Tensor, dim: int, index: Any, who: str) -> tuple[int, Any, int]:
    """``dim`` wrapped, the index array (a vector) and the size of ``input`` along ``dim``."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{who}(): argument 'index' must be Tensor, not {type(index).__name__}")
    ia = index._data
    if ia.ndim > 1:
        raise IndexError(f"{who}(): Index is supposed to be a vector")
    nd = input._data.ndim
    d = _wrap(dim, nd)
    n = input._data.shape[d] if nd else 1
    return d, ia, n


_index_select = OpDef(
    "index_select", _getitem_fwd, ("x",), promote=None, node_name="IndexSelectBackward0"
)
_index_select.vjp(_getitem_vjp)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` along ``dim`` at the positions in 1-D ``index`` (a copy).
    VJP: g scatter-added into zeros at those positions."""
    d, ia, n = _dim_index(input, dim, index, "index_select")
    if not _kinds.is_integral(ia):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    h = _host(index)
    bad = h[(h < 0) | (h >= n)]
    if bad.size:
        # PyTorch's CPU kernels word this differently along dim 0 and along other dims.
        if d == 0:
            raise IndexError("index out of range in self")
        raise RuntimeError(
            f"INDICES element is out of DATA bounds, id={int(bad.flat[0])} axis_dim={n}"
        )
    if input._data.ndim == 0:
        if ia.size != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got {ia.size} value(s)"
            )
        from chainrule.ops.shape import reshape

        out = apply_op(
            _index_select, (reshape(input, (1,)),), {"index": (ia.reshape(-1).astype(np.intp),)}
        )
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


def _index_add_args(
    input: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any
) -> dict[str, Any]:
    d, ia, n = _dim_index(input, dim, index, "index_add_")
    if not _kinds.is_integral(ia):
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
    if type(alpha) is complex:  # PyTorch's error for an imaginary part on a real input
        alpha = complex_scalar_value(alpha, input._data.dtype)
    elif (type(alpha) is float or type(alpha) is int) and alpha != 1:  # its range check
        alpha = checked_scalar(alpha, input._data.dtype)
    return {"index": idx, "alpha": alpha}


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim``."""
    return apply_op(_index_add, (input, source), _index_add_args(input, dim, index, source, alpha))


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """In-place :func:`index_add`."""
    return apply_inplace(
        _index_add, input, (source,), _index_add_args(input, dim, index, source, alpha)
    )


# masks ----------------------------------------------------------------------------------------


def _masked_fill_fwd(xp: Any, x: Any, v: Any, *, mask: Any) -> Any:
    return xp.where(mask, v, x).astype(x.dtype, copy=False)


def _masked_fill_vjp(ctx: Any, g: Any) -> Any:
    nx, nv = ctx.needs_input_grad
    kept = ns.masked_fill(g, 0, mask=ctx.mask)
    return (kept if nx else None, ns.sum(g - kept, dim=None, keepdim=False) if nv else None)


_masked_fill = OpDef("masked_fill", _masked_fill_fwd, ("x", "v"), promote=None)
_masked_fill.vjp(_masked_fill_vjp)
_masked_fill_t = OpDef(
    "masked_fill_tensor",
    _masked_fill_fwd,
    ("x", "v"),
    promote=None,
    node_name="MaskedFillBackward1",
)
_masked_fill_t.vjp(_masked_fill_vjp)


def _masked_fill_args(input: Tensor, mask: Tensor, value: Any) -> tuple[OpDef, Any]:
    if not isinstance(mask, Tensor) or not _kinds.is_bool(mask._data):
        dt = mask._data.dtype.name if isinstance(mask, Tensor) else type(mask).__name__
        dt = {"float32": "float", "float64": "double", "int64": "long"}.get(dt, dt)
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {dt}"
        )
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        if _kinds.is_complex(value._data) and _kinds.category(input._data) in (1, 2):
            # PyTorch converts the value tensor to a Scalar first: a nonzero imaginary part
            # raises, a zero one stores the real part (without the cast's warning)
            complex_scalar_value(complex(value.item()), input._data.dtype)
            value = value.real
        elif value._data.dtype != input._data.dtype and _kinds.category(value._data) in (1, 2):
            # the value tensor is read as a number too, with the range check (Note [checked
            # scalar conversion] in _scalar_convert.py): float64 1e300 into float32 raises
            checked_scalar(value.item(), input._data.dtype)
        return _masked_fill_t, value
    tv = type(value)
    if tv is float or tv is int:  # PyTorch's range check (Note [checked scalar conversion])
        value = checked_scalar(value, input._data.dtype)
    elif tv is complex:
        value = complex_scalar_value(value, input._data.dtype)
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
    if not isinstance(mask, Tensor) or not _kinds.is_bool(mask._data):
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    xp = input._backend.xp
    shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
    return apply_op(_masked_select, (input,), {"mask": xp.broadcast_to(mask._data, shape)})
