"""NAdam: Adam with Nesterov momentum (Dozat, 2016), with PyTorch's momentum-decay schedule."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from chainrule.optim._arith import addcdiv, addcmul, lerp_
from chainrule.optim._checks import (
    check_betas,
    check_capturable,
    check_flags,
    check_nonnegative,
)
from chainrule.optim.optimizer import Optimizer, stepping

__all__ = ["NAdam", "nadam_update"]


def nadam_update(
    xp: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_avg_sq: Any,
    mu_product: Any,
    *,
    step: float,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    momentum_decay: float,
    decoupled_weight_decay: bool,
    maximize: bool,
) -> None:
    """One NAdam step on arrays, in place; ``step`` counts from 1. ``mu_product`` is a 0-d
    float32 array (PyTorch keeps it as a float32 scalar tensor, so its rounding matters).

    g = -grad if maximize else grad
    weight decay: param = param (1 - lr wd) (decoupled) or g = g + wd * param
    mu_t = beta1 (1 - 0.5 * 0.96^(t psi)),  mu_{t+1} likewise;  P_t = P_{t-1} mu_t
    m = m + (1 - beta1)(g - m);   v = beta2 v + (1 - beta2) g^2
    denom = sqrt(v / (1 - beta2^t)) + eps
    param = param - lr (1 - mu_t) / (1 - P_t) g / denom - lr mu_{t+1} / (1 - P_t mu_{t+1}) m / denom
    """
    g = -grad if maximize else grad
    bias_correction2 = 1 - beta2**step
    if weight_decay != 0:
        if decoupled_weight_decay:
            param[...] = param * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * param
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    mu_product *= mu
    lerp_(exp_avg, g, 1 - beta1)
    exp_avg_sq[...] = addcmul(exp_avg_sq * beta2, g, g, 1 - beta2)
    denom = xp.sqrt(exp_avg_sq / bias_correction2) + eps
    prod = float(mu_product)
    param[...] = addcdiv(param, g, denom, -lr * (1.0 - mu) / (1.0 - prod))
    param[...] = addcdiv(param, exp_avg, denom, (-lr * mu_next) / (1.0 - prod * mu_next))


def _new_state(xp: Any, p: Any, group: dict[str, Any]) -> dict[str, Any]:
    """A parameter's first nadam state (beside ``step``)."""
    return {
        "mu_product": np.ones((), np.float32),
        "exp_avg": xp.zeros_like(p._data),
        "exp_avg_sq": xp.zeros_like(p._data),
    }


class NAdam(Optimizer):
    """``torch.optim.NAdam``; the update is ``nadam_update``. State per parameter: ``step``,
    ``mu_product`` (float32 scalars), ``exp_avg`` and ``exp_avg_sq``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_nonnegative(("learning rate", lr), ("epsilon value", eps))
        check_betas(betas)
        check_nonnegative(
            ("weight_decay value", weight_decay), ("momentum_decay value", momentum_decay)
        )
        check_flags(differentiable=differentiable, foreach=foreach)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                check_capturable(group, "params, mu_products and state_steps")
                beta1, beta2 = group["betas"]
                for p, xp, state in stepping(self.state, group, _new_state):
                    nadam_update(
                        xp,
                        p._data,
                        p.grad._data,
                        state["exp_avg"]._data,
                        state["exp_avg_sq"]._data,
                        state["mu_product"]._data,
                        step=float(state["step"]._data),
                        lr=group["lr"],
                        beta1=beta1,
                        beta2=beta2,
                        eps=group["eps"],
                        weight_decay=group["weight_decay"],
                        momentum_decay=group["momentum_decay"],
                        decoupled_weight_decay=group["decoupled_weight_decay"],
                        maximize=group["maximize"],
                    )

        return self._run(closure, update)
