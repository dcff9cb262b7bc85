"""Elementwise ops of one input, as a table: forward, what to save, VJP.

Integer inputs are promoted to the default float dtype for the float functions, as in PyTorch.
Rounding ops, ``abs``, ``sign``, ``relu``, ``hardtanh`` and ``nan_to_num`` keep integer dtypes.

At kinks the VJPs take PyTorch's subgradients: ``relu``/``abs``/``sign`` give 0 at 0,
``hardtanh``/``relu6``/``hardsigmoid`` give 0 at their bounds, ``clamp`` passes the gradient at
its bounds (``min <= x <= max``), ``leaky_relu`` uses the slope at 0, ``elu`` the negative branch
at 0. Rounding ops have zero gradients; ``frac`` has gradient 1.

Long because it holds the whole elementwise one-input family: one place per op (ARCHITECTURE.md
section 5).
"""

from __future__ import annotations

import math
from typing import Any

from chainrule.ops._registry import OpDef, apply_op, ns, unary

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
    "square",
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
    "softplus",
    "relu",
    "relu6",
    "leaky_relu",
    "elu",
    "selu",
    "celu",
    "gelu",
    "silu",
    "mish",
    "hardtanh",
    "hardsigmoid",
    "hardswish",
    "erf",
    "erfc",
    "abs",
    "absolute",
    "sign",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fix",
    "frac",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "nan_to_num",
    "isnan",
    "isinf",
    "isfinite",
    "logical_not",
]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _cast(x: Any, like: Any) -> Any:
    return x.astype(like.dtype, copy=False)


def _neg_fwd(xp: Any, x: Any) -> Any:
    if x.dtype.kind == "b":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return xp.negative(x)


neg = unary("neg", _neg_fwd, vjp=lambda ctx, g: -g, promote=None,
            doc="-x elementwise. VJP: -g.")
exp = unary("exp", "exp", saves="out", vjp=lambda ctx, g: g * ctx.out,
            doc="e**x elementwise. VJP: g * e**x, read back from the saved output.")
expm1 = unary("expm1", "expm1", saves="out",
              vjp=lambda ctx, g: g * (ctx.out + 1), doc="e**x - 1, accurate near 0. VJP: g e**x.")
log = unary("log", "log", saves="x", vjp=lambda ctx, g: g / ctx.x,
            doc="Natural logarithm. VJP: g / x.")
log1p = unary("log1p", "log1p", saves="x",
              vjp=lambda ctx, g: g / (ctx.x + 1), node_name="Log1PBackward0",
              doc="log(1 + x), accurate near 0. VJP: g / (1 + x).")
log2 = unary("log2", "log2", saves="x",
             vjp=lambda ctx, g: g / (ctx.x * _LN2), doc="Base-2 logarithm. VJP: g / (x ln 2).")
log10 = unary("log10", "log10", saves="x",
              vjp=lambda ctx, g: g / (ctx.x * _LN10),
              doc="Base-10 logarithm. VJP: g / (x ln 10).")
sqrt = unary("sqrt", "sqrt", saves="out",
             vjp=lambda ctx, g: g / (2 * ctx.out), doc="Square root. VJP: g / (2 sqrt(x)).")
rsqrt = unary("rsqrt", lambda xp, x: 1 / xp.sqrt(x), saves="out",
              vjp=lambda ctx, g: -0.5 * g * ctx.out * ctx.out * ctx.out,
              doc="1 / sqrt(x). VJP: -g / (2 x**1.5) = -g out**3 / 2.")
reciprocal = unary("reciprocal", lambda xp, x: 1 / x, saves="out",
                   vjp=lambda ctx, g: -g * ctx.out * ctx.out, doc="1 / x. VJP: -g / x**2.")
sin = unary("sin", "sin", saves="x", vjp=lambda ctx, g: g * ns.cos(ctx.x),
            doc="Sine. VJP: g cos(x).")
cos = unary("cos", "cos", saves="x", vjp=lambda ctx, g: -g * ns.sin(ctx.x),
            doc="Cosine. VJP: -g sin(x).")
tan = unary("tan", "tan", saves="out",
            vjp=lambda ctx, g: g * (1 + ctx.out * ctx.out), doc="Tangent. VJP: g (1 + tan(x)**2).")
asin = unary("asin", "arcsin", saves="x",
             vjp=lambda ctx, g: g / ns.sqrt(1 - ctx.x * ctx.x),
             doc="Inverse sine. VJP: g / sqrt(1 - x**2).")
acos = unary("acos", "arccos", saves="x",
             vjp=lambda ctx, g: -g / ns.sqrt(1 - ctx.x * ctx.x),
             doc="Inverse cosine. VJP: -g / sqrt(1 - x**2).")
