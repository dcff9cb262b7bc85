"""LU and Householder factorizations: ``lu_factor_ex`` (a registered op, LAPACK's getrf through
``Backend.lu_factor``: SciPy on the CPU, cuSOLVER through ``cupyx.scipy.linalg`` on a GPU), the
unpacking and solving built on it (``lu_unpack``, ``lu_solve``), and the
Householder forms ``geqrf`` (not differentiable, as in PyTorch), ``householder_product``
(``orgqr``) and ``ormqr``, composed from differentiable ops.

LU: A = P L U with P a permutation, L unit lower triangular (m x k) and U upper triangular
(k x n), k = min(m, n); LU packs L below the diagonal and U on and above it, and ``pivots``
(int32, 1-based, LAPACK's) lists the row swapped with each row i in turn.

VJP of the packed LU (square A): with gL = tril(G, -1), gU = triu(G),
    gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H,
the formula of PyTorch's ``linalg_lu_backward``, whose wide (m < n) and tall (m > n) cases
are here too (``_lu_vjp_wide``/``_lu_vjp_tall``, on the square block of the packed LU);
^H is the conjugate transpose, ^T for real dtypes (Note [Wirtinger gradients]).
``lu_solve`` and ``lu_unpack`` are compositions (triangular solves reading the packed LU's
triangles, a row gather, ``tril``/``triu``), so their gradients to LU and B come from those ops.

Everything stays on the input's device: the pivots' permutation is built by k whole-batch swap
steps on the device (``_perm``), P and the row gathers from it; only ``lu_factor``'s error check
reads ``info`` on the host (one small copy, where PyTorch synchronizes too). ``geqrf`` is
``xp.linalg.qr(mode="raw")`` (LAPACK's or cuSOLVER's geqrf). SciPy is imported on first use
(an optional dependency).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from chainrule import return_types
from chainrule.backends import backend_of
from chainrule.ops._registry import OpDef, apply_op, ns

# The torch-level names; torch.linalg's (lu_factor, lu_factor_ex, lu_solve_packed as
# linalg.lu_solve, householder_product) are reached from chainrule/linalg.py.
__all__ = ["lu_unpack", "geqrf", "orgqr", "ormqr"]


def _check_matrix(name: str, A: Any) -> None:
    """PyTorch's checks of the LU functions: 2 or more dims, a floating or complex dtype."""
    if A.ndim < 2:
        raise RuntimeError(
            f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead"
        )
    if A._data.dtype.kind not in "fc":
        from chainrule._tensor import _type_name

        raise NotImplementedError(
            f"\"lu_cpu\" not implemented for '{_type_name(A._data.dtype).replace('Tensor', '')}'"
        )


def _check_info(name: str, A: Any, info: Any) -> None:
    """PyTorch's error for a zero on U's diagonal (a singular matrix)."""
    bad = _host(info).reshape(-1)  # one small device-to-host copy, as PyTorch syncs here
    if (bad != 0).any():
        i = builtins.int(np.flatnonzero(bad != 0)[0])
        where = f"(Batch element {i}): " if A.ndim > 2 else ""
        raise RuntimeError(
            f"{name}: {where}U[{bad[i]},{bad[i]}] is zero and using it on lu_solve would result "
            "in a division by zero. If you still want to perform the factorization, consider "
            "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
        )


# LU factorization ---------------------------------------------------------------------------


def _lu_fwd(xp: Any, a: Any) -> Any:
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = tuple(a.shape[:-2])
    if a.size == 0:
        lu = a.copy()
        piv = xp.ascontiguousarray(
            xp.broadcast_to(xp.arange(1, k + 1, dtype=xp.int32), batch + (k,))
        )
    else:
        # LAPACK's getrf: SciPy on the CPU, cuSOLVER (cupyx.scipy.linalg) on a GPU.
        lu, piv = backend_of(a).lu_factor(a)
    if k == 0:
        info = xp.zeros(batch, dtype=xp.int32)
    else:
        zero = xp.diagonal(lu, axis1=-2, axis2=-1)[..., :k] == 0
        info = xp.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(xp.int32)
    return (lu.astype(a.dtype, copy=False), xp.ascontiguousarray(piv), info)


