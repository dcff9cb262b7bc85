"""The torch.linalg primitives that chainrule/linalg.py exposes: inv (inverse), det,
slogdet (logdet), svd (svdvals) and solve, with their VJPs."""

from __future__ import annotations

from typing import Any

from chainrule import _kinds, return_types
from chainrule._autocast_state import state as _ac
from chainrule.ops import _autocast
from chainrule.ops._registry import OpDef, apply_op, defop, ns
from chainrule.ops.complex_numbers import cj
from chainrule.ops.linalg._common import LinAlgError, _mH, _shape_str, _type_name

__all__ = ["det", "inverse", "slogdet", "logdet"]


# linalg primitives ---------------------------------------------------------------------------


def _square(name: str, a: Any) -> None:
    nd = a._data.ndim
    if nd < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = a._data.shape[-2:]
    if m != n:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {m} by {n} matrices"
        )
    if not _kinds.is_inexact(a._data):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {_type_name(a)}"
        )


def _is_complex(x: Any) -> bool:
    """Whether a Tensor or array is complex."""
    return getattr(x, "_data", x).dtype.kind == "c"


def _first_zero_pivot(a: Any) -> int:
    """1-based index of the first zero pivot of LU with partial pivoting (the number PyTorch's
    singular-matrix message reports), for the first singular matrix of a batch."""
    import numpy as np

    if not isinstance(a, np.ndarray) and hasattr(a, "get"):
        a = a.get()  # a device array: this error path runs on the host
    a = np.asarray(a, dtype=np.float64).reshape((-1,) + a.shape[-2:])
    for m in a:
        m = m.copy()
        n = m.shape[0]
        for k in range(n):
            p = k + int(np.argmax(np.abs(m[k:, k])))
            if m[p, k] == 0:
                return k + 1
            m[[k, p]] = m[[p, k]]
            m[k + 1 :, k:] -= np.outer(m[k + 1 :, k] / m[k, k], m[k, k:])
    return 1


@defop(name="linalg_inv", saves=("out",), promote=None, node_name="LinalgInvExBackward0")
def _inv(xp: Any, a: Any) -> Any:
    """A^-1 (batched). VJP: -A^-H g A^-H."""
    try:
        return xp.linalg.inv(a)
    except Exception as e:
        if type(e).__name__ != "LinAlgError":
            raise
        k = _first_zero_pivot(a)
        raise LinAlgError(
            f"linalg.inv: The diagonal element {k} is zero, the inversion could "
            "not be completed because the input matrix is singular."
        ) from None


@_inv.vjp
def _inv_vjp(ctx: Any, g: Any) -> Any:
    it = _mH(ctx.out)
    return (-ns.matmul(ns.matmul(it, g), it),)


def linalg_inv(A: Any) -> Any:
    """Inverse of a (batch of) square matrices."""
    _square("linalg.inv", A)
    return apply_op(_inv, (A,))


