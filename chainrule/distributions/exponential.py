"""The Exponential distribution with rate ``rate``."""

from __future__ import annotations

from numbers import Number
from typing import Any

from chainrule._tensor import Size, Tensor
from chainrule.distributions import constraints
from chainrule.distributions._params import expand_params
from chainrule.distributions.exp_family import ExponentialFamily
from chainrule.distributions.utils import _as_tensor, _rng, broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Exponential distribution: log p(x) = log(rate) - rate x for x >= 0."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return self.rate * 0

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        return expand_params(self, Exponential, batch_shape, _instance, ("rate",))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        e = _as_tensor(_rng(self.rate).standard_exponential(tuple(shape)), self.rate)
        return e / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (-self.rate,)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return -(-x).log()
