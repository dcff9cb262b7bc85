"""``LinearCrossEntropyLoss`` (a ``Linear`` to class logits followed by cross entropy) and
its ``LinearCrossEntropyOptions``."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from chainrule._tensor import Tensor
from chainrule.nn._functional_lce import linear_cross_entropy
from chainrule.nn.modules.linear import Linear
from chainrule.nn.modules.loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


@dataclasses.dataclass
class LinearCrossEntropyOptions:
    """PyTorch's chunking options for ``linear_cross_entropy``; accepted, with no effect in
    chainrule (the logits are always formed whole)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None


class LinearCrossEntropyLoss(_WeightedLoss):
    """``cross_entropy(linear(input), target)`` with the ``Linear`` held as ``self.linear``
    (weight stored flat as (C * prod(out_features), in_features), PyTorch's layout)."""

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device: Any = None,
        dtype: Any = None,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: LinearCrossEntropyOptions | None = None,
    ) -> None:
        super().__init__(weight, None, None, reduction)
        self.in_features = in_features
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.bias = bias
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.options = options
        self.linear = Linear(
            in_features, num_classes * math.prod(self.out_features), bias=bias, dtype=dtype
        )

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        w = self.linear.weight.reshape(*shape, self.in_features)
        b = self.linear.bias.reshape(shape) if self.linear.bias is not None else None
        return linear_cross_entropy(
            input,
            w,
            target,
            linear_bias=b,
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.bias}, reduction={self.reduction}, "
            f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, "
            f"options={self.options}"
        )