def inverse(input: Any) -> Any:
    """``torch.inverse``: same as ``torch.linalg.inv``."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input = _autocast.fp32_1(input)
    _square("linalg.inv", input)
    return apply_op(_inv, (input,))


@defop(
    name="linalg_det", saves=("a", "out"), promote=None, node_name="LinalgDetBackward0", aux=True
)
def _det(xp: Any, a: Any) -> Any:
    """det(A) (batched). VJP: g conj(det(A)) A^-H, i.e. g times the conjugated cofactor
    matrix of A.

    When some matrix is exactly singular (A^-1 does not exist) the cofactors are computed
    directly as signed determinants of the (n-1)x(n-1) minors, which the forward prepares as
    an index (``minors``) and a sign pattern (``cof_sign``)."""
    d = xp.linalg.det(a)
    aux: dict[str, Any] = {"minors": None, "cof_sign": None}
    n = a.shape[-1]
    if n and bool(xp.any(d == 0)):
        r = xp.arange(n - 1)
        rows = r[None, :] + (r[None, :] >= xp.arange(n)[:, None])  # rows[i] = range(n) - {i}
        aux["minors"] = (Ellipsis, rows[:, None, :, None], rows[None, :, None, :])
        sign = 1.0 - 2.0 * ((xp.arange(n)[:, None] + xp.arange(n)[None, :]) % 2)
        aux["cof_sign"] = sign.astype(a.dtype)
    return d, aux


@_det.vjp
def _det_vjp(ctx: Any, g: Any) -> Any:
    s = ns.unsqueeze(ns.unsqueeze(g, dim=g.ndim), dim=g.ndim + 1)
    if ctx.minors is not None:
        cof = ns.linalg_det(ns.index(ctx.a, index=ctx.minors)) * ctx.cof_sign
        return (s * cj(cof),)
    s = ns.unsqueeze(ns.unsqueeze(g * cj(ctx.out), dim=g.ndim), dim=g.ndim + 1)
    return (s * _mH(ns.linalg_inv(ctx.a)),)


def linalg_det(A: Any) -> Any:
    """Determinant of a (batch of) square matrices."""
    _square("linalg.det", A)
    return apply_op(_det, (A,))


def det(input: Any) -> Any:
    """``torch.det``: same as ``torch.linalg.det``."""
    return linalg_det(input)


def _slogdet_fwd(xp: Any, a: Any) -> Any:
    sign, logabs = xp.linalg.slogdet(a)
    return xp.asarray(sign), xp.asarray(logabs)


_slogdet = OpDef(
    "linalg_slogdet",
    _slogdet_fwd,
    ("a",),
    saves=("a", "out0"),
    promote=None,
    num_outputs=2,
    node_name="LinalgSlogdetBackward0",
)


@_slogdet.vjp
def _slogdet_vjp(ctx: Any, g: Any) -> Any:
    """(sign, log|det A|). With dL = tr(A^-1 dA) = d log det A, d log|det A| = Re dL and
    d sign = i sign Im dL, so gA = c A^-H with c = g_logabsdet + i Im(g_sign conj(sign)) (the
    sign is piecewise constant for a real A: c = g_logabsdet)."""
    gs, gl = g
    if gs is not None and _is_complex(ctx.a):
        phase = 1j * ns.imag(gs * cj(ctx.out0))
        gl = phase if gl is None else gl + phase
    if gl is None:
        return (None,)
    s = ns.unsqueeze(ns.unsqueeze(gl, dim=gl.ndim), dim=gl.ndim + 1)
    return (s * _mH(ns.linalg_inv(ctx.a)),)


def linalg_slogdet(A: Any) -> Any:
    """``(sign, logabsdet)`` of a (batch of) square matrices."""
    _square("linalg.slogdet", A)
    sign, logabs = apply_op(_slogdet, (A,))
    return return_types.linalg_slogdet._make_of(sign, logabs)


def slogdet(input: Any) -> Any:
    """``torch.slogdet``: ``torch.linalg.slogdet``'s values in a ``return_types.slogdet``."""
    return return_types.slogdet._make_of(*linalg_slogdet(input))


def logdet(input: Any) -> Any:
    """log det(input): log|det| where det > 0, NaN where det < 0, -inf where det == 0; for
    complex input the complex logarithm log|det| + i angle(det)."""
    from chainrule.ops.binary import where

    sign, logabs = linalg_slogdet(input)
    if _is_complex(sign):  # log(sign) = i angle(det): its gradient flows through sign
        return logabs + ns.log(sign)
    return where(sign < 0, float("nan"), logabs)


def _svd_fwd(xp: Any, a: Any, *, full_matrices: bool) -> Any:
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    # The factors are kept as aux (constants); under create_graph the VJP recomputes them from
    # the saved input so that they are differentiable (a saved output of a multi-output node
    # would come back as output 0; see the report on SavedTensor.unpack).
    return (u, s, vh), {
        "eye": xp.eye(s.shape[-1], dtype=a.dtype),
        "u": u,
        "s": s,
        "vh": vh,
        "gauge_check": True,  # Note [svd gauge check]
    }


_svd = OpDef(
    "linalg_svd",
    _svd_fwd,
    ("a",),
    saves=("a",),
    promote=None,
    num_outputs=3,
    aux=True,
    materialize_grads=False,
    node_name="LinalgSvdBackward0",
)


_GAUGE = (
    "svd_backward: The singular vectors in the complex case are specified up to multiplication "
    "by e^{i phi}. The specified loss function depends on this phase term, making it "
    "ill-defined."
)


def _check_gauge(uhgu: Any, vhgv: Any) -> None:
    """PyTorch's check that a complex loss does not depend on the phases of the singular
    vectors: Im diag(skew(U^H gU)) = -Im diag(skew(V^H gV)) (to 1e-2), on the host."""
    import numpy as np

    def imdiag(x: Any) -> Any:
        if x is None:
            return 0.0
        d = getattr(x, "_data", x)
        d = d if isinstance(d, np.ndarray) else d.get()
        return np.imag(np.diagonal(d, axis1=-2, axis2=-1))

    if not np.allclose(imdiag(uhgu), -imdiag(vhgv), rtol=1e-2, atol=1e-2):
        raise RuntimeError(_GAUGE)


