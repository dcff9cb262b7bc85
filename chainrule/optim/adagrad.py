"""Adagrad (Duchi et al., 2011) with learning-rate decay."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from chainrule.optim._arith import addcdiv, addcmul
from chainrule.optim._checks import check_flags, check_nonnegative
from chainrule.optim._sparse import adagrad_sparse, with_sparse
from chainrule.optim.optimizer import Optimizer, _state_tensor

__all__ = ["Adagrad", "adagrad_update"]


def adagrad_update(
    xp: Any,
    param: Any,
    grad: Any,
    state_sum: Any,
    *,
    step: float,
    lr: float,
    lr_decay: float,
    weight_decay: float,
    eps: float,
    maximize: bool,
) -> None:
    """One Adagrad step on arrays, in place; ``step`` counts from 1.

    g = -grad if maximize else grad;  g = g + wd * param
    clr = lr / (1 + (t - 1) lr_decay);  s = s + g^2
    param = param - clr * g / (sqrt(s) + eps)
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    clr = lr / (1 + (step - 1) * lr_decay)
    state_sum[...] = addcmul(state_sum, g, g, 1)
    std = xp.sqrt(state_sum) + eps
    param[...] = addcdiv(param, g, std, -clr)


class Adagrad(Optimizer):
    """``torch.optim.Adagrad``; the update is ``adagrad_update``. Its state (``step`` and
    ``sum``, filled with ``initial_accumulator_value``) exists from construction, as in
    PyTorch."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_nonnegative(
            ("learning rate", lr),
            ("lr_decay value", lr_decay),
            ("weight_decay value", weight_decay),
            ("initial_accumulator_value value", initial_accumulator_value),
            ("epsilon value", eps),
        )
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        check_flags(differentiable=differentiable, fused=fused, foreach=foreach)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _state_tensor(np.zeros((), np.float32))
                init = group["initial_accumulator_value"]
                # full_like allocates on the current GPU: make the parameter's current.
                with p._backend.array_device(p._data):
                    state["sum"] = _state_tensor(p._backend.xp.full_like(p._data, init))

    # Adagrad's state exists from construction: its step reads it unconditionally.
    _lazy_state = False

    def _state_keys(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("step", "sum")

    _sparse_error = None  # it takes sparse gradients

    def _sparse_update(self, update: Callable[[], None]) -> Callable[[], None]:
        return with_sparse(self, update, adagrad_sparse)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    state["step"]._data += 1
                    adagrad_update(
                        p._backend.xp,
                        p._data,
                        p.grad._data,
                        state["sum"]._data,
                        step=float(state["step"]._data),
                        lr=group["lr"],
                        lr_decay=group["lr_decay"],
                        weight_decay=group["weight_decay"],
                        eps=group["eps"],
                        maximize=group["maximize"],
                    )
                    p._bump_version()

        return self._run(closure, update)
