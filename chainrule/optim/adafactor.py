"""Adafactor (Shazeer and Stern, 2018) as ``torch.optim.Adafactor`` defines it: factored
second moments for matrices (a row and a column accumulator), no first moment, relative step
sizes and update clipping."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from chainrule.optim._arith import lerp_
from chainrule.optim._checks import check_flags
from chainrule.optim._state import cast_state_any_shape
from chainrule.optim.optimizer import Optimizer, _state_tensor

__all__ = ["Adafactor", "adafactor_update"]


def adafactor_update(
    xp: Any,
    param: Any,
    grad: Any,
    row_var: Any,
    col_var: Any,
    variance: Any,
    *,
    step: float,
    lr: float,
    beta2_decay: float,
    eps1: float,
    eps2: float,
    d: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """One Adafactor step on arrays, in place; ``step`` counts from 1. A parameter with two or
    more dimensions uses ``row_var`` (shape ``(..., m, 1)``) and ``col_var`` (``(..., 1, n)``),
    one with fewer uses ``variance``.

    g = -grad if maximize else grad;   beta2_t = 1 - t^beta2_decay
    rho_t = min(lr, 1 / sqrt(t));   alpha = max(eps2, RMS(param)) rho_t
    param = param (1 - lr wd)
    matrices: R = beta2_t R + (1 - beta2_t) mean_cols(g^2),  C likewise over rows,
              V = R C / max(mean(R), eps1);   otherwise V = beta2_t V + (1 - beta2_t) g^2
    U = g / sqrt(max(V, eps1^2));   param = param - alpha / max(1, RMS(U) / d) U
    """
    g = -grad if maximize else grad
    one_minus_beta2_t = step**beta2_decay
    rho_t = min(lr, 1 / (step**0.5))
    alpha = max(eps2, float(xp.sqrt(xp.sum(param * param))) / (param.size**0.5)) * rho_t
    if weight_decay != 0:
        param[...] = param * (1 - lr * weight_decay)
    if g.ndim > 1:
        row_mean = xp.sum(g * g, axis=-1, keepdims=True) / g.shape[-1]
        lerp_(row_var, row_mean, one_minus_beta2_t)
        col_mean = xp.sum(g * g, axis=-2, keepdims=True) / g.shape[-2]
        lerp_(col_var, col_mean, one_minus_beta2_t)
        var_estimate = row_var @ col_var
        var_estimate = var_estimate / xp.maximum(xp.mean(row_var, axis=-2, keepdims=True), eps1)
    else:
        lerp_(variance, g * g, one_minus_beta2_t)
        var_estimate = variance.copy()
    update = 1 / xp.sqrt(xp.maximum(var_estimate, eps1 * eps1)) * g
    rms = float(xp.sqrt(xp.sum(update * update))) / ((update.size**0.5) * d)
    param -= update * (alpha / max(1.0, rms))


class Adafactor(Optimizer):
    """``torch.optim.Adafactor``; the update is ``adafactor_update``. State per parameter:
    ``step`` and either ``row_var`` and ``col_var`` (two or more dimensions) or ``variance``.
    ``eps=(eps1, eps2)``: eps1 (default: the parameter dtype's machine epsilon) bounds the
    second-moment estimate, eps2 bounds the parameter's RMS in the relative step size."""

    # The row and column accumulators are not shaped like the parameter.
    _cast_state = staticmethod(cast_state_any_shape)

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        check_flags(foreach=foreach)
        defaults = dict(
            lr=lr,
            beta2_decay=beta2_decay,
            eps=eps,
            d=d,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                eps1, eps2 = group["eps"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    xp = p._backend.xp
                    data = p._data
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = _state_tensor(np.zeros((), np.float32))
                        if data.ndim > 1:
                            rows = data.shape[:-1] + (1,)
                            cols = data.shape[:-2] + (1, data.shape[-1])
                            state["row_var"] = _state_tensor(xp.zeros(rows, data.dtype))
                            state["col_var"] = _state_tensor(xp.zeros(cols, data.dtype))
                        else:
                            state["variance"] = _state_tensor(xp.zeros_like(data))
                    state["step"]._data += 1
                    e1 = float(np.finfo(data.dtype).eps) if eps1 is None else eps1
                    matrix = data.ndim > 1
                    adafactor_update(
                        xp,
                        data,
                        p.grad._data,
                        state["row_var"]._data if matrix else None,
                        state["col_var"]._data if matrix else None,
                        None if matrix else state["variance"]._data,
                        step=float(state["step"]._data),
                        lr=group["lr"],
                        beta2_decay=group["beta2_decay"],
                        eps1=e1,
                        eps2=eps2,
                        d=group["d"],
                        weight_decay=group["weight_decay"],
                        maximize=group["maximize"],
                    )
                    p._bump_version()

        return self._run(closure, update)
