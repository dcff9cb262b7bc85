"""Sparse COO tensors (``torch.sparse_coo``): the SparseTensor class, ``sparse_coo_tensor``,
coalescing, conversion to and from dense, and PyTorch's repr (docs/sparse.md).

This file is over 400 lines because SparseTensor carries the whole method surface that differs
from a dense tensor's (structure, autograd, conversions, the operators), one topic: the layout.

Note [sparse tensors hold two dense tensors]
    A SparseTensor is a Tensor subclass whose state is two dense Tensors: ``indices`` (int64,
    sparse_dim x nnz) and ``values`` (nnz x the dense dims). Every sparse op is written with
    chainrule's dense ops on those two, so autograd records ordinary nodes on the values and
    the engine never meets a sparse tensor. The gradient of a sparse leaf is the gradient of
    its values, shown as a sparse tensor on the leaf's pattern: PyTorch's masked gradient
    (``grad.sparse_mask(leaf)``), since each stored value's derivative is that of the dense
    entry it adds into. ``_data`` is a :class:`_SparseData` placeholder carrying the shape and
    dtype, so the dense Tensor properties read it unchanged; a dense op that reaches it
    (``torch.exp(s)``) fails inside NumPy's dispatch with PyTorch's NotImplementedError, so no
    dense hot path tests for sparsity.
"""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

import numpy as np

from chainrule import _dtype
from chainrule._creation import tensor as _tensor_fn
from chainrule._creation import zeros as _zeros
from chainrule._dispatch import upper as _upper
from chainrule._formatting import tensor_repr
from chainrule._tensor import Tensor, _new_tensor
from chainrule.ops import index_add, index_put

__all__ = ["SparseTensor", "sparse_coo_tensor", "to_sparse", "to_dense", "not_supported"]

_NOT_RUN = (
    "Could not run 'aten::{}' with arguments from the 'SparseCPU' backend. This could be "
    "because the operator doesn't exist for this backend, or was omitted during the "
    "selective/custom build process (if using custom build)."
)
# NumPy's names of the functions dense forwards call, as ATen names its ops.
_ATEN = {
    "multiply": "mul",
    "subtract": "sub",
    "true_divide": "div",
    "divide": "div",
    "negative": "neg",
    "absolute": "abs",
    "power": "pow",
    "reshape": "view",
    "sum": "sum.dim_IntList",
    "mean": "mean.dim",
    "matmul": "mm",
}


def not_supported(name: str) -> NotImplementedError:
    """PyTorch's error for an op that has no sparse kernel."""
    return NotImplementedError(_NOT_RUN.format(_ATEN.get(name, name)))


