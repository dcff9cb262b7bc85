"""The Hermitian eigendecomposition ``linalg_eigh`` (a registered op) and ``eigvalsh``.

A = V diag(L) V^H with L ascending (real) and V unitary; only the triangle named by ``UPLO``
is read. Eigenvectors are defined up to a sign (a phase for complex A), so only gauge-
invariant functions of V have well-defined gradients, as in PyTorch.

VJP (PyTorch's ``linalg_eig_backward``, Hermitian case): with E_ij = L_j - L_i (1 on the
diagonal) and skew(X) = (X - X^H) / 2,
    gA = V (skew(V^H gV) / E  with its diagonal replaced by gL) V^H.
It is unstable, as PyTorch's, when eigenvalues repeat and gV is non-zero.
"""

from __future__ import annotations

from typing import Any

from chainrule import _kinds, return_types
from chainrule.ops._registry import OpDef, apply_op, ns
from chainrule.ops.linalg._common import _type_name

__all__: list[str] = []  # public through chainrule.linalg


def _eigh_fwd(xp: Any, a: Any, *, UPLO: str) -> Any:  # noqa: N803
    lam, v = xp.linalg.eigh(a, UPLO=UPLO)
    # The factors are kept as aux (constants); under create_graph the VJP recomputes them from
    # the saved input so that they are differentiable (as linalg_svd does).
    n = a.shape[-1]
    return (lam, v), {"eye": xp.eye(n, dtype=lam.dtype), "lam": lam, "v": v}


_eigh = OpDef(
    "linalg_eigh",
    _eigh_fwd,
    ("a",),
    saves=("a",),
    promote=None,
    num_outputs=2,
    aux=True,
    materialize_grads=False,
    node_name="LinalgEighBackward0",
)


def _mH(x: Any, cplx: bool) -> Any:  # noqa: N802
    t = ns.transpose(x, dim0=x.ndim - 1, dim1=x.ndim - 2)
    return ns.conj(t) if cplx else t


@_eigh.vjp
def _eigh_vjp(ctx: Any, g: Any) -> Any:
    gL, gV = g  # noqa: N806
    lam, V = ctx.lam, ctx.v  # noqa: N806
    if hasattr(V, "grad_fn"):  # create_graph: differentiable factors
        lam, V = ns.linalg_eigh(ctx.a, UPLO=ctx.UPLO)  # noqa: N806
    cplx = getattr(V, "_data", V).dtype.kind == "c"
    if gV is None:
        if gL is None:
            return (None,)
        return (ns.matmul(V * ns.unsqueeze(gL, dim=gL.ndim - 1), _mH(V, cplx)),)
    x = ns.matmul(_mH(V, cplx), gV)
    x = (x - _mH(x, cplx)) * 0.5
    e = ns.unsqueeze(lam, dim=lam.ndim - 1) - ns.unsqueeze(lam, dim=lam.ndim) + ctx.eye
    core = x / e
    off = 1.0 - ctx.eye  # the off-diagonal mask
    core = core * off
    if gL is not None:
        core = core + ctx.eye * ns.unsqueeze(gL, dim=gL.ndim - 1)
    if not cplx:
        return (ns.matmul(V, ns.matmul(core, _mH(V, cplx))),)
    # the diagonal of skew(V^H gV) is imaginary; PyTorch keeps it (a phase-dependent loss)
    core = core + x * ctx.eye
    return (ns.matmul(V, ns.matmul(core, _mH(V, cplx))),)


def _check(A: Any, UPLO: str) -> None:  # noqa: N803
    """PyTorch's checks (eigvalsh's messages name linalg.eigh too)."""
    name = "linalg.eigh"
    if not hasattr(A, "_data"):
        raise TypeError(
            f"linalg_eigh(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}"
        )
    nd = A._data.ndim
    if nd < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m != n:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {m} by {n} matrices"
        )
    if not _kinds.is_inexact(A._data):
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{_type_name(A)}'")
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U") or len(UPLO) != 1:
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """``(eigenvalues, eigenvectors)`` of a (batch of) Hermitian matrices, reading the lower
    (``UPLO='L'``) or upper triangle: A = V diag(L) V^H, L ascending. VJP: the module
    docstring."""
    _check(A, UPLO)
    lam, v = apply_op(_eigh, (A,), {"UPLO": UPLO.upper()})
    return return_types.linalg_eigh._make_of(lam, v)


def eigvalsh(A: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """The eigenvalues (ascending, real) of a (batch of) Hermitian matrices. VJP:
    V diag(g) V^H."""
    _check(A, UPLO)
    return apply_op(_eigh, (A,), {"UPLO": UPLO.upper()})[0]
