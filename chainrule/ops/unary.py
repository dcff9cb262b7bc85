"""Elementwise ops of one input, as a table: forward, what to save, VJP.

Integer inputs are promoted to the default float dtype for the float functions, as in PyTorch.
"""

from __future__ import annotations

from chainrule.ops._registry import binary, ns, unary

__all__ = [
    "neg",
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "abs",
    "sign",
]

neg = unary("neg", lambda xp, x: xp.negative(x), vjp=lambda ctx, g: -g, promote=None,
            doc="-x elementwise. VJP: -g.")
exp = unary("exp", lambda xp, x: xp.exp(x), saves="out", vjp=lambda ctx, g: g * ctx.out,
            doc="e**x elementwise. VJP: g * e**x, read back from the saved output.")
log = unary("log", lambda xp, x: xp.log(x), saves="x", vjp=lambda ctx, g: g / ctx.x,
            doc="Natural logarithm. VJP: g / x.")
sqrt = unary("sqrt", lambda xp, x: xp.sqrt(x), saves="out",
             vjp=lambda ctx, g: g / (2 * ctx.out), doc="Square root. VJP: g / (2 sqrt(x)).")
sin = unary("sin", lambda xp, x: xp.sin(x), saves="x", vjp=lambda ctx, g: g * ns.cos(ctx.x),
            doc="Sine. VJP: g cos(x).")
cos = unary("cos", lambda xp, x: xp.cos(x), saves="x", vjp=lambda ctx, g: -g * ns.sin(ctx.x),
            doc="Cosine. VJP: -g sin(x).")
tanh = unary("tanh", lambda xp, x: xp.tanh(x), saves="out",
             vjp=lambda ctx, g: g * (1 - ctx.out * ctx.out),
             doc="Hyperbolic tangent. VJP: g (1 - tanh(x)**2).")


def _sigmoid(xp, x):
    # exp(-|x|) never overflows; pick the algebraically equal form per sign.
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


sigmoid = unary("sigmoid", _sigmoid, saves="out",
                vjp=lambda ctx, g: g * ctx.out * (1 - ctx.out),
                doc="1 / (1 + e**-x), overflow-free. VJP: g s (1 - s).")
# At x == 0 the subgradient is 0, as in PyTorch.
relu = unary("relu", lambda xp, x: xp.maximum(x, 0).astype(x.dtype, copy=False), saves="out",
             vjp=lambda ctx, g: g * (ctx.out > 0), promote=None,
             doc="max(x, 0). VJP: g where x > 0, else 0 (0 at x == 0, as PyTorch).")
abs = unary("abs", lambda xp, x: xp.abs(x), saves="x", vjp=lambda ctx, g: g * ns.sign(ctx.x),
            promote=None, doc="|x|. VJP: g sign(x) (0 at x == 0).")
sign = unary("sign", lambda xp, x: xp.sign(x), vjp=lambda ctx, g: g * 0, promote=None,
             doc="Sign of x (-1, 0 or 1). VJP: zero.")

del binary