class _SparseData:
    """The ``_data`` of a SparseTensor: its shape and NumPy dtype, and nothing to compute on
    (Note [sparse tensors hold two dense tensors])."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return int(np.dtype(self.dtype).itemsize)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __array_ufunc__(self, ufunc: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        raise not_supported(ufunc.__name__)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise not_supported(func.__name__)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise not_supported(name)

    def _op(name: str) -> Any:  # type: ignore[misc]  # noqa: N805 - a class-body helper
        def method(self: Any, *args: Any) -> Any:
            raise not_supported(name)

        return method

    __add__ = __radd__ = _op("add")
    __sub__ = __rsub__ = _op("sub")
    __mul__ = __rmul__ = _op("mul")
    __truediv__ = __rtruediv__ = _op("div")
    __pow__ = __rpow__ = _op("pow")
    __matmul__ = __rmatmul__ = _op("mm")
    __neg__ = _op("neg")
    __getitem__ = _op("index")
    __lt__ = __le__ = __gt__ = __ge__ = _op("lt")
    del _op


# Whether a sparse tensor was ever made: optimizers look for sparse gradients only then
# (chainrule/optim/_sparse.py), so dense training pays one list read per step.
SEEN = [False]


def _make(indices: Tensor, values: Tensor, size: tuple[int, ...], coalesced: bool) -> SparseTensor:
    """A SparseTensor of trusted parts (internal callers; no checks)."""
    SEEN[0] = True
    t = object.__new__(SparseTensor)
    t._data = _SparseData(tuple(size), values._data.dtype)
    t._requires_grad = False
    t._vc = None
    t._sp_indices = indices
    t._sp_values = values
    t._sp_coalesced = coalesced
    return t


class SparseTensor(Tensor):
    """A tensor in the sparse COO layout (``torch.sparse_coo``): ``indices`` (sparse_dim x
    nnz, int64) and ``values`` (nnz x dense dims) define ``dense[indices[:, k]] += values[k]``.

    Autograd flows through ``values`` (Note [sparse tensors hold two dense tensors]).
    """

    __slots__ = ("_sp_indices", "_sp_values", "_sp_coalesced")
    _sp_indices: Tensor
    _sp_values: Tensor
    _sp_coalesced: bool
    _sparse = True

    # layout and structure --------------------------------------------------------------

    @property
    def layout(self) -> Any:
        return _upper.sparse_coo

    @property
    def is_sparse(self) -> bool:
        return True

    def sparse_dim(self) -> int:
        """The number of sparse dims (rows of ``indices``)."""
        return int(self._sp_indices.shape[0])

    def dense_dim(self) -> int:
        """The number of dense dims (trailing dims of each stored value)."""
        return self._sp_values.dim() - 1

    def _nnz(self) -> int:
        """The number of stored entries (duplicates counted until coalesced)."""
        return int(self._sp_values.shape[0])

    def is_coalesced(self) -> bool:
        """Whether the indices are sorted and unique (set by ``coalesce``)."""
        return self._sp_coalesced

    def _with_values(self, values: Tensor) -> SparseTensor:
        """This tensor's indices with ``values`` (differentiable in them; gradcheck's
        ``masked=True``)."""
        return _make(self._sp_indices, values, self.shape, self._sp_coalesced)

    def _coalesced_(self, coalesced: bool) -> SparseTensor:
        self._sp_coalesced = bool(coalesced)
        return self

    def indices(self) -> Tensor:
        """The indices of a coalesced tensor (PyTorch refuses an uncoalesced one)."""
        if not self._sp_coalesced:
            raise RuntimeError(
                "Cannot get indices on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._sp_indices.detach()

    def values(self) -> Tensor:
        """The values of a coalesced tensor, differentiable (an alias of the stored values)."""
        if not self._sp_coalesced:
            raise RuntimeError(
                "Cannot get values on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._sp_values.view_as(self._sp_values)

    def _indices(self) -> Tensor:
        """The stored indices, coalesced or not."""
        return self._sp_indices.detach()

    def _values(self) -> Tensor:
        """The stored values, coalesced or not, detached (PyTorch's ``_values``)."""
        return self._sp_values.detach()

    def coalesce(self) -> SparseTensor:
        """Indices sorted and unique, the values of duplicates summed."""
        return coalesce(self)

    def to_dense(self, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
        """The dense tensor: ``out[indices[:, k]] += values[k]``; its gradient is the dense
        gradient read at the stored indices."""
        return to_dense(self, dtype)

    def to_sparse(self, *args: Any, **kwargs: Any) -> SparseTensor:
        """This tensor (already sparse COO)."""
        return to_sparse(self, *args, **kwargs)

    def to_sparse_coo(self) -> SparseTensor:
        return self

    def sparse_mask(self, mask: Tensor) -> Tensor:
        """This tensor's dense form read at ``mask``'s stored indices."""
        return _upper.sparse_mask(to_dense(self), mask)

    # autograd ----------------------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:  # type: ignore[override]
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        self._sp_values.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self) -> Any:  # type: ignore[override]
        return self._sp_values.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._sp_values.grad_fn is None

    @property
    def grad(self) -> Any:  # type: ignore[override]
        g = self._sp_values.grad if self._sp_values.grad_fn is None else None
        if g is None:
            return None
        if self._sp_coalesced:
            return _make(self._sp_indices.detach(), g, self.shape, True)
        # PyTorch masks the gradient with the coalesced pattern: one entry per position,
        # whose derivative every duplicate shares.
        lin = _linear(self._sp_indices._data, self.shape[: self.sparse_dim()])
        _, first = np.unique(lin, return_index=True)
        sel = _new_tensor(first.astype(np.int64))
        return _make(self._sp_indices.detach()[:, sel], g[sel], self.shape, False)

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            self._sp_values.grad = None
            return
        if not isinstance(value, SparseTensor) or value.shape != self.shape:
            raise RuntimeError("assigned grad has data of a different type or size")
        self._sp_values.grad = coalesce_like(value, self)

    @grad.deleter
    def grad(self) -> None:
        self._sp_values.grad = None

    def zero_(self) -> SparseTensor:
        """Drop every stored entry in place (nnz 0, coalesced), as PyTorch's ``zero_``."""
        sd = self.sparse_dim()
        self._sp_indices = _new_tensor(np.zeros((sd, 0), dtype=np.int64))
        vals = np.zeros((0,) + tuple(self._sp_values.shape[1:]), dtype=self._sp_values._data.dtype)
        self._sp_values = _new_tensor(vals)
        self._sp_coalesced = True
        return self

    def detach(self) -> SparseTensor:
        return _make(self._sp_indices, self._sp_values.detach(), self.shape, self._sp_coalesced)

    def clone(self, *, memory_format: Any = None) -> SparseTensor:
        return _make(
            self._sp_indices.clone(), self._sp_values.clone(), self.shape, self._sp_coalesced
        )

    # conversions -----------------------------------------------------------------------

    def to(self, *args: Any, **kwargs: Any) -> SparseTensor:
        """A dtype conversion of the values (device moves stay on the CPU)."""
        dt = kwargs.get("dtype")
        for a in args:
            if isinstance(a, _dtype.dtype):
                dt = a
        if dt is None or dt is self.dtype:
            return self
        return _make(self._sp_indices, self._sp_values.to(dt), self.shape, self._sp_coalesced)

    def double(self) -> SparseTensor:
        return self.to(_dtype.float64)

    def float(self) -> SparseTensor:
        return self.to(_dtype.float32)

    def type(self, dtype: Any = None) -> Any:
        if dtype is None:
            return "torch.sparse." + super().type().split(".")[-1]
        return super().type(dtype)

    def numpy(self, force: bool = False) -> np.ndarray:
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def tolist(self) -> Any:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def item(self) -> Any:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def __reduce_ex__(self, proto: Any) -> Any:
        parts = (self._sp_indices.numpy(), self._sp_values.detach().numpy().copy())
        leaf = self.requires_grad and self.is_leaf
        return (_rebuild, (*parts, tuple(self.shape), self._sp_coalesced, leaf))

    def __deepcopy__(self, memo: dict[int, Any]) -> SparseTensor:
        out = self.detach().clone()
        if self.requires_grad and self.is_leaf:
            out.requires_grad_(True)
        memo[id(self)] = out
        return out

    def __repr__(self) -> str:
        return _repr(self)

    # the ops of chainrule.sparse._ops, as methods and operators -----------------------

    def t(self) -> SparseTensor:
        return _upper.sparse_transpose(self, 0, 1, "t")

    def transpose(self, dim0: int, dim1: int) -> SparseTensor:
        return _upper.sparse_transpose(self, dim0, dim1, "transpose")

    def mm(self, mat2: Any) -> Any:
        return _upper.sparse_mm(self, mat2)

    def matmul(self, other: Any) -> Any:
        return _upper.sparse_matmul(self, other)

    def __matmul__(self, other: Any) -> Any:
        return _upper.sparse_matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _upper.sparse_matmul(other, self)

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        if keepdim:
            if dim is None:
                raise not_supported("sum")
            return _upper.sparse_sum_keepdim(self, dim, dtype=dtype)
        return _upper.sparse_sum(self, dim, dtype=dtype)

    def add(self, other: Any, *, alpha: Any = 1) -> Any:
        return _upper.sparse_add(self, other, alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Any:
        return _upper.sparse_add(self, other, -alpha)

    def mul(self, other: Any) -> Any:
        return _upper.sparse_mul(self, other)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Any:
        if rounding_mode is not None or isinstance(other, Tensor) and other.dim() > 0:
            raise not_supported("div")
        return _upper.sparse_mul(self, 1 / other if not isinstance(other, Tensor) else 1 / other)

    def neg(self) -> SparseTensor:
        return _make(self._sp_indices, -self._sp_values, self.shape, self._sp_coalesced)

    def __add__(self, other: Any) -> Any:
        return _upper.sparse_add(self, other, 1)

    def __radd__(self, other: Any) -> Any:
        return _upper.sparse_add(other, self, 1)

    def __sub__(self, other: Any) -> Any:
        return _upper.sparse_add(self, other, -1)

    def __rsub__(self, other: Any) -> Any:
        return _upper.sparse_add(other, self, -1)

    def __mul__(self, other: Any) -> Any:
        return _upper.sparse_mul(self, other)

    def __rmul__(self, other: Any) -> Any:
        return _upper.sparse_mul(self, other)

    def __truediv__(self, other: Any) -> Any:
        return self.div(other)

    def __neg__(self) -> SparseTensor:
        return self.neg()


def _rebuild(
    indices: np.ndarray, values: np.ndarray, size: tuple[int, ...], coalesced: bool, leaf: bool
) -> SparseTensor:
    """A pickled SparseTensor (the two parts travel as NumPy arrays)."""
    out = _make(_new_tensor(indices), _new_tensor(values), size, coalesced)
    if leaf:
        out.requires_grad_(True)
    return out


def _linear(idx: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Each column of ``idx`` as one row-major position in ``sizes``."""
    if idx.shape[0] == 0:
        return np.zeros(idx.shape[1], dtype=np.int64)
    return np.asarray(np.ravel_multi_index(tuple(idx), tuple(sizes)), dtype=np.int64)


def coalesce(s: SparseTensor) -> SparseTensor:
    """``s`` with its indices sorted and unique and the values of duplicates summed (one
    ``index_add`` on the values: the gradient of each stored value is that of its sum)."""
    if s._sp_coalesced:
        return s
    sd = s.sparse_dim()
    sizes = tuple(s.shape[:sd])
    lin = _linear(s._sp_indices._data, sizes)
    uniq, inverse = np.unique(lin, return_inverse=True)
    idx = np.stack(np.unravel_index(uniq, sizes)).astype(np.int64) if sd else lin[None, :0]
    idx = idx.reshape(sd, len(uniq))
    v = s._sp_values
    out = _zeros((len(uniq),) + tuple(v.shape[1:]), dtype=v.dtype)
    vals = index_add(out, 0, _new_tensor(inverse.reshape(-1).astype(np.int64)), v)
    return _make(_new_tensor(idx), vals, s.shape, True)


def coalesce_like(g: SparseTensor, like: SparseTensor) -> Tensor:
    """The values of ``g`` laid out on ``like``'s stored entries (a gradient assigned to a
    sparse leaf): each entry gets the value at its position, zero where ``g`` has none."""
    sd = like.sparse_dim()
    dense = g.detach().to_dense().numpy()
    vals = dense[tuple(like._sp_indices._data)] if sd else dense[None]
    return _new_tensor(np.ascontiguousarray(vals))


def to_dense(s: SparseTensor, dtype: Any = None) -> Tensor:
    """``out[indices[:, k]] += values[k]`` as one accumulating ``index_put`` on zeros."""
    if dtype is not None:
        raise RuntimeError("dtype argument is not supported by sparse_to_dense")
    v = s._sp_values
    out = _zeros(tuple(s.shape), dtype=v.dtype)
    rows = tuple(_new_tensor(r) for r in s._sp_indices._data)
    return index_put(out, rows, v, accumulate=True)


def to_sparse(
    x: Tensor,
    sparse_dim: int | None = None,
    *,
    layout: Any = None,
    blocksize: Any = None,
    dense_dim: int | None = None,
) -> Any:
    """The entries of dense ``x`` that are not zero, as a coalesced COO tensor whose first
    ``sparse_dim`` dims (all by default) are sparse; its values are ``x`` read at those
    indices, so the gradient to ``x`` is the dense form of the values' gradient."""
    if layout in (_upper.sparse_csr, _upper.sparse_csc):  # chainrule/sparse/_csr.py
        return _upper.to_compressed(x, layout, dense_dim)
    if layout in (_upper.sparse_bsr, _upper.sparse_bsc):  # chainrule/sparse/_bsr.py
        return _upper.to_blocked(x, layout, blocksize, dense_dim)
    if layout is not None and layout is not _upper.sparse_coo:
        raise NotImplementedError(
            f"to_sparse: conversion to {layout} is not supported by chainrule"
        )
    if blocksize is not None:
        raise RuntimeError(
            "to_sparse for Strided to SparseCoo conversion does not use specified blocksize"
        )
    if isinstance(x, SparseTensor):
        if sparse_dim is not None and sparse_dim != x.sparse_dim():
            raise RuntimeError(
                "to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
                "!=self.sparse_dim() is not supported"
            )
        return x
    nd = x.dim()
    if sparse_dim is None:
        sparse_dim = nd - (dense_dim or 0)
    if not 0 < sparse_dim <= nd if nd else sparse_dim != 0:
        raise RuntimeError(
            f"sparse_dim argument must be in [0,{nd}] range, but {sparse_dim} is given"
        )
    a = np.asarray(x.detach().numpy())
    mask = a != 0
    if sparse_dim < nd:
        mask = mask.any(axis=tuple(range(sparse_dim, nd)))
    where = np.nonzero(mask)
    idx = np.stack(where).astype(np.int64) if where else np.zeros((0, 1), np.int64)
    idx = idx.reshape(sparse_dim, -1)
    if sparse_dim == 0:
        values = x.unsqueeze(0)
    else:
        values = x[tuple(_new_tensor(r) for r in idx)]
    return _make(_new_tensor(idx), values, tuple(x.shape), True)


def _as_tensor(data: Any, dtype: Any = None) -> Tensor:
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    return _tensor_fn(data, dtype=dtype)


def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: Sequence[int] | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> SparseTensor:
    """A sparse COO tensor with ``indices`` (sparse_dim x nnz) and ``values`` (nnz x dense
    dims): ``dense[indices[:, k]] += values[k]``. ``size`` defaults to the smallest that
    holds the indices. chainrule always checks the invariants (indices within ``size``).
    Differentiable in ``values``; with ``requires_grad=True`` the result is a leaf."""
    if device is not None and str(device) != "cpu":
        raise NotImplementedError("chainrule: sparse tensors live on the CPU only")
    idx_t = _as_tensor(indices)
    val_t = _as_tensor(values, dtype)
    if idx_t.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx_t.shape)}")
    idx = np.asarray(idx_t.detach().numpy())
    if idx.dtype != np.int64:
        idx = idx.astype(np.int64)
    sd, nnz = idx.shape
    if val_t.dim() == 0:
        raise RuntimeError("values must have at least one dimension")  # pragma: no cover
    if val_t.shape[0] != nnz:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: {nnz}, "
            f"nnz from values: {val_t.shape[0]}"
        )
    dense_shape = tuple(val_t.shape[1:])
    if size is None:
        sparse_sizes = tuple(int(m) + 1 for m in idx.max(axis=1)) if nnz else (0,) * sd
        shape = sparse_sizes + dense_shape
    else:
        shape = tuple(int(k) for k in size)
        if len(shape) != sd + len(dense_shape):
            raise RuntimeError(
                "'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                f"{len(shape)}, sparse_dim = {sd}, dense_dim = {len(dense_shape)}"
            )
        if shape[sd:] != dense_shape:
            raise RuntimeError(
                f"values has incorrect size, expected {list((nnz,) + shape[sd:])}, "
                f"got {list(val_t.shape)}"
            )
    if nnz:
        _check_bounds(idx, shape)
    if requires_grad:
        v = val_t.detach().requires_grad_(True)
    elif val_t.requires_grad:
        v = val_t.view_as(val_t)
    else:
        v = val_t
    return _make(_new_tensor(idx), v, shape, bool(is_coalesced) or nnz <= 1)


