"""Sparse compressed tensors (``torch.sparse_csr``, ``sparse_csc``, ``sparse_bsr``,
``sparse_bsc``): the SparseCompressedTensor class, conversions to and from dense and COO, and
PyTorch's repr (docs/sparse.md). The constructors with PyTorch's checks live in
``_csr_build.py``, the ops in ``_csr_ops.py``, the blocked layouts' own code in ``_bsr.py``.

Note [compressed tensors are COO underneath]
    A compressed tensor holds three dense tensors: the compressed indices (``crow_indices``
    of CSR, ``ccol_indices`` of CSC: n + 1 offsets), the plain indices (``col_indices``,
    ``row_indices``: one per stored value) and ``values`` (nnz x the dense dims). Every op
    turns it into the COO tensor with the same ``values`` object (:func:`coo_of`: the rows,
    or columns, are the offsets expanded), runs chainrule/sparse/'s COO op, and compresses the
    result back when it is sparse. Autograd therefore records the COO ops' dense nodes on the
    values, as Note [sparse tensors hold two dense tensors] describes, and no product or sum
    is written twice. A CSR tensor's entries are in row-major order, so its COO form is
    coalesced; a CSC tensor's are in column-major order (COO uncoalesced, as PyTorch's).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from chainrule import _dtype
from chainrule._dispatch import upper as _upper
from chainrule._tensor import Tensor, _new_tensor
from chainrule.ops import index_select
from chainrule.sparse._coo import (
    _NOT_RUN,
    SEEN,
    SparseTensor,
    _inner,
    _make,
    coalesce,
    to_dense,
    to_sparse,
)

__all__ = [
    "SparseCompressedTensor",
    "coo_of",
    "from_coo",
    "to_compressed",
    "layout_name",
    "compressed_not_supported",
    "is_blocked",
]

# PyTorch's names of the layouts in its messages ("... but got SparseCsr").
_NAMES = {
    "strided": "Strided",
    "sparse_coo": "Sparse",
    "sparse_csr": "SparseCsr",
    "sparse_csc": "SparseCsc",
    "sparse_bsr": "SparseBsr",
    "sparse_bsc": "SparseBsc",
}


def layout_name(layout: Any) -> str:
    """PyTorch's C++ name of ``layout`` (``SparseCsr``), as its messages print it."""
    return "none" if layout is None else _NAMES.get(repr(layout).split(".")[-1], repr(layout))


def compressed_not_supported(name: str) -> NotImplementedError:
    """PyTorch's error for an op with no sparse compressed kernel (its first sentence)."""
    return NotImplementedError(_NOT_RUN.format(name).replace("'SparseCPU'", "'SparseCsrCPU'"))


class _CompressedData:
    """The ``_data`` of a compressed tensor: its shape and NumPy dtype, nothing to compute on.
    A dense op that reaches it raises PyTorch's error: elementwise ops (NumPy ufuncs)
    "unsupported tensor layout", others the missing-kernel NotImplementedError."""

    __slots__ = ("shape", "dtype", "kind")

    def __init__(self, shape: tuple[int, ...], dtype: Any, kind: str) -> None:
        self.shape = shape
        self.dtype = dtype
        self.kind = kind

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
        if ufunc.__name__ in ("add", "subtract"):  # dense + compressed: ops.add's fallback
            raise compressed_not_supported(ufunc.__name__)
        raise RuntimeError(f"unsupported tensor layout: {self.kind}")

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        names = {"reshape": "view", "sum": "sum.dim_IntList", "mean": "mean.out"}
        name: str = func.__name__
        raise compressed_not_supported(names.get(name, name))

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"can't convert {self.kind} layout tensor to numpy. Use Tensor.to_dense() first."
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise compressed_not_supported(name)

    def _op(name: str) -> Any:  # type: ignore[misc]  # noqa: N805 - a class-body helper
        def method(self: Any, *args: Any) -> Any:
            if name in ("add", "sub"):
                raise compressed_not_supported(name)
            raise RuntimeError(f"unsupported tensor layout: {self.kind}")

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


def _is_csr(layout: Any) -> bool:
    return layout is _upper.sparse_csr


def _row_major(layout: Any) -> bool:
    """Whether ``layout`` compresses rows (CSR, BSR) rather than columns (CSC, BSC)."""
    return layout is _upper.sparse_csr or layout is _upper.sparse_bsr


