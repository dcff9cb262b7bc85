"""In-place ops: each reuses an out-of-place op's forward and VJP through ``apply_inplace``,
which writes into the tensor, increments its version and rebases its history."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule._dispatch import upper
from chainrule._dtype import result_type
from chainrule._scalar_convert import checked_scalar, complex_scalar_value
from chainrule._tensor import _CPP_NAMES, Tensor
from chainrule.ops import binary, unary
from chainrule.ops._registry import OpDef, _legacy_name, _state, ns
from chainrule.ops.binary.arithmetic import check_alpha, check_bool_sub, checked_exponent
from chainrule.ops.views import (
    apply_inplace,
    check_inplace,
    copy_into_view,
    inplace_compute,
    make_writable,
)

__all__ = [
    "fill_",
    "copy_",
    "add_",
    "sub_",
    "mul_",
    "div_",
    "pow_",
    "zero_",
    "relu_",
    "sigmoid_",
    "tanh_",
    "exp_",
    "neg_",
    "abs_",
    "sqrt_",
    "log_",
    "sin_",
    "cos_",
    "clamp_",
    "clamp_min_",
    "clamp_max_",
    "clip_",
]


def _fill_fwd(xp: Any, x: Any, v: Any) -> Any:
    return xp.full_like(x, v)


# The old value is overwritten entirely: it gets a zero gradient (as in PyTorch, where
# x.zero_() leaves x.grad zeros, not None, even where g is inf or NaN); a tensor fill value
# gets the sum of g.
_fill = OpDef(
    "fill",
    _fill_fwd,
    ("x", "v"),
    promote=None,
    node_name="FillBackward0",
    vjps=(unary._zero_grad, lambda ctx, g: ns.sum(g, dim=None, keepdim=False)),
)


def fill_(self: Tensor, value: Any) -> Tensor:
    """Fill ``self`` with ``value`` (a number or a 0-dim tensor), in place."""
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value._data.ndim} dimensions."
        )
    if type(value) is float or type(value) is int:  # PyTorch's range check (Note [checked
        # scalar conversion] in _scalar_convert.py)
        value = checked_scalar(value, self._data.dtype)
    elif type(value) is complex:  # PyTorch's error for a nonzero imaginary part
        value = complex_scalar_value(value, self._data.dtype)
    return apply_inplace(_fill, self, (value,))


def _copy_fwd(xp: Any, x: Any, src: Any) -> Any:
    return xp.broadcast_to(src, x.shape).astype(x.dtype)


# The old value is overwritten: it gets a zero gradient, as with fill (PyTorch: after
# b = a.clone(); b.copy_(src), a.grad is zeros, not None).
_copy = OpDef(
    "copy",
    _copy_fwd,
    ("x", "src"),
    promote=None,
    node_name="CopyBackwards",
    vjps=(unary._zero_grad, lambda ctx, g: g),
)


def copy_(self: Tensor, src: Any) -> Tensor:
    """Copy ``src`` (broadcast, cast to self's dtype) into ``self``. VJP: g to ``src`` (summed
    over broadcast dims). On a view in a graph, the base's CopySlices takes ``src`` directly."""
    if not isinstance(src, Tensor):
        from chainrule._creation import tensor

        src = tensor(src, dtype=self.dtype)
    if self._requires_grad and not self._is_inference:
        check_inplace(self)  # PyTorch's leaf errors come before its shape errors
    make_writable(self)  # a view through expand (Note [writing through expand] in views.py)
    if src._data.shape != self._data.shape:
        _check_copy_shape(self._data.shape, src._data)
    d, sd = self._data, src._data
    if (
        isinstance(d, np.ndarray)
        and isinstance(sd, np.ndarray)
        and np.may_share_memory(d, sd)
        and _partial_overlap(d, sd)
    ):
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and the written-to tensor "
            "refer to a single memory location. Please clone() the tensor before performing "
            "the operation."
        )
    if self._base is not None and _state.enabled and (self._requires_grad or src._requires_grad):
        check_inplace(self, (src,))
        return copy_into_view(self, src)
    return apply_inplace(_copy, self, (src,))


def _check_copy_shape(dst: tuple[int, ...], src: Any) -> None:
    """PyTorch's errors for a ``src`` that does not broadcast to ``dst``, as an in-place
    binary op words them."""
    err = binary.broadcast_error(np.empty(dst, dtype=np.bool_), src)
    if err is not None:
        raise err
    full = np.broadcast_shapes(dst, src.shape)
    if full != tuple(dst):
        raise RuntimeError(
            f"output with shape {list(dst)} doesn't match the broadcast shape {list(full)}"
        )


def _partial_overlap(a: Any, b: Any) -> bool:
    """PyTorch's test for copy_: two contiguous blocks of memory that overlap without being
    the same block (strided ones are not checked, as there)."""
    if not (a.flags.c_contiguous and b.flags.c_contiguous):
        return False
    pa, pb = a.__array_interface__["data"][0], b.__array_interface__["data"][0]
    return not (pa == pb and a.nbytes == b.nbytes)


def add_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """self += alpha * other (a sparse COO ``other`` as its dense form)."""
    o = other
    try:
        if alpha != 1 or type(alpha) is not int:
            alpha = check_alpha(self, other, alpha)
            o = other * alpha
        return apply_inplace(binary._add.op, self, (o,))
    except NotImplementedError:
        if getattr(other, "_sparse", False) and not self._sparse:
            return add_(self, upper.to_dense(other), alpha=alpha)
        raise


