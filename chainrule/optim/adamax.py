"""Adamax: Adam with the infinity norm (Kingma and Ba, 2014, section 7)."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from chainrule.optim._arith import addcdiv, lerp_
from chainrule.optim._checks import (
    check_betas,
    check_capturable,
    check_flags,
    check_nonnegative,
)
from chainrule.optim.optimizer import Optimizer, stepping

__all__ = ["Adamax", "adamax_update"]


def adamax_update(
    xp: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_inf: Any,
    *,
    step: float,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """One Adamax step on arrays, in place; ``step`` counts from 1.

    g = -grad if maximize else grad;  g = g + wd * param
    m = m + (1 - beta1)(g - m);   u = max(beta2 u, |g| + eps)
    param = param - lr / (1 - beta1^t) * m / u
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    lerp_(exp_avg, g, 1 - beta1)
    xp.maximum(exp_inf * beta2, xp.abs(g) + eps, out=exp_inf)
    clr = lr / (1 - beta1**step)
    param[...] = addcdiv(param, exp_avg, exp_inf, -clr)


def _new_state(xp: Any, p: Any, group: dict[str, Any]) -> dict[str, Any]:
    """A parameter's first adamax state (beside ``step``)."""
    return {"exp_avg": xp.zeros_like(p._data), "exp_inf": xp.zeros_like(p._data)}


class Adamax(Optimizer):
    """``torch.optim.Adamax``; the update is ``adamax_update``. State per parameter: ``step``,
    ``exp_avg`` and ``exp_inf``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
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
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                check_capturable(group)
                beta1, beta2 = group["betas"]
                for p, xp, state in stepping(self.state, group, _new_state):
                    adamax_update(
                        xp,
                        p._data,
                        p.grad._data,
                        state["exp_avg"]._data,
                        state["exp_inf"]._data,
                        step=float(state["step"]._data),
                        lr=group["lr"],
                        beta1=beta1,
                        beta2=beta2,
                        eps=group["eps"],
                        weight_decay=group["weight_decay"],
                        maximize=group["maximize"],
                    )

        return self._run(closure, update)
