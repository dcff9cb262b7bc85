"""torch.linalg functions composed from the registered linalg ops (so their gradients are
those ops' gradients): ``pinv``, ``matrix_rank``, ``cond``, the ``*_ex`` variants
(``inv_ex``, ``solve_ex``, ``cholesky_ex``: an ``info`` tensor, ``check_errors``), the
torch.linalg spellings ``matrix_power``, ``vander``, ``cross``, ``diagonal``, and
``tensorinv``/``tensorsolve``; and ``lstsq``, a registered op (LAPACK's drivers through
SciPy) whose VJP is PyTorch's: that of pinv(A) B.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from chainrule import _kinds, return_types
from chainrule.ops._registry import OpDef, apply_op, ns
from chainrule.ops.linalg._common import LinAlgError, _type_name
from chainrule.ops.linalg._common import _mH as _mH_ns

__all__: list[str] = []  # public through chainrule.linalg


def _t(a: Any) -> Any:
    from chainrule._creation import tensor

    return tensor(np.array(a))  # a contiguous copy that keeps 0-d arrays 0-d


def _host(x: Any) -> np.ndarray:
    from chainrule.backends import backend_of

    d = getattr(x, "_data", x)
    return d if type(d) is np.ndarray else backend_of(d).to_host(d)


def _mH(x: Any) -> Any:  # noqa: N802
    """The conjugate transpose (conj() then mT: the VJP conjugates)."""
    return x.conj().mT if x.is_complex() else x.mT


def _real_dtype(x: Any) -> Any:
    from chainrule._dtype import float32, float64

    return float32 if x._data.dtype in (np.float32, np.complex64) else float64


# pinv and matrix_rank -----------------------------------------------------------------------


def _tolerances(A: Any, atol: Any, rtol: Any) -> tuple[Any, Any]:
    """PyTorch's defaults: rtol = eps * max(m, n) when neither is given, 0 when atol > 0."""
    if rtol is None:
        if atol is None or (not hasattr(atol, "_data") and atol <= 0):
            eps = float(np.finfo(_real_dtype(A).np).eps)
            rtol = eps * builtins.max(A.shape[-2], A.shape[-1])
        elif hasattr(atol, "_data"):
            from chainrule.ops.binary import where

            eps = float(np.finfo(_real_dtype(A).np).eps)
            rtol = where(atol > 0, 0.0, eps * builtins.max(A.shape[-2], A.shape[-1]))
        else:
            rtol = 0.0
    return (0.0 if atol is None else atol), rtol


def _tol(smax: Any, atol: Any, rtol: Any) -> Any:
    """max(atol, rtol * smax), broadcasting tensors or numbers; smax (..., 1)."""
    from chainrule.ops.binary import maximum

    def as_col(v: Any) -> Any:
        return v.unsqueeze(-1) if hasattr(v, "_data") else v

    r = smax * as_col(rtol)
    a = as_col(atol)
    if not hasattr(a, "_data"):
        return r.clamp_min(float(a))
    return maximum(r, a.to(r.dtype))


def _check_pinv(A: Any) -> None:
    if A.ndim < 2 or not _kinds.is_inexact(A._data):
        from chainrule._tensor import _type_name as tn

        kind = tn(A._data.dtype).replace("Tensor", "")
        raise RuntimeError(
            f"linalg.pinv({kind}{{{list(A.shape)}}}): expected a tensor with 2 or more "
            "dimensions of float, double, cfloat or cdouble types"
        )


def pinv(
    A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False, rcond: Any = None
) -> Any:
    """The Moore-Penrose pseudo-inverse: V diag(1/S) U^H over the singular values S >
    max(atol, rtol * S_max) (``hermitian``: U diag(1/L) U^H over |L| above the tolerance,
    from ``eigh``); gradients come from svd/eigh. ``rcond`` is the older name of rtol."""
    from chainrule._creation import zeros
    from chainrule.ops.binary import where

    _check_pinv(A)
    if rcond is not None:
        rtol = rcond
    atol, rtol = _tolerances(A, atol, rtol)
    m, n = A.shape[-2], A.shape[-1]
    if A.numel() == 0:
        return zeros(*A.shape[:-2], n, m, dtype=A.dtype)
    if hermitian:
        from chainrule.ops.linalg.eigh import eigh

        L, U = eigh(A)  # noqa: N806
        absl = L.abs()
        tol = _tol(absl.amax(-1, keepdim=True), atol, rtol)
        keep = absl > tol
        linv = where(keep, 1.0 / where(keep, L, 1.0), 0.0).to(A.dtype)
        return (U * linv.unsqueeze(-2)) @ _mH(U)
    from chainrule.ops.linalg.primitives import linalg_svd

    U, S, Vh = linalg_svd(A, full_matrices=False)  # noqa: N806
    tol = _tol(S[..., :1], atol, rtol)
    keep = S > tol
    sinv = where(keep, 1.0 / where(keep, S, 1.0), 0.0).to(A.dtype)
    return (_mH(Vh) * sinv.unsqueeze(-2)) @ _mH(U)


