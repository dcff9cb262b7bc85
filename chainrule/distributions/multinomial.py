"""The Multinomial distribution: counts of ``total_count`` Categorical draws."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Size, Tensor
from chainrule.distributions import constraints
from chainrule.distributions.binomial import Binomial
from chainrule.distributions.categorical import Categorical
from chainrule.distributions.distribution import Distribution
from chainrule.distributions.utils import _host, _rng, broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Multinomial distribution: log P(x) = lgamma(n + 1) - sum lgamma(x_i + 1)
    + sum x_i log p_i, for counts x summing to n = ``total_count``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(
        self,
        total_count: int = 1,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> Any:
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        p = _host(self.probs)
        p = p / p.sum(-1, keepdims=True)
        shape = tuple(sample_shape) + p.shape[:-1]
        out = _rng(self.probs).multinomial(
            self.total_count, np.broadcast_to(p, shape + p.shape[-1:])
        )
        return _creation.tensor(out.astype(np.dtype(self.probs.dtype.np)), device=self.probs.device)

    def entropy(self) -> Tensor:
        n = _creation.tensor(
            float(self.total_count), dtype=self.probs.dtype, device=self.probs.device
        )
        support = self._binomial.enumerate_support()
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        return (
            n * self._categorical.entropy()
            - (n + 1).lgamma()
            + (binomial_probs * weights).sum(0).sum(-1)
        )

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        # 0 * -inf is 0 here: a category of probability 0 that was never drawn
        logits = _ops.where(
            (value == 0) & (logits == float("-inf")), _creation.zeros_like(logits), logits
        )
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
