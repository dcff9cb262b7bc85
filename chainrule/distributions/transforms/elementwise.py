"""Elementwise transforms: Exp, Power, Sigmoid, Softplus, Tanh, Abs, Affine and
CumulativeDistribution."""

from __future__ import annotations

import math
from typing import Any

import chainrule.nn.functional as F
from chainrule import _creation
from chainrule._tensor import Size, Tensor
from chainrule.distributions import constraints
from chainrule.distributions.transforms.base import Transform
from chainrule.distributions.utils import broadcast_all, finfo

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "PowerTransform",
    "SigmoidTransform",
    "SoftplusTransform",
    "TanhTransform",
]


class ExpTransform(Transform):
    """y = exp(x). log|dy/dx| = x."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class PowerTransform(Transform):
    """y = x**exponent on the positive reals. log|dy/dx| = log|exponent y / x|."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self) -> Any:
        return self.exponent.sign()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        return bool(self.exponent.eq(other.exponent).all().item())

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape: Any) -> Any:
        return Size(_broadcast(shape, self.exponent.shape))

    def inverse_shape(self, shape: Any) -> Any:
        return Size(_broadcast(shape, self.exponent.shape))


def _broadcast(*shapes: Any) -> tuple[int, ...]:
    import numpy as np

    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def _clipped_sigmoid(x: Tensor) -> Tensor:
    fi = finfo(x.dtype)
    return x.sigmoid().clamp(min=fi.tiny, max=1.0 - fi.eps)


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x)). log|dy/dx| = -softplus(-x) - softplus(x)."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return _clipped_sigmoid(x)

    def _inverse(self, y: Tensor) -> Tensor:
        fi = finfo(y.dtype)
        y = y.clamp(min=fi.tiny, max=1.0 - fi.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)). log|dy/dx| = -softplus(-x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return F.softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -F.softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x). log|dy/dx| = 2 (log 2 - x - softplus(-2x)), stable for large |x|."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        # atanh(y) = (log1p(y) - log1p(-y)) / 2; no clamping, as PyTorch (use caching).
        return (y.log1p() - (-y).log1p()) * 0.5

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not bijective; the inverse returns y)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class AffineTransform(Transform):
    """y = loc + scale x, over ``event_dim`` rightmost dims. log|dy/dx| = log|scale| per
    element, summed over the event dims."""

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> Any:
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> Any:
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                if a != b:
                    return False
            elif not bool((_creation.as_tensor(a) == _creation.as_tensor(b)).all()):
                return False
        return True

    __hash__ = Transform.__hash__

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, (int, float)):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        shape = x.shape
        scale = self.scale
        if isinstance(scale, (int, float)):
            result = _creation.full(
                tuple(shape), math.log(abs(scale)), dtype=x.dtype, device=x.device
            )
        else:
            result = scale.abs().log()
        if self.event_dim:
            result_size = tuple(result.shape[: result.ndim - self.event_dim]) + (-1,)
            result = result.reshape(result_size).sum(-1)
            shape = shape[: len(shape) - self.event_dim]
        return result.expand(tuple(shape)) if tuple(result.shape) != tuple(shape) else result

    def forward_shape(self, shape: Any) -> Any:
        return Size(
            _broadcast(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))
        )

    def inverse_shape(self, shape: Any) -> Any:
        return self.forward_shape(shape)


class CumulativeDistributionTransform(Transform):
    """y = F(x), the CDF of a univariate ``distribution``. log|dy/dx| = log_prob(x)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1  # type: ignore[assignment]

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self.distribution.support

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)