_lu = OpDef(
    "linalg_lu_factor_ex",
    _lu_fwd,
    ("a",),
    saves=("out0", "out1"),
    promote=None,
    num_outputs=3,
    node_name="LinalgLuFactorExBackward0",
)


def _perm(piv: Any, m: int) -> Any:
    """The row order of P^T A for LAPACK's 1-based sequential swaps ``piv`` (..., k): an
    array on ``piv``'s device (k whole-batch swap steps, no host copy)."""
    piv = getattr(piv, "_data", piv)
    xp = backend_of(piv).xp
    batch = tuple(piv.shape[:-1])
    k = piv.shape[-1]
    b = builtins.int(np.prod(batch)) if batch else 1
    perm = xp.broadcast_to(xp.arange(m), (b, m)).copy()
    swaps = piv.reshape((b, k)).astype(xp.int64) - 1
    rows = xp.arange(b)
    for i in range(k):
        j = swaps[:, i]
        here = perm[:, i].copy()
        perm[:, i] = perm[rows, j]
        perm[rows, j] = here
    return perm.reshape(batch + (m,))


def _host(x: Any) -> np.ndarray:
    d = getattr(x, "_data", x)
    return d if type(d) is np.ndarray else backend_of(d).to_host(d)


@_lu.vjp
def _lu_vjp(ctx: Any, grads: Any) -> Any:
    g = grads[0]
    lu, piv = ctx.out0, ctx.out1
    m, n = lu.shape[-2], lu.shape[-1]
    # (complex: the same with conjugate transposes, ^H for ^T, as PyTorch's)
    mh = _mH if getattr(lu, "_data", lu).dtype.kind == "c" else _mT
    if m < n:
        y = _lu_vjp_wide(g, lu, mh, m, n)
    elif m > n:
        y = _lu_vjp_tall(g, lu, mh, m, n)
    else:
        y = _lu_vjp_square(g, lu, mh)
    perm = _perm(piv, m)
    inv = backend_of(perm).xp.argsort(perm, axis=-1)  # rows of P Y from those of Y
    return (_gather_rows(y, inv),)


def _cols(x: Any, start: int, stop: int) -> Any:
    return ns.index(x, index=(Ellipsis, slice(None), slice(start, stop)))


def _rows(x: Any, start: int, stop: int) -> Any:
    return ns.index(x, index=(Ellipsis, slice(start, stop), slice(None)))


def _lu_vjp_wide(g: Any, lu: Any, mh: Any, m: int, n: int) -> Any:
    """m < n: L (m x m) and U = [U1 U2]. gA = P L^-H [X + triu(gU1), gU2] with
    X = tril(L^H gL - gU U^H, -1) U1^-H (PyTorch's wide case)."""
    sq = _cols(lu, 0, m)  # packed L and U1
    gl = ns.tril(_cols(g, 0, m), diagonal=-1)
    gu = ns.triu(g, diagonal=0)
    up = ns.triu(lu, diagonal=0)
    t = ns.matmul(mh(ns.tril(sq, diagonal=-1)), gl) + gl - ns.matmul(gu, mh(up))
    sqh = mh(sq)
    x = ns.linalg_solve_triangular(
        sqh, ns.tril(t, diagonal=-1), upper=False, left=False, unitriangular=False
    )
    x = ns.cat(x + _cols(gu, 0, m), _cols(gu, m, n), dim=x.ndim - 1, sizes=(m, n - m))
    return ns.linalg_solve_triangular(sqh, x, upper=True, left=True, unitriangular=True)


