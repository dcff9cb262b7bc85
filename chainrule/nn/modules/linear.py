"""``Identity``, ``Linear`` and ``Bilinear``."""

from __future__ import annotations

import math
from typing import Any

from chainrule._tensor import Tensor
from chainrule.nn import functional as F
from chainrule.nn import init
from chainrule.nn.modules._params import add_weight_and_bias, reset_fan_in_uniform
from chainrule.nn.modules.module import Module

__all__ = ["Identity", "Linear", "NonDynamicallyQuantizableLinear", "Bilinear"]


class Identity(Module):
    """Returns its input unchanged; accepts and ignores any constructor arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x W^T + b`` with ``W`` of shape (out_features, in_features).

    Initialisation (PyTorch's): ``W`` by ``kaiming_uniform_(a=sqrt(5))``, i.e. U(-1/sqrt(in),
    1/sqrt(in)); ``b`` from U(-1/sqrt(in), 1/sqrt(in)).
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        add_weight_and_bias(self, (out_features, in_features), out_features, dtype, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_fan_in_uniform(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under the class name PyTorch gives ``MultiheadAttention.out_proj`` (so
    reprs match, and ``torch.nn.modules.linear.NonDynamicallyQuantizableLinear`` names it, as
    programs listing ``torch.load`` safe globals do); it behaves exactly as ``Linear``."""


class Bilinear(Module):
    """``y_k = x1^T A_k x2 + b_k`` with ``A`` of shape (out, in1, in2); weights and bias from
    U(-1/sqrt(in1), 1/sqrt(in1)). Calls ``functional.bilinear``."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        add_weight_and_bias(
            self, (out_features, in1_features, in2_features), out_features, dtype, bias=bias
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
