"""Activations of torch.nn.functional: the softmax family (softmax, log_softmax, softmin,
gumbel_softmax), the elementwise activations (thin wrappers of the ops that ``chainrule.ops``'
families register), their in-place forms, and the compositions glu, hardshrink, softshrink,
softsign, tanhshrink, threshold, rrelu and prelu."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule import ops as _ops
from chainrule._autocast_state import state as _ac
from chainrule._scalar_convert import checked_scalar, complex_scalar_value
from chainrule._tensor import Tensor, _new_tensor
from chainrule.backends import backend_of
from chainrule.nn._functional._common import (
    _const,
    _into,
    _rng,
)
from chainrule.ops import _autocast
from chainrule.ops import fused_nn as _fused
from chainrule.ops import nn as _nnops
from chainrule.ops import prelu as _prelu_ops
from chainrule.ops import thresholding as _threshold_ops
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops.composite_node import composite

__all__ = [
    "softmax",
    "log_softmax",
    "softmin",
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
    "softplus",
    "logsigmoid",
    "sigmoid",
    "tanh",
    "prelu",
    "glu",
    "hardshrink",
    "softshrink",
    "softsign",
    "tanhshrink",
    "threshold",
    "threshold_",
    "rrelu",
    "rrelu_",
    "relu_",
    "elu_",
    "celu_",
    "selu_",
    "leaky_relu_",
    "hardtanh_",
    "gumbel_softmax",
]


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """exp(x) / sum exp(x) along ``dim`` (stable). VJP: s (g - sum(g s))."""
    if dim is None:
        dim = _nnops.implicit_dim("softmax", input.ndim)
    return _nnops.softmax(input, dim, dtype=dtype)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """x - logsumexp(x) along ``dim``. VJP: g - softmax(x) sum(g)."""
    if dim is None:
        dim = _nnops.implicit_dim("log_softmax", input.ndim)
    return _nnops.log_softmax(input, dim, dtype=dtype)


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """softmax(-x) along ``dim``."""
    if dim is None:
        dim = _nnops.implicit_dim("softmin", input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return _nnops.softmax(-input, dim)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return _ops.relu_(input) if inplace else _ops.relu(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6)."""
    return _ops.relu6(input, inplace=inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x if x > 0 else negative_slope x."""
    if type(negative_slope) is complex:  # PyTorch's error for an imaginary part: _scalar
        negative_slope = _scalar(negative_slope, input)
    else:
        _checked(negative_slope, input, True, "leaky_relu")
    return _ops.leaky_relu(input, negative_slope, inplace=inplace)


_F32 = np.dtype(np.float32)


def _checked(v: Any, input: Any, as_float: bool = False, negative_slope_of: str = "") -> None:
    """PyTorch's range check of a real number argument converted to ``input``'s dtype
    (checked_scalar: "value cannot be converted to type float without overflow", an int
    beyond 64 bits its OverflowError); ``as_float``: float16 and bfloat16 inputs compute in
    float32 (opmath), where the number is checked. The number itself is used unchanged. A
    number within float16's range passes two comparisons. ``negative_slope_of``: the
    function (leaky_relu) whose parser refuses anything but a Number there."""
    t = type(v)
    if t is float or t is int:
        if -65504.0 <= v <= 65504.0:
            d = getattr(input, "_data", None)
            if d is None or d.dtype.kind == "f" or d.dtype.kind == "c":
                return
        d = getattr(input, "_data", None)
        if d is not None:
            dt = d.dtype
            if as_float and (dt.name == "float16" or dt.name == "bfloat16"):
                dt = _F32
            checked_scalar(v, dt)
    elif negative_slope_of and not isinstance(v, (bool, complex)) and not hasattr(v, "_data"):
        import numbers

        if not isinstance(v, numbers.Number):
            raise TypeError(
                f"{negative_slope_of}(): argument 'negative_slope' (position 2) must be Number, "
                f"not {t.__name__}"
            )


def _scalar(v: complex, input: Any, ctype: str | None = None) -> Any:
    """A Python complex argument of an activation on a real ``input``: PyTorch converts it to
    the input's dtype (or to the C++ type ``ctype``), raising where the imaginary part is
    nonzero; callers test ``type(v) is complex`` first."""
    d = getattr(input, "_data", None)
    if d is None or _kinds.is_complex(d):
        return v
    return complex_scalar_value(v, ctype or d.dtype)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x if x > 0 else alpha (exp(x) - 1)."""
    if type(alpha) is complex:
        alpha = _scalar(alpha, input)
    _checked(alpha, input, True)
    return _ops.elu(input, alpha, inplace=inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the SELU constants."""
    return _ops.selu(input, inplace=inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    if type(alpha) is complex:
        alpha = _scalar(alpha, input, "double")
    _checked(alpha, input, True)
    return _ops.celu(input, alpha, inplace=inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x Phi(x) (or its tanh approximation)."""
    return _ops.gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x sigmoid(x)."""
    return _ops.silu(input, inplace=inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x tanh(softplus(x))."""
    return _ops.mish(input, inplace=inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """clamp(x, min_val, max_val)."""
    _checked(min_val, input)
    _checked(max_val, input)
    return _ops.hardtanh(input, min_val, max_val, inplace=inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return _ops.hardsigmoid(input, inplace=inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x relu6(x + 3) / 6."""
    return _ops.hardswish(input, inplace=inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta (x where beta x > threshold)."""
    if type(beta) is complex or type(threshold) is complex:
        beta = _scalar(beta, input) if type(beta) is complex else beta
        threshold = _scalar(threshold, input) if type(threshold) is complex else threshold
    _checked(beta, input, True)
    _checked(threshold, input, True)
    return _ops.softplus(input, beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x))."""
    d = getattr(input, "_data", None)
    if d is not None and _kinds.category(d) in (0, 1):  # PyTorch's kernel has no integer one
        from chainrule.ops._registry import _legacy_name

        raise NotImplementedError(
            f"\"log_sigmoid_cpu\" not implemented for '{_legacy_name(d.dtype)}'"
        )
    return _ops.logsigmoid(input)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return _ops.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return _ops.tanh(input)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else a x, with one slope ``a`` or one per channel (dim 1)."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, weight = _autocast.lower(input, weight)
    c = input.shape[1] if input.ndim >= 2 else 1
    k = weight._data.size
    if k != 1 and k != c:
        raise RuntimeError(
            "Mismatch of parameter numbers and input channel size. Found "
            f"parameter numbers = {k} and channel size = {c}."
        )
    if k == 1 or input.ndim < 2:
        a = _ops.reshape(weight, ())
    else:
        a = _ops.reshape(weight, (c,) + (1,) * (input.ndim - 2))
    if input.dtype.is_complex or weight.dtype.is_complex:  # PyTorch's kernel refuses (the op)
        if input.dtype != weight.dtype:
            from chainrule.ops._apply import _legacy_name as names

            raise RuntimeError(
                "prelu: Type promoting not supported. Got "
                f"{names(input._data.dtype)} and {names(weight._data.dtype)}"
            )
        return _prelu_ops.prelu_kernel(input, a)
    if not input.dtype.is_floating_point or input.dtype != weight.dtype:
        return _ops.where(input > 0, input, input * a)
    return _prelu_ops.prelu_kernel(input, a)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    if input.dtype.is_floating_point or input.dtype.is_complex:  # (complex: the op refuses)
        return _fused.glu(input, d)  # one GluBackward0 node, as torch
    a, b = _ops.chunk(input, 2, d)
    return a * _ops.sigmoid(b)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    _checked(lambd, input)
    if input.dtype.is_floating_point or input.dtype.is_complex:  # (complex: the op refuses)
        return _fused.hardshrink(input, lambd)  # one HardshrinkBackward0 node, as torch
    return _ops.where(_ops.abs(input) > lambd, input, _const(0, input))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0 (lambd >= 0)."""
    dt = str(input._data.dtype)
    if lambd < 0 or lambd > _FMAX.get(dt, 3.4028234663852886e38):
        kind = {"float32": "Float", "float64": "Double", "float16": "Half"}.get(dt, dt)
        top = {"float64": "1.79769e+308", "float16": "65504"}.get(dt, "3.40282e+38")
        raise RuntimeError(
            f"lambda must be in range [0, {top}] for input dtype {kind}, but found {lambd:g}"
        )
    if input.dtype.is_floating_point or input.dtype.is_complex:  # (complex: the op refuses)
        return _fused.softshrink(input, lambd)  # one SoftshrinkBackward0 node, as torch
    zero = _const(0, input)
    return _ops.where(input > lambd, input - lambd, _ops.where(input < -lambd, input + lambd, zero))


_FMAX = {"float64": 1.7976931348623157e308, "float16": 65504.0}


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (_ops.abs(input) + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - _ops.tanh(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value``."""
    d = input._data if isinstance(input, Tensor) else None
    if (type(value) is complex or type(threshold) is complex) and d is not None:
        # PyTorch converts both numbers to the input's dtype: its error for an imaginary part
        if type(threshold) is complex:
            threshold = complex_scalar_value(threshold, d.dtype)
        if type(value) is complex:
            value = complex_scalar_value(value, d.dtype)
    _checked(threshold, input, True)
    _checked(value, input)
    if d is not None and (_kinds.is_floating(d) or _kinds.is_complex(d)):  # (complex: refused)
        if inplace:  # ThresholdBackward1, as torch
            return _threshold_ops.threshold_(input, threshold, value)
        out = _threshold_ops.threshold(input, threshold, value)  # ThresholdBackward0, as torch
    else:
        out = _ops.where(input > threshold, input, _const(value, input))
    return _into(input, out) if inplace else out


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return globals()["threshold"](input, threshold, value, inplace=True)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """x where x > 0, else a x (as PyTorch's, x = 0 gives a 0: -0 for a negative slope). In
    training a ~ U(lower, upper) per element (drawn from the default generator, so
    ``manual_seed`` reproduces it; not PyTorch's stream); in eval a = (lower + upper) / 2."""
    if type(lower) is complex or type(upper) is complex:
        lower = _scalar(lower, input, "double") if type(lower) is complex else lower
        upper = _scalar(upper, input, "double") if type(upper) is complex else upper
    _checked(lower, input, True)
    _checked(upper, input, True)
    for name, bound in (("lower", lower), ("upper", upper)):
        if not math.isfinite(bound):
            raise RuntimeError(f"rrelu: {name} bound must be finite, got {bound}")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training:  # PyTorch's x noise, noise = r where x <= 0, else 1 (a NaN x passes)
        a = _const(_rng(input).uniform(lower, upper, size=tuple(input.shape)), input)
        noise = _ops.where(input <= 0, a, 1.0)
        fn: Any = lambda x: x * noise  # noqa: E731
    else:  # PyTorch's eval rrelu is leaky_relu, forward and backward (zeros' signs included)
        slope = (lower + upper) / 2
        fn = lambda x: _ops.leaky_relu(x, slope)  # noqa: E731
    if inplace:  # one RreluWithNoiseBackward1 node, as PyTorch's (its gradient g noise)
        node = lambda x: composite("RreluWithNoiseBackward1", fn, (x,))  # noqa: E731
        return _ops.inplace_compute(input, node, (), True)
    # PyTorch's one RreluWithNoiseBackward0 (Note [composite nodes] in ops/composite_node.py);
    # the noise is drawn once, above, so the backward's recomputation sees the same.
    return composite("RreluWithNoiseBackward0", fn, (input,))


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


def relu_(input: Tensor) -> Tensor:
    """In-place relu."""
    return _ops.relu_(input)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place elu."""
    if type(alpha) is complex:
        alpha = _scalar(alpha, input)
    _checked(alpha, input, True)
    return _ops.elu(input, alpha, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place celu."""
    if type(alpha) is complex:
        alpha = _scalar(alpha, input, "double")
    _checked(alpha, input, True)
    return _ops.celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In-place selu."""
    return _ops.selu(input, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place leaky_relu."""
    if type(negative_slope) is complex:
        negative_slope = _scalar(negative_slope, input)
    else:
        _checked(negative_slope, input, True, "leaky_relu_")
    return _ops.leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place hardtanh."""
    if type(min_val) is complex or type(max_val) is complex:  # (no Python check first here)
        min_val = _scalar(min_val, input, "double") if type(min_val) is complex else min_val
        max_val = _scalar(max_val, input, "double") if type(max_val) is complex else max_val
    _checked(min_val, input)
    _checked(max_val, input)
    return _ops.hardtanh(input, min_val, max_val, inplace=True)


@refuses_complex("gumbel_softmax")
def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1) from the default generator. ``hard``
    returns the one-hot argmax in the forward pass and the soft sample's gradient
    (straight-through: y_hard - sg(y_soft) + y_soft)."""
    g = -np.log(_rng(logits).exponential(1.0, size=tuple(logits.shape)))
    y = _nnops.softmax((logits + _const(g, logits)) / tau, wrap_dim(dim, max(logits.ndim, 1)))
    if not hard:
        return y
    d = wrap_dim(dim, max(logits.ndim, 1))
    xp = backend_of(y._data).xp
    idx = xp.expand_dims(xp.argmax(y._data, axis=d), d)
    pos = xp.arange(y.shape[d]).reshape([-1 if i == d else 1 for i in range(y.ndim)])
    y_hard = (pos == idx).astype(y._data.dtype)  # the one-hot argmax
    return _new_tensor(y_hard) - y.detach() + y
