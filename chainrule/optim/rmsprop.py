"""RMSprop (Hinton), with momentum and the centered variant (Graves, 2013)."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from chainrule.optim._arith import addcdiv, addcmul, lerp_
from chainrule.optim._checks import check_capturable, check_flags, check_nonnegative
from chainrule.optim.optimizer import Optimizer, stepping

__all__ = ["RMSprop", "rmsprop_update"]


def rmsprop_update(
    xp: Any,
    param: Any,
    grad: Any,
    square_avg: Any,
    grad_avg: Any,
    buf: Any,
    *,
    lr: float,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    centered: bool,
    maximize: bool,
) -> None:
    """One RMSprop step on arrays, in place.

    g = -grad if maximize else grad;  g = g + wd * param
    v = alpha v + (1 - alpha) g^2
    centered: m = m + (1 - alpha)(g - m), avg = sqrt(v - m^2) + eps; else avg = sqrt(v) + eps
    momentum mu > 0: b = mu b + g / avg, param = param - lr b; else param = param - lr g / avg
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    square_avg[...] = addcmul(square_avg * alpha, g, g, 1 - alpha)
    if centered:
        lerp_(grad_avg, g, 1 - alpha)
        avg = xp.sqrt(addcmul(square_avg, grad_avg, grad_avg, -1))
    else:
        avg = xp.sqrt(square_avg)
    avg = avg + eps
    if momentum > 0:
        buf[...] = addcdiv(buf * momentum, g, avg)
        param[...] = param + (-lr) * buf
    else:
        param[...] = addcdiv(param, g, avg, -lr)


def _new_state(xp: Any, p: Any, group: dict[str, Any]) -> dict[str, Any]:
    """A parameter's first rmsprop state (beside ``step``)."""
    new: dict[str, Any] = {}
    new["square_avg"] = xp.zeros_like(p._data)
    if group["momentum"] > 0:
        new["momentum_buffer"] = xp.zeros_like(p._data)
    if group["centered"]:
        new["grad_avg"] = xp.zeros_like(p._data)
    return new


class RMSprop(Optimizer):
    """``torch.optim.RMSprop``; the update is ``rmsprop_update``. State per parameter:
    ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_nonnegative(
            ("learning rate", lr),
            ("epsilon value", eps),
            ("momentum value", momentum),
            ("weight_decay value", weight_decay),
            ("alpha value", alpha),
        )
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        check_flags(differentiable=differentiable, foreach=foreach)
        super().__init__(params, defaults)

    def _state_keys(self, group: dict[str, Any]) -> tuple[str, ...]:
        keys = ("step", "square_avg")
        if group["momentum"] > 0:
            keys += ("momentum_buffer",)
        return keys + ("grad_avg",) if group["centered"] else keys

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                check_capturable(group)
                for p, xp, state in stepping(self.state, group, _new_state):
                    rmsprop_update(
                        xp,
                        p._data,
                        p.grad._data,
                        state["square_avg"]._data,
                        state["grad_avg"]._data if group["centered"] else None,
                        state["momentum_buffer"]._data if group["momentum"] > 0 else None,
                        lr=group["lr"],
                        alpha=group["alpha"],
                        eps=group["eps"],
                        weight_decay=group["weight_decay"],
                        momentum=group["momentum"],
                        centered=group["centered"],
                        maximize=group["maximize"],
                    )

        return self._run(closure, update)
