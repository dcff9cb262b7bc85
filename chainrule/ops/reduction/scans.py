"""Scans: cumsum and cumprod."""

from __future__ import annotations

import builtins
import math
from typing import Any

from chainrule import _kinds
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.complex_numbers import cj
from chainrule.ops.reduction._common import _cast, _errstate, _out_dtype

__all__ = ["cumsum", "cumprod"]


# cumsum / cumprod ----------------------------------------------------------------------------


@defop(name="cumsum", node_name="CumsumBackward0")
def _cumsum(xp: Any, x: Any, *, dim: int, reverse: bool = False) -> Any:
    """Running sum along ``dim`` (from the end when ``reverse``).
    VJP: the running sum of g in the other direction."""
    if x.ndim == 0:
        r = x.copy()
    elif reverse:
        r = xp.flip(xp.cumsum(xp.flip(x, axis=dim), axis=dim), axis=dim)
    else:
        r = xp.cumsum(x, axis=dim)
    if _kinds.is_integral(x, include_bool=True):
        r = r.astype("int64", copy=False)
    return r


@_cumsum.vjp
def _cumsum_vjp(ctx: Any, g: Any) -> Any:
    return (ns.cumsum(g, dim=ctx.dim, reverse=not ctx.reverse),)


@defop(name="cumprod", saves=("x", "out"), node_name="CumprodBackward0")
def _cumprod(xp: Any, x: Any, *, dim: int) -> Any:
    """Running product along ``dim``.

    VJP: without zeros, rcumsum(g out) / x (rcumsum = running sum from the end). With zeros,
    let f be the first zero of a slice: before f the same formula holds; after f the
    gradient is 0; at f it is rcumsum(g * cumprod(x with x_f := 1)) at f. Exact to all orders.
    """
    r = x.copy() if x.ndim == 0 else xp.cumprod(x, axis=dim)
    if _kinds.is_integral(x, include_bool=True):
        r = r.astype("int64", copy=False)
    return r


@_cumprod.vjp
def _cumprod_vjp(ctx: Any, g: Any) -> Any:
    # complex x: the same formulas in conj(x), conj(out) (Note [Wirtinger gradients])
    return (_cumprod_grad(cj(ctx.x), cj(ctx.out), ctx.dim, g),)


def _cumprod_grad(x: Any, out: Any, d: int, g: Any) -> Any:
    z = ns.eq(x, 0.0)
    if not builtins.bool(ns.sum(z)):
        return ns.cumsum(g * out, dim=d, reverse=True) / x
    seen = ns.cumsum(z, dim=d, reverse=False)
    before = ns.eq(seen, 0)
    first = z & ns.eq(seen, 1)
    xn = ns.where(z, 1.0, x)
    head = ns.where(before, ns.cumsum(g * out, dim=d, reverse=True) / xn, 0.0)
    x1 = ns.where(first, 1.0, x)
    c1 = ns.cumprod(x1, dim=d)
    grad = head + ns.where(first, ns.cumsum(g * c1, dim=d, reverse=True), 0.0)
    if hasattr(g, "grad_fn"):
        # Under create_graph only: after the first zero x_f the gradient is x_f times the
        # gradient of cumprod at x1 (x with x_f := 1). Its value is 0, but its derivative in
        # x_f is not, and the second derivative needs it.
        after = ns.gt(seen, 0) & ns.eq(first, False)
        xf = ns.sum(ns.where(first, x, 0.0), dim=(d,), keepdim=True)
        grad = grad + ns.where(after, xf * _cumprod_grad(x1, c1, d, g), 0.0)
    return grad


def _scan_args(input: Any, dim: Any, dtype: Any) -> tuple[Any, int]:
    input = _cast(input, dtype)
    return input, wrap_dim(int(dim), input.ndim)


def cumsum(input: Any, dim: int, *, dtype: Any = None) -> Any:
    """Running sum along ``dim``. Integer and bool inputs give int64."""
    input, d = _scan_args(input, dim, dtype)
    return _out_dtype(apply_op(_cumsum, (input,), {"dim": d, "reverse": False}), dtype)


def cumprod(input: Any, dim: int, *, dtype: Any = None) -> Any:
    """Running product along ``dim``. Integer and bool inputs give int64."""
    input, d = _scan_args(input, dim, dtype)
    return _out_dtype(apply_op(_cumprod, (input,), {"dim": d}), dtype)


# logcumsumexp of complex input ---------------------------------------------------------------


def _log_add_exp_c(xp: Any, x: Any, acc: Any) -> Any:
    """PyTorch's complex log-add-exp step of its logcumsumexp scan: with ``lo``/``hi`` the
    operand of smaller/larger real part (``acc`` on a tie), ``log1p(exp(lo - hi)) + hi``,
    so the imaginary part is ``hi``'s plus one in (-pi, pi], never reduced to the principal
    branch; NaN if either has a NaN part; equal infinite real parts give ``lo`` (-inf) or
    ``log(exp(lo) + exp(hi))`` (+inf)."""
    x_lo = x.real < acc.real
    lo = xp.where(x_lo, x, acc)
    hi = xp.where(x_lo, acc, x)
    nan = xp.isnan(x.real) | xp.isnan(x.imag) | xp.isnan(acc.real) | xp.isnan(acc.imag)
    inf = ~xp.isfinite(lo.real) & (lo.real == hi.real)
    out = xp.log1p(xp.exp(lo - hi)) + hi
    if inf.any():
        both = xp.log(xp.exp(lo) + xp.exp(hi))
        out = xp.where(inf, xp.where(lo.real < 0, lo, both), out)
    if nan.any():
        out = xp.where(nan, xp.asarray(complex("nan+nanj"), dtype=out.dtype), out)
    return out


@defop(name="logcumsumexp_complex", saves=("x", "out"), node_name="LogcumsumexpBackward0")
def _logcumsumexp_complex(xp: Any, x: Any, *, dim: int) -> Any:
    """log(cumsum(exp(x))) along ``dim`` of a complex x, as PyTorch's scan: out_0 = x_0 and
    out_i = log-add-exp(x_i, out_{i-1}) (``_log_add_exp_c``), one vectorised step per index
    of ``dim``. VJP: PyTorch's, in log space: conj(exp(x + reverse logcumsumexp(log(conj g)
    - out))), which is sum over i >= j of g_i conj(exp(x_j - out_i))."""
    if x.ndim == 0 or x.size == 0:
        return x.copy()
    xm = xp.moveaxis(x, dim, 0)
    out = xp.empty_like(xm)
    acc = xp.full(xm.shape[1:], complex(-math.inf, 0.0), dtype=x.dtype)
    with _errstate(xp):
        for i in range(xm.shape[0]):
            acc = _log_add_exp_c(xp, xm[i], acc)
            out[i] = acc
    return xp.moveaxis(out, 0, dim)


@_logcumsumexp_complex.vjp
def _logcumsumexp_complex_vjp(ctx: Any, g: Any) -> Any:
    d = ctx.dim
    if len(ctx.input_shapes[0]) == 0:
        return (g,)
    rev = ns.flip(
        ns.logcumsumexp_complex(ns.flip(ns.log(cj(g)) - ctx.out, dims=(d,)), dim=d), dims=(d,)
    )
    return (cj(ns.exp(rev + ctx.x)),)


def logcumsumexp_complex(input: Any, dim: int) -> Any:
    """``logcumsumexp`` of a complex tensor along the wrapped ``dim`` (see the op above)."""
    return apply_op(_logcumsumexp_complex, (input,), {"dim": dim})