atan = unary("atan", "arctan", saves="x",
             vjp=lambda ctx, g: g / (1 + ctx.x * ctx.x),
             doc="Inverse tangent. VJP: g / (1 + x**2).")
arcsin, arccos, arctan = asin, acos, atan
sinh = unary("sinh", "sinh", saves="x", vjp=lambda ctx, g: g * ns.cosh(ctx.x),
             doc="Hyperbolic sine. VJP: g cosh(x).")
cosh = unary("cosh", "cosh", saves="x", vjp=lambda ctx, g: g * ns.sinh(ctx.x),
             doc="Hyperbolic cosine. VJP: g sinh(x).")
tanh = unary("tanh", "tanh", saves="out",
             vjp=lambda ctx, g: g * (1 - ctx.out * ctx.out),
             doc="Hyperbolic tangent. VJP: g (1 - tanh(x)**2).")


def _sigmoid(xp: Any, x: Any) -> Any:
    # exp(-|x|) never overflows; pick the algebraically equal form per sign.
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


sigmoid = unary("sigmoid", _sigmoid, saves="out",
                vjp=lambda ctx, g: g * ctx.out * (1 - ctx.out),
                doc="1 / (1 + e**-x), overflow-free. VJP: g s (1 - s).")


def _logsigmoid_fwd(xp: Any, x: Any) -> Any:
    # log(sigmoid(x)) = min(x, 0) - log1p(e**-|x|), without overflow.
    return _cast(xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x))), x)


logsigmoid = unary("logsigmoid", _logsigmoid_fwd, saves="x",
                   vjp=lambda ctx, g: g * ns.sigmoid(-ctx.x), node_name="LogSigmoidBackward0",
                   doc="log(sigmoid(x)). VJP: g sigmoid(-x).")


def _relu_fwd(xp: Any, x: Any) -> Any:
    if x.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    # Against an array of zeros, written in place: NumPy's maximum with a scalar operand skips
    # its SIMD loop (measured 1.8x slower on a 400k-element float32 array).
    out = xp.zeros_like(x)
    return xp.maximum(x, out, out=out)


def _threshold_backward_fwd(xp: Any, g: Any, x: Any, *, lo: float, hi: float | None,
                            slope: float, nan_passes: bool) -> Any:
    """The VJP of relu, hardtanh and leaky_relu: g where lo < x (< hi), slope g elsewhere; a
    NaN x passes g when ``nan_passes`` (PyTorch's threshold_backward and hardtanh_backward),
    else gets slope g (leaky_relu_backward)."""
    if nan_passes:
        passes = ~(x <= lo) if hi is None else ~((x <= lo) | (x >= hi))
    else:
        passes = x > lo if hi is None else (x > lo) & (x < hi)
    if slope == 0.0:
        return g * passes
    return xp.where(passes, g, g * slope)


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
    "threshold_backward", _threshold_backward_fwd, ("g", "x"), saves=("x",), promote=None,
    node_name="ThresholdBackwardBackward0",
    vjps=(lambda ctx, gg: ns.threshold_backward(gg, ctx.x, lo=ctx.lo, hi=ctx.hi,
                                                slope=ctx.slope, nan_passes=ctx.nan_passes),
          _zero_grad))


# At x == 0 the subgradient is 0; a NaN passes g (PyTorch's threshold_backward: 0 where
# out <= 0, else g). Note [connected masks].
relu = unary("relu", _relu_fwd, saves="out",
             vjp=lambda ctx, g: ns.threshold_backward(g, ctx.out, lo=0.0, hi=None, slope=0.0,
                                                             nan_passes=True), promote=None,
             doc="max(x, 0). VJP: g where x > 0 or x is NaN, else 0 (0 at x == 0, as PyTorch).")


def _abs_fwd(xp: Any, x: Any) -> Any:
    if x.dtype.kind == "b":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return xp.abs(x)


abs = unary("abs", _abs_fwd, saves="x", vjp=lambda ctx, g: g * ns.sign(ctx.x),
            promote=None, doc="|x|. VJP: g sign(x) (0 at x == 0).")
absolute = abs


def _sign_fwd(xp: Any, x: Any) -> Any:
    return x.copy() if x.dtype.kind == "b" else xp.sign(x)


sign = unary("sign", _sign_fwd, vjp=lambda ctx, g: g * 0, promote=None,
             doc="Sign of x (-1, 0 or 1). VJP: zero.")


