"""All ops, by family. ``chainrule`` re-exports the public ones; ``Tensor`` methods call them."""

from __future__ import annotations

from chainrule.ops._registry import REGISTRY, OpDef, apply_op, ns
from chainrule.ops.unary import abs, cos, exp, log, neg, relu, sigmoid, sign, sin, sqrt, tanh
from chainrule.ops.binary import (
    add,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    div,
    eq,
    ge,
    gt,
    le,
    lt,
    mul,
    ne,
    pow,
    rdiv,
    rpow,
    rsub,
    sub,
    where,
)
from chainrule.ops.reduction import mean, sum, sum_to_size
from chainrule.ops.shape import (
    clone,
    expand,
    flatten,
    permute,
    reshape,
    squeeze,
    stack,
    t,
    to_device,
    to_dtype,
    transpose,
    unbind,
    unsqueeze,
    view,
)
from chainrule.ops.linalg import matmul
from chainrule.ops import views as _views  # noqa: F401  (registers copy_slices, zero_view)
from chainrule.ops.indexing import getitem, index_put_, setitem
from chainrule.ops.inplace import add_, copy_, div_, fill_, mul_, sub_

__all__ = [
    "REGISTRY", "OpDef", "apply_op", "ns",
    "abs", "cos", "exp", "log", "neg", "relu", "sigmoid", "sign", "sin", "sqrt", "tanh",
    "add", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "div", "eq", "ge", "gt",
    "le", "lt", "mul", "ne", "pow", "rdiv", "rpow", "rsub", "sub", "where",
    "mean", "sum", "sum_to_size",
    "clone", "expand", "flatten", "permute", "reshape", "squeeze", "stack", "t", "to_device",
    "to_dtype", "transpose", "unbind", "unsqueeze", "view",
    "matmul", "getitem", "index_put_", "setitem",
    "add_", "copy_", "div_", "fill_", "mul_", "sub_",
]
