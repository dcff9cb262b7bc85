"""Fold an eval-mode BatchNorm into the convolution or linear layer before it.

With s = gamma / sqrt(running_var + eps), a BatchNorm after ``y = W x + b`` computes
``s (W x + b - running_mean) + beta``, which is one layer with weight ``s W`` (s along the
output channels) and bias ``s (b - running_mean) + beta``.
"""

from __future__ import annotations

import copy
from typing import TypeVar

from chainrule._creation import ones_like, zeros_like
from chainrule._tensor import Tensor
from chainrule.autograd import no_grad
from chainrule.nn.modules.module import Module
from chainrule.nn.parameter import Parameter
from chainrule.ops import rsqrt

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]

M = TypeVar("M", bound=Module)


def _defaults(
    b: Tensor | None, rm: Tensor, w: Tensor | None, bb: Tensor | None
) -> tuple[Tensor, Tensor, Tensor]:
    return (
        zeros_like(rm) if b is None else b,
        ones_like(rm) if w is None else w,
        zeros_like(rm) if bb is None else bb,
    )


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """(W s, (b - running_mean) s + beta) as Parameters, s = gamma / sqrt(running_var + eps)
    broadcast along the output-channel axis (axis 1 of a transposed convolution's weight)."""
    with no_grad():
        b, w, bb = _defaults(conv_b, bn_rm, bn_w, bn_b)
        scale = w * rsqrt(bn_rv + bn_eps)
        shape: list[int] = [1] * conv_w.ndim
        shape[1 if transpose else 0] = -1
        fused_w = (conv_w * scale.reshape(shape)).to(conv_w.dtype)
        fused_b = ((b - bn_rm) * scale + bb).to(b.dtype)
    return (
        Parameter(fused_w, conv_w.requires_grad),
        Parameter(fused_b, b.requires_grad),
    )


def fuse_conv_bn_eval(conv: M, bn: Module, transpose: bool = False) -> M:
    """A copy of ``conv`` computing ``bn(conv(x))`` (both in eval mode)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("BatchNorm must track running statistics to be fused")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
) -> tuple[Parameter, Parameter]:
    """(s W, (b - running_mean) s + beta), s = gamma / sqrt(running_var + eps) per output."""
    with no_grad():
        b, w, bb = _defaults(linear_b, bn_rm, bn_w, bn_b)
        scale = w * rsqrt(bn_rv + bn_eps)
        fused_w = linear_w * scale.unsqueeze(-1)
        fused_b = (b - bn_rm) * scale + bb
    return (
        Parameter(fused_w, linear_w.requires_grad),
        Parameter(fused_b, b.requires_grad),
    )


def fuse_linear_bn_eval(linear: M, bn: Module) -> M:
    """A copy of ``linear`` computing ``bn(linear(x))`` (both in eval mode)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("BatchNorm must track running statistics to be fused")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
    )
    return fused
