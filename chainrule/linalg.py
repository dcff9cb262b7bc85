"""``torch.linalg``: norms, inverse, determinants, SVD, eigendecompositions, least squares, solves.

The differentiable primitives are registered ops in chainrule/ops/linalg/ (inv, det, slogdet,
svd, solve, eigh, lstsq), chainrule/ops/cholesky.py, chainrule/ops/factorizations.py (LU) and
chainrule/ops/reduction/norms.py (the vector norm); matrix norms, pinv, matrix_rank, cond, the
``*_ex`` variants and tensorinv/tensorsolve are built from them (chainrule/ops/linalg/extra.py);
eig/eigvals are an op too (chainrule/ops/linalg/eig.py), and so are ldl_factor_ex/ldl_solve
(chainrule/ops/linalg/ldl.py, not differentiable, as in PyTorch).
"""

from __future__ import annotations

from typing import Any

from chainrule import return_types
from chainrule._autocast_state import state as _ac
from chainrule.ops import _autocast
from chainrule.ops.cholesky import cholesky, solve_triangular
from chainrule.ops.factorizations import householder_product, lu_factor, lu_factor_ex
from chainrule.ops.factorizations import lu_solve_packed as _lu_solve
from chainrule.ops.factorizations import lu_unpack as _lu_unpack
from chainrule.ops.linalg import (
    LinAlgError,
    linalg_det,
    linalg_inv,
    linalg_slogdet,
    linalg_solve,
    linalg_svd,
    linalg_svdvals,
    matmul,
)
from chainrule.ops.linalg.eig import eig, eigvals
from chainrule.ops.linalg.eigh import eigh, eigvalsh
from chainrule.ops.linalg.extra import (
    cholesky_ex,
    cond,
    cross,
    diagonal,
    inv_ex,
    lstsq,
    matrix_power,
    matrix_rank,
    pinv,
    solve_ex,
    tensorinv,
    tensorsolve,
    vander,
)
from chainrule.ops.linalg.ldl import ldl_factor, ldl_factor_ex, ldl_solve
from chainrule.ops.matfun import linalg_qr as qr
from chainrule.ops.matfun import matrix_exp
from chainrule.ops.reduction import vector_norm_impl
from chainrule.ops.reduction.norms import matrix_norm

__all__ = [
    "norm",
    "vector_norm",
    "matrix_norm",
    "inv",
    "det",
    "slogdet",
    "solve",
    "matmul",
    "vecdot",
    "multi_dot",
    "svd",
    "svdvals",
    "LinAlgError",
    "cholesky",
    "solve_triangular",
    "qr",
    "matrix_exp",
    "lu_factor",
    "lu_factor_ex",
    "lu",
    "lu_solve",
    "householder_product",
    "eigh",
    "eigvalsh",
    "eig",
    "eigvals",
    "pinv",
    "lstsq",
    "matrix_rank",
    "cond",
    "cholesky_ex",
    "inv_ex",
    "solve_ex",
    "matrix_power",
    "vander",
    "cross",
    "diagonal",
    "tensorinv",
    "tensorsolve",
    "ldl_factor",
    "ldl_factor_ex",
    "ldl_solve",
]


def lu(A: Any, *, pivot: bool = True) -> Any:
    """``(P, L, U)`` with A = P L U (partial pivoting): ``lu_factor`` then ``lu_unpack``;
    gradients (square A, real dtypes) flow through both. Singular matrices are accepted."""
    LU, piv, _ = lu_factor_ex(A, pivot=pivot, _name="linalg.lu")
    P, L, U = _lu_unpack(LU, piv)
    return return_types.linalg_lu._make_of(P, L, U)


def lu_solve(LU: Any, pivots: Any, B: Any, *, left: bool = True, adjoint: bool = False) -> Any:
    """The solution X of A X = B (``adjoint``: A^H X = B; ``left=False``: X A = B) for A given
    by ``lu_factor``'s ``(LU, pivots)``; differentiable in LU and B."""
    return _lu_solve(LU, pivots, B, left=left, adjoint=adjoint)


