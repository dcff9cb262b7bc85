"""The von Mises distribution on the circle."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule import _creation
from chainrule._tensor import Size, Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.distributions import constraints
from chainrule.distributions._params import expand_params
from chainrule.distributions.distribution import Distribution
from chainrule.distributions.utils import _host, _rng, broadcast_all

__all__ = ["VonMises"]


def _log_i0(k: Tensor) -> Tensor:
    # log I0(k) = log(i0e(k)) + k: finite for large concentrations
    from chainrule.special import i0e

    return i0e(k).log() + k


class VonMises(Distribution):
    """von Mises distribution: log p(x) = k cos(x - loc) - log(2 pi I0(k)), k =
    ``concentration``. Samples lie in [-pi, pi)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        super().__init__(batch_shape, Size(), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        return expand_params(self, VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return log_prob - math.log(2 * math.pi) - _log_i0(self.concentration)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with _grad_mode.no_grad():
            mu = np.broadcast_to(_host(self.loc), shape)
            k = np.broadcast_to(_host(self.concentration), shape)
            x = _rng(self.loc).vonmises(mu, k)
            x = (x + np.pi) % (2 * np.pi) - np.pi
            return _creation.tensor(x.astype(np.dtype(self.loc.dtype.np)), device=self.loc.device)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        from chainrule.special import i0e, i1e

        k = self.concentration
        return 1 - (i1e(k).log() - i0e(k).log()).exp()
