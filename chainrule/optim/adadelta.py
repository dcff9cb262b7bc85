"""Adadelta (Zeiler, 2012)."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from chainrule.optim._arith import addcmul
from chainrule.optim._checks import check_capturable, check_flags, check_nonnegative
from chainrule.optim.optimizer import Optimizer, stepping

__all__ = ["Adadelta", "adadelta_update"]


def adadelta_update(
    xp: Any,
    param: Any,
    grad: Any,
    square_avg: Any,
    acc_delta: Any,
    *,
    lr: float,
    rho: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """One Adadelta step on arrays, in place.

    g = -grad if maximize else grad;  g = g + wd * param
    v = rho v + (1 - rho) g^2
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho u + (1 - rho) delta^2
    param = param - lr * delta
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    square_avg[...] = addcmul(square_avg * rho, g, g, 1 - rho)
    std = xp.sqrt(square_avg + eps)
    delta = xp.sqrt(acc_delta + eps) / std * g
    acc_delta[...] = addcmul(acc_delta * rho, delta, delta, 1 - rho)
    param += delta * (-lr)


def _new_state(xp: Any, p: Any, group: dict[str, Any]) -> dict[str, Any]:
    """A parameter's first adadelta state (beside ``step``)."""
    return {"square_avg": xp.zeros_like(p._data), "acc_delta": xp.zeros_like(p._data)}


class Adadelta(Optimizer):
    """``torch.optim.Adadelta``; the update is ``adadelta_update``. State per parameter:
    ``step``, ``square_avg`` and ``acc_delta``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_nonnegative(("learning rate", lr))
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative(("epsilon value", eps), ("weight_decay value", weight_decay))
        check_flags(differentiable=differentiable, foreach=foreach)
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                check_capturable(group)
                for p, xp, state in stepping(self.state, group, _new_state):
                    adadelta_update(
                        xp,
                        p._data,
                        p.grad._data,
                        state["square_avg"]._data,
                        state["acc_delta"]._data,
                        lr=group["lr"],
                        rho=group["rho"],
                        eps=group["eps"],
                        weight_decay=group["weight_decay"],
                        maximize=group["maximize"],
                    )

        return self._run(closure, update)
