"""The multivariate normal distribution, parametrized by a covariance matrix, a precision
matrix or a lower-triangular scale (all through the Cholesky factor L, cov = L L^T)."""

from __future__ import annotations

import math
from typing import Any

from chainrule import _creation
from chainrule._tensor import Size, Tensor
from chainrule.distributions import constraints
from chainrule.distributions.distribution import Distribution
from chainrule.distributions.utils import broadcast_shapes, lazy_property, standard_normal
from chainrule.linalg import cholesky, solve_triangular

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    """Matrix-vector products over broadcast batch dims."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:
    """x^T (L L^T)^-1 x = |L^-1 x|**2 over broadcast batch dims."""
    shape = tuple(broadcast_shapes(bL.shape[:-1], bx.shape))
    n = bx.shape[-1]
    L = bL.expand(shape[:-1] + (n, n)) if tuple(bL.shape[:-2]) != shape[:-1] else bL
    x = bx.expand(shape) if tuple(bx.shape) != shape else bx
    m = solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return m.pow(2).sum(-1)


def _precision_to_scale_tril(P: Tensor) -> Tensor:
    # The Cholesky factor of P^-1 without inverting P: with Lf Lf^T = flip(P), U = flip(Lf)^T is
    # lower triangular and U^T U = P, so L = U^-1 is lower triangular with L L^T = P^-1.
    Lf = cholesky(P.flip(-2, -1))
    L_inv = Lf.flip(-2, -1).transpose(-2, -1)
    eye = _creation.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return solve_triangular(L_inv, eye, upper=False)


class MultivariateNormal(Distribution):
    """N(loc, Sigma): log p(x) = -(k log(2 pi) + (x - loc)^T Sigma^-1 (x - loc)) / 2
    - log det L, Sigma = L L^T. Give exactly one of ``covariance_matrix``,
    ``precision_matrix`` and ``scale_tril``."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [
            (name, m)
            for name, m in (
                ("scale_tril", scale_tril),
                ("covariance_matrix", covariance_matrix),
                ("precision_matrix", precision_matrix),
            )
            if m is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril "
                "may be specified."
            )
        name, m = given[0]
        if m.ndim < 2:
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with "
                "optional leading batch dimensions"
            )
        batch_shape = tuple(broadcast_shapes(m.shape[:-2], loc.shape[:-1]))
        setattr(self, name, m.expand(batch_shape + tuple(m.shape[-2:])))
        self.loc = loc.expand(batch_shape + (loc.shape[-1],))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(m)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self) -> tuple[int, ...]:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._full())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-1, -2)).expand(self._full())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        eye = _creation.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        Linv = solve_triangular(L, eye, upper=False)
        return (Linv.transpose(-1, -2) @ Linv).expand(self._full())

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return (
            self._unbroadcasted_scale_tril.pow(2)
            .sum(-1)
            .expand(tuple(self._batch_shape) + tuple(self._event_shape))
        )

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self) -> Tensor:
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