def is_blocked(layout: Any) -> bool:
    """Whether ``layout`` stores blocks (BSR, BSC): values nnz x block rows x block cols."""
    return layout is _upper.sparse_bsr or layout is _upper.sparse_bsc


def _names(layout: Any) -> tuple[str, str, str, str, str]:
    """The compressed and plain indices' names, the compressed dim's plural, and the
    names of the compressed and plain dims' sizes, as PyTorch's messages spell them."""
    unit = " blocks" if is_blocked(layout) else "s"
    if _row_major(layout):
        return "crow_indices", "col_indices", "row" + unit, "nrows", "ncols"
    return "ccol_indices", "row_indices", "column" + unit, "ncols", "nrows"


def _make_compressed(
    compressed: Tensor, plain: Tensor, values: Tensor, size: Sequence[int], layout: Any
) -> SparseCompressedTensor:
    """A compressed tensor of trusted parts (internal callers; no checks)."""
    SEEN[0] = True
    t = object.__new__(SparseCompressedTensor)
    kind = layout_name(layout)
    t._data = _CompressedData(tuple(int(k) for k in size), values._data.dtype, kind)
    t._requires_grad = False
    t._vc = None
    t._sp_compressed = compressed
    t._sp_plain = plain
    t._sp_values = values
    t._sp_layout = layout
    return t


def _expand(offsets: np.ndarray) -> np.ndarray:
    """The compressed dim's index of each stored entry: ``i`` repeated ``offsets[i+1] -
    offsets[i]`` times."""
    n = len(offsets) - 1
    return np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets.astype(np.int64)))


def _compress(idx: np.ndarray, n: int) -> np.ndarray:
    """The ``n + 1`` offsets of sorted indices ``idx`` along a dim of size ``n``."""
    counts = np.bincount(idx, minlength=n) if len(idx) else np.zeros(n, dtype=np.int64)
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def coo_of(t: SparseCompressedTensor) -> SparseTensor:
    """The COO tensor of ``t`` with ``t``'s values object (differentiable through them):
    Note [compressed tensors are COO underneath]. A blocked tensor's COO form has one entry
    per element of each block (chainrule/sparse/_bsr.py)."""
    if is_blocked(t._sp_layout):
        return _upper.blocked_coo_of(t)
    outer = _expand(t._sp_compressed._data)
    inner = t._sp_plain._data.astype(np.int64)
    csr = _is_csr(t._sp_layout)
    idx = np.stack([outer, inner] if csr else [inner, outer]) if len(inner) else None
    if idx is None:
        idx = np.zeros((2, 0), dtype=np.int64)
    return _make(_new_tensor(idx), t._sp_values, tuple(t.shape), csr or len(inner) <= 1)


def _from_ordered(idx: np.ndarray, values: Tensor, shape: Sequence[int], layout: Any) -> Any:
    """The compressed tensor of COO indices ``idx`` (2 x nnz) already in ``layout``'s order
    (row-major for CSR, column-major for CSC) and unique."""
    csr = _is_csr(layout)
    outer, inner = (idx[0], idx[1]) if csr else (idx[1], idx[0])
    offsets = _compress(outer, shape[0] if csr else shape[1])
    plain = np.ascontiguousarray(inner, dtype=np.int64)
    return _make_compressed(_new_tensor(offsets), _new_tensor(plain), values, shape, layout)


def from_coo(s: SparseTensor, layout: Any) -> SparseCompressedTensor:
    """The compressed tensor of COO ``s`` (coalesced first; a CSC's values permuted to
    column-major order with a differentiable ``index_select``)."""
    if s.sparse_dim() != 2:
        raise NotImplementedError(
            "chainrule: only sparse compressed tensors with two sparse dims (no batch dims) "
            "are supported"
        )
    c = coalesce(s)
    idx, vals = c._sp_indices._data, c._sp_values
    if not _is_csr(layout) and idx.shape[1] > 1:
        perm = np.lexsort((idx[0], idx[1]))
        if np.any(perm != np.arange(len(perm))):
            idx = idx[:, perm]
            vals = index_select(vals, 0, _new_tensor(perm.astype(np.int64)))
    return _from_ordered(idx, vals, tuple(c.shape), layout)


