"""Special functions: log-gamma and its derivatives, inverse error function, modified Bessel
functions, the normal distribution's functions, incomplete gamma functions, ``xlogy``.

The forwards call ``scipy.special`` (imported inside the functions, so that ``import chainrule``
does not pay for SciPy); inputs below float32 are computed in float32 and rounded, as PyTorch's
CPU kernels do. Gradients are PyTorch's formulas, written with differentiable ops so that double
backward works; where PyTorch has no derivative (``igamma`` with respect to its first argument)
the VJP raises PyTorch's error.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops._registry import apply_op, binary, defop, ns, unary

__all__ = [
    "lgamma",
    "digamma",
    "polygamma",
    "erfinv",
    "xlogy",
    "i0",
    "igamma",
    "igammac",
    "mvlgamma",
    "logit",
]

_SQRT_PI_2 = math.sqrt(math.pi) / 2
_SQRT_2PI = math.sqrt(2 * math.pi)
_LOG_PI = math.log(math.pi)


def _sc(name: str) -> Any:
    import scipy.special  # lazily: SciPy would double the import time of chainrule

    return getattr(scipy.special, name)


def _host(xp: Any, *arrays: Any) -> tuple[Any, ...]:
    if xp is np:
        return arrays
    return tuple(xp.asnumpy(a) for a in arrays)  # SciPy runs on the host


def _call(xp: Any, name: str, *arrays: Any, **kw: Any) -> Any:
    """``scipy.special.<name>(*arrays)`` at the inputs' (common) float dtype."""
    # A Python number operand takes the array operand's dtype (PyTorch's scalar promotion).
    ref = next(a.dtype for a in arrays if hasattr(a, "dtype"))
    arrays = tuple(a if hasattr(a, "dtype") else np.asarray(a, dtype=ref) for a in arrays)
    dt = np.result_type(*[a.dtype for a in arrays])
    if not _kinds.is_floating(dt) or dt.itemsize < 4:
        dt_calc = np.dtype(np.float32) if _kinds.is_floating(dt) else np.dtype(np.float64)
    else:
        dt_calc = dt
    host = [np.asarray(a, dtype=dt_calc) for a in _host(xp, *arrays)]
    with np.errstate(all="ignore"):
        out = np.asarray(_sc(name)(*host, **kw)).astype(dt, copy=False)
    return out if xp is np else xp.asarray(out)


def _fwd(name: str) -> Any:
    return lambda xp, *arrays: _call(xp, name, *arrays)


# Log-gamma and polygamma -------------------------------------------------------------------

lgamma = unary(
    "lgamma",
    _fwd("gammaln"),
    saves="x",
    vjp=lambda ctx, g: g * ns.digamma(ctx.x),
    doc="log|Gamma(x)| elementwise. VJP: g digamma(x).",
)
digamma = unary(
    "digamma",
    _fwd("psi"),
    saves="x",
    vjp=lambda ctx, g: g * ns.polygamma(ctx.x, n=1),
    doc="psi(x) = d/dx log Gamma(x). VJP: g polygamma(1, x).",
)


@defop(
    saves=("x",),
    promote="float",
    name="polygamma",
    vjps=(lambda ctx, g: g * ns.polygamma(ctx.x, n=ctx.n + 1),),
)
def _polygamma(xp: Any, x: Any, *, n: int) -> Any:
    if n == 0:  # SciPy's polygamma(0, x) loses precision against psi near its roots
        return _call(xp, "psi", x)
    return _call(xp, "polygamma", np.asarray(n, dtype=x.dtype), x)


def polygamma(n: int, input: Any) -> Any:
    """The n-th derivative of digamma, psi^(n)(x). VJP: g psi^(n+1)(x)."""
    if int(n) != n or n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return apply_op(_polygamma, (input,), {"n": int(n)})