def matrix_rank(
    A: Any, tol: Any = None, hermitian: bool = False, *, atol: Any = None, rtol: Any = None
) -> Any:
    """The number of singular values (``hermitian``: |eigenvalues|) above max(atol, rtol *
    the largest), int64; ``tol`` is the older spelling of atol (with rtol = 0)."""
    if A.ndim < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        )
    if not _kinds.is_inexact(A._data):
        raise RuntimeError(
            "torch.linalg.matrix_rank: Expected a floating point or complex tensor as input. "
            f"Got {_type_name(A)}"
        )
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(A, atol, rtol)
    from chainrule._dtype import int64

    A = A.detach()  # noqa: N806  (an integer result: no gradient)
    if A.numel() == 0:
        from chainrule._creation import zeros

        return zeros(*A.shape[:-2], dtype=int64)
    if hermitian:
        from chainrule.ops.linalg.eigh import eigvalsh

        s = eigvalsh(A).abs()
        smax = s.amax(-1, keepdim=True)
    else:
        from chainrule.ops.linalg.primitives import linalg_svdvals

        s = linalg_svdvals(A)
        smax = s[..., :1]
    return (s > _tol(smax, atol, rtol)).sum(-1).to(int64)


# cond ----------------------------------------------------------------------------------------


def _ord_str(p: Any) -> str:
    if isinstance(p, str):
        return p
    if math.isinf(p):
        return "inf" if p > 0 else "-inf"
    return str(int(p))


def cond(A: Any, p: Any = None) -> Any:
    """The condition number: S_max / S_min for p None or 2 (S_min / S_max for -2), otherwise
    norm(A, p) norm(A^-1, p) (square A; inf for a singular matrix), p in 'fro', +-1, +-inf;
    'nuc': sum(S) sum(1/S). Real-valued; gradients from svd or inv and the norms."""
    from chainrule.ops.binary import where
    from chainrule.ops.reduction.norms import matrix_norm

    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    valid = (None, 1, -1, 2, -2, math.inf, -math.inf, "fro", "nuc")
    if p not in valid:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    from chainrule.ops.linalg.primitives import linalg_svdvals

    if p is None or (not isinstance(p, str) and builtins.abs(p) == 2):
        if A.numel() == 0:
            from chainrule._creation import zeros

            return zeros(*A.shape[:-2], dtype=_real_dtype(A))
        s = linalg_svdvals(A)
        smax, smin = s[..., 0], s[..., -1]
        return smin / smax if p == -2 else smax / smin
    m, n = A.shape[-2], A.shape[-1]
    if A.numel() == 0 and not isinstance(p, str):  # before the square check, as PyTorch
        from chainrule._creation import zeros

        return zeros(*A.shape[:-2], dtype=_real_dtype(A))
    if m != n:
        raise RuntimeError(
            f"linalg.cond(ord={_ord_str(p)}): A must be batches of square matrices, but they "
            f"are {m} by {n} matrices"
        )
    if A.numel() == 0:
        from chainrule._creation import zeros

        return zeros(*A.shape[:-2], dtype=_real_dtype(A))
    if p == "nuc":  # from the singular values, as PyTorch (finite for a singular matrix)
        s = linalg_svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    inverse, info = inv_ex(A)
    bad = (info > 0).unsqueeze(-1).unsqueeze(-1)
    inverse = where(bad, math.inf, inverse)
    return matrix_norm(A, p) * matrix_norm(inverse, p)


# The *_ex variants ---------------------------------------------------------------------------


def _lu_info(A: Any) -> Any:
    from chainrule.ops.factorizations import lu_factor_ex

    return lu_factor_ex(A.detach())[2]


def _raise_singular(name: str, A: Any, info: Any, solver: bool = False) -> None:
    bad = _host(info).reshape(-1)
    if (bad != 0).any():
        i = builtins.int(np.flatnonzero(bad != 0)[0])
        where = f"(Batch element {i}): " if A.ndim > 2 else ""
        if solver:
            raise LinAlgError(
                f"{name}: {where}The solver failed because the input matrix is singular."
            )
        raise LinAlgError(
            f"{name}: {where}The diagonal element {bad[i]} is zero, the inversion could not "
            "be completed because the input matrix is singular."
        )


