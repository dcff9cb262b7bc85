"""The binary family: elementwise ops of two (or three) inputs, one module per group:

- ``arithmetic``: add, sub/rsub, mul, div/rdiv, pow/rpow/float_power, remainder, fmod,
  floor_divide (Note [one declaration per arithmetic op]);
- ``comparison``: eq/ne/lt/le/gt/ge and aliases, logical and bitwise ops, isclose/allclose/equal,
  result_type/can_cast;
- ``functions``: maximum/minimum, fmax/fmin, atan2, lerp;
- ``selection``: where.

VJPs are written as if nothing broadcasts; the engine sums each gradient back to its input's
shape. Shapes that cannot broadcast raise PyTorch's error ("The size of tensor a (3) must match
the size of tensor b (4) at non-singleton dimension 1"): the forwards catch NumPy's ValueError,
so the common path pays nothing for the check (``_common.broadcast_error``).
"""

from __future__ import annotations

# Imported for their callers, not the public: Tensor's operators call these op functions
# directly (_tensor.py) and the in-place forms apply their ops (ops/inplace.py).
from chainrule.ops.binary._common import broadcast_error as broadcast_error
from chainrule.ops.binary.arithmetic import _add as _add
from chainrule.ops.binary.arithmetic import _div as _div
from chainrule.ops.binary.arithmetic import _pow as _pow
from chainrule.ops.binary.arithmetic import _rdiv as _rdiv
from chainrule.ops.binary.arithmetic import _sub as _sub
from chainrule.ops.binary.arithmetic import (
    add,
    div,
    float_power,
    floor_divide,
    fmod,
    mul,
    pow,
    rdiv,
    remainder,
    rpow,
    rsub,
    sub,
)
from chainrule.ops.binary.comparison import (
    allclose,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    can_cast,
    eq,
    equal,
    ge,
    greater,
    greater_equal,
    gt,
    isclose,
    le,
    less,
    less_equal,
    logical_and,
    logical_or,
    logical_xor,
    lt,
    ne,
    not_equal,
    result_type,
)
from chainrule.ops.binary.functions import arctan2, atan2, fmax, fmin, lerp, maximum, minimum
from chainrule.ops.binary.selection import where

__all__ = [
    "add",
    "sub",
    "rsub",
    "mul",
    "div",
    "rdiv",
    "pow",
    "rpow",
    "float_power",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "where",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "lerp",
    "atan2",
    "arctan2",
    "remainder",
    "fmod",
    "floor_divide",
    "logical_and",
    "logical_or",
    "logical_xor",
    "equal",
    "isclose",
    "allclose",
    "result_type",
    "can_cast",
]
