"""The Gamma distribution (shape ``concentration``, ``rate``), reparameterized by implicit
differentiation of its CDF."""

from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Size, Tensor
from chainrule.distributions import constraints
from chainrule.distributions._params import expand_params
from chainrule.distributions.exp_family import ExponentialFamily
from chainrule.distributions.utils import _host, _rng, broadcast_all, finfo
from chainrule.ops.special import gamma_reparam

__all__ = ["Gamma", "standard_gamma"]


def standard_gamma(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) samples of ``concentration``'s shape, clamped to the dtype's
    smallest normal number, carrying the implicit reparameterization gradient
    dx/dalpha = -(dP/dalpha)(alpha, x) / p(x; alpha) back to ``concentration``."""
    a = _host(concentration)
    x = _rng(concentration).standard_gamma(a)
    x = np.maximum(x, finfo(concentration.dtype).tiny)
    return gamma_reparam(
        concentration,
        _creation.tensor(x.astype(np.dtype(concentration.dtype.np)), device=concentration.device),
    )


class Gamma(ExponentialFamily):
    """Gamma distribution: log p(x) = a log(b) + (a - 1) log(x) - b x - lgamma(a)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, Number) and isinstance(rate, Number):
            batch_shape = Size()
        else:
            batch_shape = self.concentration.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return expand_params(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value

    def log_prob(self, value: Tensor) -> Tensor:
        value = _creation.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (
            _ops.xlogy(self.concentration, self.rate)
            + _ops.xlogy(self.concentration - 1, value)
            - self.rate * value
            - _ops.lgamma(self.concentration)
        )

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        from chainrule.special import gammainc

        return gammainc(self.concentration, self.rate * value)
