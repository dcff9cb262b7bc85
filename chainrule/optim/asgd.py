"""Averaged SGD (Polyak and Juditsky, 1992), with PyTorch's eta and mu schedules."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from chainrule.optim._checks import check_capturable, check_flags, check_nonnegative
from chainrule.optim.optimizer import Optimizer, stepping

__all__ = ["ASGD", "asgd_update"]


def asgd_update(
    xp: Any,
    param: Any,
    grad: Any,
    ax: Any,
    eta: Any,
    mu: Any,
    *,
    step: float,
    lr: float,
    lambd: float,
    alpha: float,
    t0: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """One ASGD step on arrays, in place; ``step`` counts from 1. ``eta`` and ``mu`` are 0-d
    float32 arrays (PyTorch's scalar state), updated here for the next step.

    g = -grad if maximize else grad;  g = g + wd * param
    param = param (1 - lambd eta) - eta g
    ax = param if mu == 1 else ax + mu (param - ax)
    eta = lr / (1 + lambd lr t)^alpha;   mu = 1 / max(1, t - t0)
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    eta_value = float(eta)
    param[...] = param * (1 - lambd * eta_value)
    param += g * (-eta_value)
    mu_value = float(mu)
    if mu_value != 1:
        ax += (param - ax) * mu_value
    else:
        ax[...] = param
    eta[...] = lr / ((1 + lambd * lr * step) ** alpha)
    mu[...] = 1 / max(1, step - t0)


def _new_state(xp: Any, p: Any, group: dict[str, Any]) -> dict[str, Any]:
    """A parameter's first asgd state (beside ``step``)."""
    return {
        "eta": np.asarray(group["lr"], np.float32),
        "mu": np.ones((), np.float32),
        "ax": xp.zeros_like(p._data),
    }


class ASGD(Optimizer):
    """``torch.optim.ASGD``; the update is ``asgd_update``. State per parameter: ``step``,
    ``eta``, ``mu`` (float32 scalars) and ``ax`` (the running average of the iterates)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_nonnegative(("learning rate", lr), ("weight_decay value", weight_decay))
        check_flags(differentiable=differentiable, foreach=foreach)
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
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
                check_capturable(group, "params, mus, etas, and state_steps")
                for p, xp, state in stepping(self.state, group, _new_state):
                    asgd_update(
                        xp,
                        p._data,
                        p.grad._data,
                        state["ax"]._data,
                        state["eta"]._data,
                        state["mu"]._data,
                        step=float(state["step"]._data),
                        lr=group["lr"],
                        lambd=group["lambd"],
                        alpha=group["alpha"],
                        t0=group["t0"],
                        weight_decay=group["weight_decay"],
                        maximize=group["maximize"],
                    )

        return self._run(closure, update)
