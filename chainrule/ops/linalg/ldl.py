"""The LDL factorization of symmetric or Hermitian (possibly indefinite) matrices:
``linalg.ldl_factor_ex`` / ``ldl_factor`` and ``linalg.ldl_solve``, registered ops computed by
LAPACK's Bunch-Kaufman routines through SciPy, on the host (as ``eig`` is).

A = P L D L^T P^T (``hermitian=True``: L^H, and D Hermitian), L unit lower triangular, D block
diagonal with 1x1 and 2x2 blocks. ``LD`` is LAPACK's packed form (sytrf / hetrf, ``uplo='L'``:
only A's lower triangle is read) with the strict upper triangle zeroed, as PyTorch returns it;
``pivots`` (int32) are LAPACK's ``ipiv``: 1-based, k > 0 a 1x1 block with rows i and k swapped,
equal negative values on two consecutive rows a 2x2 block. ``info`` is 0, or i + 1 when D[i, i]
is exactly zero (D singular).

``ldl_solve`` solves A X = B from ``(LD, pivots)`` (sytrs / hetrs), B broadcast against LD's
batch. Neither op has a derivative in PyTorch 2.13: both record a ``NotImplemented`` node whose
backward raises "derivative for aten::linalg_ldl_factor_ex is not implemented" (the same for
``linalg_ldl_solve``), and chainrule does the same.

For a singular D, PyTorch 2.13's ``ldl_factor`` and ``ldl_factor_ex(check_errors=True)`` fail
with an internal assert ("Unknown error code: 1."); chainrule raises a RuntimeError carrying the
same sentence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _kinds, return_types
from chainrule.ops._registry import OpDef, apply_op
from chainrule.ops.linalg._common import _type_name

__all__: list[str] = []  # public through chainrule.linalg


_NOT_IMPLEMENTED = "torch::autograd::NotImplemented"


def _lapack(kind: str, dtype: Any, hermitian: bool) -> Any:
    """SciPy's LAPACK routine ``kind`` ("trf" or "trs") for ``dtype``: he* for a complex
    Hermitian matrix, sy* otherwise."""
    from scipy.linalg import lapack

    prefix = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}
    p = prefix[np.dtype(dtype).type]
    fam = "he" if hermitian and p in "cz" else "sy"
    return getattr(lapack, f"{p}{fam}{kind}")


def _host(xp: Any, a: Any) -> np.ndarray:
    return np.asarray(a) if xp is np else xp.asnumpy(a)


def _ldl_fwd(xp: Any, a: Any, *, hermitian: bool) -> Any:
    host = _host(xp, a)
    n = host.shape[-1]
    batch = host.shape[:-2]
    flat = host.reshape((int(np.prod(batch, dtype=np.int64)), n, n))
    ld = np.zeros(flat.shape, host.dtype)
    piv = np.zeros((flat.shape[0], n), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    if n:
        trf = _lapack("trf", host.dtype, hermitian)
        lwork_fn = _lapack("trf_lwork", host.dtype, hermitian)
        lw = lwork_fn(n, lower=1)
        lwork = max(1, int(np.real(lw[0] if isinstance(lw, tuple) else lw)))
        for i, m in enumerate(flat):
            f, p, inf = trf(m, lower=1, lwork=lwork)
            ld[i] = np.tril(f)
            piv[i] = p
            info[i] = inf
    out = (ld.reshape(host.shape), piv.reshape(batch + (n,)), info.reshape(batch))
    if xp is not np:
        out = tuple(xp.asarray(o) for o in out)
    return out


def _no_derivative(op: str) -> Any:
    def vjp(ctx: Any, g: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{op} is not implemented")

    return vjp


_ldl = OpDef(
    "linalg_ldl_factor_ex",
    _ldl_fwd,
    ("a",),
    saves=(),
    promote=None,
    num_outputs=3,
    node_name=_NOT_IMPLEMENTED,
)
_ldl.vjp(_no_derivative("linalg_ldl_factor_ex"))


def _bool_arg(fn: str, name: str, v: Any) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type(v).__name__}")
    return bool(v)


def _check_square(name: str, A: Any) -> None:  # noqa: N803
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m != n:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {m} by {n} matrices"
        )
    if not _kinds.is_inexact(A._data):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {_type_name(A)}"
        )


def _check_lapack_dtype(kernel: str, A: Any) -> None:  # noqa: N803
    if A._data.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(A)}'")


def _raise_info(name: str, info: Any) -> None:
    bad = np.asarray(info if isinstance(info, np.ndarray) else _host_any(info)).reshape(-1)
    if (bad != 0).any():
        code = int(bad[np.flatnonzero(bad != 0)[0]])
        raise RuntimeError(f"{name}: Unknown error code: {code}.")


def _host_any(x: Any) -> np.ndarray:
    d = getattr(x, "_data", x)
    return d if isinstance(d, np.ndarray) else d.get()


def ldl_factor_ex(
    A: Any,  # noqa: N803
    *,
    hermitian: bool = False,
    check_errors: bool = False,
    _name: str = "torch.linalg.ldl_factor_ex",
) -> Any:
    """``(LD, pivots, info)``: the Bunch-Kaufman LDL factorization of each symmetric (or,
    with ``hermitian=True``, Hermitian) matrix of A (..., n, n), A = P L D L^T P^T, read from
    A's lower triangle; the layout is the module docstring's. Not differentiable (PyTorch
    defines no derivative): backward through LD raises."""
    fn = "linalg_ldl_factor" if _name.endswith("ldl_factor") else "linalg_ldl_factor_ex"
    if not hasattr(A, "_data"):
        raise TypeError(
            f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}"
        )
    hermitian = _bool_arg(fn, "hermitian", hermitian)
    check_errors = _bool_arg(fn, "check_errors", check_errors)
    _check_square("torch.linalg.ldl_factor_ex", A)
    _check_lapack_dtype("ldl_factor_kernel_cpu", A)
    ld, piv, info = apply_op(_ldl, (A,), {"hermitian": hermitian})
    if check_errors:
        _raise_info(_name, info._data)
    return return_types.linalg_ldl_factor_ex._make_of(ld, piv, info)


def ldl_factor(A: Any, *, hermitian: bool = False) -> Any:  # noqa: N803
    """``(LD, pivots)`` of ``ldl_factor_ex``; raises RuntimeError when D is singular (the
    module docstring)."""
    ld, piv, info = ldl_factor_ex(A, hermitian=hermitian, _name="torch.linalg.ldl_factor")
    _raise_info("torch.linalg.ldl_factor", info._data)
    return return_types.linalg_ldl_factor._make_of(ld, piv)


def _ldl_solve_fwd(xp: Any, ld: Any, piv: Any, b: Any, *, hermitian: bool) -> Any:
    hl, hp, hb = _host(xp, ld), _host(xp, piv), _host(xp, b)
    n = hl.shape[-1]
    batch = np.broadcast_shapes(hl.shape[:-2], hb.shape[:-2])
    x = np.empty(batch + hb.shape[-2:], hl.dtype)
    if x.size and n:
        trs = _lapack("trs", hl.dtype, hermitian)
        nb = int(np.prod(batch, dtype=np.int64))
        fl = np.broadcast_to(hl, batch + hl.shape[-2:]).reshape((nb, n, n))
        fp = np.broadcast_to(hp, batch + hp.shape[-1:]).reshape((nb, n)).astype(np.int32)
        fb = np.broadcast_to(hb, batch + hb.shape[-2:]).reshape((nb,) + hb.shape[-2:])
        fx = x.reshape((nb,) + hb.shape[-2:])
        for i in range(fl.shape[0]):
            fx[i] = trs(fl[i], fp[i], fb[i], lower=1)[0]
    elif x.size:
        x[...] = 0
    return xp.asarray(x) if xp is not np else x


_ldl_solve = OpDef(
    "linalg_ldl_solve",
    _ldl_solve_fwd,
    ("ld", "pivots", "b"),
    saves=(),
    promote=None,
    node_name=_NOT_IMPLEMENTED,
)
_ldl_solve.vjp(_no_derivative("linalg_ldl_solve"))


def ldl_solve(LD: Any, pivots: Any, B: Any, *, hermitian: bool = False) -> Any:  # noqa: N803
    """X with A X = B for A given by ``ldl_factor``'s ``(LD, pivots)`` (LAPACK's sytrs, or
    hetrs with ``hermitian=True``); B (..., n, k) broadcasts against LD's batch. Not
    differentiable (PyTorch defines no derivative): backward raises."""
    name = "torch.linalg.ldl_solve"
    for arg, v in (("LD", LD), ("pivots", pivots), ("B", B)):
        if not hasattr(v, "_data"):
            raise TypeError(
                f"linalg_ldl_solve(): argument '{arg}' must be Tensor, not {type(v).__name__}"
            )
    hermitian = _bool_arg("linalg_ldl_solve", "hermitian", hermitian)
    _check_square(name, LD)
    if B._data.dtype != LD._data.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {_type_name(B)} "
            f"and A of type {_type_name(LD)} instead."
        )
    if B._data.ndim < 2:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-{max(B._data.ndim, 1)}, "
            f"{max(B._data.ndim, 1) - 1}], but got -2)"
        )
    n = LD._data.shape[-1]
    if B._data.shape[-2] != n:
        raise RuntimeError(
            f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b "
            f"matrix is {B._data.shape[-2]} by {B._data.shape[-1]}"
        )
    if pivots._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {_type_name(pivots)}")
    if tuple(pivots._data.shape) != tuple(LD._data.shape[:-1]):
        raise RuntimeError(
            f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots "
            f"with shape {list(pivots._data.shape)} instead"
        )
    lb, bb = tuple(LD._data.shape[:-2]), tuple(B._data.shape[:-2])
    try:
        np.broadcast_shapes(lb, bb)
    except ValueError:
        for i in range(1, min(len(lb), len(bb)) + 1):
            if lb[-i] != bb[-i] and 1 not in (lb[-i], bb[-i]):
                d = max(len(lb), len(bb)) - i
                raise RuntimeError(
                    f"The size of tensor a ({bb[-i]}) must match the size of tensor b "
                    f"({lb[-i]}) at non-singleton dimension {d}"
                ) from None
        raise
    _check_lapack_dtype("ldl_solve_kernel_cpu", LD)
    return apply_op(_ldl_solve, (LD, pivots, B), {"hermitian": hermitian})
