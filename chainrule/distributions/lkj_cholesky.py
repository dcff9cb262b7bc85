"""The LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math
from typing import Any

from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Size, Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.distributions import constraints
from chainrule.distributions.beta import Beta
from chainrule.distributions.distribution import Distribution
from chainrule.distributions.utils import broadcast_all, finfo, standard_normal

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ(concentration) over lower-triangular L with L L^T a correlation matrix of size
    ``dim``: p(L) is proportional to prod_i L_ii**(dim - i + 2 (eta - 1)), i = 2..dim, the
    density of the Cholesky factor of a matrix with density det(C)**(eta - 1). Sampled with the
    onion method (Lewandowski, Kurowicka and Joe, 2009)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(
        self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None
    ) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.shape
        event_shape = (dim, dim)
        # The squared norms of the rows below the first are Beta(i/2, eta + (dim - 2 - i)/2).
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = _creation.arange(
            self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device
        )
        offset = _ops.cat([_creation.zeros(1, dtype=offset.dtype, device=offset.device), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with _grad_mode.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = tuple(self._extended_shape(sample_shape))
            # row i: a uniform direction in its first i coordinates (row 0 is all zeros, so the
            # clamped norm leaves it zero and its diagonal becomes 1)
            u_normal = standard_normal(shape, y).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True).clamp(
                min=finfo(y.dtype).tiny
            )
            w = y.sqrt() * u_hypersphere
            diag_elems = (1 - (w**2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
            return w + diag_elems.unsqueeze(-1) * _creation.eye(
                self.dim, dtype=w.dtype, device=w.device
            )

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _creation.arange(
            2, self.dim + 1, dtype=self.concentration.dtype, device=self.concentration.device
        )
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        # the normalizer of the density above
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = _ops.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