def to_compressed(x: Tensor, layout: Any, dense_dim: int | None = None) -> Any:
    """``x.to_sparse_csr(dense_dim)`` / ``to_sparse_csc``: from dense (the entries that are not
    zero), COO or the other compressed layout; differentiable in the values."""
    name = "csr" if _is_csr(layout) else "csc"
    if isinstance(x, SparseCompressedTensor) and is_blocked(x._sp_layout):
        raise RuntimeError(
            f"sparse_compressed_to_sparse_{name}: expected SparseCsr or SparseCsc layout but "
            f"got {x._kind()}"
        )
    if isinstance(x, SparseCompressedTensor):
        if x._sp_layout is layout:
            return x
        return from_coo(coo_of(x), layout)
    if isinstance(x, SparseTensor):
        if dense_dim is not None:
            raise RuntimeError(
                f"coo_to_sparse_{name}: conversion from Sparse to Sparse{name.capitalize()} "
                "with dense_dim argument given is not supported"
            )
        return from_coo(x, layout)
    dd = 0 if dense_dim is None else int(dense_dim)
    if x.dim() - dd < 2:
        raise RuntimeError(
            f"to_sparse_{name}: expected a tensor with at least {dd + 2} dims, but got {x.dim()}"
        )
    return from_coo(to_sparse(x, x.dim() - dd), layout)


