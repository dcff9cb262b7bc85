"""The half-normal distribution: |X| with X ~ Normal(0, scale)."""

from __future__ import annotations

import math
from typing import Any

from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.distributions import constraints
from chainrule.distributions.normal import Normal
from chainrule.distributions.transformed_distribution import TransformedDistribution
from chainrule.distributions.transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(TransformedDistribution):
    """|X| with X ~ Normal(0, scale): log p(x) = log N(x; 0, scale) + log 2 for x >= 0."""

    base_dist: Normal

    arg_constraints = {"scale": constraints.positive}
    support: constraints.Constraint = constraints.nonnegative
    has_rsample: bool = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return _creation.zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _ops.where(value >= 0, log_prob, _creation.full_like(log_prob, float("-inf")))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
