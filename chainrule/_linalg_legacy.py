"""The older linear-algebra functions of the torch namespace (and their Tensor methods):
``cholesky``, ``cholesky_solve``, ``cholesky_inverse``, ``pinverse``, ``svd`` (U, S, V),
``triangular_solve``, composed from ``chainrule.linalg``'s ops so that their gradients are
those ops' gradients, and the functions PyTorch has removed (``solve``, ``lstsq``,
``symeig``, ``eig``, ``matrix_rank``), which raise PyTorch's RuntimeError naming the
replacement, as PyTorch's do.
"""

from __future__ import annotations

import warnings
from typing import Any

from chainrule import return_types

__all__ = [
    "cholesky",
    "cholesky_solve",
    "cholesky_inverse",
    "pinverse",
    "svd",
    "triangular_solve",
    "solve",
    "lstsq",
    "symeig",
    "eig",
    "matrix_rank",
]

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


def cholesky(input: Any, upper: bool = False) -> Any:
    """The Cholesky factor of a symmetric positive-definite ``input`` = L L^T: L, or L^T
    with ``upper``. Deprecated in PyTorch for ``torch.linalg.cholesky`` (warns)."""
    from chainrule import linalg

    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
        "a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
        "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
        "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results "
        "for all valid (symmetric positive definite) inputs.",
        UserWarning,
        stacklevel=2,
    )
    return linalg.cholesky(input, upper=upper)


def _check_factor(who: str, L: Any) -> None:
    if L.ndim < 2:
        raise RuntimeError(f"{who}: The input tensor A must have at least 2 dimensions.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(
            f"{who}: A must be batches of square matrices, but they are "
            f"{L.shape[-2]} by {L.shape[-1]} matrices"
        )


def cholesky_solve(B: Any, L: Any, upper: bool = False) -> Any:
    """The solution X of A X = B for A = L L^H (``upper``: A = U^H U) given the factor:
    two triangular solves. Gradients come from those solves."""
    from chainrule import linalg

    _check_factor("cholesky_solve", L)
    if B.ndim < 2:
        raise RuntimeError(
            f"b should have at least 2 dimensions, but has {B.ndim} dimensions instead"
        )
    if upper:
        y = linalg.solve_triangular(L.mH, B, upper=False)
        return linalg.solve_triangular(L, y, upper=True)
    y = linalg.solve_triangular(L, B, upper=False)
    return linalg.solve_triangular(L.mH, y, upper=True)


def cholesky_inverse(L: Any, upper: bool = False) -> Any:
    """The inverse of A = L L^H (``upper``: U^H U) from its Cholesky factor."""
    from chainrule._creation import eye

    _check_factor("cholesky_inverse", L)
    return cholesky_solve(
        eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(*L.shape), L, upper
    )


def pinverse(input: Any, rcond: float = 1e-15) -> Any:
    """The Moore-Penrose pseudo-inverse, V diag(1/s) U^H over the singular values s above
    ``rcond`` times the largest (the others count as zero). Gradient through the SVD."""
    from chainrule import linalg, ops

    if input.ndim < 2 or not (input.is_floating_point() or input.is_complex()):
        names = {
            "float32": "Float",
            "float64": "Double",
            "float16": "Half",
            "int64": "Long",
            "int32": "Int",
            "bool": "Bool",
        }
        dt = names.get(str(input.dtype).split(".")[-1], str(input.dtype))
        raise RuntimeError(
            f"linalg.pinv({dt}{{{list(input.shape)}}}): expected a tensor with 2 "
            "or more dimensions of float, double, cfloat or cdouble types"
        )
    U, S, Vh = linalg.svd(input, full_matrices=False)
    if S.shape[-1] == 0:
        return ops.transpose(input, -2, -1) * 0
    cutoff = S.detach().amax(-1, keepdim=True) * rcond
    keep = S.detach() > cutoff
    s_inv = ops.where(keep, 1 / ops.where(keep, S, S.detach() * 0 + 1), S * 0)
    return ops.matmul(Vh.mH * s_inv.unsqueeze(-2), U.mH)