# erf / erfc ------------------------------------------------------------------------------------
# NumPy has no erf. This is the rational approximation of Sun's fdlibm (s_erf.c), vectorized over
# masks; it is accurate to about 1 ulp in float64. Lower precisions are computed in float64 and
# rounded.

_ERX = 8.45062911510467529297e-01
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02,
       5.08130628187576562776e-03, 1.32494738004321644526e-04, -3.96022827877536812320e-06)
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
       1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _poly(c: tuple[float, ...], s: Any) -> Any:
    r = c[-1]
    for k in c[-2::-1]:
        r = r * s + k
    return r


def _erf_impl(xp: Any, x: Any, complement: bool) -> Any:
    """erf(x) (or erfc(x) when ``complement``) of a float64 array, by fdlibm's piecewise
    rational approximations."""
    ax = xp.abs(x)
    out = xp.empty_like(x)
    m = ax < 0.84375
    if m.any():
        xs = x[m]
        z = xs * xs
        y = _poly(_PP, z) / _poly(_QQ, z)
        if complement:
            out[m] = xp.where(xs < 0.25, 1 - (xs + xs * y), 0.5 - (xs * y + (xs - 0.5)))
        else:
            out[m] = xs + xs * y
    m = (ax >= 0.84375) & (ax < 1.25)
    if m.any():
        s = ax[m] - 1
        pq = _poly(_PA, s) / _poly(_QA, s)
        pos = x[m] >= 0
        if complement:
            out[m] = xp.where(pos, (1 - _ERX) - pq, 1 + (_ERX + pq))
        else:
            out[m] = xp.where(pos, _ERX + pq, -_ERX - pq)
    m = (ax >= 1.25) & (ax < 28)
    if m.any():
        a = ax[m]
        s = 1 / (a * a)
        small = a < 1 / 0.35
        rs = xp.where(small, _poly(_RA, s) / _poly(_SA, s), _poly(_RB, s) / _poly(_SB, s))
        # z is a with its low 32 bits cleared, so that z*z is exact (fdlibm's splitting).
        z = (a.view(xp.uint64) & xp.uint64(0xFFFFFFFF00000000)).view(xp.float64)
        t = xp.exp(-z * z - 0.5625) * xp.exp((z - a) * (z + a) + rs) / a  # erfc(|x|)
        pos = x[m] >= 0
        out[m] = xp.where(pos, t, 2 - t) if complement else xp.where(pos, 1 - t, t - 1)
    m = ax >= 28
    if m.any():
        pos = x[m] > 0
        out[m] = xp.where(pos, 0.0, 2.0) if complement else xp.where(pos, 1.0, -1.0)
    m = xp.isnan(x)
    if m.any():
        out[m] = x[m]
    return out


# erf(x) ~ x P(x^2) / Q(x^2) on |x| <= 3.92 (erf rounds to +-1 in float32 beyond): a rational
# least-squares fit of relative error, 2e-8 in exact arithmetic, under 7 ulp evaluated in
# float32. Coefficients in increasing powers.
_ERF32_P = (1.1283791611132858, 0.18871110809502806, 0.052530383808090914,
            0.0036950946585477392, 0.0002836793592115097, 2.067754501816621e-06)
_ERF32_Q = (1.0, 0.5005738700467448, 0.11341381383336988, 0.014826950703898372,
            0.001146193861268777, 3.8212681119864644e-05)


_CHUNK = 65536  # elements: 256 KB of float32, so that a chain of passes stays in L2 cache


def _by_chunks(xp: Any, f: Any, x: Any) -> Any:
    """``f(x)`` for an elementwise ``f`` made of many array passes, run over L2-sized slices of
    a large array (3-5x faster than whole-array passes that stream through memory)."""
    if x.size <= 2 * _CHUNK:
        return f(x)
    flat = x.reshape(-1)
    out = xp.empty(flat.shape, x.dtype)
    for i in range(0, flat.size, _CHUNK):
        out[i:i + _CHUNK] = f(flat[i:i + _CHUNK])
    return out.reshape(x.shape)


def _erf32(xp: Any, x: Any) -> Any:
    """erf of a float32 array in float32 arithmetic, branch-free: about 25 array passes, where
    the float64 piecewise form costs ~50x more (masked gathers, float64 exp)."""
    return _by_chunks(xp, lambda c: _erf32_chunk(xp, c), x)


def _erf32_chunk(xp: Any, x: Any) -> Any:
    xc = xp.clip(x, -3.92, 3.92)
    s = xc * xc
    p = s * _ERF32_P[-1]
    for c in _ERF32_P[-2:0:-1]:
        p += c
        p *= s
    p += _ERF32_P[0]
    q = s * _ERF32_Q[-1]
    for c in _ERF32_Q[-2:0:-1]:
        q += c
        q *= s
    q += 1.0
    p *= xc
    p /= q
    return p


