"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from chainrule.optim._checks import check_flags
from chainrule.optim._sparse import sgd_sparse, with_sparse
from chainrule.optim.optimizer import Optimizer, _state_tensor

__all__ = ["SGD", "sgd_update"]


def sgd_update(
    xp: Any,
    param: Any,
    grad: Any,
    buf: Any,
    *,
    lr: float,
    momentum: float,
    dampening: float,
    nesterov: bool,
    weight_decay: float,
    maximize: bool,
) -> Any:
    """One SGD step on arrays; writes ``param`` (and ``buf``) in place, returns the buffer.

    g = -grad if maximize else grad;  g = g + weight_decay * param
    with momentum mu: b = g on the first step, else b = mu * b + (1 - dampening) * g;
                      g = g + mu * b (Nesterov) or g = b
    param = param - lr * g
    ``buf`` is None before the first step (and stays None without momentum).
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    if momentum != 0:
        if buf is None:
            buf = g.copy()
        else:
            buf[...] = buf * momentum + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
    # In place: the same two roundings as param + (-lr) * g, without a temporary sum and copy.
    param += g * (-lr)
    return buf


class SGD(Optimizer):
    """``torch.optim.SGD``; the update is ``sgd_update``. State: ``momentum_buffer`` per
    parameter when momentum != 0."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_flags(differentiable=differentiable, fused=fused, foreach=foreach)
        super().__init__(params, defaults)

    _sparse_error = None  # it takes sparse gradients

    def _sparse_update(self, update: Callable[[], None]) -> Callable[[], None]:
        return with_sparse(self, update, sgd_sparse)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    # torch keeps no state at all without momentum.
                    state = self.state[p] if group["momentum"] != 0 else {}
                    buf = state.get("momentum_buffer")
                    new = sgd_update(
                        p._backend.xp,
                        p._data,
                        p.grad._data,
                        None if buf is None else buf._data,
                        lr=group["lr"],
                        momentum=group["momentum"],
                        dampening=group["dampening"],
                        nesterov=group["nesterov"],
                        weight_decay=group["weight_decay"],
                        maximize=group["maximize"],
                    )
                    p._bump_version()
                    if group["momentum"] != 0 and buf is None:
                        state["momentum_buffer"] = _state_tensor(new)

        return self._run(closure, update)
