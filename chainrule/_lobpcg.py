"""``torch.lobpcg``: a few extreme eigenpairs of a symmetric (generalized) eigenproblem
``A x = lambda B x`` by the locally optimal block preconditioned conjugate gradient method
(Knyazev, 2001).

Each iteration does a Rayleigh-Ritz step on the span of the current block ``X`` (``n``
columns), the preconditioned residuals ``W = iK (A X - B X Theta)`` and the previous search
directions ``P``: the basis ``S = [X, W, P]`` is made ``B``-orthonormal (directions whose
``B``-Gram eigenvalue is negligible are dropped, which keeps it stable as ``W`` shrinks), the
``n`` extreme eigenpairs of ``S^T A S`` give the new ``X``, and their ``[W, P]`` part the new
``P``. It stops when every one of the ``k`` wanted residual norms is below
``tol * ||A||`` (``tol`` defaults to ``eps ** 0.5`` of the dtype) or after ``niter`` iterations.
The arithmetic is NumPy's, in float64.

Gradient: the eigenvalues are differentiable in ``A`` (and ``B``) by the Hellmann-Feynman
identity ``dE_i = x_i^T (dA - E_i dB) x_i`` (``E`` is computed as ``diag(X^T A X)`` from the
converged, ``B``-orthonormal ``X``); the returned eigenvectors carry no history (differs from
torch, which also differentiates ``X``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule._tensor import Tensor

__all__ = ["lobpcg"]


def _b_orthonormal(S: np.ndarray, B: np.ndarray | None) -> np.ndarray:
    """A ``B``-orthonormal basis of the columns of ``S`` (negligible directions dropped)."""
    BS = S if B is None else B @ S
    G = S.T @ BS
    G = (G + G.T) / 2
    w, V = np.linalg.eigh(G)
    keep = w > max(w.max(), 0.0) * 1e-13
    return S @ (V[:, keep] / np.sqrt(w[keep]))


def _solve(
    A: np.ndarray,
    B: np.ndarray | None,
    X: np.ndarray,
    iK: np.ndarray | None,
    k: int,
    largest: bool,
    niter: int,
    tol: float,
) -> np.ndarray:
    sign = -1.0 if largest else 1.0
    Aop = sign * A
    anorm = max(float(np.linalg.norm(A, 2)), np.finfo(np.float64).tiny)
    n = X.shape[1]
    S = _b_orthonormal(X, B)
    P: np.ndarray | None = None
    for it in range(max(int(niter), 0) + 1):
        H = S.T @ Aop @ S
        theta, C = np.linalg.eigh((H + H.T) / 2)
        C = C[:, :n]
        X = S @ C
        theta = theta[:n]
        if it > 0:
            P = S[:, n:] @ C[n:, :] if S.shape[1] > n else None
        BX = X if B is None else B @ X
        R = Aop @ X - BX * theta
        rnorm = np.linalg.norm(R, axis=0)
        if (rnorm[:k] <= tol * anorm).all() or it == niter:
            break
        W = R if iK is None else iK @ R
        Z = np.concatenate([W] + ([P] if P is not None else []), axis=1)
        BX = X if B is None else B @ X
        for _ in range(2):  # B-orthogonal to X (twice: one pass loses digits)
            Z = Z - X @ (BX.T @ Z)
        S = np.concatenate([X, _b_orthonormal(Z, B)], axis=1)
    return X[:, :k]


def lobpcg(
    A: Tensor,
    k: int | None = None,
    B: Tensor | None = None,
    X: Tensor | None = None,
    n: int | None = None,
    iK: Tensor | None = None,
    niter: int | None = None,
    tol: float | None = None,
    largest: bool | None = None,
    method: str | None = None,
    tracker: Any = None,
    ortho_iparams: dict[str, int] | None = None,
    ortho_fparams: dict[str, float] | None = None,
    ortho_bparams: dict[str, bool] | None = None,
) -> tuple[Tensor, Tensor]:
    """The ``k`` largest (``largest=True``, the default) or smallest eigenvalues ``E`` of the
    symmetric ``A`` (``A x = E B x`` with ``B``) and their ``B``-orthonormal eigenvectors ``X``
    (columns), by LOBPCG (module docstring). ``X`` (``m x n``) is the initial block, random
    when not given; ``iK`` a preconditioner; batches of matrices are solved one by one."""
    if method not in (None, "ortho", "basic"):
        raise ValueError(f"lobpcg: method must be 'ortho' or 'basic', got {method!r}")
    m = A.shape[-1]
    if A.shape[-2] != m:
        raise ValueError(f"A must be square, got {tuple(A.shape)}")
    k = 1 if k is None else int(k)
    n = (k if X is None else X.shape[-1]) if n is None else int(n)
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller "
            f"than 3 x the number of requested eigenpairs (={n})"
        )
    if n < k:
        raise ValueError(f"n (={n}) must be at least k (={k})")
    largest = True if largest is None else bool(largest)
    niter = 1000 if niter is None else int(niter)
    if niter < 0:
        niter = 10**9
    dt = A.dtype
    eps = float(np.finfo(dt.np).eps)
    tol_: float = eps**0.5 if tol is None else float(tol)
    a = np.asarray(A.detach().cpu().numpy(), dtype=np.float64)
    b = None if B is None else np.asarray(B.detach().cpu().numpy(), dtype=np.float64)
    x0 = None if X is None else np.asarray(X.detach().cpu().numpy(), dtype=np.float64)
    ik = None if iK is None else np.asarray(iK.detach().cpu().numpy(), dtype=np.float64)
    batch = a.shape[:-2]
    rng = np.random.default_rng(0)
    vecs = np.empty(batch + (m, k))
    for idx in np.ndindex(*batch):
        start = rng.standard_normal((m, n)) if x0 is None else x0[idx] if x0.ndim > 2 else x0
        bi = None if b is None else (b[idx] if b.ndim > 2 else b)
        vecs[idx] = _solve(a[idx], bi, start, ik, k, largest, niter, tol_)
    # Order the pairs by eigenvalue (largest first when largest=True).
    quot = np.einsum("...ij,...ik->...jk", vecs, a @ vecs).diagonal(axis1=-2, axis2=-1)
    order = np.argsort(-quot if largest else quot, axis=-1)
    vecs = np.take_along_axis(vecs, order[..., None, :], axis=-1)
    Xt = Tensor._wrap(np.ascontiguousarray(vecs).astype(dt.np))
    # E_i = x_i^T A x_i / x_i^T B x_i: differentiable in A and B (Hellmann-Feynman).
    E = (Xt * (A @ Xt)).sum(-2)
    if B is not None:
        E = E / (Xt * (B @ Xt)).sum(-2)
    return E, Xt