def _erf_fwd(xp: Any, x: Any, complement: bool = False) -> Any:
    if not complement and x.dtype == xp.float32:
        return _erf32(xp, x)  # NaN stays NaN (clip keeps it), +-inf gives +-1
    return _cast(_erf_impl(xp, x.astype(xp.float64, copy=False), complement), x)


erf = unary("erf", _erf_fwd, saves="x",
            vjp=lambda ctx, g: g * _TWO_OVER_SQRT_PI * ns.exp(-ctx.x * ctx.x),
            doc="Error function (fdlibm's approximation, ~1 ulp). VJP: g 2/sqrt(pi) e**(-x**2).")
erfc = unary("erfc", lambda xp, x: _erf_fwd(xp, x, True), saves="x",
             vjp=lambda ctx, g: -g * _TWO_OVER_SQRT_PI * ns.exp(-ctx.x * ctx.x),
             doc="Complementary error function 1 - erf(x), accurate for large x. "
                 "VJP: -g 2/sqrt(pi) e**(-x**2).")


# Rounding -------------------------------------------------------------------------------------


def _rounding(name: str, f: Any) -> Any:
    def fwd(xp: Any, x: Any) -> Any:
        return x.copy() if x.dtype.kind in "iub" else f(xp, x)

    return unary(name, fwd, vjp=lambda ctx, g: g * 0, promote=None,
                 doc=f"Elementwise {name}; integer tensors are returned unchanged (a copy). "
                     "VJP: zero (piecewise constant).")


floor = _rounding("floor", lambda xp, x: xp.floor(x))
ceil = _rounding("ceil", lambda xp, x: xp.ceil(x))
trunc = _rounding("trunc", lambda xp, x: xp.trunc(x))
fix = trunc
frac = unary("frac", lambda xp, x: x - xp.trunc(x), vjp=lambda ctx, g: g, promote=None,
             doc="x - trunc(x), with the sign of x. VJP: g.")


def _round_fwd(xp: Any, x: Any, *, decimals: int = 0) -> Any:
    if x.dtype.kind in "iub":
        return x.copy()
    if decimals == 0:
        return xp.rint(x)  # round half to even, as PyTorch's nearbyint
    if decimals > 0:
        p = 10.0 ** decimals
        return _cast(xp.rint(x * p) / p, x)
    p = 10.0 ** -decimals
    return _cast(xp.rint(x / p) * p, x)


_round = OpDef("round", _round_fwd, ("x",), promote=None, vjps=(lambda ctx, g: g * 0,),
               name_fn=lambda p: "RoundBackward1" if p and p.get("decimals") else
               "RoundBackward0")


def round(input: Any, *, decimals: int = 0) -> Any:
    """Round half to even, to ``decimals`` decimal places (x * 10**d rounded, / 10**d, as
    PyTorch). VJP: zero."""
    if decimals:
        if input._data.dtype.kind != "f":
            raise NotImplementedError(f"\"round_cpu\" not implemented for '{_legacy(input)}'")
        return apply_op(_round, (input,), {"decimals": int(decimals)})
    return apply_op(_round, (input,))


# Activations ----------------------------------------------------------------------------------


def _act(op: OpDef, input: Any, params: dict[str, Any] | None, inplace: bool) -> Any:
    """Apply an activation op; ``inplace=True`` writes the result into ``input`` (the op sees a
    copy of the old value, and ``input``'s history is rebased onto the op's node)."""
    if not inplace:
        return apply_op(op, (input,), params) if params else apply_op(op, (input,))
    from chainrule.ops.views import inplace_compute

    if params:
        return inplace_compute(input, lambda a: apply_op(op, (a,), params), (), True)
    return inplace_compute(input, lambda a: apply_op(op, (a,)), (), True)


def _hardtanh_fwd(xp: Any, x: Any, *, min_val: float = -1.0, max_val: float = 1.0) -> Any:
    return _cast(xp.minimum(xp.maximum(x, min_val), max_val), x)


def _hardtanh_vjp(ctx: Any, g: Any) -> Any:
    # A NaN passes g, as in PyTorch's hardtanh_backward; Note [connected masks].
    return ns.threshold_backward(g, ctx.x, lo=ctx.min_val, hi=ctx.max_val, slope=0.0,
                                 nan_passes=True)