def svd(input: Any, some: bool = True, compute_uv: bool = True) -> Any:
    """``(U, S, V)`` with input = U diag(S) V^T (V, not V^T as ``linalg.svd`` returns);
    ``some=False`` gives the full square U and V. ``compute_uv=False`` returns zero-filled U
    and V of square shapes (PyTorch's convention)."""
    from chainrule import linalg, ops

    if not compute_uv:
        S = linalg.svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        from chainrule._creation import zeros

        # PyTorch's zero-filled U and V are square whatever ``some`` says.
        U = zeros(batch + (m, m), dtype=input.dtype)
        V = zeros(batch + (n, n), dtype=input.dtype)
        return return_types.svd._make_of(U, S, V)
    U, S, Vh = linalg.svd(input, full_matrices=not some)
    return return_types.svd._make_of(U, S, ops.transpose(Vh, -2, -1))


def triangular_solve(
    b: Any, A: Any, upper: bool = True, transpose: bool = False, unitriangular: bool = False
) -> Any:
    """``(X, A.clone())`` with op(A) X = b for the triangular A (its ``upper`` or lower
    triangle; op(A) = A^T with ``transpose``). Deprecated in PyTorch (warns)."""
    from chainrule import linalg

    warnings.warn(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will "
        "be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
        "arguments reversed and does not return a copy of one of the inputs.\nX = "
        "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
        "torch.linalg.solve_triangular(A, B).",
        UserWarning,
        stacklevel=2,
    )
    M = A.mT if transpose else A
    X = linalg.solve_triangular(M, b, upper=(upper != transpose), unitriangular=unitriangular)
    return return_types.triangular_solve._make_of(X, A.clone())


def frobenius_norm(input: Any, dim: Any = (), keepdim: bool = False) -> Any:
    """sqrt(sum(x**2)) over ``dim`` (all dims when empty)."""
    from chainrule import linalg

    dims = tuple(dim) if dim else None
    return linalg.vector_norm(input, 2, dims, keepdim)


def nuclear_norm(input: Any, dim: Any | None = None, keepdim: bool = False) -> Any:
    """The sum of the singular values of the matrices over ``dim`` (the last two by default)."""
    from chainrule import linalg

    return linalg.matrix_norm(input, "nuc", tuple(dim) if dim is not None else (-2, -1), keepdim)


def norm_except_dim(v: Any, pow: float = 2, dim: int = 0) -> Any:
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept, the others of size 1), as
    weight normalisation uses; ``dim=-1`` gives the norm of all of ``v``."""
    from chainrule import linalg

    if dim == -1:
        return linalg.vector_norm(v, pow)
    d = dim if dim >= 0 else dim + v.ndim
    others = tuple(i for i in range(v.ndim) if i != d)
    return linalg.vector_norm(v, pow, others, keepdim=True)


def solve(input: Any, A: Any, *, out: Any = None) -> Any:
    """Removed from PyTorch (1.9): raises its RuntimeError, pointing to ``linalg.solve``."""
    raise RuntimeError(
        _REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the LU "
        "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with "
        "`torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
        "replaced with:\nX = torch.linalg.solve(A, B)"
    )


def lstsq(input: Any, A: Any, *, out: Any = None) -> Any:
    """Removed from PyTorch (1.9): raises its RuntimeError, pointing to ``linalg.lstsq``."""
    raise RuntimeError(
        _REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
        "in the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\nThe returned "
        "solution in `torch.lstsq` stored the residuals of the solution in the last m - n "
        "columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals "
        "are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
        "solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced "
        "with:\nX = torch.linalg.lstsq(A, B).solution"
    )


def symeig(input: Any, eigenvectors: bool = False, upper: bool = True, *, out: Any = None) -> Any:
    """Removed from PyTorch (1.9): raises its RuntimeError, pointing to ``linalg.eigh``."""
    raise RuntimeError(
        _REMOVED + "The default behavior has changed from using the upper triangular portion "
        "of the matrix by default to using the lower triangular portion.\n\nL, _ = "
        "torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, "
        "UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should "
        "be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"
    )


def eig(input: Any, eigenvectors: bool = False, *, out: Any = None) -> Any:
    """Removed from PyTorch (1.9): raises its RuntimeError, pointing to ``linalg.eig``."""
    raise RuntimeError(
        _REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
        "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)"
    )


def matrix_rank(input: Any, tol: Any = None, symmetric: bool = False, *, out: Any = None) -> Any:
    """Removed from PyTorch (1.9): raises its RuntimeError, pointing to
    ``linalg.matrix_rank``."""
    raise RuntimeError(
        _REMOVED.rstrip() + "\nPlease use the `torch.linalg.matrix_rank` function instead. The "
        "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."
    )