def _fill_singular(A: Any, info: Any, fn: Any) -> Any:
    """fn(A) where every matrix is invertible; otherwise fn of the invertible matrices (the
    singular ones replaced by the identity) with inf in place of the singular ones' results,
    whose values PyTorch leaves unspecified."""
    from chainrule._creation import eye
    from chainrule.ops.binary import where

    bad = _host(info) != 0
    if not bad.any():
        return fn(A)
    mask = _t(bad).unsqueeze(-1).unsqueeze(-1)
    safe = where(mask, eye(A.shape[-1], dtype=A.dtype), A)
    out = fn(safe)
    k = out.ndim - A.ndim + 2  # 1 for a vector right-hand side
    mask = mask if k == 2 else mask.squeeze(-1)
    return where(mask, math.inf, out)


def inv_ex(A: Any, *, check_errors: bool = False) -> Any:
    """``(inverse, info)``: info is 0, or i for a zero i-th pivot of LU (a singular matrix),
    int32 per matrix. With ``check_errors`` a singular matrix raises LinAlgError."""
    from chainrule.ops.linalg.primitives import _square, linalg_inv

    _square("linalg.inv", A)
    info = _lu_info(A)
    if check_errors:
        _raise_singular("linalg.inv_ex", A, info)
    return return_types.linalg_inv_ex._make_of(_fill_singular(A, info, linalg_inv), info)


def solve_ex(A: Any, B: Any, *, left: bool = True, check_errors: bool = False) -> Any:
    """``(result, info)`` of ``solve`` with ``inv_ex``'s info; ``check_errors`` raises
    LinAlgError for a singular matrix."""
    from chainrule.ops.linalg.primitives import _square, linalg_solve

    _square("linalg.solve", A)
    info = _lu_info(A)
    if check_errors:
        _raise_singular("torch.linalg.solve_ex", A, info, solver=True)
    return return_types.linalg_solve_ex._make_of(
        _fill_singular(A, info, lambda a: linalg_solve(a, B, left=left)), info
    )


def cholesky_ex(A: Any, *, upper: bool = False, check_errors: bool = False) -> Any:
    """``(L, info)``: info is 0, or the order of the first leading minor that is not
    positive-definite (then L is LAPACK's partial factor, not differentiable)."""
    import scipy.linalg.lapack as lapack

    from chainrule.ops.cholesky import cholesky

    if A.ndim < 2:
        raise RuntimeError("linalg.cholesky: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            "linalg.cholesky: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    from chainrule._dtype import int32

    a = _host(A)
    n = a.shape[-1]
    flat = a.reshape((-1, n, n))
    infos = np.zeros(flat.shape[0], np.int32)
    facs = np.zeros_like(flat)
    potrf: Any = lapack.get_lapack_funcs("potrf", (flat,)) if flat.size else None
    for i, mat in enumerate(flat):
        c, info = potrf(mat, lower=1, clean=1)
        facs[i], infos[i] = c, builtins.max(info, 0)
    info_t = _t(infos.reshape(a.shape[:-2])).to(int32)
    if (infos != 0).any():
        if check_errors:
            i = builtins.int(np.flatnonzero(infos)[0])
            where = f"(Batch element {i}): " if A.ndim > 2 else ""
            raise LinAlgError(
                f"linalg.cholesky_ex: {where}The factorization could not be completed because "
                f"the input is not positive-definite (the leading minor of order {infos[i]} is "
                "not positive-definite)."
            )
        L = _t(facs.reshape(a.shape).astype(a.dtype))  # noqa: N806
    else:
        L = cholesky(A)  # noqa: N806
        info_t = info_t
    return return_types.linalg_cholesky_ex._make_of(_mH(L) if upper else L, info_t)


# The torch.linalg spellings of tensor functions ---------------------------------------------


def matrix_power(A: Any, n: int) -> Any:
    """A^n (square matrices, batched; n < 0: powers of A^-1), ``torch.matrix_power``."""
    from chainrule.ops.composite.products import matrix_power as mp

    return mp(A, n)


def vander(x: Any, *, N: int | None = None) -> Any:  # noqa: N803
    """The Vandermonde matrix with increasing powers 1, x, ..., x^(N-1) (N = x.shape[-1] by
    default) along a new last dim, batched over x's dims. Integer inputs give int64."""
    from chainrule._dtype import int64
    from chainrule.ops.shape.joining import stack

    k = x._data.dtype.kind
    if k not in "fciu":
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got "
            f"{_type_name(x)}"
        )
    x = x.unsqueeze(-1) if x.ndim == 0 else x
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if k in "iu":
        x = x.to(int64)
    cols = [x * 0 + 1, x]
    for _ in range(2, n):
        cols.append(cols[-1] * x)
    return stack(cols, -1)