_hardtanh = OpDef("hardtanh", _hardtanh_fwd, ("x",), saves=("x",), promote=None,
                  vjps=(_hardtanh_vjp,))


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
             ) -> Any:
    """clamp(x, min_val, max_val). VJP: g where min_val < x < max_val (0 at the bounds)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _act(_hardtanh, input, {"min_val": min_val, "max_val": max_val}, inplace)


def relu6(input: Any, inplace: bool = False) -> Any:
    """min(max(x, 0), 6), which is hardtanh(x, 0, 6) (as in PyTorch, its node is
    HardtanhBackward0). VJP: g where 0 < x < 6."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _leaky_fwd(xp: Any, x: Any, *, negative_slope: float = 0.01) -> Any:
    if 0 < negative_slope <= 1:  # the same values, without where's per-element branch
        return _cast(xp.maximum(x, x * negative_slope), x)  # (slope 0: inf * 0 would be NaN)
    return _cast(xp.where(x > 0, x, x * negative_slope), x)


_leaky_relu = OpDef(
    "leaky_relu", _leaky_fwd, ("x",), saves=("x",), promote=None,
    # Note [connected masks]
    vjps=(lambda ctx, g: ns.threshold_backward(g, ctx.x, lo=0.0, hi=None,
                                               slope=ctx.negative_slope, nan_passes=False),),
)


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Any:
    """x if x > 0 else negative_slope * x. VJP: g, or negative_slope g where x <= 0."""
    return _act(_leaky_relu, input, {"negative_slope": negative_slope}, inplace)


def _elu_fwd(xp: Any, x: Any, *, alpha: float = 1.0, scale: float = 1.0,
             input_scale: float = 1.0, celu: bool = False) -> Any:
    # expm1 of min(x, 0): the unused branch must not overflow for large positive x.
    neg_part = (scale * alpha) * xp.expm1(xp.minimum(x, 0) * input_scale)
    return _cast(xp.where(x > 0, x * scale, neg_part), x)


def _elu_vjp(ctx: Any, g: Any) -> Any:
    # On x <= 0, d/dx scale alpha (e**(x is) - 1) = scale alpha is e**(x is). From x alone, as
    # PyTorch, which saves no output (changing it in place before a backward is no error);
    # exp of min(x, 0): the unused branch must not overflow.
    x = ctx.x
    c = ctx.scale * ctx.alpha * ctx.input_scale
    return ns.where(x > 0, g * ctx.scale,
                    g * (ns.exp(ns.clamp_max(x, max=0.0) * ctx.input_scale) * c))


_elu = OpDef("elu", _elu_fwd, ("x",), saves=("x",), promote=None, vjps=(_elu_vjp,),
             name_fn=lambda p: "CeluBackward0" if p.get("celu") else "EluBackward0")


def _elu_call(input: Any, params: dict[str, Any], inplace: bool) -> Any:
    _float_only(input, "elu_cpu")
    return _act(_elu, input, params, inplace)


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:
    """x if x > 0 else alpha (e**x - 1). VJP: g, or g (out + alpha) where x <= 0."""
    return _elu_call(input, {"alpha": alpha, "scale": 1.0, "input_scale": 1.0}, inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Any, inplace: bool = False) -> Any:
    """scale * elu(x, alpha) with SELU's fixed constants. VJP: that of elu, times scale."""
    return _elu_call(input, {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1.0},
                     inplace)


