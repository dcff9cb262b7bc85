"""The Geometric distribution: the number of failures before the first success."""

from __future__ import annotations

from numbers import Number
from typing import Any

import chainrule.nn.functional as F
from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Size, Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.distributions import constraints
from chainrule.distributions._params import expand_params
from chainrule.distributions.distribution import Distribution
from chainrule.distributions.utils import (
    broadcast_all,
    finfo,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    uniform01,
)

__all__ = ["Geometric"]


class Geometric(Distribution):
    """Geometric distribution: P(k) = (1 - p)**k p for k = 0, 1, ..."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        probs_or_logits = probs if probs is not None else logits
        if isinstance(probs_or_logits, Number):
            batch_shape = Size()
        else:
            batch_shape = (self.probs if probs is not None else self.logits).shape
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # Add an extra check beyond unit_interval
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid_value = value[~valid] if value.ndim else value
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {repr(self)} "
                    f"to be positive but found invalid values:\n{invalid_value}"
                )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        return expand_params(self, Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return _creation.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with _grad_mode.no_grad():
            u = uniform01(shape, self.probs).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # (1 - p)**k with p == 1, k == 0 is 1: that term is made 0 rather than 0 * -inf
        probs = _ops.where((probs == 1) & (value == 0), probs * 0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return (
            F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
            / self.probs
        )
