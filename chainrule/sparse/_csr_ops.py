"""The ops on sparse compressed tensors: products, ``sum``, ``mul``, ``add`` and transposition.
Each runs the COO op on the tensor's COO form and compresses a sparse result back (Note
[compressed tensors are COO underneath] in _csr.py), so gradients reach the values through the
COO ops' dense nodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule._dispatch import upper as _upper
from chainrule._tensor import Tensor, _new_tensor
from chainrule.sparse._coo import SparseTensor, to_dense
from chainrule.sparse._csr import (
    SparseCompressedTensor,
    _from_ordered,
    _is_csr,
    _make_compressed,
    coo_of,
    from_coo,
    is_blocked,
    layout_name,
)
from chainrule.sparse._ops import (
    _dims,
    _is_scalar,
    _scalar_type,
    sparse_add,
    sparse_mask,
    sparse_mm,
    sparse_mul,
    sparse_sum_keepdim,
)

__all__ = [
    "compressed_mm",
    "compressed_sum",
    "compressed_mul",
    "compressed_add",
    "compressed_transpose",
    "compressed_sparse_mask",
]


def _is_compressed(x: Any) -> bool:
    return isinstance(x, SparseCompressedTensor)


def compressed_mm(a: Any, b: Any) -> Any:
    """``a @ b`` with a compressed operand (PyTorch's checks and messages for dense
    matrices): compressed @ dense and dense @ compressed are dense, compressed @ compressed is
    CSR (as PyTorch's); a COO operand with a compressed one is PyTorch's error."""
    for x, nm in ((a, "input"), (b, "mat2")):
        if not isinstance(x, Tensor):
            raise TypeError(f"mm(): argument '{nm}' must be Tensor, not {type(x).__name__}")
    if isinstance(a, SparseTensor) or isinstance(b, SparseTensor):
        raise RuntimeError(
            "addmm: computation on CPU is not implemented for "
            f"{layout_name(a.layout)} + {layout_name(a.layout)} @ {layout_name(b.layout)}"
        )
    if a.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if b.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    for x in (a, b):
        if _is_compressed(x) and x.dense_dim():
            raise RuntimeError("Sparse CSR tensors do not have strides")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type(a)} but found {_scalar_type(b)}")
    ca = coo_of(a) if _is_compressed(a) else a
    cb = coo_of(b) if _is_compressed(b) else b
    out = sparse_mm(ca, cb)
    if isinstance(out, SparseTensor):
        return from_coo(out, _upper.sparse_csr)
    return out


def compressed_sum(t: SparseCompressedTensor, dim: Any, keepdim: bool, dtype: Any) -> Tensor:
    """``Tensor.sum`` of a compressed tensor: all values (a dense 0-d tensor), or over
    ``dim`` with ``keepdim=True`` as a CSR tensor (PyTorch has no other reduction of one)."""
    v = t._sp_values
    if dim is None:
        return (v.to(dtype) if dtype is not None else v).sum()
    if not _is_csr(t.layout):
        raise RuntimeError(
            "Currently the only compressed sparse format supported for sum.dim_IntList is CSR, "
            f"but got layout {layout_name(t.layout)}"
        )
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is unsupported")
    out = sparse_sum_keepdim(coo_of(t), dim, dtype)
    if isinstance(out, SparseTensor):
        return from_coo(out, _upper.sparse_csr)
    # every sparse dim summed: one entry at (0, 0), as PyTorch's
    vals = out.reshape((1,) + tuple(out.shape[2:]))
    one = np.array([0, 1], dtype=np.int64)
    zero = np.zeros(1, dtype=np.int64)
    return _make_compressed(_new_tensor(one), _new_tensor(zero), vals, out.shape, _upper.sparse_csr)


def compressed_mul(a: SparseCompressedTensor, b: Any) -> SparseCompressedTensor:
    """``a * b``: a scalar scales the values; a dense tensor of ``a``'s shape (no broadcasting,
    as PyTorch's) is read at the stored entries; a sparse one keeps ``a``'s entries where it
    has one, times its value there. The result has ``a``'s layout; a CSC ``a`` takes only a
    scalar (PyTorch's error otherwise)."""
    shape = tuple(a.shape)
    if _is_scalar(b):
        return a._with_values(a._sp_values * b)
    if is_blocked(a.layout):
        raise RuntimeError(
            "empty_sparse_compressed expected sparse compressed (non-block) tensor layout but "
            f"got {layout_name(a.layout)}"
        )
    if not _is_csr(a.layout):
        raise RuntimeError("Expected result Tensor to be of format CSR")
    if _is_compressed(b):
        b = coo_of(b)
    elif isinstance(b, Tensor) and not isinstance(b, SparseTensor) and not _is_scalar(b):
        if tuple(b.shape) != shape:
            raise RuntimeError(
                "sparse_mask(): operands have incompatible sizes; self has size "
                f"{list(b.shape)} but mask has size {list(shape)}"
            )
    out = sparse_mul(coo_of(a), b)  # the entries stay in a's order
    return _from_ordered(out._sp_indices._data, out._sp_values, shape, a.layout)


def compressed_add(a: Any, b: Any, alpha: Any = 1) -> Any:
    """``a + alpha * b`` with a compressed operand: two sparse operands give a tensor in
    ``a``'s layout (both CSR or both CSC, as PyTorch's); with a dense one the result is
    dense; a scalar is PyTorch's error."""
    for x, y in ((a, b), (b, a)):
        if _is_scalar(x):
            raise RuntimeError(
                "add: expected 'self' and 'other' to have same size, but self has size [] "
                f"while other has size {list(y.shape)} (FYI: op2-sparse addition does not "
                "currently support broadcasting)"
            )
    if any(_is_compressed(x) and is_blocked(x.layout) for x in (a, b)):
        raise NotImplementedError("chainrule: add of a blocked (BSR, BSC) tensor")
    if _is_compressed(a) and _is_compressed(b) and a.layout is not b.layout:
        raise RuntimeError(
            "crow_indices expected sparse row compressed tensor layout but got SparseCsc"
        )
    sa = coo_of(a) if _is_compressed(a) else a
    sb = coo_of(b) if _is_compressed(b) else b
    if isinstance(sa, SparseTensor) and isinstance(sb, SparseTensor):
        out = sparse_add(sa, sb, alpha)
        return from_coo(out, a.layout if _is_compressed(a) else _upper.sparse_csr)
    da = to_dense(sa) if isinstance(sa, SparseTensor) else sa
    db = to_dense(sb) if isinstance(sb, SparseTensor) else sb
    return da + (db * alpha if alpha != 1 else db)


def compressed_transpose(t: SparseCompressedTensor, dim0: int, dim1: int, name: str) -> Any:
    """Swapping the two sparse dims: CSR becomes CSC over the same three parts (and back);
    the values are an alias, so gradients pass through unchanged."""
    nd = t.dim()
    if name == "t" and nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    d0, d1 = _dims(dim0, nd)[0], _dims(dim1, nd)[0]
    if d0 == d1:
        return t
    if {d0, d1} != {0, 1}:
        raise NotImplementedError(
            "chainrule: transposing a dense dim of a sparse compressed tensor is not supported"
        )
    if is_blocked(t.layout):
        return _upper.blocked_transpose(t)
    shape = (t.shape[1], t.shape[0]) + tuple(t.shape[2:])
    other = _upper.sparse_csc if _is_csr(t.layout) else _upper.sparse_csr
    return _make_compressed(t._sp_compressed, t._sp_plain, t.values(), shape, other)


def compressed_sparse_mask(input: Tensor, mask: SparseCompressedTensor) -> SparseCompressedTensor:
    """``input.sparse_mask(mask)`` with a compressed ``mask``: ``input`` (dense or sparse)
    read at ``mask``'s stored entries, in ``mask``'s layout; differentiable in ``input``."""
    if is_blocked(mask.layout):
        raise NotImplementedError("chainrule: sparse_mask with a blocked (BSR, BSC) mask")
    dense = input.to_dense() if getattr(input, "_sparse", False) else input
    return mask._with_values(sparse_mask(dense, coo_of(mask))._sp_values)
