"""Distances (cdist, dist, renorm), integrals and statistics (trapezoid/trapz,
cumulative_trapezoid, cov, corrcoef, diff, nansum, nanmean, aminmax)."""

from __future__ import annotations

import builtins
import math
from typing import Any

from chainrule._autocast_state import state as _ac
from chainrule.ops import _autocast
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops.composite._common import _is_t, _ops

__all__ = [
    "cdist",
    "dist",
    "renorm",
    "trapezoid",
    "trapz",
    "cumulative_trapezoid",
    "cov",
    "corrcoef",
    "diff",
    "nansum",
    "nanmean",
    "aminmax",
]


# Distances ---------------------------------------------------------------------------------------


def cdist(
    x1: Any, x2: Any, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
) -> Any:
    """Batched p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M).
    For p = 2 the gradient at zero distance is 0, as PyTorch's."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        x1, x2 = _autocast.fp32(x1, x2)
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(
            f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D"
            if x1.ndim < 2
            else f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D"
        )
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.is_floating_point():
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {_dtype_name(x)}"
            )
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _pnorm(diff, p, -1)


def _pnorm(d: Any, p: float, dim: int) -> Any:
    ops = _ops()
    if p == 2:
        sq = (d * d).sum(dim)
        # sqrt's gradient is infinite at 0; PyTorch gives 0 for coincident points.
        safe = ops.where(sq > 0, sq, 1.0)
        return ops.where(sq > 0, safe.sqrt(), 0.0)
    if p == 0:
        return (d != 0).to(d.dtype).sum(dim)
    if math.isinf(p):
        return d.abs().amax(dim)
    if p == 1:
        return d.abs().sum(dim)
    return _vector_norm(d, p, dim)


def _vector_norm(x: Any, p: float, dim: Any, keepdim: bool = False) -> Any:
    from chainrule.ops.reduction import vector_norm_impl

    return vector_norm_impl(x, p, dim, keepdim, None, name="linalg.vector_norm")


def dist(input: Any, other: Any, p: float = 2) -> Any:
    """p-norm of ``input - other`` (broadcast), as a 0-d tensor, recorded as PyTorch's one
    ``DistBackward0`` (Note [composite nodes] in chainrule/ops/composite_node.py)."""
    from chainrule.ops.composite_node import composite

    order = float(p)
    return composite("DistBackward0", lambda a, b: _dist(a, b, order), (input, other))


def _dist(input: Any, other: Any, p: float) -> Any:
    return _vector_norm((input - other).reshape(-1), p, 0)


def renorm(input: Any, p: float, dim: int, maxnorm: float) -> Any:
    """Each slice along ``dim`` rescaled so that its p-norm is at most ``maxnorm``."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = wrap_dim(int(dim), input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    norms = _vector_norm(input, p, others, keepdim=True)
    # PyTorch scales by maxnorm / (norm + 1e-7) where the norm exceeds maxnorm.
    factor = _ops().where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * factor


# Integrals and statistics ------------------------------------------------------------------------


def trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    """Trapezoid rule along ``dim``: spacing ``dx`` (default 1) or sample points ``x``."""
    d = wrap_dim(int(dim), y.ndim)
    n = y.shape[d]
    if n == 0:
        return y.sum(d)
    lo, hi = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is not None and _is_t(x):
        xd = d if x.ndim == y.ndim else x.ndim - 1
        dxs = x.narrow(xd, 1, n - 1) - x.narrow(xd, 0, n - 1)
        return ((lo + hi) * dxs).sum(d) / 2
    step = 1.0 if dx is None and x is None else (x if dx is None else dx)
    return (lo + hi).sum(d) * step / 2


def trapz(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    """Running trapezoid integral along ``dim`` (one element shorter than ``y``)."""
    d = wrap_dim(int(dim), y.ndim)
    n = y.shape[d]
    if n == 0:
        return y
    lo, hi = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is not None and _is_t(x):
        xd = d if x.ndim == y.ndim else x.ndim - 1
        dxs = x.narrow(xd, 1, n - 1) - x.narrow(xd, 0, n - 1)
        return ((lo + hi) * dxs / 2).cumsum(d)
    step = 1.0 if dx is None and x is None else (x if dx is None else dx)
    return ((lo + hi) * step / 2).cumsum(d)


def cov(input: Any, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
    """Covariance of the rows of ``input`` (variables) over its columns (observations), with
    optional integer frequency and float observation weights, as ``numpy.cov``."""
    if input.ndim > 2:
        raise ValueError(
            f"cov(): expected input to have two or fewer dimensions but got an "
            f"input with {input.ndim} dimensions"
        )
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not x.is_floating_point():
        from chainrule._dtype import get_default_dtype

        x = x.to(get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        avg = x.mean(1)
        w_sum = float(n)
        norm = w_sum - correction
        xc = x - avg.unsqueeze(1)
        c = (xc @ xc.transpose(0, 1)) / builtins.max(norm, 0)
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights.to(x.dtype)).sum() / w_sum
        xc = x - avg.unsqueeze(1)
        c = (xc * w) @ xc.transpose(0, 1) / _ops().clamp(norm, min=0)
    return c.squeeze() if input.ndim < 2 else c


def corrcoef(input: Any) -> Any:
    """Pearson correlation coefficients of the rows, clipped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = _ops().diagonal(c)
    stddev = d.sqrt()
    c = c / stddev.unsqueeze(1) / stddev.unsqueeze(0)
    return _ops().clamp(c, -1, 1)


def diff(input: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """``n``-th forward difference along ``dim`` (booleans: ``!=``), after joining ``prepend``
    and ``append``."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(int(dim), input.ndim)
    x = input
    parts = [t for t in (prepend, x, append) if t is not None]
    if len(parts) > 1:
        x = _ops().cat(parts, d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = (a != b) if x.dtype == _bool_dtype() else a - b
    return x


def _bool_dtype() -> Any:
    from chainrule import _dtype

    return _dtype.bool


@refuses_complex("nansum", 1)
def nansum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Sum treating NaN as zero. VJP: g where the input is not NaN."""
    x = input if dtype is None else input.to(dtype)
    if x.is_floating_point():
        x = _ops().where(x.isnan(), 0.0, x)
    return x.sum() if dim is None else x.sum(dim, keepdim)


@refuses_complex("nanmean", 1)
def nanmean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Mean over the non-NaN elements (NaN where all are NaN)."""
    if not input.is_floating_point():
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{_dtype_name(input)}"
        )
    count = (~input.isnan()).sum() if dim is None else (~input.isnan()).sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _dtype_name(t: Any) -> str:
    from chainrule._tensor import _type_name

    return _type_name(t._data.dtype).replace("Tensor", "")


@refuses_complex("aminmax", 1)
def aminmax(input: Any, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """``(min, max)`` over ``dim`` (or all elements), as a named pair."""
    from chainrule import return_types

    if dim is None:
        lo, hi = input.amin(), input.amax()
        if keepdim:
            lo = lo.reshape((1,) * input.ndim)
            hi = hi.reshape((1,) * input.ndim)
    else:
        lo, hi = input.amin(dim, keepdim), input.amax(dim, keepdim)
    return return_types.aminmax._make_of(lo, hi)