@refuses_complex("mvlgamma", 1)
def mvlgamma(input: Any, p: int) -> Any:
    """Multivariate log-gamma: p(p-1)/4 log(pi) + sum_{i<p} lgamma(x - i/2)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = input.unsqueeze(-1)
    offs = np.arange(p, dtype=np.float64) / 2
    from chainrule._creation import tensor

    dt = input.dtype if input.is_floating_point() else None
    s = lgamma(x - tensor(offs, dtype=dt, device=input.device))
    return s.sum(-1) + p * (p - 1) / 4 * _LOG_PI


# Error functions ---------------------------------------------------------------------------

erfinv = unary(
    "erfinv",
    _fwd("erfinv"),
    # PyTorch saves the input and recomputes erfinv(x) in backward, so an in-place change of
    # the output before backward is no error; the same here.
    saves="x",
    vjp=lambda ctx, g: g * _SQRT_PI_2 * ns.exp(ns.erfinv(ctx.x) ** 2),
    doc="Inverse of erf on (-1, 1). VJP: g sqrt(pi)/2 e**(erfinv(x)**2), erfinv(x) recomputed.",
)
erfcx = unary(
    "erfcx",
    node_name="SpecialErfcxBackward0",
    forward=_fwd("erfcx"),
    saves=("x", "out"),
    vjp=lambda ctx, g: g * (2 * ctx.x * ctx.out - 2 / math.sqrt(math.pi)),
    doc="Scaled complementary error function e**(x**2) erfc(x). "
    "VJP: g (2 x erfcx(x) - 2/sqrt(pi)).",
)
ndtri = unary(
    "ndtri",
    node_name="SpecialNdtriBackward0",
    forward=_fwd("ndtri"),
    saves="out",
    vjp=lambda ctx, g: g * _SQRT_2PI * ns.exp(ctx.out * ctx.out * 0.5),
    doc="Inverse of the standard normal CDF. VJP: g sqrt(2 pi) e**(ndtri(x)**2 / 2).",
)
log_ndtr = unary(
    "log_ndtr",
    node_name="SpecialLogNdtrBackward0",
    forward=_fwd("log_ndtr"),
    saves=("x", "out"),
    vjp=lambda ctx, g: g * ns.exp(-0.5 * ctx.x * ctx.x - ctx.out) / _SQRT_2PI,
    doc="log of the standard normal CDF, accurate in the lower tail. VJP: g phi(x) / Phi(x).",
)


def _entr_fwd(xp: Any, x: Any) -> Any:
    return _call(xp, "entr", x)


entr = unary(
    "entr",
    node_name="SpecialEntrBackward0",
    forward=_entr_fwd,
    saves="x",
    vjp=lambda ctx, g: -g * (1 + ns.log(ctx.x)),
    doc="-x log x for x > 0, 0 at 0, -inf below. VJP: -g (1 + log x).",
)


# Modified Bessel functions -----------------------------------------------------------------


def _at_zero_half(x: Any, d: Any) -> Any:
    # d was computed with x = 0 replaced by 1 in the 1/x term; the limit there is 1/2.
    return ns.where(x == 0, d * 0.5, d)


def _safe(x: Any) -> Any:
    return ns.where(x == 0, x + 1, x)


i0 = unary(
    "i0",
    _fwd("i0"),
    saves="x",
    vjp=lambda ctx, g: g * ns.i1(ctx.x),
    doc="Modified Bessel function of the first kind, order 0. VJP: g I1(x).",
)
i0e = unary(
    "i0e",
    node_name="SpecialI0EBackward0",
    forward=_fwd("i0e"),
    saves=("x", "out"),
    vjp=lambda ctx, g: g * (ns.i1e(ctx.x) - ns.sign(ctx.x) * ctx.out),
    doc="Exponentially scaled I0: e**-|x| I0(x). VJP: g (i1e(x) - sign(x) i0e(x)).",
)
i1 = unary(
    "i1",
    node_name="SpecialI1Backward0",
    forward=_fwd("i1"),
    saves=("x", "out"),
    vjp=lambda ctx, g: g * _at_zero_half(ctx.x, ns.i0(ctx.x) - ctx.out / _safe(ctx.x)),
    doc="Modified Bessel function of the first kind, order 1. VJP: g (I0(x) - I1(x)/x), 1/2 at 0.",
)
i1e = unary(
    "i1e",
    node_name="SpecialI1EBackward0",
    forward=_fwd("i1e"),
    saves=("x", "out"),
    vjp=lambda ctx, g: (
        g * _at_zero_half(ctx.x, ns.i0e(ctx.x) - ctx.out * (ns.sign(ctx.x) + 1 / _safe(ctx.x)))
    ),
    doc="Exponentially scaled I1: e**-|x| I1(x). "
    "VJP: g (i0e(x) - i1e(x) (sign(x) + 1/x)), 1/2 at 0.",
)


# Binary functions --------------------------------------------------------------------------


def _xlog_mask(a: Any, b: Any) -> Any:
    # d/dx x log y is log y, except where x == 0 and y <= 0 (x log y is 0 there by convention):
    # PyTorch's gradient is 0 at those points. 1 where the gradient is log y, else 0 (so that
    # xlogy(mask, y) is the gradient, nan where y is).
    nz = ns.abs(ns.sign(a))
    return ns.where(b > 0, nz * 0 + 1, nz)


def _xlogy_fwd(xp: Any, a: Any, b: Any) -> Any:
    return _call(xp, "xlogy", a, b)


def _xlog1py_fwd(xp: Any, a: Any, b: Any) -> Any:
    return _call(xp, "xlog1py", a, b)


_xlogy = binary(
    "xlogy",
    _xlogy_fwd,
    saves=("a", "b"),
    promote="float",
    vjp=(
        lambda ctx, g: g * ns.xlogy(_xlog_mask(ctx.a, ctx.b), ctx.b),
        lambda ctx, g: g * ctx.a / ctx.b,
    ),
    doc="x log y, 0 where x == 0 (unless y is nan). VJP: (g log y, but 0 where x == 0 and "
    "y <= 0; g x / y).",
)
_xlog1py = binary(
    "xlog1py",
    _xlog1py_fwd,
    saves=("a", "b"),
    promote="float",
    node_name="SpecialXlog1PyBackward0",
    vjp=(
        lambda ctx, g: g * ns.xlog1py(_xlog_mask(ctx.a, ctx.b + 1), ctx.b),
        lambda ctx, g: g * ctx.a / (1 + ctx.b),
    ),
    doc="x log(1 + y), 0 where x == 0. VJP: (g log1p(y), but 0 where x == 0 and y <= -1; "
    "g x / (1 + y)).",
)


def _no_igamma_grad(name: str) -> Any:
    def vjp(ctx: Any, g: Any) -> Any:
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")

    return vjp


def _igamma_x_vjp(ctx: Any, g: Any) -> Any:
    # d/dx P(a, x) = x**(a-1) e**-x / Gamma(a)
    a, x = ctx.a, ctx.b
    return g * ns.exp((a - 1) * ns.log(x) - x - ns.lgamma(a))


_igamma = binary(
    "igamma",
    _fwd("gammainc"),
    saves=("a", "b"),
    promote="float",
    vjp=(_no_igamma_grad("igamma"), _igamma_x_vjp),
    doc="Regularized lower incomplete gamma P(a, x).",
)
_igammac = binary(
    "igammac",
    _fwd("gammaincc"),
    saves=("a", "b"),
    promote="float",
    vjp=(_no_igamma_grad("igammac"), lambda ctx, g: -_igamma_x_vjp(ctx, g)),
    doc="Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x).",
)


def _as_tensors(input: Any, other: Any) -> tuple[Any, Any]:
    from chainrule._creation import tensor

    if not hasattr(input, "_data") and not hasattr(other, "_data"):
        raise TypeError("xlogy(): expected at least one of input, other to be a Tensor")
    if not hasattr(input, "_data"):
        input = tensor(input, dtype=other.dtype if other.is_floating_point() else None)
    if not hasattr(other, "_data"):
        other = tensor(other, dtype=input.dtype if input.is_floating_point() else None)
    return input, other


@refuses_complex("xlogy", 2, scalars=True)
def xlogy(input: Any, other: Any) -> Any:
    """``input * log(other)``, 0 where ``input == 0`` (a Python number allowed for either)."""
    return _xlogy(*_as_tensors(input, other))


@refuses_complex("xlog1py", 2, scalars=True)
def xlog1py(input: Any, other: Any) -> Any:
    """``input * log1p(other)``, 0 where ``input == 0`` (a Python number allowed for either)."""
    return _xlog1py(*_as_tensors(input, other))


def igamma(input: Any, other: Any) -> Any:
    """Regularized lower incomplete gamma function P(input, other). Differentiable in
    ``other`` only, as in PyTorch: d/dx P(a, x) = x**(a-1) e**-x / Gamma(a)."""
    return _igamma(*_as_tensors(input, other))


def igammac(input: Any, other: Any) -> Any:
    """Regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other)."""
    return _igammac(*_as_tensors(input, other))


# Compositions ------------------------------------------------------------------------------


def _float(input: Any) -> Any:
    if input.is_floating_point():
        return input
    from chainrule import _dtype

    return input.to(_dtype.get_default_dtype())


@refuses_complex("logit", 1)
def logit(input: Any, eps: float | None = None) -> Any:
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when ``eps`` is given (the gradient
    is then 0 outside that interval, as PyTorch's)."""
    input = _float(input)
    x = input if eps is None else input.clamp(eps, 1 - eps)
    return ns.log(x / (1 - x))


