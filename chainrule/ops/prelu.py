"""PReLU as one op: y = x where x > 0, else a x, with a slope ``a`` shared or per channel.

Composed as ``where(x > 0, x, a x)``, PReLU records three nodes, its forward makes a mask, a
product and a select, and its backward two selects, two products, a sum and an accumulation
of two gradients for x. Here the forward is PyTorch's select, bit for bit: on NumPy
float32/float64 arrays with every slope in (0, 1] (or every slope >= 1, finite) it is
``max(x, a x)`` (``min``), two passes (``_prelu_arrays``); otherwise ``x * f`` with f = 1
where x > 0 and the slope elsewhere (``ops/unary/elementwise.py``'s ``_slope_select``: four
branch-free passes on large arrays, NumPy's ``where`` on small ones or a slope for which
``f`` would not be exact, such as an infinite one). So the signs of zeros are PyTorch's
(x = -0 gives a (-0); x = +0 with a negative slope gives -0), and so are NaNs and infinities
(a NaN x gives NaN; -inf times a slope of 0 is NaN; an infinite slope leaves a positive x as
it is). The VJP is the same select of g for x and, for the slope, per sample and channel the
sum of g min(x, 0) as a product of rows, the samples' sums added in order
(``_prelu_vjp_arrays``; the same operations on CuPy arrays and compile replays). On NumPy
arrays the forward and the VJP work over parts of dim 0, split across the intra-op pool from
``backends/_chunked.py``'s ``MIN_ELEMENTS``, with the same bits as unsplit. Under
``create_graph`` the VJP recomputes with Tensor ops, so it is differentiable again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule.backends import _chunked, backend_of
from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.unary.elementwise import (
    _INT_OF,
    _slope_factors,
    _slope_select,
    _slope_select_into,
)

__all__ = ["prelu_kernel"]


@defop(name="prelu_kernel", saves=("x", "a"), node_name="PreluKernelBackward0")
def _prelu_kernel(xp: Any, x: Any, a: Any) -> Any:
    """y = x where x > 0, else a x, ``a`` broadcasting against x (PyTorch's select, bit for bit).
    VJP: gx = g where x > 0, else a g; ga = sum of (0 where x > 0, else g x) to a's shape."""
    y = _prelu_arrays(xp, x, a)
    return _slope_select(xp, x > 0, x, a) if y is None else y


_FAST = (np.dtype(np.float32), np.dtype(np.float64))


def _splittable(x: Any, a: Any) -> bool:
    """NumPy float32/float64 arrays, the slope of x's dtype and one (of fewer dims than x) or
    one per channel (shaped (C, 1, ...) against x's dim 1), so that the kernels below can work
    on parts of dim 0."""
    return type(x) is np.ndarray and type(a) is np.ndarray and _shapes_ok(x, a)


def _shapes_ok(x: Any, a: Any) -> bool:
    """float32/float64, a of x's dtype, one slope or one per channel (dim 1)."""
    dt = getattr(x, "dtype", None)
    if dt not in _FAST or getattr(a, "dtype", None) != dt or a.ndim >= x.ndim:
        return False
    return a.size == 1 or a.shape == (x.shape[1],) + (1,) * (x.ndim - 2)


def _prelu_arrays(xp: Any, x: Any, a: Any) -> Any:
    """PReLU's forward in two passes where every slope is in (0, 1] or in [1, inf):
    y = max(x, a x) (or min), which is ``where(x > 0, x, a x)`` bit for bit (for 0 < a <= 1,
    a x rounds to a value between x and 0, so the larger of the two is x for x > 0 and a x
    otherwise, signed zeros, infinities and NaNs included), against four passes for the
    select. Split over dim 0 at ``_chunked.MIN_ELEMENTS``. None where it does not apply.

    Measured on (8, 32, 32, 32) float32, a = 0.25, thread CPU time, best of 200: 0.17 ms
    (``_slope_select``) -> 0.055 ms."""
    if not _splittable(x, a):
        return None
    flat = a.reshape(-1)
    lo, hi = (float(flat[0]),) * 2 if flat.size == 1 else (float(flat.min()), float(flat.max()))
    if 0 < lo and hi <= 1:
        pick = xp.maximum
    elif 1 <= lo and hi < float("inf"):
        pick = xp.minimum
    else:  # negative, zero, NaN or infinite slopes, or mixed: the select
        return None
    y = xp.empty(x.shape, x.dtype)

    def part(r: tuple[int, int]) -> None:
        xs, ys = x[r[0] : r[1]], y[r[0] : r[1]]
        xp.multiply(xs, a, out=ys)
        pick(xs, ys, out=ys)

    _chunked.run(part, _chunked.ranges(x.shape[0], x.size))
    return y


@_prelu_kernel.vjp
def _prelu_kernel_vjp(ctx: Any, g: Any) -> Any:
    x, a = ctx.x, ctx.a
    nx, na = ctx.needs_input_grad
    if type(g) is np.ndarray and g.shape == getattr(x, "shape", None) and _splittable(x, a):
        if g.dtype == x.dtype:
            return _prelu_vjp_arrays(backend_of(g).xp, x, a, g, nx, na)
    if not nx:
        gx = None
    elif hasattr(g, "grad_fn") or hasattr(x, "grad_fn"):  # create_graph: Tensor ops
        gx = ns.where(x > 0, g, g * a)
    else:  # arrays: g * f with f = 1 or a, no select (ops/unary/elementwise.py)
        gx = _slope_select(backend_of(g).xp, x > 0, g, a)
    if not na:
        return gx, None
    if hasattr(x, "grad_fn"):
        return gx, g * ns.minimum(x, 0 * x)
    xp = backend_of(x).xp
    if _shapes_ok(x, a) and getattr(g, "shape", None) == x.shape and g.dtype == x.dtype:
        # as _prelu_vjp_arrays, so that CuPy and compiled replays round as NumPy does
        channels = a.size if a.size > 1 else 1
        zeros = xp.zeros(x.size // max(1, x.shape[0] * channels), x.dtype)
        return gx, _slope_grad(_sample_sums(xp, x, g, zeros, channels), a)
    return gx, g * xp.minimum(x, 0)


@refuses_complex("prelu")
def prelu_kernel(x: Any, a: Any) -> Any:
    """PReLU with the slope ``a`` already shaped to broadcast against ``x``; see
    ``_prelu_kernel``."""
    return apply_op(_prelu_kernel, (x, a))


def _prelu_vjp_arrays(xp: Any, x: Any, a: Any, g: Any, nx: bool, na: bool) -> tuple[Any, Any]:
    """The VJP on NumPy arrays in one sweep over parts of dim 0 (split across the intra-op pool
    from ``_chunked.MIN_ELEMENTS`` elements), each part while it is in cache:
    gx = ``where(x > 0, g, a g)`` bit for bit (``_slope_select_into``'s four passes where f is
    exact, else g XOR ((g XOR a g) AND m) with m all ones where not x > 0), and
    ga = sum of g min(x, 0) to a's shape as one product of rows per sample (the minimum taken
    against a row of zeros, which NumPy vectorises, where a scalar 0 is 2.5x slower), the
    parts' sums added in order. The engine's sum of a full-size ga is gone.

    Measured on (8, 32, 32, 32) float32, a = 0.25, thread CPU time, best of 200: 0.29 ms ->
    0.19 ms at 1 thread."""
    it = _INT_OF[x.dtype]
    gx = xp.empty(x.shape, x.dtype) if nx else None
    ks = _slope_factors(xp, x, x, a) if nx else None  # (x stands in for the mask's shape)
    channels = a.size if a.size > 1 else 1
    lead = x.shape[0]
    inner = x.size // max(1, lead * channels)
    zeros = xp.zeros(inner, x.dtype)

    def part(r: tuple[int, int]) -> Any:
        xs, gs = x[r[0] : r[1]], g[r[0] : r[1]]
        passes = xp.greater(xs, 0)
        if gx is not None:
            o = gx[r[0] : r[1]]
            if ks is not None:
                _slope_select_into(xp, passes, gs, ks[0], ks[1], o)
            else:  # NaN, infinite or -0 slopes: a select by bits
                m = xp.empty(xs.shape, it)
                xp.subtract(passes.view(xp.int8), 1, out=m, casting="unsafe")  # 0 or all bits
                xp.multiply(gs, a, out=o)
                oi, gi = o.view(it), gs.view(it)
                xp.bitwise_xor(oi, gi, out=oi)
                xp.bitwise_and(oi, m, out=oi)
                xp.bitwise_xor(oi, gi, out=oi)
        if not na:
            return None
        return _sample_sums(xp, xs, gs, zeros, channels)

    parts = _chunked.run(part, _chunked.ranges(lead, x.size))
    if not na:
        return gx, None
    rows = parts[0] if len(parts) == 1 else xp.concatenate(parts)
    return gx, _slope_grad(rows, a)


def _sample_sums(xp: Any, x: Any, g: Any, zeros: Any, channels: int) -> Any:
    """(samples, channels): per sample and channel, sum of g min(x, 0) as a row product."""
    n = x.shape[0]
    neg = xp.minimum(x.reshape(n, channels, zeros.shape[0]), zeros)
    rows = xp.matmul(neg[:, :, None, :], g.reshape(n, channels, zeros.shape[0], 1))
    return rows.reshape(n, channels)


def _slope_grad(rows: Any, a: Any) -> Any:
    """The samples' sums added in order (an accumulate: the same bits however the samples were
    split into parts, and on every array kind), shaped as a."""
    if rows.shape[0] == 0:
        return rows.sum(axis=0).reshape(a.shape)
    return rows.cumsum(axis=0)[-1].reshape(a.shape)