def _lu_vjp_tall(g: Any, lu: Any, mh: Any, m: int, n: int) -> Any:
    """m > n: L = [L1; L2] and U (n x n). gA = P [X + tril(gL1, -1); gL2] U^-H with
    X = L1^-H triu(gU U^H - L^H gL) (PyTorch's tall case)."""
    sq = _rows(lu, 0, n)  # packed L1 and U
    gl = ns.tril(g, diagonal=-1)
    gu = ns.triu(_rows(g, 0, n), diagonal=0)
    lo = ns.tril(lu, diagonal=-1)
    # L^H gL with L = lo + eye(m, n): the identity part reads gL's first n rows.
    lhgl = ns.matmul(mh(lo), gl) + _rows(gl, 0, n)
    t = ns.triu(ns.matmul(gu, mh(ns.triu(sq, diagonal=0))) - lhgl, diagonal=0)
    sqh = mh(sq)
    x = ns.linalg_solve_triangular(sqh, t, upper=True, left=True, unitriangular=True)
    x = ns.cat(x + _rows(gl, 0, n), _rows(gl, n, m), dim=x.ndim - 2, sizes=(n, m - n))
    return ns.linalg_solve_triangular(sqh, x, upper=False, left=False, unitriangular=False)


def _lu_vjp_square(g: Any, lu: Any, mh: Any) -> Any:
    gl = ns.tril(g, diagonal=-1)
    gu = ns.triu(g, diagonal=0)
    lo = ns.tril(lu, diagonal=-1)
    up = ns.triu(lu, diagonal=0)
    # L^T gL with L = lo + I (unit diagonal).
    phi = ns.tril(ns.matmul(mh(lo), gl) + gl, diagonal=-1) + ns.triu(
        ns.matmul(gu, mh(up)), diagonal=0
    )
    # L^-T phi: solve L^T X = phi (L^T unit upper, read from the packed LU's lower part).
    luh = mh(lu)
    x = ns.linalg_solve_triangular(luh, phi, upper=True, left=True, unitriangular=True)
    # X U^-T: solve Y U^T = X (U^T lower).
    return ns.linalg_solve_triangular(luh, x, upper=False, left=False, unitriangular=False)


def _mT(x: Any) -> Any:
    return ns.transpose(x, dim0=x.ndim - 1, dim1=x.ndim - 2)


def _mH(x: Any) -> Any:
    return ns.conj(_mT(x))


def _gather_rows(x: Any, perm: Any) -> Any:
    """x with its rows (dim -2) reordered: out[..., i, :] = x[..., perm[..., i], :]; ``perm``
    an array on x's device."""
    from chainrule._tensor import _new_tensor

    xp = backend_of(perm).xp
    idx = xp.broadcast_to(perm[..., None], perm.shape + (x.shape[-1],))
    idx = xp.broadcast_to(idx, tuple(x.shape[:-2]) + idx.shape[-2:])
    if hasattr(x, "_data"):
        return x.gather(-2, _new_tensor(xp.ascontiguousarray(idx)))
    return xp.take_along_axis(x, idx, axis=-2)