def cross(input: Any, other: Any, *, dim: int = -1) -> Any:
    """The cross product of 3-vectors along ``dim`` (default -1), broadcasting the others."""
    from chainrule.ops.numeric import cross as _cross

    return _cross(input, other, dim=dim)


def diagonal(A: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    """The ``offset`` diagonal of the matrices over (dim1, dim2) (the last two by default),
    a view (``torch.diagonal`` with other defaults)."""
    return A.diagonal(offset, dim1, dim2)


def _prod(s: Any) -> int:
    return builtins.int(np.prod(s, dtype=np.int64)) if len(s) else 1


def tensorinv(A: Any, ind: int = 2) -> Any:
    """The inverse of A seen as a map from its last ndim - ind dims to its first ind (their
    products must match): ``inv(A.reshape(p, p)).reshape(A.shape[ind:] + A.shape[:ind])``."""
    from chainrule.ops.linalg.primitives import linalg_inv

    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape, in_shape = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    p, q = _prod(out_shape), _prod(in_shape)
    if p != q:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {q} != {p}"
        )
    return linalg_inv(A.reshape(p, p)).reshape(*in_shape, *out_shape)


def tensorsolve(A: Any, B: Any, dims: Any = None) -> Any:
    """X with tensordot(A, X, X.ndim) = B: A's dims listed in ``dims`` are first moved to the
    end, then ``solve(A.reshape(p, p), B.reshape(p)).reshape(A.shape[B.ndim:])``."""
    from chainrule.ops.linalg.primitives import linalg_solve

    if dims is not None:
        dims = [d % A.ndim for d in dims]
        rest = [d for d in range(A.ndim) if d not in dims]
        A = A.permute(*rest, *dims)
    nb = B.ndim
    res_shape = tuple(A.shape[nb:])
    p, q = _prod(A.shape[:nb]), _prod(res_shape)
    if p != q:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {q} != {p}"
        )
    return linalg_solve(A.reshape(p, p), B.reshape(p)).reshape(*res_shape)


# lstsq ---------------------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_one(a: np.ndarray, b: np.ndarray, rcond: float, driver: str) -> Any:
    """(x (n, k), rank, singular values, squared residuals (k,) or None) of one matrix."""
    import scipy.linalg
    import scipy.linalg.lapack as lapack

    m, n = a.shape
    if driver == "gels":
        gels: Any = lapack.get_lapack_funcs("gels", (a, b))
        bb = np.zeros((builtins.max(m, n), b.shape[1]), b.dtype)
        bb[:m] = b
        _, x, _ = gels(a, bb)
        res = (np.abs(x[n:]) ** 2).sum(0) if m > n else None
        return x[:n], -1, None, res
    out: Any = scipy.linalg.lstsq(a, b, cond=rcond, lapack_driver=driver, check_finite=False)
    x, res, rank, s = out
    res = np.asarray(res)
    return x, rank, s, (res if res.size else None)


def _lstsq_fwd(xp: Any, a: Any, b: Any, *, rcond: float, driver: str) -> Any:
    ha = np.asarray(a) if xp is np else xp.asnumpy(a)
    hb = np.asarray(b) if xp is np else xp.asnumpy(b)
    m, n = ha.shape[-2:]
    k = hb.shape[-1]
    batch = np.broadcast_shapes(ha.shape[:-2], hb.shape[:-2])
    fa = np.broadcast_to(ha, batch + (m, n)).reshape((-1, m, n))
    fb = np.broadcast_to(hb, batch + (m, k)).reshape((-1, m, k))
    real = np.finfo(ha.dtype).dtype  # the real dtype of a complex one
    count = fa.shape[0]
    x = np.zeros((count, n, k), ha.dtype)
    rank = np.zeros(count, np.int64)
    sv = np.zeros((count, min(m, n)), real)
    res = np.zeros((count, k), real)
    have_res = m > n and driver != "gelsy" and count > 0
    for i in range(count if m and n and k else 0):
        xi, r, s, ri = _lstsq_one(fa[i], fb[i], rcond, driver)
        x[i], rank[i] = xi, r
        if s is not None:
            sv[i] = s
        if ri is None:
            have_res = False
        else:
            res[i] = ri
    if driver in ("gelsd", "gelss") and m > n:
        have_res = have_res and bool((rank == n).all())
    outs = (
        x.reshape(batch + (n, k)),
        res.reshape(batch + (k,)) if have_res else np.zeros(0, real),
        rank.reshape(batch) if driver != "gels" else np.zeros(0, np.int64),
        sv.reshape(batch + (min(m, n),)) if driver in ("gelsd", "gelss") else np.zeros(0, real),
    )
    return outs if xp is np else tuple(xp.asarray(o) for o in outs)