def _svd_factors(ctx: Any, gU: Any, gVh: Any) -> Any:  # noqa: N803
    """The factors svd's VJP uses (recomputed, differentiable, under create_graph), cut to
    the first k = min(m, n) singular vectors with their gradients, and whether to check the
    gauge (Note [svd gauge check])."""
    U, S, Vh = ctx.u, ctx.s, ctx.vh
    # Note [svd gauge check]
    #     PyTorch's check that the loss ignores the phases runs in a first-order backward.
    #     Under create_graph the factors are recomputed by a second svd node, and a double
    #     backward reaches each of the two nodes with a gauge-dependent part of a
    #     gauge-invariant whole (the phase terms cancel between them: they compute the same
    #     factors). So once a node's VJP has run under create_graph, neither it nor the node
    #     of the recomputed factors checks any more (the ``gauge_check`` flag of their aux).
    check = ctx.gauge_check and not hasattr(U, "grad_fn")
    if hasattr(U, "grad_fn"):  # create_graph: differentiable factors
        if ctx._node._aux is not None:
            ctx._node._aux["gauge_check"] = False
        U, S, Vh = ns.linalg_svd(ctx.a, full_matrices=ctx.full_matrices)
        inner = U.grad_fn
        if inner is not None and getattr(inner, "_aux", None) is not None:
            inner._aux["gauge_check"] = False
    k = S.shape[-1]
    if ctx.full_matrices:
        if U.shape[-1] != k:
            U = ns.index(U, index=(Ellipsis, slice(0, k)))
            gU = None if gU is None else ns.index(gU, index=(Ellipsis, slice(0, k)))
        if Vh.shape[-2] != k:
            Vh = ns.index(Vh, index=(Ellipsis, slice(0, k), slice(None)))
            gVh = None if gVh is None else ns.index(gVh, index=(Ellipsis, slice(0, k), slice(None)))
    return U, S, Vh, gU, gVh, check


@_svd.vjp
def _svd_vjp(ctx: Any, g: Any) -> Any:
    """A = U diag(S) Vh (reduced; with ``full_matrices`` only the first k = min(m, n) singular
    vectors carry gradient, as in PyTorch). VJP (PyTorch's svd_backward, real and complex),
    with skew(X) = X - X^H and E_ij = S_j^2 - S_i^2 (1 on the diagonal):
    core = (skew(U^H gU) S_j + S_i skew(Vh gVh^H)) / E + diag(gS) (+ diag(skew(U^H gU)) / 2S
    for complex A), then gA = U core Vh plus, for m > n, (I - U U^H) gU S^-1 Vh, and for
    m < n, U S^-1 gVh (I - V Vh). For complex A the loss must not depend on the phases of
    the singular vectors (``_check_gauge``, PyTorch's error otherwise; first order only, Note
    [svd gauge check]). Unstable (as in
    PyTorch) when singular values repeat and gU or gVh is non-zero."""
    gU, gS, gVh = g
    U, S, Vh, gU, gVh, check = _svd_factors(ctx, gU, gVh)
    m, n = U.shape[-2], Vh.shape[-1]
    s_row = ns.unsqueeze(S, dim=S.ndim - 1)  # S_j, shape (..., 1, k)
    s_col = ns.unsqueeze(S, dim=S.ndim)  # S_i, shape (..., k, 1)
    if gU is None and gVh is None:
        if gS is None:
            return (None,)
        return (ns.matmul(U * ns.unsqueeze(gS, dim=gS.ndim - 1), Vh),)
    complex_ = _is_complex(U)
    s2 = S * S
    e = ns.unsqueeze(s2, dim=s2.ndim - 1) - ns.unsqueeze(s2, dim=s2.ndim) + ctx.eye
    uhgu = vhgv = None
    if gU is not None:
        x = ns.matmul(_mH(U), gU)
        uhgu = x - _mH(x)
    if gVh is not None:
        y = ns.matmul(Vh, _mH(gVh))
        vhgv = y - _mH(y)
    if complex_ and check:
        _check_gauge(uhgu, vhgv)
    core = None
    if uhgu is not None:
        core = uhgu * s_row / e
    if vhgv is not None:
        t = s_col * vhgv / e
        core = t if core is None else core + t
    if gS is not None:
        core = core + ctx.eye * ns.unsqueeze(gS, dim=gS.ndim - 1)
    if complex_ and uhgu is not None:
        d = ns.diagonal(uhgu, offset=0, dim1=uhgu.ndim - 2, dim2=uhgu.ndim - 1)
        core = core + ctx.eye * ns.unsqueeze(d / (2.0 * S), dim=d.ndim - 1)
    if m > n and gU is not None:
        ga = ns.matmul(U, core)
        gus = gU / s_row
        ga = ga + gus - ns.matmul(U, ns.matmul(_mH(U), gus))
        return (ns.matmul(ga, Vh),)
    if m < n and gVh is not None:
        ga = ns.matmul(core, Vh)
        gvs = gVh / s_col
        ga = ga + gvs - ns.matmul(ns.matmul(gvs, _mH(Vh)), Vh)
        return (ns.matmul(U, ga),)
    return (ns.matmul(U, ns.matmul(core, Vh)),)


