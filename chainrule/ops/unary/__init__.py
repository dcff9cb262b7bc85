"""The unary family: elementwise ops of one input, as tables of forward, what to save and VJP,
one module per group:

- ``elementwise``: neg, the exp/log family, sqrt/rsqrt/reciprocal, trigonometric and hyperbolic
  functions, sigmoid/logsigmoid, relu (with ``threshold_backward``), abs, sign;
- ``error_function``: erf, erfc (fdlibm's approximation, vectorized);
- ``rounding``: floor, ceil, trunc, fix, frac, round;
- ``activations``: hardtanh, relu6, leaky_relu, elu, selu, celu, softplus, gelu, silu, mish,
  hardsigmoid, hardswish;
- ``clamping``: clamp/clip, clamp_min, clamp_max;
- ``predicates``: isnan, isinf, isfinite, logical_not, nan_to_num, square.

Integer inputs are promoted to the default float dtype for the float functions, as in PyTorch.
Rounding ops, ``abs``, ``sign``, ``relu``, ``hardtanh`` and ``nan_to_num`` keep integer dtypes.

At kinks the VJPs take PyTorch's subgradients: ``relu``/``abs``/``sign`` give 0 at 0,
``hardtanh``/``relu6``/``hardsigmoid`` give 0 at their bounds, ``clamp`` passes the gradient at
its bounds (``min <= x <= max``), ``leaky_relu`` uses the slope at 0, ``elu`` the negative branch
at 0. Rounding ops have zero gradients; ``frac`` has gradient 1.
"""

from __future__ import annotations

from chainrule.ops.unary.activations import (
    celu,
    elu,
    gelu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    mish,
    relu6,
    selu,
    silu,
    softplus,
)
from chainrule.ops.unary.clamping import (
    clamp,
    clamp_max,
    clamp_min,
    clip,
)
from chainrule.ops.unary.elementwise import _zero_grad as _zero_grad
from chainrule.ops.unary.elementwise import (
    abs,
    absolute,
    acos,
    arccos,
    arcsin,
    arctan,
    asin,
    atan,
    cos,
    cosh,
    exp,
    expm1,
    log,
    log1p,
    log2,
    log10,
    logsigmoid,
    neg,
    reciprocal,
    relu,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
)
from chainrule.ops.unary.error_function import (
    erf,
    erfc,
)
from chainrule.ops.unary.predicates import (
    isfinite,
    isinf,
    isnan,
    logical_not,
    nan_to_num,
    square,
)
from chainrule.ops.unary.rounding import (
    ceil,
    fix,
    floor,
    frac,
    round,
    trunc,
)

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