# Implicit reparameterization gradients -----------------------------------------------------
# A sample x = F^-1(u; a) of a distribution with CDF F moves with its parameter a as
# dx/da = -(dF/da)(x; a) / f(x; a) (u held fixed). The CDFs here are SciPy's regularized
# incomplete gamma and beta functions; their derivatives in the shape parameter are taken by
# Richardson-extrapolated central differences (error ~1e-10 relative), on the lower or upper
# tail function, whichever is smaller, so that the difference keeps its relative precision in the
# tails. PyTorch's own kernels use fitted approximations (about 1e-4 relative for the gamma).


def _d_shape(f: Any, fc: Any, a: Any, *rest: Any) -> Any:
    """d/da of f(a, *rest) (or of -fc(a, *rest), 1 - f), elementwise, by Richardson-extrapolated
    central differences."""

    def central(h: Any) -> Any:
        lo = f(a - h, *rest)
        hi = f(a + h, *rest)
        return (hi - lo) / (2 * h)

    def central_c(h: Any) -> Any:
        return -(fc(a + h, *rest) - fc(a - h, *rest)) / (2 * h)

    h = 1e-3 * np.maximum(a, 1e-3) if np.ndim(a) else 1e-3 * max(a, 1e-3)
    h = np.minimum(h, 0.5 * a)  # stay inside the parameter's domain a > 0
    upper = f(a, *rest) > 0.5
    d = np.where(
        upper, (4 * central_c(h / 2) - central_c(h)) / 3, (4 * central(h / 2) - central(h)) / 3
    )
    return d


