"""Layers PyTorch keeps for old code: ``CrossMapLRN2d`` (Lua Torch's cross-channel LRN) and
``Container`` (a deprecated Module that adds its keyword arguments as children)."""

from __future__ import annotations

import warnings
from typing import Any

from chainrule._tensor import Tensor
from chainrule.nn._cross_map_lrn import cross_map_lrn2d
from chainrule.nn.modules.module import Module

__all__ = ["Container", "CrossMapLRN2d"]


class CrossMapLRN2d(Module):
    """Local response normalization across the channels of a 4-d input, as Lua Torch's
    ``SpatialCrossMapLRN`` (see ``chainrule/nn/_cross_map_lrn.py`` for its window).

    Differs from torch: the gradient is the exact derivative of the forward; PyTorch's
    hand-written backward for this layer is not (``gradcheck`` fails on it, and it raises for
    ``size=1``).
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class Container(Module):
    """Deprecated: a Module whose keyword arguments become its children."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        warnings.warn(
            "`nn.Container` is deprecated. All of its functionality is now implemented in "
            "`nn.Module`. Subclass that instead.",
            FutureWarning,
            stacklevel=2,
        )
        for key, value in kwargs.items():
            self.add_module(key, value)
