"""The overloads PyTorch's C++ functions call with a Python number, which its autograd names
apart from the tensor forms: ``add(Tensor, Scalar)`` records ``AddBackward1``,
``mul(Tensor, Scalar)`` ``MulBackward1``, ``div(Tensor, Scalar)`` ``DivBackward1`` and
``at::norm(x, p, dim, keepdim)`` ``NormBackward1`` (Python's ``x + 1.0`` wraps the number in a
tensor and records ``AddBackward0``). The composite nn.functional functions that PyTorch writes
in C++ (``margin_ranking_loss``, ``pairwise_distance``, ``cross_entropy`` with probabilities or
label smoothing) call these, so that their graphs are PyTorch's (Note [node classes] in
chainrule/autograd/_nodes.py).

The number keeps the tensor's dtype (a float tensor stays float32). VJPs: g, g s, g / s, and
the vector norm's.
"""

from __future__ import annotations

from typing import Any

from chainrule import _kinds
from chainrule.ops._registry import apply_op, defop
from chainrule.ops.reduction.norms import _vector_norm, _vector_norm_vjp

__all__: list[str] = []


@defop(name="add_scalar", promote=None, node_name="AddBackward1")
def _add_scalar(xp: Any, x: Any, *, other: float) -> Any:
    """x + other, other a Python number (in x's dtype). VJP: g."""
    return x + xp.asarray(other, dtype=x.dtype)


_add_scalar.vjp(lambda ctx, g: (g,))


@defop(name="mul_scalar", promote=None, node_name="MulBackward1")
def _mul_scalar(xp: Any, x: Any, *, other: float) -> Any:
    """x * other, other a Python number (in x's dtype). VJP: g other."""
    return x * xp.asarray(other, dtype=x.dtype)


_mul_scalar.vjp(lambda ctx, g: (g * ctx.other,))


@defop(name="div_scalar", promote=None, node_name="DivBackward1")
def _div_scalar(xp: Any, x: Any, *, other: float) -> Any:
    """x / other, other a Python number (in x's dtype). VJP: g / other."""
    return x / xp.asarray(other, dtype=x.dtype)


_div_scalar.vjp(lambda ctx, g: (g / ctx.other,))


@defop(name="norm_dim", saves=("x", "out"), promote=None, node_name="NormBackward1")
def _norm_dim(xp: Any, x: Any, *, ord: float, dim: Any, keepdim: bool) -> Any:
    """||x||_p over ``dim``, as ``linalg.vector_norm`` (its VJP too), recorded as
    ``NormBackward1``."""
    return _vector_norm.forward(xp, x, ord=ord, dim=dim, keepdim=keepdim)


_norm_dim.vjp(_vector_norm_vjp)


def add_scalar(x: Any, other: float) -> Any:
    """x + other for a Tensor ``x`` and a Python number (``AddBackward1`` for a floating x)."""
    if not _kinds.is_floating(x._data):
        return x + other
    return apply_op(_add_scalar, (x,), {"other": float(other)})


def mul_scalar(x: Any, other: float) -> Any:
    """x * other for a Tensor ``x`` and a Python number (``MulBackward1`` for a floating x)."""
    if not _kinds.is_floating(x._data):
        return x * other
    return apply_op(_mul_scalar, (x,), {"other": float(other)})


def div_scalar(x: Any, other: float) -> Any:
    """x / other for a Tensor ``x`` and a Python number (``DivBackward1`` for a floating x)."""
    if not _kinds.is_floating(x._data):
        return x / other
    return apply_op(_div_scalar, (x,), {"other": float(other)})


def norm_dim(x: Any, p: float, dim: tuple[int, ...], keepdim: bool) -> Any:
    """The p-norm of a floating Tensor ``x`` over the wrapped ``dim`` (``NormBackward1``)."""
    return apply_op(_norm_dim, (x,), {"ord": float(p), "dim": dim, "keepdim": keepdim})
