"""Randomized low-rank SVD and PCA (``svd_lowrank``, ``pca_lowrank``: Halko, Martinsson and
Tropp 2009, Algorithm 5.1, as PyTorch's torch/_lowrank.py), and the deprecated torch-level LU
forms ``lu`` and ``lu_solve`` (which warn, as PyTorch). All are compositions of differentiable
ops (matmul, linalg.qr, linalg.svd; ops/factorizations.py), so their gradients come from those.

Differs from torch: the random test matrix comes from chainrule's generator, so the
approximations of a matrix that is not of rank <= q differ from PyTorch's (exactly low-rank
matrices give the same singular values and subspaces).
"""

from __future__ import annotations

import warnings
from typing import Any

from chainrule.ops import factorizations as _fac

__all__ = ["svd_lowrank", "pca_lowrank", "lu", "lu_solve"]


def _ops() -> Any:
    from chainrule._dispatch import ops

    return ops


def _qr_q(x: Any) -> Any:
    return _ops().linalg_qr(x, "reduced")[0]


def _approximate_basis(A: Any, q: int, niter: int, M: Any) -> Any:
    """Q with q orthonormal columns whose span approximates the range of A - M (subspace
    iteration with ``niter`` passes)."""
    from chainrule._creation import randn

    R = randn(A.shape[-1], q, dtype=A.dtype)
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = _qr_q(X)
    for _ in range(niter):
        X = A.mH @ Q
        if M is not None:
            X = X - M.mH @ Q
        Q = _qr_q(X)
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = _qr_q(X)
    return Q


def _svd_lowrank(A: Any, q: int, niter: int, M: Any) -> Any:
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    if m < n:
        A = A.mH
        if M is not None:
            M = M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    from chainrule.ops.linalg import linalg_svd

    U, S, Vh = linalg_svd(B, full_matrices=False)
    V = Vh.mH
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A: Any, q: int | None = 6, niter: int | None = 2, M: Any = None) -> Any:
    """``(U, S, V)`` with A - M ~ U diag(S) V^H, of rank q, by randomized subspace iteration:
    Q spans (A A^H)^niter A R for a Gaussian R (n x q); then the SVD of Q^H A. Gradients flow
    through the composed ops."""
    return _svd_lowrank(A, 6 if q is None else q, 2 if niter is None else niter, M)


def pca_lowrank(A: Any, q: int | None = None, center: bool = True, niter: int = 2) -> Any:
    """``svd_lowrank`` of A with its column means removed (``center``): (U, S, V) with the
    principal directions in V. q defaults to min(6, m, n).

    Raises:
        ValueError: for q outside [0, min(m, n)] or a negative niter, as PyTorch."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter, None)


def lu(A: Any, pivot: bool = True, get_infos: bool = False) -> Any:
    """``(LU, pivots)`` (with ``infos`` when ``get_infos``): linalg.lu_factor_ex's results;
    deprecated in PyTorch (warns)."""
    warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)"
        "\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)",
        UserWarning,
        stacklevel=2,
    )
    LU, piv, info = _fac.lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


def lu_solve(b: Any, LU_data: Any, LU_pivots: Any) -> Any:
    """The solution X of A X = b for A given by ``torch.lu`` (arguments in the old order);
    deprecated in PyTorch (warns)."""
    warnings.warn(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
        "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
        "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
        "torch.linalg.lu_solve(LU, pivots, B)",
        UserWarning,
        stacklevel=2,
    )
    return _fac.lu_solve_packed(LU_data, LU_pivots, b)
