"""The table of elementwise maths: neg, exp/expm1/log/log1p/log2/log10, sqrt/rsqrt/reciprocal,
trigonometric and hyperbolic functions, sigmoid/logsigmoid, relu (and ``threshold_backward``,
Note [connected masks]), abs and sign."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule.backends import _chunked
from chainrule.ops._registry import OpDef, ns, unary
from chainrule.ops.complex_numbers import cj
from chainrule.ops.unary._common import _LN2, _LN10, _cast

_ndarray = np.ndarray
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)
_BOOL = np.dtype(np.bool_)

__all__ = [
    "neg",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "sigmoid",
    "logsigmoid",
    "relu",
    "abs",
    "absolute",
    "sign",
]


def _neg_fwd(xp: Any, x: Any) -> Any:
    if _kinds.is_bool(x):
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return xp.negative(x)


neg = unary("neg", _neg_fwd, vjp=lambda ctx, g: -g, promote=None, doc="-x elementwise. VJP: -g.")
exp = unary(
    "exp",
    "exp",
    saves="out",
    vjp=lambda ctx, g: (
        g
        * (
            o
            if type(o := ctx.out) is _ndarray and (t := o.dtype) is not _C64 and t is not _C128
            else cj(o)
        )
    ),
    doc="e**x elementwise. VJP: g * conj(e**x), read back from the saved output.",
)
expm1 = unary(
    "expm1",
    "expm1",
    saves="out",
    vjp=lambda ctx, g: g * cj(ctx.out + 1),
    doc="e**x - 1, accurate near 0. VJP: g conj(e**x).",
)
log = unary(
    "log",
    "log",
    saves="x",
    vjp=lambda ctx, g: g / cj(ctx.x),
    doc="Natural logarithm. VJP: g / conj(x).",
)
log1p = unary(
    "log1p",
    "log1p",
    saves="x",
    vjp=lambda ctx, g: g / cj(ctx.x + 1),
    node_name="Log1PBackward0",
    doc="log(1 + x), accurate near 0. VJP: g / (1 + x).",
)
log2 = unary(
    "log2",
    "log2",
    saves="x",
    vjp=lambda ctx, g: g / cj(ctx.x * _LN2),
    doc="Base-2 logarithm. VJP: g / (x ln 2).",
)
log10 = unary(
    "log10",
    "log10",
    saves="x",
    vjp=lambda ctx, g: g / cj(ctx.x * _LN10),
    doc="Base-10 logarithm. VJP: g / (x ln 10).",
)
sqrt = unary(
    "sqrt",
    "sqrt",
    saves="out",
    vjp=lambda ctx, g: g / (2 * cj(ctx.out)),
    doc="Square root. VJP: g / (2 conj(sqrt(x))).",
)
rsqrt = unary(
    "rsqrt",
    lambda xp, x: 1 / xp.sqrt(x),
    saves="out",
    vjp=lambda ctx, g: -0.5 * g * cj(ctx.out * ctx.out * ctx.out),
    doc="1 / sqrt(x). VJP: -g / (2 x**1.5) = -g out**3 / 2.",
)
reciprocal = unary(
    "reciprocal",
    lambda xp, x: 1 / x,
    saves="out",
    vjp=lambda ctx, g: -g * cj(ctx.out * ctx.out),
    doc="1 / x. VJP: -g conj(1 / x**2).",
)
sin = unary(
    "sin",
    "sin",
    saves="x",
    vjp=lambda ctx, g: g * cj(ns.cos(ctx.x)),
    doc="Sine. VJP: g conj(cos(x)).",
)
cos = unary(
    "cos",
    "cos",
    saves="x",
    vjp=lambda ctx, g: -g * cj(ns.sin(ctx.x)),
    doc="Cosine. VJP: -g conj(sin(x)).",
)
tan = unary(
    "tan",
    "tan",
    saves="out",
    vjp=lambda ctx, g: g * cj(1 + ctx.out * ctx.out),
    doc="Tangent. VJP: g conj(1 + tan(x)**2).",
)
asin = unary(
    "asin",
    "arcsin",
    saves="x",
    vjp=lambda ctx, g: g / cj(ns.sqrt(1 - ctx.x * ctx.x)),
    doc="Inverse sine. VJP: g / sqrt(1 - x**2).",
)
acos = unary(
    "acos",
    "arccos",
    saves="x",
    vjp=lambda ctx, g: -g / cj(ns.sqrt(1 - ctx.x * ctx.x)),
    doc="Inverse cosine. VJP: -g / sqrt(1 - x**2).",
)
atan = unary(
    "atan",
    "arctan",
    saves="x",
    vjp=lambda ctx, g: g / cj(1 + ctx.x * ctx.x),
    doc="Inverse tangent. VJP: g / (1 + x**2).",
)
arcsin, arccos, arctan = asin, acos, atan
sinh = unary(
    "sinh",
    "sinh",
    saves="x",
    vjp=lambda ctx, g: g * cj(ns.cosh(ctx.x)),
    doc="Hyperbolic sine. VJP: g cosh(x).",
)
cosh = unary(
    "cosh",
    "cosh",
    saves="x",
    vjp=lambda ctx, g: g * cj(ns.sinh(ctx.x)),
    doc="Hyperbolic cosine. VJP: g sinh(x).",
)
tanh = unary(
    "tanh",
    "tanh",
    saves="out",
    vjp=lambda ctx, g: (
        g
        * (
            d
            if type(d := 1 - ctx.out * ctx.out) is _ndarray
            and (t := d.dtype) is not _C64
            and t is not _C128
            else cj(d)
        )
    ),
    doc="Hyperbolic tangent. VJP: g conj(1 - tanh(x)**2).",
)


def _sigmoid(xp: Any, x: Any) -> Any:
    if x.dtype.kind == "c":  # no ordering: the plain form (PyTorch's complex kernel)
        return (1 / (1 + xp.exp(-x))).astype(x.dtype, copy=False)
    # exp(-|x|) never overflows; pick the algebraically equal form per sign.
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


sigmoid = unary(
    "sigmoid",
    _sigmoid,
    saves="out",
    vjp=lambda ctx, g: g * cj(ctx.out * (1 - ctx.out)),
    doc="1 / (1 + e**-x), overflow-free for real x. VJP: g conj(s (1 - s)).",
)


def _logsigmoid_fwd(xp: Any, x: Any) -> Any:
    # log(sigmoid(x)) = min(x, 0) - log1p(e**-|x|), without overflow.
    return _cast(xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x))), x)


logsigmoid = unary(
    "logsigmoid",
    _logsigmoid_fwd,
    saves="x",
    vjp=lambda ctx, g: g * ns.sigmoid(-ctx.x),
    node_name="LogSigmoidBackward0",
    doc="log(sigmoid(x)). VJP: g sigmoid(-x).",
)


def _relu_fwd(xp: Any, x: Any) -> Any:
    if _kinds.is_bool(x):
        raise RuntimeError("Boolean inputs not supported for relu")
    # Against an array of zeros, written in place: NumPy's maximum with a scalar operand skips
    # its SIMD loop (measured 1.8x slower on a 400k-element float32 array).
    # x second: where x is -0.0 NumPy returns it, as PyTorch's relu does.
    out = xp.zeros_like(x)
    return xp.maximum(out, x, out=out)


def _threshold_backward_fwd(
    xp: Any, g: Any, x: Any, *, lo: float, hi: float | None, slope: float, nan_passes: bool
) -> Any:
    """The VJP of relu, hardtanh and leaky_relu: g where lo < x (< hi), slope g elsewhere; a
    NaN x passes g when ``nan_passes`` (PyTorch's threshold_backward and hardtanh_backward),
    else gets slope g (leaky_relu_backward)."""
    zero = slope == 0.0 and math.copysign(1.0, slope) > 0  # (-0: g (-0), zeros of g's other sign)
    if nan_passes:
        stops = (x <= lo) if hi is None else (x <= lo) | (x >= hi)
        if zero:  # PyTorch's threshold_backward and hardtanh_backward select: +0, whatever g is
            return _zero_where(xp, stops, g)
        passes = ~stops
    else:
        passes = x > lo if hi is None else (x > lo) & (x < hi)
    if zero:  # PyTorch's leaky_relu_backward multiplies: g 0 (-0 for a negative g, NaN for inf)
        return g * passes
    return _slope_select(xp, passes, g, slope)


_INT_OF = {
    np.dtype(np.float16): np.dtype(np.int16),
    np.dtype(np.float32): np.dtype(np.int32),
    np.dtype(np.float64): np.dtype(np.int64),
}


def _zero_where(xp: Any, stops: Any, g: Any) -> Any:
    """``where(stops, 0, g)``, bit for bit (+0 where ``stops``, also for a negative, infinite
    or NaN g), as ``g``'s bits AND a mask that is all ones where not ``stops`` (``stops - 1``
    as g's integer type): two branch-free passes, where NumPy's ``where`` branches on each
    element and, on the random signs of an activation, mispredicts half of them (0.89 ms
    against 0.06 ms on a (8, 32, 32, 32) float32 relu gradient; ``g * ~stops``, 0.07 ms, gives
    -0 for a negative g and NaN for an infinite one). What cannot be viewed as integers (a
    complex g, a compile Tracer, a broadcast mask) takes ``where``."""
    dt = getattr(g, "dtype", None)
    it = _INT_OF.get(dt) if dt is not None else None
    if (
        it is None
        or type(g) is not _ndarray
        or type(stops) is not _ndarray
        or stops.shape != g.shape
        or stops.dtype != _BOOL
    ):
        return xp.where(stops, xp.zeros((), dtype=dt), g)
    m = xp.empty(g.shape, dtype=it)
    xp.subtract(stops.view(xp.int8), 1, out=m, casting="unsafe")  # 0 or -1: no bits, or all
    xp.bitwise_and(g.view(it), m, out=m)
    return m.view(dt)


# Below this many elements xp.where's per-element branch costs less than three extra passes.
_FACTOR_MIN = 4096
_FACTOR_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _slope_select(xp: Any, passes: Any, g: Any, slope: Any) -> Any:
    """``where(passes, g, g * slope)``, bit for bit, as ``g * f`` with ``f = 1`` where
    ``passes`` and ``slope`` elsewhere: four branch-free passes (``f = passes``, ``f *= 1 - slope``,
    ``f += slope``, ``f *= g``) where NumPy's ``where`` branches on each element and so, on the
    random signs of an activation, mispredicts half of them (1.1 ms against 0.15 ms on a
    (8, 32, 32, 32) float32 LeakyReLU gradient). ``f`` is exactly 1 or ``slope`` (checked: the
    two roundings of ``(1 - slope) + slope`` must give 1), so ``g f`` is ``g`` or ``g slope``
    exactly, infinities, NaNs and the signs of zeros included (a slope of -0 takes ``where``).
    ``slope`` is a number or an array of g's dtype that broadcasts against g (PReLU's
    per-channel slopes). On NumPy arrays the passes run over parts of dim 0 split across the
    intra-op pool (``backends/_chunked.py``) from ``_chunked.MIN_ELEMENTS`` elements.

    ``f = passes`` is a cast copy (``astype``, 24 us on 256k elements) where it was
    ``multiply(passes, 1 - slope, dtype=...)`` (61 us: a buffered mixed-type loop); measured on
    a (8, 32, 32, 32) float32 gradient, thread CPU time, best of 200: 137 -> 101 us."""
    ks = _slope_factors(xp, passes, g, slope)
    if ks is None:
        return xp.where(passes, g, g * slope)
    k, s = ks
    out = xp.empty(g.shape, g.dtype)
    if type(g) is not _ndarray or (getattr(s, "ndim", 0) >= g.ndim and s.shape[0] != 1):
        _slope_select_into(xp, passes, g, k, s, out)
        return out

    def part(r: tuple[int, int]) -> None:
        a, b = r
        _slope_select_into(xp, passes[a:b], g[a:b], k, s, out[a:b])

    _chunked.run(part, _chunked.ranges(g.shape[0], g.size))
    return out


def _slope_factors(xp: Any, passes: Any, g: Any, slope: Any) -> tuple[Any, Any] | None:
    """``(1 - slope, slope)`` in g's dtype where ``_slope_select_into`` gives the select's bits,
    else None (a small array, another array kind or dtype, a broadcast mask, a slope for which
    ``f`` would not be exact)."""
    dt = getattr(g, "dtype", None)
    if (
        dt is None
        or g.size < _FACTOR_MIN
        or dt not in _FACTOR_DTYPES
        or passes.shape != g.shape
        or type(g) is not type(passes)
    ):
        return None
    if isinstance(slope, (int, float)):
        if not math.isfinite(slope):
            return None
        s = dt.type(slope)
        k = dt.type(1) - s
        # (a slope of -0: f = 0 k + s would be +0, and g f a zero of the wrong sign)
        exact = bool(dt.type(k + s) == 1) and not (s == 0 and math.copysign(1.0, slope) < 0)
    else:
        if (
            getattr(slope, "dtype", None) != dt
            or type(slope) is not np.ndarray  # (a compile Tracer's bool() below would break)
            or type(g) is not np.ndarray
            or slope.size > g.size // 64
            or xp.broadcast_shapes(slope.shape, g.shape) != g.shape
        ):
            return None
        s = slope
        k = 1 - s
        # False for a NaN or infinite slope, or a slope of -0 (f = 0 k + s would be +0)
        exact = bool(xp.all(k + s == 1)) and not bool(xp.any((s == 0) & xp.signbit(s)))
    return (k, s) if exact else None


def _slope_select_into(xp: Any, passes: Any, g: Any, k: Any, s: Any, out: Any) -> None:
    """``out = g (passes (1 - s) + s)`` in four passes, ``k = 1 - s`` (see ``_slope_select``)."""
    xp.copyto(out, passes)
    out *= k
    out += s
    xp.multiply(g, out, out=out)


def _zero_grad(ctx: Any, g: Any) -> Any:
    """Zeros of g's shape and kind (array or Tensor): the mask's own derivative."""
    from chainrule._tensor import Tensor
    from chainrule.backends import backend_of

    if isinstance(g, Tensor):
        d = g._data
        return Tensor._wrap(backend_of(d).xp.zeros_like(d))
    return backend_of(g).xp.zeros_like(g)


# Note [connected masks]
#     A VJP that multiplies g by a mask of x would leave the gradient without a path to x, so
#     that under create_graph the gradient of relu(x) * 3 is a constant and differentiating it
#     again raises "does not require grad". PyTorch's threshold_backward(g, x) is an op of x
#     too, with derivative zero: this op is that, so the second derivative is zeros, as there.
_threshold_backward = OpDef(
    "threshold_backward",
    _threshold_backward_fwd,
    ("g", "x"),
    saves=("x",),
    promote=None,
    node_name="ThresholdBackwardBackward0",
    vjps=(
        lambda ctx, gg: ns.threshold_backward(
            gg, ctx.x, lo=ctx.lo, hi=ctx.hi, slope=ctx.slope, nan_passes=ctx.nan_passes
        ),
        _zero_grad,
    ),
)


# At x == 0 the subgradient is 0; a NaN passes g (PyTorch's threshold_backward: 0 where
# out <= 0, else g). Note [connected masks].
relu = unary(
    "relu",
    _relu_fwd,
    saves="out",
    vjp=lambda ctx, g: ns.threshold_backward(
        g, ctx.out, lo=0.0, hi=None, slope=0.0, nan_passes=True
    ),
    promote=None,
    doc="max(x, 0). VJP: g where x > 0 or x is NaN, else 0 (0 at x == 0, as PyTorch).",
)


def _abs_fwd(xp: Any, x: Any) -> Any:
    if _kinds.is_bool(x):
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return xp.abs(x)


def _abs_vjp(ctx: Any, g: Any) -> Any:
    x = ctx.x
    if getattr(x, "_data", x).dtype.kind == "c":
        # |z| of z = x + iy: d|z|/dx + i d|z|/dy = z / |z| (0 at 0, as PyTorch's sgn).
        a = ns.abs(x)
        zero = a == 0
        return g * ns.where(zero, x * 0, x / ns.where(zero, a * 0 + 1, a))
    return g * ns.sign(x)


abs = unary(
    "abs",
    _abs_fwd,
    saves="x",
    vjp=_abs_vjp,
    promote=None,
    doc="|x| (the modulus, a real tensor, for complex x). VJP: g sign(x) (0 at x == 0); "
    "g z / |z| for complex z.",
)
absolute = abs


def _sign_fwd(xp: Any, x: Any) -> Any:
    if _kinds.is_complex(x):
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
            "torch.sgn instead."
        )
    return x.copy() if _kinds.is_bool(x) else xp.sign(x)


sign = unary(
    "sign",
    _sign_fwd,
    vjp=lambda ctx, g: g * 0,
    promote=None,
    doc="Sign of x (-1, 0 or 1). VJP: zero.",
)
