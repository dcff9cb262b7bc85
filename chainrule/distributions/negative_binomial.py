"""The Negative Binomial distribution."""

from __future__ import annotations

from typing import Any

import chainrule.nn.functional as F
from chainrule import ops as _ops
from chainrule._tensor import Size, Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.distributions import constraints
from chainrule.distributions._params import expand_params
from chainrule.distributions.distribution import Distribution
from chainrule.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    poisson_sample,
    probs_to_logits,
)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Number of successful Bernoulli(probs) trials before ``total_count`` failures:
    log P(k) = r log(1 - p) + k log p + lgamma(r + k) - lgamma(k + 1) - lgamma(r)."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self,
        total_count: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        return expand_params(
            self, NegativeBinomial, batch_shape, _instance, ("total_count", "probs", "logits")
        )

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        # A Gamma-Poisson mixture: rate ~ Gamma(total_count, exp(-logits)), k ~ Poisson(rate).
        from chainrule.distributions.gamma import Gamma

        with _grad_mode.no_grad():
            g = Gamma(self.total_count, (-self.logits).exp(), validate_args=False)
            return poisson_sample(g.sample(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        r = self.total_count
        log_unnormalized_prob = r * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -(r + value).lgamma() + (1.0 + value).lgamma() + r.lgamma()
        # P(0) = 1 when total_count == 0: lgamma(0) terms are dropped there
        log_normalization = _ops.where(r + value == 0.0, log_normalization * 0, log_normalization)
        return log_unnormalized_prob - log_normalization