def sub_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """self -= alpha * other (a sparse COO ``other`` as its dense form)."""
    check_bool_sub(self._data, getattr(other, "_data", None), other)
    o = other
    try:
        if alpha != 1 or type(alpha) is not int:
            alpha = check_alpha(self, other, alpha)
            o = other * alpha
        return apply_inplace(binary._sub.op, self, (o,))
    except NotImplementedError:
        if getattr(other, "_sparse", False) and not self._sparse:
            return sub_(self, upper.to_dense(other), alpha=alpha)
        raise


def mul_(self: Tensor, other: Any) -> Tensor:
    """self *= other."""
    return apply_inplace(binary.mul.op, self, (other,))


def div_(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """self /= other (true division; an integer self fails, as in PyTorch)."""
    if rounding_mode is not None:
        return inplace_compute(
            self, lambda a: binary.div(a, other, rounding_mode=rounding_mode), (other,)
        )
    return apply_inplace(binary._div.op, self, (other,))


def pow_(self: Tensor, exponent: Any) -> Tensor:
    """self = self ** exponent."""
    if not isinstance(exponent, Tensor):
        exponent = checked_exponent(self, exponent)
    return apply_inplace(binary._pow.op, self, (exponent,))


def zero_(self: Tensor) -> Tensor:
    """Fill ``self`` with zeros, in place."""
    return apply_inplace(_fill, self, (0,))


# Unary in-place ops reuse the out-of-place OpDef: apply_inplace copies self for the ops that
# save their input, and points the saved output of the others at self's storage.
def _unary_(fn: Any) -> Any:
    op = fn.op

    def f(self: Tensor) -> Tensor:
        return apply_inplace(op, self, ())

    f.__name__ = fn.__name__ + "_"
    f.__qualname__ = f.__name__
    f.__doc__ = f"In-place {fn.__name__}: ``self = {fn.__name__}(self)``."
    return f


relu_ = _unary_(unary.relu)
sigmoid_ = _unary_(unary.sigmoid)
tanh_ = _unary_(unary.tanh)
exp_ = _unary_(unary.exp)
neg_ = _unary_(unary.neg)
abs_ = _unary_(unary.abs)
sqrt_ = _unary_(unary.sqrt)
log_ = _unary_(unary.log)
sin_ = _unary_(unary.sin)
cos_ = _unary_(unary.cos)


# clamp is defined by the unary family; its in-place forms run the public function on a
# stand-in for self (``inplace_compute``), so they follow whatever OpDefs it uses. (masked_fill_,
# index_add_, scatter_ and scatter_add_ live with their ops in ops/indexing/.)
def _ops() -> Any:
    # Through the op table (chainrule/_dispatch.py), not the package, which imports this module.
    from chainrule._dispatch import ops

    return ops


def _tensors(*args: Any) -> tuple[Any, ...]:
    return tuple(a for a in args if isinstance(a, Tensor))


def _complex_bound_into_real(self: Tensor, min: Any, max: Any) -> None:
    """PyTorch's in-place check, before any kernel runs, that a complex bound cannot make a
    real ``self`` complex: a complex tensor bound (unless a 0-dim one beside a number, which
    PyTorch's Scalar overload turns into a number) and, for an integral ``self``, a Python
    complex, raise "result type ComplexFloat can't be cast to the desired output type ...".
    (A floating ``self`` converts a Python complex to a double first: clamp's own error.)"""
    if _kinds.is_complex(self._data):
        return
    tensors = [b for b in (min, max) if isinstance(b, Tensor)]
    mixed = min is not None and max is not None and len(tensors) == 1
    if any(_kinds.is_complex(t._data) and not (mixed and t._data.ndim == 0) for t in tensors):
        rt = result_type(self, min, max).np
        raise RuntimeError(
            f"result type {_legacy_name(rt)} can't be cast to the desired output type "
            f"{_legacy_name(self._data.dtype)}"
        )
    if not _kinds.is_floating(self._data) and complex in (type(min), type(max)):
        rt = result_type(self, min, max).np
        raise RuntimeError(
            f"result type {_legacy_name(rt)} can't be cast to the desired output type "
            f"{_CPP_NAMES.get(self._data.dtype.name, self._data.dtype.name)}"
        )


def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """self = clamp(self, min, max)."""
    if type(min) is complex or type(max) is complex or _tensors(min, max):
        _complex_bound_into_real(self, min, max)
    try:
        return inplace_compute(self, lambda a: _ops().clamp(a, min, max), _tensors(min, max))
    except RuntimeError:
        _number_bound_into_integral(self, min, max)
        raise


def _number_bound_into_integral(self: Tensor, min: Any, max: Any) -> None:
    """After a failed ``clamp_``: PyTorch checks first that a number bound cannot make an
    integer or bool ``self`` floating (or a bool one integral), so its error is "result
    type Float can't be cast to the desired output type signed char" (C++ names), even where
    the bound would also fail its range check."""
    if _kinds.is_inexact(self._data) or any(isinstance(b, Tensor) for b in (min, max)):
        return
    rt = result_type(self, min, max).np
    if _kinds.category(rt) > _kinds.category(self._data):
        raise RuntimeError(
            f"result type {_legacy_name(rt)} can't be cast to the desired output type "
            f"{_CPP_NAMES.get(self._data.dtype.name, self._data.dtype.name)}"
        ) from None


clip_ = clamp_


def clamp_min_(self: Tensor, min: Any) -> Tensor:
    if isinstance(min, Tensor):
        _complex_bound_into_real(self, min, None)
    return inplace_compute(self, lambda a: _ops().clamp_min(a, min), _tensors(min))


def clamp_max_(self: Tensor, max: Any) -> Tensor:
    if isinstance(max, Tensor):
        _complex_bound_into_real(self, None, max)
    return inplace_compute(self, lambda a: _ops().clamp_max(a, max), _tensors(max))
