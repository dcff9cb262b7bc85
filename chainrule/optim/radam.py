"""RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019)."""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

from chainrule.optim._arith import addcmul, lerp_
from chainrule.optim._checks import (
    check_betas,
    check_capturable,
    check_flags,
    check_nonnegative,
)
from chainrule.optim.optimizer import Optimizer, stepping

__all__ = ["RAdam", "radam_update"]


def radam_update(
    xp: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_avg_sq: Any,
    *,
    step: float,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    decoupled_weight_decay: bool,
    maximize: bool,
) -> None:
    """One RAdam step on arrays, in place; ``step`` counts from 1.

    g = -grad if maximize else grad
    weight decay: param = param (1 - lr wd) (decoupled) or g = g + wd * param
    m = m + (1 - beta1)(g - m);   v = beta2 v + (1 - beta2) g^2;   m_hat = m / (1 - beta1^t)
    rho_inf = 2 / (1 - beta2) - 1;   rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
    rho_t > 5: r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t)),
               param = param - m_hat lr sqrt(1 - beta2^t) / (sqrt(v) + eps) r
    otherwise: param = param - m_hat lr
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            param[...] = param * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * param
    lerp_(exp_avg, g, 1 - beta1)
    exp_avg_sq[...] = addcmul(exp_avg_sq * beta2, g, g, 1 - beta2)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    m_hat = exp_avg / bias_correction1
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
    if rho_t > 5.0:
        rect = math.sqrt(
            (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
        )
        adaptive_lr = math.sqrt(bias_correction2) / (xp.sqrt(exp_avg_sq) + eps)
        param -= m_hat * lr * adaptive_lr * rect
    else:
        param -= m_hat * lr


def _new_state(xp: Any, p: Any, group: dict[str, Any]) -> dict[str, Any]:
    """A parameter's first radam state (beside ``step``)."""
    return {"exp_avg": xp.zeros_like(p._data), "exp_avg_sq": xp.zeros_like(p._data)}


class RAdam(Optimizer):
    """``torch.optim.RAdam``; the update is ``radam_update``. State per parameter: ``step``,
    ``exp_avg`` and ``exp_avg_sq``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_nonnegative(("learning rate", lr), ("epsilon value", eps))
        check_betas(betas)
        check_nonnegative(("weight_decay value", weight_decay))
        check_flags(differentiable=differentiable, foreach=foreach)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                check_capturable(group)
                beta1, beta2 = group["betas"]
                for p, xp, state in stepping(self.state, group, _new_state):
                    radam_update(
                        xp,
                        p._data,
                        p.grad._data,
                        state["exp_avg"]._data,
                        state["exp_avg_sq"]._data,
                        step=float(state["step"]._data),
                        lr=group["lr"],
                        beta1=beta1,
                        beta2=beta2,
                        eps=group["eps"],
                        weight_decay=group["weight_decay"],
                        decoupled_weight_decay=group["decoupled_weight_decay"],
                        maximize=group["maximize"],
                    )

        return self._run(closure, update)
