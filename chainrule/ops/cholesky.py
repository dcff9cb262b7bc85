"""The Cholesky factorization and triangular solves, with VJPs written with these ops (so
double backward works). Used by the multivariate normal distributions."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.complex_numbers import cj
from chainrule.ops.linalg import LinAlgError

__all__: list[str] = []  # public through chainrule.linalg


def _mT(x: Any) -> Any:  # noqa: N802
    """The conjugate transpose, which the VJPs use (the transpose of a real matrix), so that
    they are PyTorch's for complex A too (Note [Wirtinger gradients])."""
    return cj(ns.transpose(x, dim0=x.ndim - 1, dim1=x.ndim - 2))


def _triangle(xp: Any, a: Any, upper: bool, unitriangular: bool) -> Any:
    t = xp.triu(a) if upper else xp.tril(a)
    if unitriangular:
        n = a.shape[-1]
        t = t * (1 - xp.eye(n, dtype=a.dtype)) + xp.eye(n, dtype=a.dtype)
    return t


@defop(
    saves=("a", "out"),
    name="linalg_solve_triangular",
    promote="same",
    node_name="LinalgSolveTriangularBackward0",
)
def _solve_tri(xp: Any, a: Any, b: Any, *, upper: bool, left: bool, unitriangular: bool) -> Any:
    t = _triangle(xp, a, upper, unitriangular)
    if left:
        return xp.linalg.solve(t, b)
    # X A = B  <=>  A^T X^T = B^T
    return xp.swapaxes(xp.linalg.solve(xp.swapaxes(t, -1, -2), xp.swapaxes(b, -1, -2)), -1, -2)


@_solve_tri.vjp
def _solve_tri_vjp(ctx: Any, g: Any) -> Any:
    # left: X = A^-1 B, so gB = A^-H g and gA = -gB X^H; right: X = B A^-1, gB = g A^-H and
    # gA = -X^H gB. Only A's referenced triangle (without a unit diagonal) gets a gradient.
    a, x = ctx.a, ctx.out
    kw = {"upper": not ctx.upper, "left": ctx.left, "unitriangular": ctx.unitriangular}
    gb = ns.linalg_solve_triangular(_mT(a), g, **kw)
    ga = None
    if ctx.needs_input_grad[0]:
        ga = -ns.matmul(gb, _mT(x)) if ctx.left else -ns.matmul(_mT(x), gb)
        off = 1 if ctx.unitriangular else 0
        ga = ns.triu(ga, diagonal=off) if ctx.upper else ns.tril(ga, diagonal=-off)
    return ga, gb


def solve_triangular(
    A: Any, B: Any, *, upper: bool, left: bool = True, unitriangular: bool = False
) -> Any:
    """The solution X of A X = B (``left=False``: X A = B) for a triangular A: only its upper
    (``upper=True``) or lower triangle is read, and its diagonal is taken as ones when
    ``unitriangular``. VJP: gB = A^-H g, gA = -gB X^H restricted to that triangle."""
    if A.ndim < 2 or B.ndim < 2:
        raise RuntimeError(
            "linalg.solve_triangular: The input tensor A must have at least 2 dimensions."
            if A.ndim < 2
            else "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."
        )
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            "linalg.solve_triangular: A must be batches of square matrices, but "
            f"they are {A.shape[-2]} by {A.shape[-1]} matrices"
        )
    return apply_op(
        _solve_tri,
        (A, B),
        {"upper": bool(upper), "left": bool(left), "unitriangular": bool(unitriangular)},
    )


def _first_bad_minor(a: np.ndarray) -> int:
    for k in range(1, a.shape[-1] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return a.shape[-1]


@defop(saves=("out",), name="linalg_cholesky", promote=None, node_name="LinalgCholeskyExBackward0")
def _cholesky(xp: Any, a: Any) -> Any:
    try:
        return xp.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        flat = np.asarray(a).reshape((-1,) + a.shape[-2:])
        for i, m in enumerate(flat):
            try:
                np.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                k = _first_bad_minor(m)
                where = f"(Batch element {i}): " if a.ndim > 2 else ""
                raise LinAlgError(
                    f"linalg.cholesky: {where}The factorization could not be completed because "
                    f"the input is not positive-definite (the leading minor of order {k} is not "
                    "positive-definite)."
                ) from None
        raise


@_cholesky.vjp
def _cholesky_vjp(ctx: Any, g: Any) -> Any:
    # A = L L^H: gA = sym(L^-H Phi(L^H gL) L^-1), Phi = the lower triangle with a halved
    # diagonal, sym(S) = (S + S^H) / 2.
    L = ctx.out
    p = ns.matmul(_mT(L), g)
    phi = ns.tril(p, diagonal=0) * 0.5 + ns.tril(p, diagonal=-1) * 0.5
    y = ns.linalg_solve_triangular(L, phi, upper=False, left=False, unitriangular=False)
    s = ns.linalg_solve_triangular(_mT(L), y, upper=True, left=True, unitriangular=False)
    return ((s + _mT(s)) * 0.5,)


def cholesky(A: Any, *, upper: bool = False) -> Any:
    """The Cholesky factor L (lower; ``upper=True``: L^T) of a symmetric positive-definite A,
    A = L L^T. Only A's lower triangle is read, as in PyTorch.

    Raises:
        LinAlgError: when A is not positive-definite, naming the first failing leading minor.
    """
    if A.ndim < 2:
        raise RuntimeError("linalg.cholesky: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            "linalg.cholesky: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    # LAPACK reads the lower triangle only; the gradient is the symmetric one, as PyTorch's.
    L = apply_op(_cholesky, (A,))
    return L.transpose(-1, -2) if upper else L
