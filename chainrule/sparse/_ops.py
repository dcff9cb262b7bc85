"""The ops on sparse COO tensors: products (``torch.sparse.mm``, ``spmm``, ``smm``, ``hspmm``,
``sspaddmm``, ``addmm``), ``sparse.sum``, addition, multiplication, transposition and the
sparse softmax. Each is written with dense ops on the stored indices and values (Note [sparse
tensors hold two dense tensors] in _coo.py), so gradients reach the values and the dense
operands through the dense ops' own VJPs.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from chainrule._creation import zeros as _zeros
from chainrule._dispatch import upper as _upper
from chainrule._tensor import Tensor, _new_tensor
from chainrule.ops import cat, index_add, index_select
from chainrule.sparse._coo import (
    _NOT_RUN,
    SparseTensor,
    _linear,
    _make,
    coalesce,
    not_supported,
    to_dense,
)

__all__ = [
    "sparse_mm",
    "sparse_matmul",
    "sparse_addmm",
    "spmm",
    "smm",
    "hspmm",
    "sspaddmm",
    "dsmm",
    "hsmm",
    "resize_as_sparse_",
    "saddmm",
    "sparse_sum",
    "sparse_add",
    "sparse_mul",
    "sparse_transpose",
    "sparse_softmax",
    "sparse_log_softmax",
]


def _scalar_type(t: Tensor) -> str:
    names = {
        "float32": "Float",
        "float64": "Double",
        "float16": "Half",
        "int64": "Long",
        "int32": "Int",
        "bool": "Bool",
        "bfloat16": "BFloat16",
    }
    return names.get(str(t.dtype).split(".")[-1], str(t.dtype))


def _check_matrix_product(s: SparseTensor, d: Tensor, name: str = "addmm") -> None:
    if not isinstance(d, Tensor):
        raise TypeError(f"mm(): argument 'mat2' must be Tensor, not {type(d).__name__}")
    if s.dim() != 2 or s.sparse_dim() != 2:
        raise RuntimeError(
            f"{name}: matrices expected, got {s.sparse_dim()}D sparse tensor with "
            f"{s.dense_dim()} dense dims"
        )
    if d.dim() != 2:
        raise RuntimeError(f"{name}: matrices expected, got {d.dim()}D tensor")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type(s)} but found {_scalar_type(d)}")
    if d.shape[0] != s.shape[1]:
        raise RuntimeError(
            f"{name}: Argument #3 (dense): Expected dim 0 size {s.shape[1]}, got {d.shape[0]}"
        )


def _spmm(s: SparseTensor, d: Tensor) -> Tensor:
    """sparse (n, m) @ dense (m, p): ``out[r] += v * d[c]`` for each stored (r, c, v)."""
    _check_matrix_product(s, d)
    rows = _new_tensor(s._sp_indices._data[0])
    cols = _new_tensor(s._sp_indices._data[1])
    contrib = s._sp_values.unsqueeze(1) * index_select(d, 0, cols)
    out = _zeros((s.shape[0], d.shape[1]), dtype=d.dtype)
    return index_add(out, 0, rows, contrib)


def _dsmm_right(d: Tensor, s: SparseTensor) -> Tensor:
    """dense (n, m) @ sparse (m, p): ``out[:, c] += d[:, r] * v``."""
    if s.dim() != 2 or s.sparse_dim() != 2 or d.dim() != 2:
        raise RuntimeError("mm: matrices expected")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type(d)} but found {_scalar_type(s)}")
    if d.shape[1] != s.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({d.shape[0]}x{d.shape[1]} and "
            f"{s.shape[0]}x{s.shape[1]})"
        )
    rows = _new_tensor(s._sp_indices._data[0])
    cols = _new_tensor(s._sp_indices._data[1])
    contrib = index_select(d, 1, rows) * s._sp_values.unsqueeze(0)
    out = _zeros((d.shape[0], s.shape[1]), dtype=d.dtype)
    return index_add(out, 1, cols, contrib)


def sparse_mm(mat1: Any, mat2: Any) -> Any:
    """``torch.sparse.mm``: sparse @ dense is dense, sparse @ sparse is sparse (coalesced),
    dense @ sparse is dense. Gradients: to the stored values (masked) and the dense operand.
    A compressed (CSR, CSC) operand goes to chainrule/sparse/_csr_ops.py."""
    if getattr(mat1, "_compressed", False) or getattr(mat2, "_compressed", False):
        return _upper.compressed_mm(mat1, mat2)
    if isinstance(mat1, SparseTensor):
        if isinstance(mat2, SparseTensor):
            from chainrule.sparse._coo import to_sparse

            return to_sparse(_spmm(mat1, to_dense(mat2)))
        return _spmm(mat1, mat2)
    if isinstance(mat2, SparseTensor):
        return _dsmm_right(mat1, mat2)
    raise TypeError("sparse.mm: one of mat1 and mat2 must be a sparse COO tensor")


def sparse_matmul(a: Any, b: Any) -> Any:
    """``matmul``/``@`` with a sparse operand: 2-D @ 2-D as ``sparse_mm``, a dense vector
    as a one-column matrix."""
    if isinstance(b, Tensor) and not isinstance(b, SparseTensor) and b.dim() == 1:
        return sparse_mm(a, b.unsqueeze(1)).squeeze(1)
    if isinstance(a, Tensor) and not isinstance(a, SparseTensor) and a.dim() == 1:
        return sparse_mm(a.unsqueeze(0), b).squeeze(0)
    return sparse_mm(a, b)


spmm = sparse_mm
dsmm = sparse_mm


def sparse_addmm(
    input: Tensor, mat1: SparseTensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` with ``mat1`` sparse (dense result)."""
    if getattr(input, "_compressed", False):
        raise RuntimeError(
            "addmm: computation on CPU is not implemented for SparseCsr + Strided @ Strided"
        )
    prod = sparse_mm(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    if isinstance(input, SparseTensor):
        input = to_dense(input)
    if beta == 0:
        return prod
    return prod + (input * beta if beta != 1 else input)


def _row_blocks(s: SparseTensor, d: Tensor) -> tuple[np.ndarray, Tensor]:
    """The rows of ``s`` holding entries and the rows of ``s @ d`` there."""
    out = _spmm(s, d)
    rows = np.unique(s._sp_indices._data[0])
    return rows, index_select(out, 0, _new_tensor(rows.astype(np.int64)))


def hspmm(mat1: SparseTensor, mat2: Tensor) -> SparseTensor:
    """``torch.hspmm``: sparse @ dense as a hybrid COO tensor (one sparse dim, the rows that
    hold entries; one dense dim)."""
    rows, block = _row_blocks(mat1, mat2)
    size = (mat1.shape[0], mat2.shape[1])
    return _make(_new_tensor(rows[None, :].astype(np.int64)), block, size, False)


def hsmm(mat1: SparseTensor, mat2: Tensor) -> SparseTensor:
    """``torch.hsmm``: ``hspmm`` (PyTorch's alias); a dense ``mat1`` is PyTorch's error."""
    if not isinstance(mat1, SparseTensor):
        raise NotImplementedError(_NOT_RUN.format("hspmm").replace("'SparseCPU'", "'CPU'"))
    return hspmm(mat1, mat2)


def _smm_parts(mat1: SparseTensor, mat2: Tensor) -> tuple[np.ndarray, Tensor]:
    rows, block = _row_blocks(mat1, mat2)
    p = mat2.shape[1]
    idx = np.stack([np.repeat(rows, p), np.tile(np.arange(p), len(rows))]).astype(np.int64)
    return idx, block.reshape(-1)


def smm(input: SparseTensor, mat: Tensor) -> SparseTensor:
    """``torch.smm``: sparse @ dense as a sparse COO tensor holding every column of the rows
    that hold entries."""
    if not isinstance(input, SparseTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    idx, vals = _smm_parts(input, mat)
    return _make(_new_tensor(idx), vals, (input.shape[0], mat.shape[1]), False)


def sspaddmm(
    input: SparseTensor, mat1: SparseTensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> SparseTensor:
    """``torch.sspaddmm``: ``beta * input + alpha * (mat1 @ mat2)`` as a sparse tensor whose
    entries are ``input``'s followed by those of ``smm(mat1, mat2)`` (uncoalesced)."""
    if not isinstance(input, SparseTensor):
        raise RuntimeError("sspaddmm: expected 'self' to be a sparse tensor")
    size = (mat1.shape[0], mat2.shape[1])
    if tuple(input.shape) != size:
        raise RuntimeError(
            f"sspaddmm: Argument #1: Expected dim 0 size {size[0]}, got {input.shape[0]}"
            if input.shape[0] != size[0]
            else f"sspaddmm: Argument #1: Expected dim 1 size {size[1]}, got {input.shape[1]}"
        )
    idx, vals = _smm_parts(mat1, mat2)
    iv = input._sp_values * beta if beta != 1 else input._sp_values
    pv = vals * alpha if alpha != 1 else vals
    indices = np.concatenate([input._sp_indices._data, idx], axis=1)
    return _make(_new_tensor(indices), cat([iv, pv]), size, False)


def saddmm(
    input: SparseTensor, mat1: SparseTensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> SparseTensor:
    """The deprecated ``torch.saddmm``: ``sspaddmm``."""
    return sspaddmm(input, mat1, mat2, beta=beta, alpha=alpha)


def _dims(dim: Any, nd: int) -> list[int]:
    ds = [dim] if isinstance(dim, int) else list(dim)
    out = []
    for d in ds:
        if not -nd <= d < nd:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                f"but got {d})"
            )
        out.append(d % nd)
    return out


def sparse_sum(input: SparseTensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """``torch.sparse.sum``: the sum of all values (a dense 0-d tensor), or over ``dim``: a
    dense tensor when every sparse dim is summed, else a coalesced sparse tensor."""
    if getattr(input, "_compressed", False):  # PyTorch's errors
        if dim is not None:
            raise NotImplementedError(
                _NOT_RUN.format("_indices").replace("'SparseCPU'", "'SparseCsrCPU'")
            )
        raise RuntimeError(
            f"coalesce expected sparse coordinate tensor layout but got {input._data.kind}"
        )
    if not isinstance(input, SparseTensor):
        raise RuntimeError("_sparse_sum: expected a sparse COO tensor")  # pragma: no cover
    v = input._sp_values
    if dtype is not None:
        v = v.to(dtype)
    if dim is None:
        return v.sum()
    dims = _dims(dim, input.dim())
    sd = input.sparse_dim()
    dense = sorted(d - sd + 1 for d in dims if d >= sd)
    if dense:
        v = v.sum(dim=tuple(dense))
    summed = {d for d in dims if d < sd}
    if len(summed) == sd:
        return v.sum(0)
    keep = [d for d in range(sd) if d not in summed]
    shape = tuple(input.shape[d] for d in range(input.dim()) if d not in dims)
    if not summed:
        return coalesce(_make(input._sp_indices, v, shape, False))
    idx = _new_tensor(np.ascontiguousarray(input._sp_indices._data[keep]))
    return coalesce(_make(idx, v, shape, False))


def _is_scalar(x: Any) -> bool:
    return isinstance(x, numbers.Number) or (
        isinstance(x, Tensor) and not isinstance(x, SparseTensor) and x.dim() == 0
    )


def sparse_add(a: Any, b: Any, alpha: Any = 1) -> Any:
    """``a + alpha * b`` with a sparse operand: sparse + sparse is sparse (coalesced when both
    are), dense + sparse is dense; sparse + dense is PyTorch's error. A compressed (CSR,
    CSC) operand goes to chainrule/sparse/_csr_ops.py."""
    if getattr(a, "_compressed", False) or getattr(b, "_compressed", False):
        return _upper.compressed_add(a, b, alpha)
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(
                f"add: expected sizes of 'self' and 'other' to match, but "
                f"{list(a.shape)} != {list(b.shape)}"
            )
        bv = b._sp_values * alpha if alpha != 1 else b._sp_values
        av = a._sp_values
        if av.dtype is not bv.dtype:
            from chainrule.ops import result_type

            dt = result_type(av, bv)
            av, bv = av.to(dt), bv.to(dt)
        idx = np.concatenate([a._sp_indices._data, b._sp_indices._data], axis=1)
        out = _make(_new_tensor(idx), cat([av, bv]), tuple(a.shape), False)
        return coalesce(out) if a._sp_coalesced and b._sp_coalesced else out
    if isinstance(a, SparseTensor):
        if isinstance(b, Tensor) and not _is_scalar(b):
            raise RuntimeError(
                "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
            )
        raise not_supported("add")
    if isinstance(a, Tensor):
        d = to_dense(b)
        return a + (d * alpha if alpha != 1 else d)
    raise not_supported("add")


def sparse_mul(a: SparseTensor, b: Any) -> SparseTensor:
    """``a * b`` with ``a`` sparse: a scalar scales the values; a dense tensor (broadcast to
    ``a``'s shape) is read at the stored indices; a sparse tensor keeps ``a``'s entries where
    ``b`` has one, times ``b``'s (coalesced) value there."""
    shape = tuple(a.shape)
    if _is_scalar(b):
        return _make(a._sp_indices, a._sp_values * b, shape, a._sp_coalesced)
    if isinstance(b, SparseTensor):
        if tuple(b.shape) != shape:
            raise RuntimeError(
                f"mul: expected 'self' and 'other' to have same sizes, but {list(shape)} "
                f"!= {list(b.shape)}"
            )
        bc = coalesce(b)
        sizes = shape[: a.sparse_dim()]
        la = _linear(a._sp_indices._data, sizes)
        lb = _linear(bc._sp_indices._data, sizes)
        pos = np.searchsorted(lb, la)
        pos = np.minimum(pos, max(len(lb) - 1, 0))
        hit = np.nonzero(lb[pos] == la)[0] if len(lb) else np.zeros(0, np.int64)
        keep = _new_tensor(hit.astype(np.int64))
        at = _new_tensor(pos[hit].astype(np.int64))
        vals = index_select(a._sp_values, 0, keep) * index_select(bc._sp_values, 0, at)
        idx = np.ascontiguousarray(a._sp_indices._data[:, hit])
        return _make(_new_tensor(idx), vals, shape, a._sp_coalesced)
    if isinstance(b, Tensor):
        d = b.expand(*shape) if tuple(b.shape) != shape else b
        rows = tuple(_new_tensor(r) for r in a._sp_indices._data)
        return _make(a._sp_indices, a._sp_values * d[rows], shape, False)
    raise not_supported("mul")


def sparse_transpose(input: SparseTensor, dim0: int, dim1: int, name: str = "transpose") -> Any:
    """Swap two sparse dims (rows of the indices) or two dense dims (of the values)."""
    sd, dd = input.sparse_dim(), input.dense_dim()
    if name == "t":
        if sd > 2 or dd != 0:
            raise RuntimeError(
                f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got {sd} "
                f"sparse and {dd} dense dimensions"
            )
        if input.dim() < 2:
            return input
    nd = input.dim()
    d0, d1 = _dims(dim0, nd)[0], _dims(dim1, nd)[0]
    shape = list(input.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    if d0 == d1:
        return input
    if d0 < sd and d1 < sd:
        order = list(range(sd))
        order[d0], order[d1] = order[d1], order[d0]
        idx = np.ascontiguousarray(input._sp_indices._data[order])
        return _make(_new_tensor(idx), input._sp_values, tuple(shape), False)
    if d0 >= sd and d1 >= sd:
        v = input._sp_values.transpose(d0 - sd + 1, d1 - sd + 1)
        return _make(input._sp_indices, v, tuple(shape), input._sp_coalesced)
    raise RuntimeError(
        f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {sd}, "
        f"d0: {d0}, d1: {d1}"
    )


def _softmax_parts(
    input: SparseTensor, dim: int, dtype: Any, name: str = "_sparse_softmax"
) -> tuple[SparseTensor, Tensor, Tensor, Tensor]:
    if getattr(input, "_compressed", False):
        raise NotImplementedError(_NOT_RUN.format(name).replace("'SparseCPU'", "'SparseCsrCPU'"))
    if input.dense_dim() != 0:
        raise NotImplementedError("chainrule: sparse softmax over a hybrid tensor is not supported")
    c = coalesce(input)
    if dtype is not None:
        c = c.to(dtype)
    sd = c.sparse_dim()
    d = _dims(dim, sd)[0]
    idx = c._sp_indices._data
    other = [k for k in range(sd) if k != d]
    key = _linear(idx[other], [c.shape[k] for k in other])
    uniq, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1).astype(np.int64)
    v = c._sp_values
    peak = np.full(len(uniq), -np.inf, dtype=v._data.dtype)
    np.maximum.at(peak, inv, v._data)  # a shift: softmax does not depend on it
    g = _new_tensor(inv)
    z = v - _new_tensor(peak[inv])
    e = z.exp()
    total = index_add(_zeros((len(uniq),), dtype=v.dtype), 0, g, e)
    return c, z, e, index_select(total, 0, g)


def sparse_softmax(input: SparseTensor, dim: int, dtype: Any = None) -> SparseTensor:
    """``torch.sparse.softmax``: softmax along ``dim`` over the stored entries only (missing
    entries count as minus infinity); the result has the coalesced input's pattern."""
    c, _, e, total = _softmax_parts(input, dim, dtype)
    return _make(c._sp_indices, e / total, tuple(c.shape), True)


def sparse_log_softmax(input: SparseTensor, dim: int, dtype: Any = None) -> SparseTensor:
    """``torch.sparse.log_softmax``: ``z - log(sum exp z)`` along ``dim`` over the stored
    entries."""
    c, z, _, total = _softmax_parts(input, dim, dtype, "_sparse_log_softmax")
    return _make(c._sp_indices, z - total.log(), tuple(c.shape), True)


def sparse_sum_keepdim(input: SparseTensor, dim: Any, dtype: Any = None) -> Tensor:
    """``Tensor.sum(dim, keepdim=True)`` of a sparse tensor: ``sparse_sum``, then each summed
    dim put back at size 1 in increasing order, as PyTorch's ``unsqueeze``: a sparse dim (a row
    of zero indices) at a position up to the sparse dims, else a dense one; uncoalesced."""
    out = sparse_sum(input, dim, dtype)
    dims = sorted(set(_dims(dim, input.dim())))
    if not isinstance(out, SparseTensor):
        shape = tuple(1 if d in dims else n for d, n in enumerate(input.shape))
        return out.reshape(shape)
    idx = out._sp_indices._data
    vals = out._sp_values
    shape = list(out.shape)
    for d in dims:
        sd = idx.shape[0]
        if d <= sd:
            idx = np.insert(idx, d, 0, axis=0)
        else:
            vals = vals.unsqueeze(d - sd + 1)
        shape.insert(d, 1)
    return _make(_new_tensor(np.ascontiguousarray(idx)), vals, tuple(shape), False)


def sparse_mask(input: Tensor, mask: SparseTensor) -> SparseTensor:
    """``Tensor.sparse_mask``: ``input`` read at ``mask``'s stored indices, with ``mask``'s
    indices (duplicates each read the whole entry); the gradient to ``input`` is the
    values' gradient at those indices. A compressed ``mask`` goes to _csr_ops.py."""
    if getattr(mask, "_compressed", False):
        return _upper.compressed_sparse_mask(input, mask)
    if not isinstance(mask, SparseTensor):
        raise NotImplementedError(_NOT_RUN.format("sparse_mask").replace("'SparseCPU'", "'CPU'"))
    if tuple(input.shape) != tuple(mask.shape):
        raise RuntimeError(
            "sparse_mask(): operands have incompatible sizes; self has size "
            f"{list(input.shape)} but mask has size {list(mask.shape)}"
        )
    rows = tuple(_new_tensor(r) for r in mask._sp_indices._data)
    vals = input[rows]
    return _make(mask._sp_indices, vals, tuple(mask.shape), mask._sp_coalesced)


_RESIZE_HELP = (
    " on a non-empty sparse tensor is not supported.\nYou could try the following options:\n"
    "1. If you need an empty sparse tensor of this size, call `x = torch.sparse_coo_tensor("
    "size)`.\n2. If you need to resize this tensor, you have the following options:\n"
    "    1. For both sparse and dense dimensions, keep the number of them constant and the "
    "size of them non-shrinking, and then try the same call again.\n"
    "    2. Or, create a new sparse tensor with the correct indices and values from this "
    "sparse tensor."
)


def resize_as_sparse_(input: SparseTensor, the_template: SparseTensor) -> SparseTensor:
    """``torch.resize_as_sparse_``: ``input`` (COO) takes ``the_template``'s size, sparse and
    dense dims in place; a non-empty ``input`` keeps its entries, so its dims' counts stay
    and its sparse sizes may only grow (PyTorch's errors)."""
    if not isinstance(input, SparseTensor) or not isinstance(the_template, SparseTensor):
        kind = "Strided" if not getattr(input, "_sparse", False) else "SparseCsr"
        raise RuntimeError(
            "resize_as_sparse_compressed_: src  expected sparse compressed tensor layout but "
            f"got {'Sparse' if isinstance(the_template, SparseTensor) else kind}"
        )
    sd, dd = the_template.sparse_dim(), the_template.dense_dim()
    shape = tuple(the_template.shape)
    if input._nnz():
        for what, old, new in (
            ("sparse", input.sparse_dim(), sd),
            ("dense", input.dense_dim(), dd),
        ):
            if old != new:
                raise RuntimeError(
                    f"changing the number of {what} dimensions (from {old} to {new})" + _RESIZE_HELP
                )
        old_s, new_s = list(input.shape[:sd]), list(shape[:sd])
        if any(n < o for o, n in zip(old_s, new_s)):
            raise RuntimeError(
                f"shrinking the size of sparse dimensions (from {old_s} to {new_s})" + _RESIZE_HELP
            )
        if tuple(input.shape[sd:]) != shape[sd:]:
            raise NotImplementedError(
                "chainrule: resizing the dense dims of a non-empty sparse tensor is not supported"
            )
    else:
        input._sp_indices = _new_tensor(np.zeros((sd, 0), dtype=np.int64))
        dt = input._sp_values._data.dtype
        input._sp_values = _new_tensor(np.zeros((0,) + shape[sd:], dtype=dt))
    input._data = type(input._data)(shape, input._data.dtype)
    return input
