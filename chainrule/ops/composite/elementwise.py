"""Elementwise forms composed from ops: hypot, sinc, heaviside, copysign, logaddexp(2),
logcumsumexp, exp2, deg2rad, rad2deg, positive, sgn, signbit, isposinf, isneginf, isreal."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops.composite._common import _is_t, _ops, _t, _xp
from chainrule.ops.composite.statistics import _bool_dtype

__all__ = [
    "hypot",
    "sinc",
    "heaviside",
    "copysign",
    "logaddexp",
    "logaddexp2",
    "logcumsumexp",
    "exp2",
    "deg2rad",
    "rad2deg",
    "positive",
    "sgn",
    "signbit",
    "isposinf",
    "isneginf",
    "isreal",
]


# Elementwise forms ------------------------------------------------------------------------------


@refuses_complex("hypot", 2)
def hypot(input: Any, other: Any) -> Any:
    """``sqrt(input**2 + other**2)``, scaled by the larger magnitude so that it cannot overflow.
    VJP: (g * a / h, g * b / h)."""
    ops = _ops()
    a, b = input.abs(), other.abs()
    m = ops.maximum(a, b)
    safe = ops.where(m > 0, m, 1.0)
    r = ops.minimum(a, b) / safe
    return ops.where(m > 0, m * (1 + r * r).sqrt(), m)


def sinc(input: Any) -> Any:
    """Normalized sinc: ``sin(pi x) / (pi x)``, 1 at 0 (where its gradient is 0)."""
    ops = _ops()
    x = input if input.is_floating_point() or input.is_complex() else input.float()
    px = math.pi * x
    zero = x == 0
    safe = ops.where(zero, 1.0, px)
    return ops.where(zero, 1.0, safe.sin() / safe)


@refuses_complex("heaviside", 2)
def heaviside(input: Any, values: Any) -> Any:
    """Step function: 0 where input < 0, ``values`` where input == 0, 1 where input > 0."""
    ops = _ops()
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    step = ops.where(input > 0, 1.0, 0.0).to(input.dtype)
    return ops.where(input == 0, values, step)


@refuses_complex("copysign", 2, scalars=True)
def copysign(input: Any, other: Any) -> Any:
    """``|input|`` with the sign of ``other`` (``-0.0`` counts as negative)."""
    ops = _ops()
    o = (
        other
        if _is_t(other)
        else _t(
            np.asarray(
                other, dtype=np.float64 if isinstance(other, float) else np.asarray(other).dtype
            )
        )
    )
    neg = _t(_xp(o).signbit(o._data))
    x = input if input.is_floating_point() else input.float()
    a = x.abs()
    return ops.where(neg, -a, a)


def logaddexp(input: Any, other: Any) -> Any:
    """``log(exp(a) + exp(b))`` computed as ``max + log1p(exp(-|a - b|))``; for complex
    input (PyTorch's), ``m + log1p(exp(n - m))`` with ``m`` the operand of larger real part."""
    ops = _ops()
    if (_is_t(input) and input.is_complex()) or (_is_t(other) and other.is_complex()):
        return _logaddexp_complex(input, other)
    m = ops.maximum(input, other)
    d = (input - other).abs()
    # Equal infinities: a - b is NaN; the answer is that infinity.
    same_inf = (input == other) & input.isinf()
    safe_d = ops.where(same_inf, 0.0, d)
    return ops.where(same_inf, input, m + (-safe_d).exp().log1p())


def _logaddexp_complex(input: Any, other: Any) -> Any:
    ops = _ops()
    x, y = (v if _is_t(v) else _t(np.asarray(v)) for v in (input, other))
    x_max = x.real >= y.real if x.is_complex() else x >= y.real
    m, n = ops.where(x_max, x, y), ops.where(x_max, y, x)
    mr = m.real
    # Equal infinite real parts: n - m is NaN; -inf gives the smaller operand, +inf the sum
    same_inf = (mr == n.real) & mr.isinf()
    d = ops.where(same_inf, 0.0, n - m)
    out = d.exp().log1p() + m
    return ops.where(same_inf, ops.where(mr < 0, n, (n.exp() + m.exp()).log()), out)


@refuses_complex("logaddexp2", 2)
def logaddexp2(input: Any, other: Any) -> Any:
    """``log2(2**a + 2**b)``."""
    ln2 = math.log(2.0)
    return logaddexp(input * ln2, other * ln2) / ln2


def logcumsumexp(input: Any, dim: int) -> Any:
    """``log(cumsum(exp(x)))`` along ``dim``, shifted by the slice maximum for stability; a
    complex input takes PyTorch's scan of log-add-exp steps (``logcumsumexp_complex``)."""
    ops = _ops()
    d = wrap_dim(int(dim), input.ndim)
    if input.is_complex():
        from chainrule.ops.reduction.scans import logcumsumexp_complex

        return logcumsumexp_complex(input, d)
    if input.numel() == 0:
        return input.clone()
    m = input.amax(d, keepdim=True).detach()
    m = ops.where(m.isinf(), 0.0, m)
    return (input - m).exp().cumsum(d).log() + m


def exp2(input: Any) -> Any:
    """``2 ** input``."""
    x = input if input.is_floating_point() or input.is_complex() else input.float()
    return (x * math.log(2.0)).exp()


def deg2rad(input: Any) -> Any:
    """Degrees to radians."""
    if input.is_complex():
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    x = input if input.is_floating_point() else input.float()
    return x * (math.pi / 180.0)


def rad2deg(input: Any) -> Any:
    """Radians to degrees."""
    if input.is_complex():
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    x = input if input.is_floating_point() else input.float()
    return x * (180.0 / math.pi)


def positive(input: Any) -> Any:
    """``input`` itself (``+x``); booleans raise as in PyTorch."""
    if input.dtype == _bool_dtype():
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def sgn(input: Any) -> Any:
    """``sign`` for real tensors; z / |z| for complex ones (0 at 0), composed from abs,
    where and div."""
    if input._data.dtype.kind != "c":
        return input.sign()
    a = input.abs()
    zero = a == 0
    return (input / (a + zero)) * ~zero


@refuses_complex("signbit", 1)
def signbit(input: Any) -> Any:
    """True where the sign bit is set (negative numbers and ``-0.0``)."""
    return _t(_xp(input).signbit(input._data))


@refuses_complex("isposinf", 1)
def isposinf(input: Any) -> Any:
    """True where the element is ``+inf``."""
    return input.isinf() & (input > 0)


@refuses_complex("isneginf", 1)
def isneginf(input: Any) -> Any:
    """True where the element is ``-inf``."""
    return input.isinf() & (input < 0)


def isreal(input: Any) -> Any:
    """True where the element is real: everywhere for a real tensor, where the imaginary part
    is 0 for a complex one."""
    xp, d = _xp(input), input._data
    return _t(xp.imag(d) == 0 if _kinds.is_complex(d) else xp.ones(d.shape, dtype=bool))