def _check_bounds(idx: np.ndarray, shape: tuple[int, ...]) -> None:
    """PyTorch's invariant checks: every index within its dim's size."""
    lo, hi = idx.min(axis=1), idx.max(axis=1)
    for d in range(idx.shape[0]):
        if lo[d] < 0:
            raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
    for d in range(idx.shape[0]):
        if hi[d] >= shape[d]:
            raise RuntimeError(
                f"size is inconsistent with indices: for dim {d}, size is {shape[d]} but "
                f"found index {hi[d]}"
            )


_DTYPE_SUFFIX = re.compile(r",\s*dtype=(torch|chainrule)\.\w+\)$")


def _inner(t: Tensor, prefix: str) -> str:
    """A part's repr in the sparse repr: PyTorch prints empty parts with their size and no
    part's dtype (the sparse tensor's dtype closes the repr)."""
    if t.numel() == 0:
        return f"{prefix}[], size={tuple(t.shape)})"
    return _DTYPE_SUFFIX.sub(")", tensor_repr(t.detach(), prefix))


def _repr(s: SparseTensor) -> str:
    ind = _inner(s._sp_indices, "tensor(indices=tensor(")[len("tensor(indices=") :]
    val = _inner(s._sp_values, "       values=tensor(")[len("       values=") :]
    tail = f"size={tuple(s.shape)}, nnz={s._nnz()}"
    if s.dtype is not _dtype.get_default_dtype():
        tail += f", dtype={s.dtype!r}"
    tail += ", layout=torch.sparse_coo"
    if s.grad_fn is not None:
        tail += f",\n       grad_fn=<{s.grad_fn.name()}>"
    elif s.requires_grad:
        tail += ", requires_grad=True"
    return f"tensor(indices={ind},\n       values={val},\n       {tail})"
