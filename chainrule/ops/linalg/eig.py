"""The general eigendecomposition ``linalg_eig`` (a registered op) and ``eigvals``.

A V = V diag(L) with complex L and V (complex64 for float32 or complex64 input, complex128
otherwise), each eigenvector of unit norm: LAPACK's geev (through NumPy, on the host). V is
defined up to a complex phase per column, so only phase-invariant functions of V have
well-defined gradients, as in PyTorch.

VJP (PyTorch's ``linalg_eig_backward``): with X = V^H gV projected,
X <- X - V^H V diag(Re diag(X)), E_ij = conj(L_j) - conj(L_i) (1 on the diagonal),
    gA = V^-H (X / E with its diagonal replaced by gL) V^H,
the real part for a real A. Under create_graph the VJP recomputes L and V from the saved A
with a differentiable eig, so second derivatives are right (gradgradcheck in the op table).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _kinds, return_types
from chainrule.ops._registry import OpDef, apply_op, ns
from chainrule.ops.linalg._common import _type_name

__all__: list[str] = []  # public through chainrule.linalg


def _eig_fwd(xp: Any, a: Any) -> Any:
    host = np.asarray(a) if xp is np else xp.asnumpy(a)
    cdt = np.complex64 if host.dtype in (np.float32, np.complex64) else np.complex128
    if host.size == 0:
        lam = np.zeros(host.shape[:-1], cdt)
        v = np.zeros(host.shape, cdt)
    else:
        lam, v = np.linalg.eig(host)
        lam, v = lam.astype(cdt), v.astype(cdt)
    n = host.shape[-1]
    eye = np.eye(n, dtype=cdt)
    out = (lam, v)
    if xp is not np:
        out = tuple(xp.asarray(o) for o in out)
        eye = xp.asarray(eye)
    # the factors are what a first-order VJP reads; A is saved too (unlike PyTorch, which
    # saves only L and V) for create_graph, where the VJP recomputes differentiable factors
    return out, {"eye": eye, "lam": out[0], "v": out[1], "real_in": not np.iscomplexobj(host)}


_eig = OpDef(
    "linalg_eig",
    _eig_fwd,
    ("a",),
    saves=("a",),
    promote=None,
    num_outputs=2,
    aux=True,
    materialize_grads=False,
    node_name="LinalgEigBackward0",
)


def _mH(x: Any) -> Any:  # noqa: N802
    return ns.conj(ns.transpose(x, dim0=x.ndim - 1, dim1=x.ndim - 2))


@_eig.vjp
def _eig_vjp(ctx: Any, g: Any) -> Any:
    gL, gV = g  # noqa: N806
    lam, V = ctx.lam, ctx.v  # noqa: N806
    if hasattr(V, "grad_fn"):  # create_graph: differentiable factors (as svd's VJP does)
        lam, V = ns.linalg_eig(ctx.a)  # noqa: N806
    eye = ctx.eye
    vh = _mH(V)
    if gV is not None:
        x = ns.matmul(vh, gV)
        d = ns.real(ns.diagonal(x, offset=0, dim1=x.ndim - 2, dim2=x.ndim - 1))
        x = x - ns.matmul(vh, V * ns.unsqueeze(d, dim=d.ndim - 1))
        lc = ns.conj(lam)
        e = ns.unsqueeze(lc, dim=lc.ndim - 1) - ns.unsqueeze(lc, dim=lc.ndim) + eye
        core = x / e * (1.0 - eye)
        if gL is not None:
            core = core + eye * ns.unsqueeze(gL, dim=gL.ndim - 1)
    elif gL is not None:
        core = eye * ns.unsqueeze(gL, dim=gL.ndim - 1)
    else:
        return (None,)
    ga = ns.linalg_solve(vh, ns.matmul(core, vh), vector=False)
    if ctx.real_in:
        ga = ns.real(ga)
    return (ga,)


def _check(name: str, A: Any) -> None:  # noqa: N803
    if not hasattr(A, "_data"):
        raise TypeError(
            f"linalg_eig(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}"
        )
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m != n:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {m} by {n} matrices"
        )
    if not _kinds.is_inexact(A._data):
        raise RuntimeError(f"Unknown Complex ScalarType for {_type_name(A)}")


def eig(A: Any) -> Any:  # noqa: N803
    """``(eigenvalues, eigenvectors)`` (complex) of a (batch of) square matrices: A V =
    V diag(L), unit-norm columns. VJP: the module docstring."""
    _check("linalg.eig", A)
    lam, v = apply_op(_eig, (A,))
    return return_types.linalg_eig._make_of(lam, v)


def eigvals(A: Any) -> Any:  # noqa: N803
    """The (complex) eigenvalues of a (batch of) square matrices. VJP: V^-H diag(g) V^H."""
    _check("linalg.eigvals", A)
    return apply_op(_eig, (A,))[0]
