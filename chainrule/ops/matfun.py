"""The matrix exponential ``matrix_exp`` (a registered op), by scaling and squaring with the
[13/13] Pade approximant (Higham, "The scaling and squaring method for the matrix exponential
revisited", 2005), computed in float64 and rounded to the input's dtype.

VJP: for f = exp, the adjoint of the Frechet derivative at A applied to G is the upper-right
block of exp([[A^T, G], [0, A^T]]) (Najfeld and Havel 1995), which is how PyTorch computes it
too. Under ``create_graph`` that block exponential is itself a recorded ``matrix_exp``, so
double backward works.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule import return_types
from chainrule.backends import backend_of
from chainrule.ops._registry import OpDef, apply_op, defop
from chainrule.ops.complex_numbers import cj

__all__ = ["matrix_exp"]

# Pade [13/13] coefficients b_0..b_13 and the 1-norm bound theta_13 of Higham (2005).
_B = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152


def _expm(xp: Any, a: Any) -> Any:
    """exp of each matrix of a float64 or complex128 array (..., n, n)."""
    n = a.shape[-1]
    if n == 0:
        return a.copy()
    norm = xp.abs(a).sum(axis=-2).max() if a.size else 0.0
    s = max(0, int(math.ceil(math.log2(norm / _THETA13)))) if norm > _THETA13 else 0
    a = a / (2.0**s)
    eye = xp.broadcast_to(xp.eye(n), a.shape)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    b = _B
    u = a @ (
        a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
    )
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = xp.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


@defop(name="matrix_exp", saves=("x",), promote="float", node_name="LinalgMatrixExpBackward0")
def _matrix_exp(xp: Any, x: Any) -> Any:
    return _expm(xp, x.astype(_wide(x))).astype(x.dtype)


def _wide(x: Any) -> Any:
    """The dtype _expm computes in: complex128 for complex x, float64 otherwise."""
    return np.complex128 if x.dtype.kind == "c" else np.float64


@_matrix_exp.vjp
def _matrix_exp_vjp(ctx: Any, g: Any) -> Any:
    x = ctx.x
    n = x.shape[-1]
    if hasattr(g, "_data"):  # create_graph: the block exponential, recorded
        from chainrule._creation import zeros_like
        from chainrule._dispatch import ops

        at = ops.transpose(x, -2, -1).conj() if x.is_complex() else ops.transpose(x, -2, -1)
        top = ops.cat([at, g], -1)
        bottom = ops.cat([zeros_like(at), at], -1)
        big = ops.cat([top, bottom], -2)
        return (matrix_exp(big)[..., :n, n:],)
    xp = backend_of(x).xp
    at = xp.conj(xp.swapaxes(x, -1, -2))
    g = g.astype(at.dtype, copy=False) if g.dtype.kind != at.dtype.kind else g
    top = xp.concatenate([at, g], -1)
    bottom = xp.concatenate([xp.zeros_like(at), at], -1)
    big = xp.concatenate([top, bottom], -2)
    return (_expm(xp, big.astype(_wide(big)))[..., :n, n:].astype(x.dtype),)


def matrix_exp(A: Any) -> Any:
    """The matrix exponential sum_k A^k / k! of each square matrix of ``A`` (..., n, n).

    VJP: the upper-right block of exp([[A^H, G], [0, A^H]]) (real and complex A)."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_exp: The input tensor A must have at least 2 dimensions."
            if A.ndim < 2
            else "linalg.matrix_exp: A must be batches of square matrices, but they "
            f"are {A.shape[-2]} by {A.shape[-1]} matrices"
        )
    if not (A.is_floating_point() or A.is_complex()):
        names = {"int64": "Long", "int32": "Int", "bool": "Bool", "uint8": "Byte"}
        raise RuntimeError(
            f"linalg.matrix_exp: Expected a floating point or complex tensor as "
            f"input. Got {names.get(str(A.dtype).split('.')[-1], A.dtype)}"
        )
    return apply_op(_matrix_exp, (A,))


# QR ------------------------------------------------------------------------------------------


def _qr_fwd(xp: Any, a: Any, *, complete: bool, r_only: bool = False) -> Any:
    q, r = xp.linalg.qr(a, mode="complete" if complete else "reduced")
    q, r = q.astype(a.dtype), r.astype(a.dtype)
    if r_only:
        q = xp.zeros((0,), dtype=a.dtype)
    return q, r


_qr = OpDef(
    "linalg_qr",
    _qr_fwd,
    ("a",),
    saves=("out0", "out1"),
    promote=None,
    num_outputs=2,
    node_name="LinalgQrBackward0",
)


