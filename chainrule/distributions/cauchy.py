"""The Cauchy (Lorentz) distribution."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from chainrule import _creation
from chainrule._tensor import Size, Tensor
from chainrule.distributions import constraints
from chainrule.distributions._params import expand_params
from chainrule.distributions.distribution import Distribution
from chainrule.distributions.utils import _as_tensor, _rng, broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy distribution: log p(x) = -log(pi scale) - log1p(((x - loc) / scale)**2)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Cauchy:
        return expand_params(self, Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> Tensor:
        return _creation.full(
            tuple(self._extended_shape()),
            float("nan"),
            dtype=self.loc.dtype,
            device=self.loc.device,
        )

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return _creation.full(
            tuple(self._extended_shape()),
            float("inf"),
            dtype=self.loc.dtype,
            device=self.loc.device,
        )

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _as_tensor(_rng(self.loc).standard_cauchy(tuple(shape)), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()
        )

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
