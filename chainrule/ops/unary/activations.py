"""Activations registered as ops (torch.nn.functional wraps them): hardtanh, relu6, leaky_relu,
elu, selu, celu, softplus, gelu, silu, mish, hardsigmoid and hardswish."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule.autograd.grad_mode import is_grad_enabled
from chainrule.backends import _chunked
from chainrule.ops._registry import OpDef, apply_op, ns
from chainrule.ops.unary._common import _INV_SQRT_2PI, _SQRT1_2, _cast, _float_only
from chainrule.ops.unary.elementwise import _sigmoid
from chainrule.ops.unary.error_function import _CHUNK, _by_chunks, _erf32_chunk, _erf_fwd

__all__ = [
    "softplus",
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
]


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
    # x second: where it equals a bound (0.0 and -0.0) NumPy returns it, as PyTorch keeps x.
    return _cast(xp.minimum(max_val, xp.maximum(min_val, x)), x)


def _hardtanh_vjp(ctx: Any, g: Any) -> Any:
    # A NaN passes g, as in PyTorch's hardtanh_backward; Note [connected masks].
    return ns.threshold_backward(
        g, ctx.x, lo=ctx.min_val, hi=ctx.max_val, slope=0.0, nan_passes=True
    )


_hardtanh = OpDef(
    "hardtanh", _hardtanh_fwd, ("x",), saves=("x",), promote=None, vjps=(_hardtanh_vjp,)
)


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Any:
    """clamp(x, min_val, max_val). VJP: g where min_val < x < max_val (0 at the bounds)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _act(_hardtanh, input, {"min_val": min_val, "max_val": max_val}, inplace)


def relu6(input: Any, inplace: bool = False) -> Any:
    """min(max(x, 0), 6), which is hardtanh(x, 0, 6) (as in PyTorch, its node is
    HardtanhBackward0). VJP: g where 0 < x < 6."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _leaky_fwd(xp: Any, x: Any, *, negative_slope: float = 0.01) -> Any:
    """max(x, s x) for 0 < s <= 1 (``where(x > 0, x, s x)``'s values, without its per-element
    branch), over parts of dim 0 split across the intra-op pool on large NumPy arrays."""
    if 0 < negative_slope <= 1 and type(x) is np.ndarray and x.ndim and x.dtype.kind == "f":
        y = xp.empty(x.shape, x.dtype)

        def part(r: tuple[int, int]) -> None:
            xs, ys = x[r[0] : r[1]], y[r[0] : r[1]]
            xp.multiply(xs, negative_slope, out=ys)
            xp.maximum(xs, ys, out=ys)

        _chunked.run(part, _chunked.ranges(x.shape[0], x.size))
        return y
    if 0 < negative_slope <= 1:  # the same values, without where's per-element branch
        t = x * negative_slope  # (slope 0: inf * 0 would be NaN)
        if t.ndim and t.dtype == x.dtype and t.shape == x.shape:  # into it: one array, not two
            return xp.maximum(x, t, out=t)
        return _cast(xp.maximum(x, t), x)
    return _cast(xp.where(x > 0, x, x * negative_slope), x)


_leaky_relu = OpDef(
    "leaky_relu",
    _leaky_fwd,
    ("x",),
    saves=("x",),
    promote=None,
    # Note [connected masks]
    vjps=(
        lambda ctx, g: ns.threshold_backward(
            g, ctx.x, lo=0.0, hi=None, slope=ctx.negative_slope, nan_passes=False
        ),
    ),
)


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Any:
    """x if x > 0 else negative_slope * x. VJP: g, or negative_slope g where x <= 0."""
    return _act(_leaky_relu, input, {"negative_slope": negative_slope}, inplace)


def _elu_fwd(
    xp: Any,
    x: Any,
    *,
    alpha: float = 1.0,
    scale: float = 1.0,
    input_scale: float = 1.0,
    celu: bool = False,
) -> Any:
    # expm1 of min(x, 0): the unused branch must not overflow for large positive x.
    neg_part = (scale * alpha) * xp.expm1(xp.minimum(x, 0) * input_scale)
    return _cast(xp.where(x > 0, x * scale, neg_part), x)


def _elu_vjp(ctx: Any, g: Any) -> Any:
    # On x <= 0, d/dx scale alpha (e**(x is) - 1) = scale alpha is e**(x is). From x alone, as
    # PyTorch, which saves no output (changing it in place before a backward is no error);
    # exp of min(x, 0): the unused branch must not overflow.
    x = ctx.x
    c = ctx.scale * ctx.alpha * ctx.input_scale
    return ns.where(
        x > 0, g * ctx.scale, g * (ns.exp(ns.clamp_max(x, max=0.0) * ctx.input_scale) * c)
    )


_elu = OpDef(
    "elu",
    _elu_fwd,
    ("x",),
    saves=("x",),
    promote=None,
    vjps=(_elu_vjp,),
    name_fn=lambda p: "CeluBackward0" if p.get("celu") else "EluBackward0",
)


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
    return _elu_call(
        input, {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1.0}, inplace
    )


def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:
    """max(0, x) + min(0, alpha (e**(x/alpha) - 1)). VJP: g, or g e**(x/alpha) where x <= 0."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu_call(
        input, {"alpha": alpha, "scale": 1.0, "input_scale": 1.0 / alpha, "celu": True}, inplace
    )


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


