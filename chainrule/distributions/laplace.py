"""The Laplace distribution."""

from __future__ import annotations

from numbers import Number
from typing import Any

from chainrule._tensor import Size, Tensor
from chainrule.distributions import constraints
from chainrule.distributions._params import expand_params
from chainrule.distributions.distribution import Distribution
from chainrule.distributions.utils import _as_tensor, _rng, broadcast_all, finfo

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Laplace distribution: log p(x) = -log(2 scale) - |x - loc| / scale."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        return expand_params(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = finfo(self.loc.dtype).eps
        u = _as_tensor(_rng(self.loc).uniform(eps - 1, 1, tuple(shape)), self.loc)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return 0.5 - 0.5 * z.sign() * (-z.abs()).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