def gamma_implicit_grad(alpha: Any, x: Any) -> np.ndarray:
    """dx/dalpha of a Gamma(alpha, 1) sample x: -(dP/dalpha)(alpha, x) / p(x; alpha)."""
    sc_inc, sc_incc, gammaln = _sc("gammainc"), _sc("gammaincc"), _sc("gammaln")
    a = np.asarray(alpha, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        a, x = np.broadcast_arrays(a, x)
        dp = _d_shape(sc_inc, sc_incc, a, x)
        log_pdf = (a - 1) * np.log(x) - x - gammaln(a)
        return -dp / np.exp(log_pdf)


def beta_implicit_grad(x: Any, a: Any, b: Any) -> np.ndarray:
    """dx/da of a Beta(a, b) sample x with b held fixed: -(dI_x/da)(a, b) / p(x; a, b)."""
    betainc, betaln = _sc("betainc"), _sc("betaln")

    def inc(a_: Any, b_: Any, x_: Any) -> Any:
        return betainc(a_, b_, x_)

    def incc(a_: Any, b_: Any, x_: Any) -> Any:
        return betainc(b_, a_, 1 - x_)  # I_x(a, b) = 1 - I_{1-x}(b, a)

    x = np.asarray(x, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(all="ignore"):
        x, a, b = np.broadcast_arrays(x, a, b)
        di = _d_shape(inc, incc, a, b, x)
        log_pdf = (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - betaln(a, b)
        return -di / np.exp(log_pdf)


def _raw(v: Any) -> np.ndarray:
    return np.asarray(v._data if hasattr(v, "_data") else v)


def _gamma_reparam_vjp(ctx: Any, g: Any) -> Any:
    # The derivative is a constant for double backward (PyTorch has none there either).
    d = gamma_implicit_grad(_raw(ctx.a), _raw(ctx.out)).astype(_raw(ctx.out).dtype)
    return g * (_as_like(g, d) if hasattr(g, "_data") else d)


_gamma_reparam = binary(
    "gamma_reparam",
    lambda xp, a, b: b.copy(),
    saves=("a", "out"),
    promote="same",
    node_name="StandardGammaBackward0",
    vjp=(_gamma_reparam_vjp, None),
    doc="The Gamma(alpha, 1) sample x, passed through; its VJP to alpha is the implicit "
    "reparameterization gradient g dx/dalpha.",
)


@defop(saves=("alpha", "out"), name="dirichlet_reparam", node_name="DirichletBackward")
def _dirichlet_reparam(xp: Any, alpha: Any, x: Any) -> Any:
    return x.copy()


@_dirichlet_reparam.vjp
def _dirichlet_reparam_vjp(ctx: Any, g: Any) -> Any:
    # With alpha_i moving alone, the marginal x_i ~ Beta(alpha_i, total - alpha_i) moves by
    # dx_i = beta_implicit_grad(x_i, alpha_i, total - alpha_i) and the other coordinates
    # shrink in proportion to keep the sum 1: dx_j/dalpha_i = D_i (delta_ij - x_j) with
    # D_i = dx_i / (1 - x_i). PyTorch's gradient is this formula.
    alpha, x = _raw(ctx.alpha), _raw(ctx.out)
    total = alpha.sum(-1, keepdims=True)
    d = (beta_implicit_grad(x, alpha, total - alpha) / (1 - x.astype(np.float64))).astype(x.dtype)
    if hasattr(g, "_data"):  # create_graph: d is a constant of the recorded backward
        s = (ctx.out * g).sum(-1, keepdim=True)
        return (g - s) * _as_like(g, d), None
    return (g - (x * g).sum(-1, keepdims=True)) * d, None


def _as_like(t: Any, a: np.ndarray) -> Any:
    from chainrule._creation import tensor

    return tensor(a, dtype=t.dtype)


def gamma_reparam(alpha: Any, x: Any) -> Any:
    """``x`` (a Gamma(alpha, 1) sample) carrying the implicit reparameterization gradient
    dx/dalpha back to ``alpha``."""
    return _gamma_reparam(alpha, x.detach())


def dirichlet_reparam(alpha: Any, x: Any) -> Any:
    """``x`` (a Dirichlet(alpha) sample, events on the last dim) carrying PyTorch's implicit
    reparameterization gradient back to ``alpha``."""
    return apply_op(_dirichlet_reparam, (alpha, x.detach()))