def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:
    """max(0, x) + min(0, alpha (e**(x/alpha) - 1)). VJP: g, or g e**(x/alpha) where x <= 0."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _elu_call(input, {"alpha": alpha, "scale": 1.0, "input_scale": 1.0 / alpha,
                             "celu": True}, inplace)




def _softplus_fwd(xp: Any, x: Any, *, beta: float = 1.0, threshold: float = 20.0) -> Any:
    bx = x * beta
    # log1p(e**bx) = max(bx, 0) + log1p(e**-|bx|), which cannot overflow.
    soft = (xp.maximum(bx, 0) + xp.log1p(xp.exp(-xp.abs(bx)))) / beta
    return _cast(xp.where(bx > threshold, x, soft), x)


def _softplus_vjp(ctx: Any, g: Any) -> Any:
    bx = ctx.x * ctx.beta
    s = ns.sigmoid(bx)
    lin = bx > ctx.threshold
    return g * (s + lin * (1 - s))


_softplus = OpDef("softplus", _softplus_fwd, ("x",), saves=("x",), promote="float",
                  vjps=(_softplus_vjp,))


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """log(1 + e**(beta x)) / beta, or x where beta x > threshold.
    VJP: g sigmoid(beta x), or g on the linear part."""
    _float_only(input, "softplus_cpu")
    return apply_op(_softplus, (input,), {"beta": beta, "threshold": threshold})


def _gelu_fwd(xp: Any, x: Any, *, approximate: str = "none") -> Any:
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        inner = k * (x + 0.044715 * x * x * x)
        return _cast(0.5 * x * (1 + xp.tanh(inner)), x)
    if x.dtype == xp.float32:
        return _by_chunks(xp, lambda c: 0.5 * c * (1 + _erf32_chunk(xp, c * _SQRT1_2)), x)
    return _cast(0.5 * x * (1 + _erf_fwd(xp, x * _SQRT1_2)), x)


def _gelu_vjp(ctx: Any, g: Any) -> Any:
    x = ctx.x
    if ctx.approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        x2 = x * x
        t = ns.tanh(k * (x + 0.044715 * x2 * x))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (k * (1 + 3 * 0.044715 * x2)))
    return ns.gelu_backward(g, x)


_gelu = OpDef("gelu", _gelu_fwd, ("x",), saves=("x",), promote="float", vjps=(_gelu_vjp,))


def _gelu_backward_fwd(xp: Any, g: Any, x: Any) -> Any:
    """g (Phi(x) + x phi(x)): the exact GELU's derivative times g, one fused pass per L2-sized
    chunk for float32 (a dozen whole-array passes otherwise)."""
    if x.dtype == xp.float32 and g.dtype == xp.float32 and g.shape == x.shape:
        def f(gx: Any) -> Any:
            gc, xc = gx[0], gx[1]
            d = xp.exp(-0.5 * xc * xc) * _INV_SQRT_2PI
            d *= xc
            d += 0.5 * (1 + _erf32_chunk(xp, xc * _SQRT1_2))
            d *= gc
            return d
        return _by_chunks_pair(xp, f, g, x)
    cdf = 0.5 * (1 + _erf_fwd(xp, x * _SQRT1_2))
    pdf = xp.exp(-0.5 * x * x) * _INV_SQRT_2PI
    return _cast(g * (cdf + x * pdf), x)


def _by_chunks_pair(xp: Any, f: Any, a: Any, b: Any) -> Any:
    """``_by_chunks`` for an elementwise function of two same-shaped arrays."""
    if a.size <= 2 * _CHUNK:
        return f((a, b))
    fa, fb = a.reshape(-1), b.reshape(-1)
    out = xp.empty(fa.shape, a.dtype)
    for i in range(0, fa.size, _CHUNK):
        out[i:i + _CHUNK] = f((fa[i:i + _CHUNK], fb[i:i + _CHUNK]))
    return out.reshape(a.shape)


def _gelu_backward_vjp_g(ctx: Any, gg: Any) -> Any:
    x = ctx.x
    return gg * (0.5 * (1 + ns.erf(x * _SQRT1_2)) + x * ns.exp(-0.5 * x * x) * _INV_SQRT_2PI)


def _gelu_backward_vjp_x(ctx: Any, gg: Any) -> Any:
    # d/dx [Phi(x) + x phi(x)] = 2 phi(x) - x^2 phi(x) = phi(x) (2 - x^2).
    x = ctx.x
    return gg * ctx.g * (ns.exp(-0.5 * x * x) * _INV_SQRT_2PI) * (2 - x * x)


_gelu_backward = OpDef("gelu_backward", _gelu_backward_fwd, ("g", "x"), saves=("g", "x"),
                       promote="float", node_name="GeluBackwardBackward0",
                       vjps=(_gelu_backward_vjp_g, _gelu_backward_vjp_x))


def gelu(input: Any, approximate: str = "none") -> Any:
    """x Phi(x) (Phi the normal CDF), or with approximate='tanh'
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3))). VJP: g (Phi(x) + x phi(x)), or the
    derivative of the tanh form."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(input, "GeluKernelImpl")
    return apply_op(_gelu, (input,), {"approximate": approximate})


def _silu_fwd(xp: Any, x: Any) -> Any:
    return _cast(x * _sigmoid(xp, x), x)


def _silu_vjp(ctx: Any, g: Any) -> Any:
    s = ns.sigmoid(ctx.x)
    return g * (s * (1 + ctx.x * (1 - s)))


_silu = OpDef("silu", _silu_fwd, ("x",), saves=("x",), promote="float", vjps=(_silu_vjp,))


def silu(input: Any, inplace: bool = False) -> Any:
    """x sigmoid(x). VJP: g s (1 + x (1 - s)), s = sigmoid(x)."""
    _float_only(input, "silu_cpu")
    return _act(_silu, input, None, inplace)


def _mish_fwd(xp: Any, x: Any) -> Any:
    sp = xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))
    return _cast(x * xp.tanh(sp), x)