def lu_factor_ex(
    A: Any, *, pivot: bool = True, check_errors: bool = False, _name: str = "torch.lu_factor"
) -> Any:
    """``(LU, pivots, info)``: the packed LU factorization with partial pivoting of each
    matrix of A (..., m, n); ``info`` is 0, or i + 1 for the first zero diagonal U[i, i].
    VJP (square and rectangular A, real and complex dtypes): see the module docstring."""
    _check_matrix(_name, A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    lu, piv, info = apply_op(_lu, (A,))
    if check_errors:
        _check_info("torch.linalg.lu_factor_ex", A, info)
    return return_types.linalg_lu_factor_ex._make_of(lu, piv, info)


def lu_factor(A: Any, *, pivot: bool = True) -> Any:
    """``(LU, pivots)`` of ``lu_factor_ex``.

    Raises:
        RuntimeError: when U has a zero on its diagonal (a singular matrix), as PyTorch."""
    lu, piv, info = lu_factor_ex(A, pivot=pivot)
    _check_info("torch.linalg.lu_factor", A, info)
    return return_types.linalg_lu_factor._make_of(lu, piv)


def _check_pivots(LU_data: Any, LU_pivots: Any, name: str) -> None:
    if LU_pivots._data.dtype != np.int32:
        raise RuntimeError(
            f"torch.{name}: LU_pivots is expected to be a contiguous tensor of torch.int32 "
            "dtype.\nNote: this function is intended to be used with the output "
            "produced by torch.linalg.lu_factor"
        )


def lu_unpack(
    LU_data: Any, LU_pivots: Any, unpack_data: bool = True, unpack_pivots: bool = True
) -> Any:
    """``(P, L, U)`` from a packed LU and its pivots: L = tril(LU, -1) + I (m x k), U =
    triu(LU) (k x n), P the permutation matrix with A = P L U. Differentiable in LU (through
    tril/triu); empty tensors for the parts not asked for, as PyTorch."""
    from chainrule._creation import eye, zeros
    from chainrule._tensor import _new_tensor

    _check_pivots(LU_data, LU_pivots, "lu_unpack")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    dt = LU_data.dtype
    dev = LU_data.device
    if unpack_data:
        low = LU_data[..., :, :k].tril(-1) + eye(m, k, dtype=dt, device=dev)
        up = LU_data[..., :k, :].triu()
    else:
        low = zeros(0, dtype=dt, device=dev)
        up = zeros(0, dtype=dt, device=dev)
    if unpack_pivots:
        perm = _perm(LU_pivots, m)
        xp = backend_of(perm).xp
        eye_m = xp.eye(m, dtype=dt.np)
        # P^T = I[perm], so P = I[perm]^T.
        p = xp.swapaxes(eye_m[perm], -1, -2)
        pt = _new_tensor(xp.ascontiguousarray(p))
    else:
        pt = zeros(0, dtype=dt, device=dev)
    return return_types.lu_unpack._make_of(pt, low, up)


def lu_solve_packed(
    LU: Any, pivots: Any, B: Any, *, left: bool = True, adjoint: bool = False
) -> Any:
    """The solution X of A X = B (``adjoint``: A^H X = B; ``left=False``: X A = B, or X A^H =
    B) for A = P L U given packed: two triangular solves reading LU's triangles and a row
    permutation. Differentiable in LU and B through those ops."""
    _check_pivots(LU, pivots, "linalg.lu_solve")
    if LU.ndim < 2 or LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(
            "linalg.lu_solve: A must be batches of square matrices, but they are "
            f"{LU.shape[-2]} by {LU.shape[-1]} matrices"
            if LU.ndim >= 2
            else "linalg.lu_solve: The input tensor LU must have at least 2 dimensions."
        )
    if not left:
        # X A = B  <=>  A^H X^H = B^H (and X A^H = B <=> A X^H = B^H).
        return lu_solve_packed(LU, pivots, B.mH, left=True, adjoint=not adjoint).mH
    n = LU.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(
            "linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B "
            f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})"
        )
    batch = np.broadcast_shapes(tuple(LU.shape[:-2]), tuple(B.shape[:-2]))
    LU = LU.expand(*batch, n, n) if tuple(LU.shape[:-2]) != batch else LU
    B = B.expand(*batch, *B.shape[-2:]) if tuple(B.shape[:-2]) != batch else B
    piv = pivots._data
    xp = backend_of(piv).xp
    perm = _perm(xp.broadcast_to(piv, batch + (n,)), n)
    if not adjoint:
        # A X = B:  L U X = P^T B.
        pb = _gather_rows(B, perm)
        y = ns.linalg_solve_triangular(LU, pb, upper=False, left=True, unitriangular=True)
        return ns.linalg_solve_triangular(LU, y, upper=True, left=True, unitriangular=False)
    # A^H X = B:  U^H L^H P^T X = B, so X = P L^-H U^-H B.
    luh = LU.mH
    z = ns.linalg_solve_triangular(luh, B, upper=False, left=True, unitriangular=False)
    w = ns.linalg_solve_triangular(luh, z, upper=True, left=True, unitriangular=True)
    return _gather_rows(w, xp.argsort(perm, axis=-1))


# Householder products -----------------------------------------------------------------------


