"""``torch.sparse``: sparse COO tensors and their ops (docs/sparse.md).

``_coo.py`` holds the SparseTensor class (indices and values, two dense tensors: Note [sparse
tensors hold two dense tensors]), construction, coalescing and conversion; ``_ops.py`` the
products, sums, arithmetic, transposition and softmax. The compressed layouts (CSR, CSC) are
``_csr.py`` (the SparseCompressedTensor class, conversions), ``_csr_build.py`` (constructors)
and ``_csr_ops.py`` (their ops, run on the COO form). The ``torch.*`` names
(``sparse_coo_tensor``, ``spmm``, ``smm``, ``hspmm``, ``sspaddmm``, ``dsmm``, ``saddmm``) are
loaded from here on first use by ``chainrule/__init__.py``.
"""

from __future__ import annotations

from typing import Any

from chainrule._tensor import Tensor
from chainrule.sparse._coo import SparseTensor, sparse_coo_tensor
from chainrule.sparse._ops import (
    sparse_addmm,
    sparse_log_softmax,
    sparse_mm,
    sparse_softmax,
    sparse_sum,
)

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "SparseTensor", "sparse_coo_tensor"]


def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``torch.sparse.mm``: the matrix product with a sparse (COO, CSR, CSC) operand. Sparse @
    dense and dense @ sparse give a dense tensor, sparse @ sparse a sparse one; gradients reach
    the sparse operand's values (on its pattern) and the dense operand."""
    return sparse_mm(mat1, mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1.0, alpha: Any = 1.0) -> Tensor:
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)``, ``mat1`` sparse."""
    return sparse_addmm(mat, mat1, mat2, beta=beta, alpha=alpha)  # type: ignore[arg-type]


def sum(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:  # noqa: A001 - torch's name
    """``torch.sparse.sum``: all values summed (dense 0-d), or the sum over ``dim``: dense
    when every sparse dim is summed, else sparse (coalesced)."""
    return sparse_sum(input, dim, dtype)  # type: ignore[arg-type]


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``torch.sparse.softmax``: softmax along ``dim`` over the stored entries only."""
    return sparse_softmax(input, dim, dtype)  # type: ignore[arg-type]


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``torch.sparse.log_softmax``: log of ``softmax`` along ``dim``, stored entries only."""
    return sparse_log_softmax(input, dim, dtype)  # type: ignore[arg-type]