def _mish_vjp(ctx: Any, g: Any) -> Any:
    x = ctx.x
    t = ns.tanh(ns.softplus(x, beta=1.0, threshold=math.inf))
    return g * (t + x * ns.sigmoid(x) * (1 - t * t))


_mish = OpDef("mish", _mish_fwd, ("x",), saves=("x",), promote="float", vjps=(_mish_vjp,))


def mish(input: Any, inplace: bool = False) -> Any:
    """x tanh(softplus(x)). VJP: g (t + x sigmoid(x) (1 - t**2)), t = tanh(softplus(x))."""
    _float_only(input, "mish_cpu")
    return _act(_mish, input, None, inplace)


# PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, in every dtype.
_ONE_SIXTH_F32 = 0.1666666716337204


def _hardsigmoid_fwd(xp: Any, x: Any) -> Any:
    return _cast(xp.minimum(xp.maximum(x + 3, 0), 6) / 6, x)


_hardsigmoid = OpDef(
    "hardsigmoid", _hardsigmoid_fwd, ("x",), saves=("x",), promote="float",
    vjps=(lambda ctx, g: g * ((ctx.x > -3) & (ctx.x < 3)) * _ONE_SIXTH_F32,),
)


def hardsigmoid(input: Any, inplace: bool = False) -> Any:
    """relu6(x + 3) / 6. VJP: g / 6 where -3 < x < 3, else 0 (1/6 as float32, as PyTorch)."""
    _float_only(input, "hardsigmoid_cpu")
    return _act(_hardsigmoid, input, None, inplace)


def _hardswish_fwd(xp: Any, x: Any) -> Any:
    return _cast(x * xp.minimum(xp.maximum(x + 3, 0), 6) / 6, x)


def _hardswish_vjp(ctx: Any, g: Any) -> Any:
    # PyTorch: 0 for x <= -3, g (x/3 + 1/2) for -3 < x < 3, g from 3 on.
    x = ctx.x
    mid = (x > -3) & (x < 3)
    return ns.where(mid, g * (x / 3 + 0.5), g * (x >= 3))


_hardswish = OpDef("hardswish", _hardswish_fwd, ("x",), saves=("x",), promote="float",
                   vjps=(_hardswish_vjp,))


def hardswish(input: Any, inplace: bool = False) -> Any:
    """x relu6(x + 3) / 6. VJP: 0 up to -3, g (x/3 + 1/2) on (-3, 3), g from 3 on."""
    _float_only(input, "hardswish_cpu")
    return _act(_hardswish, input, None, inplace)


def _legacy(t: Any) -> str:
    from chainrule.ops._registry import _legacy_name

    return _legacy_name(t._data.dtype)


def _float_only(input: Any, kernel: str) -> None:
    # PyTorch's activation kernels are defined for floating dtypes only.
    d = getattr(input, "_data", None)
    if d is not None and d.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy(input)}'")


# clamp ----------------------------------------------------------------------------------------


def _clamp_fwd(xp: Any, x: Any, *, min: Any = None, max: Any = None) -> Any:
    out = x
    if min is not None:
        out = xp.maximum(out, min)
    if max is not None:
        out = xp.minimum(out, max)
    return out.astype(x.dtype, copy=False) if out is not x else x.copy()


def _clamp_vjp(ctx: Any, g: Any) -> Any:
    x = ctx.x
    if ctx.min is None:
        return g * (x <= ctx.max)
    if ctx.max is None:
        return g * (x >= ctx.min)
    return g * ((x >= ctx.min) & (x <= ctx.max))


_clamp = OpDef("clamp", _clamp_fwd, ("x",), saves=("x",), promote="same", vjps=(_clamp_vjp,),
               node_name="ClampBackward1")


def _clamp_t_fwd(xp: Any, x: Any, lo: Any, hi: Any) -> Any:
    out = x
    if lo is not None:
        out = xp.maximum(out, lo)
    if hi is not None:
        out = xp.minimum(out, hi)
    return out


def _mask(c: Any, g: Any) -> Any:
    return ns.where(c, g, g * 0)


def _clamp_t_vjp(ctx: Any, g: Any) -> Any:
    # PyTorch's clamp_backward_min_max.
    x, lo, hi = ctx.x, ctx.lo, ctx.hi
    need = ctx.needs_input_grad
    gx = glo = ghi = None
    if lo is not None and hi is not None:
        if need[0]:
            gx = _mask((x >= lo) & (x <= hi), g)
        if need[1]:
            glo = _mask((x < lo) & (lo < hi), g)
        if need[2]:
            ghi = _mask((x > hi) | (hi < lo), g)
    elif lo is not None:
        gx = _mask(x >= lo, g) if need[0] else None
        glo = _mask(x < lo, g) if need[1] else None
    else:
        gx = _mask(x <= hi, g) if need[0] else None
        ghi = _mask(x > hi, g) if need[2] else None
    return gx, glo, ghi