def vector_norm(
    x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Any:
    """The vector ``ord``-norm of ``x`` over ``dim`` (all elements by default): (sum |x|^p)^(1/p),
    max|x| (inf), min|x| (-inf) or the count of non-zeros (0). The gradient at a zero vector is
    0, as in PyTorch."""
    return vector_norm_impl(x, ord, dim, keepdim, dtype, name="linalg.vector_norm")


def norm(
    A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Any:
    """``vector_norm`` when ``dim`` is an int or ``A`` is 1-D (or ``ord`` is None with no
    ``dim``: the 2-norm of all elements); otherwise ``matrix_norm``."""
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if ord is None:
        return vector_norm_impl(A, 2, dim, keepdim, dtype, name="linalg.norm")
    if isinstance(ord, str):
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if (dim is not None and len(dim) == 2) or (dim is None and A._data.ndim == 2):
        if dim is None:
            if A._data.ndim != 2:
                raise RuntimeError(
                    "linalg.norm: If dim is not specified but ord is, the input "
                    f"must be 1D or 2D. Got {A._data.ndim}D."
                )
            dim = (-2, -1)
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if dim is None and A._data.ndim != 1:
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be "
            f"1D or 2D. Got {A._data.ndim}D."
        )
    return vector_norm_impl(A, ord, dim, keepdim, dtype, name="linalg.norm")


def inv(A: Any) -> Any:
    """Inverse of a (batch of) square matrices. VJP: -A^-T g A^-T."""
    if _ac.cpu:  # a float32 op in autocast regions: Note [autocast] in _autocast_state.py
        A = _autocast.fp32_1(A)
    return linalg_inv(A)


def det(A: Any) -> Any:
    """Determinant of a (batch of) square matrices. VJP: g det(A) A^-T."""
    return linalg_det(A)


def slogdet(A: Any) -> Any:
    """``(sign, logabsdet)`` of a (batch of) square matrices. VJP of logabsdet: g A^-T."""
    return linalg_slogdet(A)


def solve(A: Any, B: Any, *, left: bool = True) -> Any:
    """X with A X = B (``left=False``: X A = B). VJP: gB = solve(A^T, g), gA = -gB X^T."""
    if _ac.cpu:  # a float32 op in autocast regions: Note [autocast] in _autocast_state.py
        A, B = _autocast.fp32(A, B)
    return linalg_solve(A, B, left=left)


def vecdot(x: Any, y: Any, *, dim: int = -1) -> Any:
    """Dot product of ``x`` and ``y`` (broadcast) along ``dim``: sum(x * y, dim)."""
    if _ac.cpu:  # a lower-precision op in autocast regions: Note [autocast]
        x, y = _autocast.lower(x, y)
    from chainrule.ops.reduction import sum as _sum

    return _sum(x * y, dim)


def multi_dot(tensors: Any) -> Any:
    """``tensors[0] @ tensors[1] @ ...``; the first may be 1-D (a row vector) and the last 1-D
    (a column vector), the others must be 2-D. Differs from torch: multiplied left to right
    rather than in the cheapest order (same result up to rounding)."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        nd = t._data.ndim
        if (i in (0, n - 1) and nd not in (1, 2)) or (0 < i < n - 1 and nd != 2):
            which = ("first" if i == 0 else "last") if i in (0, n - 1) else None
            if which:
                raise RuntimeError(
                    f"multi_dot(): the {which} tensor must be 1D or 2D but got {nd}D"
                )
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {nd}D")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def svd(A: Any, full_matrices: bool = True) -> Any:
    """``(U, S, Vh)`` with A = U diag(S) Vh. Singular vectors are defined up to sign, so only
    gauge-invariant functions of them have well-defined gradients (as in PyTorch)."""
    if _ac.cpu:  # a float32 op in autocast regions: Note [autocast] in _autocast_state.py
        A = _autocast.fp32_1(A)
    return linalg_svd(A, full_matrices)


def svdvals(A: Any) -> Any:
    """The singular values of A, descending. VJP: U diag(g) Vh."""
    if _ac.cpu:  # a float32 op in autocast regions: Note [autocast] in _autocast_state.py
        A = _autocast.fp32_1(A)
    return linalg_svdvals(A)