def _repr(t: SparseCompressedTensor) -> str:
    """PyTorch's repr: the three parts, then size, nnz, dtype, layout and grad suffixes
    wrapped at the line width (``_add_suffixes`` without a forced new line)."""
    from chainrule._formatting import _add_suffixes

    cn, pn = _names(t._sp_layout)[:2]
    pad = " " * 7
    parts = []
    for name, part in ((cn, t._sp_compressed), (pn, t._sp_plain), ("values", t._sp_values)):
        lead = pad + name + "=tensor("
        parts.append(name + "=" + _inner(part, lead)[len(pad + name + "=") :])
    body = "tensor(" + (",\n" + pad).join(parts)
    suffixes = [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
    default = _dtype.get_default_dtype()
    if t.dtype not in (default, _dtype.complex_of(default), _dtype.int64, _dtype.bool):
        suffixes.append(f"dtype={t.dtype!r}")
    suffixes.append(f"layout={t._sp_layout!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(body, suffixes, 7)


class SparseCompressedTensor(Tensor):
    """A tensor in a sparse compressed layout (``torch.sparse_csr`` or ``torch.sparse_csc``):
    compressed indices (n + 1 offsets along rows, or columns), plain indices and values.

    Autograd flows through ``values`` (Note [compressed tensors are COO underneath]).
    """

    __slots__ = ("_sp_compressed", "_sp_plain", "_sp_values", "_sp_layout")
    _sp_compressed: Tensor
    _sp_plain: Tensor
    _sp_values: Tensor
    _sp_layout: Any
    _sparse = True
    _compressed = True

    # layout and structure --------------------------------------------------------------

    @property
    def layout(self) -> Any:
        return self._sp_layout

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_sparse_csr(self) -> bool:
        return _is_csr(self._sp_layout)

    def _kind(self) -> str:
        return layout_name(self._sp_layout)

    def sparse_dim(self) -> int:
        """The number of sparse dims (always 2: no batch dims)."""
        return 2

    def dense_dim(self) -> int:
        """The number of dense dims (trailing dims of each stored value, after a block's)."""
        return self._sp_values.dim() - (3 if is_blocked(self._sp_layout) else 1)

    def _nnz(self) -> int:
        """The number of stored entries (blocks, for BSR and BSC)."""
        return int(self._sp_values.shape[0])

    def _part(self, name: str, csr: bool) -> Tensor:
        if _row_major(self._sp_layout) != csr:
            kind = "row" if csr else "column"
            raise RuntimeError(
                f"{name} expected sparse {kind} compressed tensor layout but got {self._kind()}"
            )
        compressed = name in ("crow_indices", "ccol_indices")
        return (self._sp_compressed if compressed else self._sp_plain).detach()

    def crow_indices(self) -> Tensor:
        """CSR: the ``nrows + 1`` offsets of each row's entries."""
        return self._part("crow_indices", True)

    def col_indices(self) -> Tensor:
        """CSR: the column of each stored value."""
        return self._part("col_indices", True)

    def ccol_indices(self) -> Tensor:
        """CSC: the ``ncols + 1`` offsets of each column's entries."""
        return self._part("ccol_indices", False)

    def row_indices(self) -> Tensor:
        """CSC: the row of each stored value."""
        return self._part("row_indices", False)

    def values(self) -> Tensor:
        """The stored values, differentiable (an alias of them)."""
        return self._sp_values.view_as(self._sp_values)

    def indices(self) -> Tensor:
        raise RuntimeError(
            f"indices expected sparse coordinate tensor layout but got {self._kind()}"
        )

    def is_coalesced(self) -> bool:
        raise RuntimeError(
            f"is_coalesced expected sparse coordinate tensor layout but got {self._kind()}"
        )

    def coalesce(self) -> Any:
        raise RuntimeError(
            f"coalesce expected sparse coordinate tensor layout but got {self._kind()}"
        )

    def _with_values(self, values: Tensor) -> SparseCompressedTensor:
        """This tensor's indices with ``values`` (differentiable in them)."""
        return _make_compressed(
            self._sp_compressed, self._sp_plain, values, self.shape, self._sp_layout
        )

    # conversions -----------------------------------------------------------------------

    def to_dense(self, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
        """The dense tensor; its gradient is the dense gradient read at the stored entries."""
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_csr_to_dense")
        return to_dense(coo_of(self))

    def to_sparse_coo(self) -> SparseTensor:
        """The COO tensor of the same entries (CSR's coalesced, CSC's in column order)."""
        coo = coo_of(self)
        return coo._with_values(coo._sp_values.view_as(coo._sp_values))

    def to_sparse(
        self,
        sparse_dim: int | None = None,
        *,
        layout: Any = None,
        blocksize: Any = None,
        dense_dim: int | None = None,
    ) -> Any:
        """The COO form (the default), or ``layout``'s."""
        if layout is None or layout is _upper.sparse_coo:
            return self.to_sparse_coo()
        if layout in (_upper.sparse_csr, _upper.sparse_csc):
            return to_compressed(self, layout, dense_dim)
        return _upper.to_blocked(self, layout, blocksize, dense_dim)

    def to_sparse_bsr(self, blocksize: Any, dense_dim: int | None = None) -> Any:
        return _upper.to_blocked(self, _upper.sparse_bsr, blocksize, dense_dim)

    def to_sparse_bsc(self, blocksize: Any, dense_dim: int | None = None) -> Any:
        return _upper.to_blocked(self, _upper.sparse_bsc, blocksize, dense_dim)

    def sparse_mask(self, mask: Tensor) -> Any:
        """This tensor's dense form read at ``mask``'s stored entries."""
        return _upper.sparse_mask(self.to_dense(), mask)

    def to_sparse_csr(self, dense_dim: int | None = None) -> Any:
        return to_compressed(self, _upper.sparse_csr, dense_dim)

    def to_sparse_csc(self, dense_dim: int | None = None) -> Any:
        return to_compressed(self, _upper.sparse_csc, dense_dim)

    # autograd ----------------------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:  # type: ignore[override]
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> SparseCompressedTensor:
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
        return None if g is None else self._with_values(g).detach()

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            self._sp_values.grad = None
            return
        if not isinstance(value, Tensor) or tuple(value.shape) != tuple(self.shape):
            raise RuntimeError("assigned grad has data of a different type or size")
        dense = value.detach().to_dense().numpy()
        idx = coo_of(self)._sp_indices._data
        self._sp_values.grad = _new_tensor(np.ascontiguousarray(dense[idx[0], idx[1]]))

    @grad.deleter
    def grad(self) -> None:
        self._sp_values.grad = None

    def detach(self) -> SparseCompressedTensor:
        return self._with_values(self._sp_values.detach())

    def clone(self, *, memory_format: Any = None) -> SparseCompressedTensor:
        return _make_compressed(
            self._sp_compressed.clone(),
            self._sp_plain.clone(),
            self._sp_values.clone(),
            self.shape,
            self._sp_layout,
        )

    def zero_(self) -> SparseCompressedTensor:
        """Drop every stored entry in place (nnz 0), as PyTorch's ``zero_``."""
        dt = self._sp_compressed._data.dtype
        self._sp_compressed = _new_tensor(np.zeros_like(self._sp_compressed._data, dtype=dt))
        self._sp_plain = _new_tensor(np.zeros(0, dtype=dt))
        vals = np.zeros((0,) + tuple(self._sp_values.shape[1:]), dtype=self._sp_values._data.dtype)
        self._sp_values = _new_tensor(vals)
        return self

    def to(self, *args: Any, **kwargs: Any) -> SparseCompressedTensor:
        """A dtype conversion of the values (device moves stay on the CPU)."""
        dt = kwargs.get("dtype")
        for a in args:
            if isinstance(a, _dtype.dtype):
                dt = a
        if dt is None or dt is self.dtype:
            return self
        return self._with_values(self._sp_values.to(dt))

    def double(self) -> SparseCompressedTensor:
        return self.to(_dtype.float64)

    def float(self) -> SparseCompressedTensor:
        return self.to(_dtype.float32)

    def type(self, dtype: Any = None) -> Any:
        raise RuntimeError("Unimplemented backend SparseCsrCPU")

    def numpy(self, force: bool = False) -> np.ndarray:
        raise TypeError(
            f"can't convert {self._kind()} layout tensor to numpy. Use Tensor.to_dense() first."
        )

    def tolist(self) -> Any:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def item(self) -> Any:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def __reduce_ex__(self, proto: Any) -> Any:
        parts = (self._sp_compressed.numpy(), self._sp_plain.numpy())
        vals = self._sp_values.detach().numpy().copy()
        leaf = self.requires_grad and self.is_leaf
        return (_rebuild, (*parts, vals, tuple(self.shape), repr(self._sp_layout), leaf))

    def __deepcopy__(self, memo: dict[int, Any]) -> SparseCompressedTensor:
        out = self.detach().clone()
        if self.requires_grad and self.is_leaf:
            out.requires_grad_(True)
        memo[id(self)] = out
        return out

    def __repr__(self) -> str:
        return _repr(self)

    # the ops of chainrule.sparse._csr_ops, as methods and operators -------------------

    def t(self) -> Any:
        return _upper.compressed_transpose(self, 0, 1, "t")

    def transpose(self, dim0: int, dim1: int) -> Any:
        return _upper.compressed_transpose(self, dim0, dim1, "transpose")

    def mm(self, mat2: Any) -> Any:
        return _upper.sparse_mm(self, mat2)

    def matmul(self, other: Any) -> Any:
        return _upper.sparse_matmul(self, other)

    def __matmul__(self, other: Any) -> Any:
        return _upper.sparse_matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _upper.sparse_matmul(other, self)

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        return _upper.compressed_sum(self, dim, keepdim, dtype)

    def add(self, other: Any, *, alpha: Any = 1) -> Any:
        return _upper.sparse_add(self, other, alpha)

    def __add__(self, other: Any) -> Any:
        return _upper.sparse_add(self, other, 1)

    def __radd__(self, other: Any) -> Any:
        return _upper.sparse_add(other, self, 1)

    def _unsupported(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"unsupported tensor layout: {self._kind()}")

    sub = __sub__ = __rsub__ = div = __truediv__ = __rtruediv__ = _unsupported

    def mul(self, other: Any) -> Any:
        return _upper.compressed_mul(self, other)

    def __mul__(self, other: Any) -> Any:
        return _upper.compressed_mul(self, other)

    def __rmul__(self, other: Any) -> Any:
        return _upper.compressed_mul(self, other)

    def neg(self) -> SparseCompressedTensor:
        return self._with_values(-self._sp_values)

    def __neg__(self) -> SparseCompressedTensor:
        return self.neg()


def _rebuild(
    compressed: np.ndarray,
    plain: np.ndarray,
    values: np.ndarray,
    size: tuple[int, ...],
    layout: str,
    leaf: bool,
) -> SparseCompressedTensor:
    """A pickled compressed tensor (the three parts travel as NumPy arrays)."""
    lay = getattr(_upper, layout.split(".")[-1])
    out = _make_compressed(
        _new_tensor(compressed), _new_tensor(plain), _new_tensor(values), size, lay
    )
    if leaf:
        out.requires_grad_(True)
    return out