def geqrf(input: Any) -> Any:
    """``(a, tau)``: LAPACK's geqrf QR factorization, R on and above the diagonal of ``a``
    and the Householder vectors below it (unit leading entries implied), with scales ``tau``.
    Not differentiable (PyTorch's is not either).

    Raises:
        RuntimeError: for fewer than 2 dims or a non-floating dtype."""
    from chainrule._tensor import _new_tensor

    _check_matrix("geqrf", input)
    a = input._data
    xp = backend_of(a).xp
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        res, tau = a.copy(), xp.zeros(tuple(a.shape[:-2]) + (k,), dtype=a.dtype)
    else:
        # LAPACK's geqrf (cuSOLVER's on a GPU) through qr's raw mode, which returns the
        # factored matrix transposed (Fortran order read as C order).
        h, tau = xp.linalg.qr(a, mode="raw")
        res = xp.ascontiguousarray(xp.swapaxes(h, -1, -2))
    return return_types.geqrf._make_of(
        _new_tensor(res.astype(a.dtype, copy=False)),
        _new_tensor(xp.ascontiguousarray(tau.astype(a.dtype, copy=False))),
    )


def householder_product(A: Any, tau: Any) -> Any:
    """Q = H_1 H_2 ... H_k (the first n columns), H_i = I - tau_i v_i v_i^H with v_i the i-th
    column of A below the diagonal and a unit i-th entry: LAPACK's orgqr. Composed of
    differentiable ops, so gradients reach A and tau.

    Raises:
        RuntimeError: with PyTorch's messages, for m < n or more scales than columns."""
    from chainrule._creation import eye

    if A.ndim < 2:
        raise RuntimeError(
            "torch.linalg.householder_product: input must have at least 2 dimensions."
        )
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-2] must be greater than or equal "
            "to input.shape[-1]"
        )
    k = tau.shape[-1]
    if k > n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-1] must be greater than or equal "
            "to tau.shape[-1]"
        )
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(
            "torch.linalg.householder_product: Expected tau to have one dimension less than "
            f"input, but got tau.ndim equal to {tau.ndim} and input.ndim is equal to {A.ndim}"
        )
    dt = A.dtype
    dev = A.device
    below = A.tril(-1) + eye(m, n, dtype=dt, device=dev)  # unit leading entries, zeros above
    q = eye(m, dtype=dt, device=dev).expand(*A.shape[:-2], m, m)
    for i in range(k):
        v = below[..., :, i : i + 1]  # (..., m, 1)
        t = tau[..., i : i + 1].unsqueeze(-1)  # (..., 1, 1)
        # Q H_i = Q - tau_i (Q v) v^H
        q = q - (q @ v) * t @ v.mH
    return q[..., :, :n]


def orgqr(input: Any, tau: Any) -> Any:
    """``householder_product`` (LAPACK's name)."""
    return householder_product(input, tau)


def ormqr(input: Any, tau: Any, other: Any, left: bool = True, transpose: bool = False) -> Any:
    """Q C (``left``) or C Q, with Q^H in place of Q when ``transpose``, for the m x m Q of
    the Householder reflectors in ``input`` and ``tau`` (LAPACK's ormqr). Composed of
    differentiable ops.

    Raises:
        RuntimeError: with PyTorch's messages, for mismatched shapes."""
    from chainrule._creation import eye

    if input.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    m = input.shape[-2]
    rows = other.shape[-2] if left else other.shape[-1]
    if rows != m:
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"torch.ormqr: {which} must be equal to input.shape[-2]")
    k = tau.shape[-1]
    n = input.shape[-1]
    dt = input.dtype
    dev = input.device
    below = input[..., :, :k].tril(-1) + eye(m, k, dtype=dt, device=dev)
    q = eye(m, dtype=dt, device=dev).expand(*input.shape[:-2], m, m)
    for i in range(min(k, n)):
        v = below[..., :, i : i + 1]
        t = tau[..., i : i + 1].unsqueeze(-1)
        q = q - (q @ v) * t @ v.mH
    if transpose:
        q = q.mH
    return q @ other if left else other @ q
