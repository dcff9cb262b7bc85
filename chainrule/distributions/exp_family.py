"""``ExponentialFamily``: distributions of the form p(x; theta) = h(x) exp(<t(x), theta> -
F(theta)), whose entropy and KL divergences follow from the log-normalizer F by autograd."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule import autograd as _autograd
from chainrule._tensor import Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions.

    Subclasses give ``_natural_params`` (theta), ``_log_normalizer(*theta)`` (F) and
    ``_mean_carrier_measure`` (E[log h(x)]). The entropy is then the Bregman form
    H = F(theta) - <theta, grad F(theta)> - E[log h(x)].
    """

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    if TYPE_CHECKING:
        _mean_carrier_measure: Any  # a class attribute or a property of each subclass
    else:

        @property
        def _mean_carrier_measure(self) -> Any:
            raise NotImplementedError

    def entropy(self) -> Tensor:
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with _grad_mode.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = _autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for p, g in zip(nparams, gradients):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
