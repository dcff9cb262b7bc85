"""The Dirichlet distribution, reparameterized as PyTorch does (implicit gradients through the
Beta marginals)."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Size, Tensor
from chainrule.distributions import constraints
from chainrule.distributions._params import expand_params
from chainrule.distributions.exp_family import ExponentialFamily
from chainrule.distributions.utils import _host, _rng, finfo
from chainrule.ops.special import dirichlet_reparam

__all__ = ["Dirichlet"]


def sample_dirichlet(concentration: Tensor) -> Tensor:
    """Dirichlet samples (normalized Gamma draws) with the reparameterization gradient."""
    a = _host(concentration)
    g = np.maximum(_rng(concentration).standard_gamma(a), np.finfo(np.float64).tiny)
    x = g / g.sum(-1, keepdims=True)
    fi = finfo(concentration.dtype)
    x = np.clip(x, fi.tiny, 1 - fi.eps).astype(np.dtype(concentration.dtype.np))
    return dirichlet_reparam(concentration, _creation.tensor(x, device=concentration.device))


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution on the simplex: log p(x) = sum (a_i - 1) log x_i
    + lgamma(sum a_i) - sum lgamma(a_i)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        return expand_params(self, Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return _ops.xlogy(c - 1.0, value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        concm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concm1 / concm1.sum(-1, keepdim=True)
        # Where every concentration is below 1 the density peaks at a vertex (the largest a_i).
        mask = (self.concentration < 1).all(-1, keepdim=True)
        n = concm1.shape[-1]
        from chainrule.nn.functional import one_hot

        vertex = one_hot(self.concentration.argmax(-1), n).to(mode.dtype)
        return _ops.where(mask, vertex, mode)

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, keepdim=True)
        c = self.concentration
        return c * (con0 - c) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (
            c.lgamma().sum(-1)
            - a0.lgamma()
            - (k - a0) * a0.digamma()
            - ((c - 1.0) * c.digamma()).sum(-1)
        )

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