_clamp_t = OpDef("clamp_tensor", _clamp_t_fwd, ("x", "lo", "hi"), saves=("x", "lo", "hi"),
                 promote="same", node_name="ClampBackward0")
_clamp_t.vjp(_clamp_t_vjp)


def clamp(input: Any, min: Any = None, max: Any = None) -> Any:
    """min(max(x, min), max); ``min``/``max`` are numbers or tensors (broadcast), either may be
    None. The result dtype follows type promotion with the bounds. VJP: g where
    min <= x <= max; with tensor bounds, g flows to the bound that is active."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if hasattr(min, "_data") or hasattr(max, "_data"):
        return apply_op(_clamp_t, (input, min, max))
    from chainrule._dtype import result_type

    rt = result_type(input, min, max)
    if input._data.dtype != rt.np:
        input = input.to(rt)
    return apply_op(_clamp, (input,), {"min": min, "max": max})


clip = clamp


def _clamp_min_fwd(xp: Any, x: Any, *, min: Any) -> Any:
    return xp.maximum(x, min).astype(x.dtype, copy=False)


def _clamp_max_fwd(xp: Any, x: Any, *, max: Any) -> Any:
    return xp.minimum(x, max).astype(x.dtype, copy=False)


_clamp_min = OpDef("clamp_min", _clamp_min_fwd, ("x",), saves=("x",), promote="same",
                   vjps=(lambda ctx, g: g * (ctx.x >= ctx.min),))
_clamp_max = OpDef("clamp_max", _clamp_max_fwd, ("x",), saves=("x",), promote="same",
                   vjps=(lambda ctx, g: g * (ctx.x <= ctx.max),))


def _bound_promote(input: Any, bound: Any) -> Any:
    from chainrule._dtype import result_type

    rt = result_type(input, bound)
    return input if input._data.dtype == rt.np else input.to(rt)


def clamp_min(input: Any, min: Any) -> Any:
    """max(x, min). VJP: g where x >= min (the bound included, as PyTorch)."""
    if hasattr(min, "_data"):
        return apply_op(_clamp_t, (input, min, None))
    return apply_op(_clamp_min, (_bound_promote(input, min),), {"min": min})


def clamp_max(input: Any, max: Any) -> Any:
    """min(x, max). VJP: g where x <= max (the bound included, as PyTorch)."""
    if hasattr(max, "_data"):
        return apply_op(_clamp_t, (input, None, max))
    return apply_op(_clamp_max, (_bound_promote(input, max),), {"max": max})


# nan_to_num and the float predicates ------------------------------------------------------


def _pred(name: str, f: Any) -> Any:
    return unary(name, lambda xp, x: f(xp, x), promote=None, differentiable=False,
                 doc=f"Elementwise {name}; a bool tensor (not differentiable).")


isnan = _pred("isnan", lambda xp, x: xp.isnan(x))
isinf = _pred("isinf", lambda xp, x: xp.isinf(x))
isfinite = _pred("isfinite", lambda xp, x: xp.isfinite(x))
logical_not = _pred("logical_not", lambda xp, x: xp.logical_not(x))


def _nan_to_num_fwd(xp: Any, x: Any, *, nan: float = 0.0, posinf: Any = None,
                    neginf: Any = None) -> Any:
    if x.dtype.kind != "f":
        return x.copy()
    return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_nan_to_num = OpDef("nan_to_num", _nan_to_num_fwd, ("x",), saves=("x",), promote=None,
                    vjps=(lambda ctx, g: g * ns.isfinite(ctx.x),))


def nan_to_num(input: Any, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """NaN -> ``nan``, +inf -> ``posinf``, -inf -> ``neginf`` (defaults: 0 and the dtype's
    largest/lowest finite values). VJP: g where x is finite, else 0."""
    return apply_op(_nan_to_num, (input,),
                    {"nan": 0.0 if nan is None else nan, "posinf": posinf, "neginf": neginf})


def square(input: Any) -> Any:
    """x * x, as ``pow(x, 2)`` (so integer tensors stay integer, bool becomes int64, and the
    node is PowBackward0 as in PyTorch). VJP: 2 g x."""
    from chainrule.ops.binary import pow

    if input._data.dtype.kind == "b":
        from chainrule import _dtype

        input = input.to(_dtype.int64)
    return pow(input, 2)