class _Lin:
    """The handful of matrix operations the QR VJP needs, on arrays or (under create_graph)
    on recorded Tensors."""

    def __init__(self, like: Any) -> None:
        self.t = hasattr(like, "_data")
        self.xp: Any = None if self.t else backend_of(like).xp

    def mT(self, x: Any) -> Any:  # noqa: N802
        return x.mT if self.t else self.xp.swapaxes(x, -1, -2)

    def mH(self, x: Any) -> Any:  # noqa: N802
        """The conjugate transpose (the transpose of a real x)."""
        if self.t:
            return x.mH if x.is_complex() else x.mT
        return cj(self.xp.swapaxes(x, -1, -2))

    def triu(self, x: Any, k: int = 0) -> Any:
        return x.triu(k) if self.t else self.xp.triu(x, k)

    def tril(self, x: Any, k: int = 0) -> Any:
        return x.tril(k) if self.t else self.xp.tril(x, k)

    def solve_upper_right(self, b: Any, r: Any) -> Any:
        """X with X R^H = B, R upper triangular: X = (R^-1 B^H)^H."""
        if self.t:
            from chainrule.ops.cholesky import solve_triangular

            return self.mH(solve_triangular(r, self.mH(b), upper=True))
        xp = self.xp
        return self.mH(xp.linalg.solve(r, self.mH(b)))

    def zeros_like(self, x: Any) -> Any:
        if self.t:
            from chainrule._creation import zeros_like

            return zeros_like(x)
        return self.xp.zeros_like(x)

    def cat(self, xs: list[Any], dim: int) -> Any:
        if self.t:
            from chainrule._dispatch import ops

            return ops.cat(xs, dim)
        return self.xp.concatenate(xs, dim)


def _qr_square_vjp(L: _Lin, q: Any, r: Any, gq: Any, gr: Any) -> Any:
    # A = QR with m >= n (Q: m x n), PyTorch's linalg_qr_backward: X = gR R^H - Q^H gQ;
    # gA = (gQ + Q S) R^-H with S = U + U^H, U = triu(X, 1) + diag(X) / 2: the Hermitian
    # matrix with X's strict upper triangle and the real part of X's diagonal (LAPACK's R
    # has a real diagonal, so the imaginary part of diag(X) is no direction of A). For real
    # dtypes S = triu(X) + triu(X, 1)^T.
    x = gr @ L.mH(r) - L.mH(q) @ gq
    u = (L.triu(x) + L.triu(x, 1)) * 0.5
    return L.solve_upper_right(gq + q @ (u + L.mH(u)), r)


@_qr.vjp
def _qr_vjp(ctx: Any, grads: Any) -> Any:
    if ctx.r_only:
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
            "linalg.qr."
        )
    gq, gr = grads
    q, r = ctx.out0, ctx.out1
    m, n = q.shape[-2], r.shape[-1]
    if ctx.complete and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )
    L = _Lin(gq if gq is not None else gr)
    # (the engine fills a missing gradient with zeros for real outputs only)
    gq = L.zeros_like(q) if gq is None else gq
    gr = L.zeros_like(r) if gr is None else gr
    if m >= n:
        return (_qr_square_vjp(L, q, r, gq, gr),)
    # m < n: A = [X | Y] with X = Q U (U: m x m) and V = Q^T Y: gY = Q gV, and X's gradient is
    # the square case's with gQ + Y gV^T for Q's gradient.
    u, gu = r[..., :, :m], gr[..., :, :m]
    gv = gr[..., :, m:]
    y = q @ r[..., :, m:]
    gx = _qr_square_vjp(L, q, u, gq + y @ L.mH(gv), gu)
    return (L.cat([gx, q @ gv], -1),)


def linalg_qr(A: Any, mode: str = "reduced") -> Any:
    """``(Q, R)`` with A = Q R (``torch.linalg.qr``): ``mode="reduced"`` (Q m x k, R k x n,
    k = min(m, n)), ``"complete"`` (Q m x m, R m x n) or ``"r"`` (R only; Q is empty, and a
    backward through it raises, as PyTorch). VJP: see ``qr``."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            "qr received unrecognized mode '" + str(mode) + "' but expected one of "
            "'reduced' (default), 'r', or 'complete'"
        )
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    if not (A.is_floating_point() or A.is_complex()):
        names = {"int64": "Long", "int32": "Int", "bool": "Bool", "uint8": "Byte"}
        raise RuntimeError(
            "linalg.qr: Expected a floating point or complex tensor as input. "
            f"Got {names.get(str(A.dtype).split('.')[-1], A.dtype)}"
        )
    q, r = apply_op(_qr, (A,), {"complete": mode == "complete", "r_only": mode == "r"})
    return return_types.linalg_qr._make_of(q, r)


__all__.append("linalg_qr")


def qr(input: Any, some: bool = True) -> Any:
    """``(Q, R)`` with input = Q R, Q with orthonormal columns and R upper triangular (reduced;
    ``some=False``: Q square). Deprecated in PyTorch for ``linalg.qr`` (warns).

    VJP (m >= n): (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q; wide matrices through
    their leading square block."""
    import warnings

    warnings.warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
        "torch.linalg.qr(A, 'reduced' if some else 'complete')",
        UserWarning,
        stacklevel=2,
    )
    if input.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    if not (input.is_floating_point() or input.is_complex()):
        names = {"int64": "Long", "int32": "Int", "bool": "Bool", "uint8": "Byte"}
        raise RuntimeError(
            "linalg.qr: Expected a floating point or complex tensor as input. "
            f"Got {names.get(str(input.dtype).split('.')[-1], input.dtype)}"
        )
    q, r = apply_op(_qr, (input,), {"complete": not some, "r_only": False})
    return return_types.qr._make_of(q, r)


__all__.append("qr")