def linalg_svd(A: Any, full_matrices: bool = True) -> Any:
    """Singular value decomposition ``(U, S, Vh)``, S descending."""
    if A._data.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    if not _kinds.is_inexact(A._data):
        raise RuntimeError(
            f"linalg.svd: Expected a floating point or complex tensor as input. Got {_type_name(A)}"
        )
    u, s, vh = apply_op(_svd, (A,), {"full_matrices": bool(full_matrices)})
    return return_types.linalg_svd._make_of(u, s, vh)


def linalg_svdvals(A: Any) -> Any:
    """Singular values of A, descending (gradient U diag(g) Vh)."""
    return linalg_svd(A, full_matrices=False)[1]


@defop(name="linalg_solve", saves=("a", "out"), promote="same", node_name="LinalgSolveExBackward0")
def _solve(xp: Any, a: Any, b: Any, *, vector: bool) -> Any:
    """X with A X = B (B a batch of vectors when ``vector``).
    VJP: gB = solve(A^H, g); gA = -gB X^H."""
    try:
        if vector:
            return xp.linalg.solve(a, b[..., None])[..., 0]
        return xp.linalg.solve(
            a, xp.broadcast_to(b, a.shape[:-2] + b.shape[-2:]) if b.ndim < a.ndim else b
        )
    except Exception as e:
        if type(e).__name__ != "LinAlgError":
            raise
        raise LinAlgError(
            "torch.linalg.solve: The solver failed because the input matrix is singular."
        ) from None


@_solve.vjp
def _solve_vjp(ctx: Any, g: Any) -> Any:
    a, x = ctx.a, ctx.out
    gb = ns.linalg_solve(_mH(a), g, vector=ctx.vector)
    ga = None
    if ctx.needs_input_grad[0]:
        if ctx.vector:
            ga = -ns.matmul(ns.unsqueeze(gb, dim=gb.ndim), ns.unsqueeze(cj(x), dim=x.ndim - 1))
        else:
            ga = -ns.matmul(gb, _mH(x))
    return ga, gb if ctx.needs_input_grad[1] else None


def linalg_solve(A: Any, B: Any, *, left: bool = True) -> Any:
    """The solution X of A X = B (``left=False``: X A = B). B is a (batch of) vector(s) when it
    is 1-D or has A's shape without the last dim, as in PyTorch."""
    _square("linalg.solve", A)
    if not left:
        from chainrule.ops.shape import transpose

        return transpose(linalg_solve(transpose(A, -2, -1), transpose(B, -2, -1)), -2, -1)
    na, nb = A._data.ndim, B._data.ndim
    vector = nb == 1 or (nb == na - 1 and tuple(B._data.shape) == tuple(A._data.shape[:-1]))
    n = A._data.shape[-1]
    k = B._data.shape[-1] if vector else B._data.shape[-2] if nb >= 2 else -1
    if k != n:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({_shape_str(A._data.shape)} and "
            f"{_shape_str(B._data.shape)})"
        )
    if vector and nb == 1 and na > 2:
        from chainrule.ops.shape import expand

        B = expand(B, tuple(A._data.shape[:-1]))
    elif not vector and nb < na:
        from chainrule.ops.shape import expand

        B = expand(B, tuple(A._data.shape[:-2]) + tuple(B._data.shape[-2:]))
    elif not vector and na < nb:
        from chainrule.ops.shape import expand

        A = expand(A, tuple(B._data.shape[:-2]) + tuple(A._data.shape[-2:]))
    return apply_op(_solve, (A, B), {"vector": vector})
