"""The Gumbel (type-I extreme value) distribution."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from chainrule import _creation
from chainrule._tensor import Tensor
from chainrule.distributions import constraints
from chainrule.distributions.transformed_distribution import TransformedDistribution
from chainrule.distributions.transforms import AffineTransform, ExpTransform
from chainrule.distributions.uniform import Uniform
from chainrule.distributions.utils import broadcast_all, euler_constant, finfo

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """Gumbel distribution: log p(x) = -(z + e**-z) - log(scale), z = (x - loc) / scale.
    Built as loc - scale log(-log U), U ~ Uniform(tiny, 1 - eps)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support: constraints.Constraint = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        fi = finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(fi.tiny, 1 - fi.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(
                _creation.full_like(self.loc, fi.tiny),
                _creation.full_like(self.loc, 1 - fi.eps),
                validate_args=validate_args,
            )
        transforms = [
            ExpTransform().inv,
            AffineTransform(loc=0, scale=-_creation.ones_like(self.scale)),
            ExpTransform().inv,
            AffineTransform(loc=self.loc, scale=-self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + euler_constant)