_softplus = OpDef(
    "softplus", _softplus_fwd, ("x",), saves=("x",), promote="float", vjps=(_softplus_vjp,)
)


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
        out[i : i + _CHUNK] = f((fa[i : i + _CHUNK], fb[i : i + _CHUNK]))
    return out.reshape(a.shape)


def _gelu_backward_vjp_g(ctx: Any, gg: Any) -> Any:
    x = ctx.x
    return gg * (0.5 * (1 + ns.erf(x * _SQRT1_2)) + x * ns.exp(-0.5 * x * x) * _INV_SQRT_2PI)


def _gelu_backward_vjp_x(ctx: Any, gg: Any) -> Any:
    # d/dx [Phi(x) + x phi(x)] = 2 phi(x) - x^2 phi(x) = phi(x) (2 - x^2).
    x = ctx.x
    return gg * ctx.g * (ns.exp(-0.5 * x * x) * _INV_SQRT_2PI) * (2 - x * x)


_gelu_backward = OpDef(
    "gelu_backward",
    _gelu_backward_fwd,
    ("g", "x"),
    saves=("g", "x"),
    promote="float",
    node_name="GeluBackwardBackward0",
    vjps=(_gelu_backward_vjp_g, _gelu_backward_vjp_x),
)


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
    """x sigmoid(x). VJP: g s (1 + x (1 - s)), s = sigmoid(x). PyTorch computes it on complex
    input but refuses to record it out of place; its in-place form records the same VJP,
    unconjugated (docs/complex.md)."""
    d = getattr(input, "_data", None)
    if d is not None and d.dtype.kind == "c":
        if not inplace and input.requires_grad and is_grad_enabled():
            raise RuntimeError(
                "silu does not support automatic differentiation for outputs with complex dtype."
            )
    else:
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
    "hardsigmoid",
    _hardsigmoid_fwd,
    ("x",),
    saves=("x",),
    promote="float",
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


_hardswish = OpDef(
    "hardswish", _hardswish_fwd, ("x",), saves=("x",), promote="float", vjps=(_hardswish_vjp,)
)


def hardswish(input: Any, inplace: bool = False) -> Any:
    """x relu6(x + 3) / 6. VJP: 0 up to -3, g (x/3 + 1/2) on (-3, 3), g from 3 on."""
    _float_only(input, "hardswish_cpu")
    return _act(_hardswish, input, None, inplace)