_lstsq = OpDef(
    "linalg_lstsq",
    _lstsq_fwd,
    ("a", "b"),
    saves=("a", "b"),
    promote=None,
    num_outputs=4,
    materialize_grads=False,
    node_name="LinalgLstsqBackward0",
)


def _pinv_ns(a: Any) -> Any:
    """pinv(a) with ``ns`` ops (PyTorch's default tolerance), for the VJP."""
    u, s, vh = ns.linalg_svd(a, full_matrices=False)
    sd = _host(s)
    m, n = a.shape[-2], a.shape[-1]
    eps = np.finfo(sd.dtype).eps * builtins.max(m, n)
    keep = (sd > eps * sd[..., :1]).astype(sd.dtype)
    d = getattr(s, "_data", s)
    if type(d) is not np.ndarray:  # onto s's device
        from chainrule.backends import backend_of

        keep = backend_of(d).from_host(keep)
    sinv = keep / (s * keep + (1 - keep))
    return ns.matmul(_mH_ns(vh) * ns.unsqueeze(sinv, dim=sinv.ndim - 1), _mH_ns(u))


def _mT_ns(x: Any) -> Any:  # noqa: N802
    """The conjugate transpose (the VJP below is PyTorch's for real and complex dtypes)."""
    return _mH_ns(x)


@_lstsq.vjp
def _lstsq_vjp(ctx: Any, g: Any) -> Any:
    """X = pinv(A) B: gB = pinv(A)^H gX, gA = pinv's VJP at gP = gX B^H (PyTorch's
    pinv_backward, real and complex dtypes; ^H is the transpose of a real matrix)."""
    gx = g[0]
    if gx is None:
        return None, None
    a, b = ctx.a, ctx.b
    p = _pinv_ns(a)
    gb = ns.matmul(_mT_ns(p), gx) if ctx.needs_input_grad[1] else None
    ga = None
    if ctx.needs_input_grad[0]:
        gh = ns.matmul(b, _mT_ns(gx))  # (gX B^H)^H
        m, n = a.shape[-2], a.shape[-1]
        pt = _mT_ns(p)
        if m <= n:
            k = ns.matmul(gh, p)
            kp = ns.matmul(k, pt)
            ga = (
                -_mT_ns(ns.matmul(p, k))
                + kp
                - ns.matmul(ns.matmul(a, p), kp)
                + ns.matmul(ns.matmul(pt, p), gh - ns.matmul(k, a))
            )
        else:
            k = ns.matmul(p, gh)
            pk = ns.matmul(pt, k)
            ga = (
                -_mT_ns(ns.matmul(k, p))
                + ns.matmul(ns.matmul(gh - ns.matmul(a, k), p), pt)
                + pk
                - ns.matmul(ns.matmul(pk, p), a)
            )
    return ga, gb


def lstsq(A: Any, B: Any, rcond: float | None = None, *, driver: str | None = None) -> Any:
    """``(solution, residuals, rank, singular_values)``: the least-squares solution X of
    min ||A X - B|| through LAPACK's ``driver`` (CPU default 'gelsy'; 'gels' assumes full
    rank). As PyTorch: residuals (squared column norms of A X - B) only for m > n and a driver
    other than gelsy (gelsd/gelss: only when every A has rank n), rank except for gels,
    singular values for gelsd/gelss; empty tensors otherwise. B is a batch of vectors when
    B.ndim == A.ndim - 1. VJP (solution, real and complex dtypes): that of pinv(A) B."""
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
            f"input's dtype {_type_name(A)} and other's dtype {_type_name(B)}"
        )
    if not _kinds.is_inexact(A._data):
        raise RuntimeError("This function doesn't handle types other than float and double")
    vector = B.ndim == A.ndim - 1
    if vector:
        if B.shape[-1] != A.shape[-2]:
            raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)")
        B = B.unsqueeze(-1)
    elif B.shape[-2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    cut = (
        float(np.finfo(_real_dtype(A).np).eps) * builtins.max(A.shape[-2], A.shape[-1])
        if rcond is None
        else float(rcond)
    )
    x, res, rank, sv = apply_op(_lstsq, (A, B), {"rcond": cut, "driver": driver})
    return return_types.linalg_lstsq._make_of(x.squeeze(-1) if vector else x, res, rank, sv)
