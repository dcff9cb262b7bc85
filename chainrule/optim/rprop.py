"""Rprop: resilient backpropagation (Riedmiller and Braun, 1993), the Rprop- variant."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from chainrule.optim._checks import check_capturable, check_flags, check_nonnegative
from chainrule.optim.optimizer import Optimizer, stepping

__all__ = ["Rprop", "rprop_update"]


def rprop_update(
    xp: Any,
    param: Any,
    grad: Any,
    prev: Any,
    step_size: Any,
    *,
    etaminus: float,
    etaplus: float,
    step_size_min: float,
    step_size_max: float,
    maximize: bool,
) -> None:
    """One Rprop step on arrays, in place.

    g = -grad if maximize else grad;  s = sign(g * g_prev)
    step_size = clamp(step_size * (etaplus if s > 0, etaminus if s < 0, 1 if s == 0),
                      step_size_min, step_size_max)
    where s < 0 the gradient is taken as 0 (no move now, no sign test next step)
    param = param - sign(g) * step_size;   g_prev = g
    """
    g = -grad if maximize else grad
    product = g * prev
    factor = xp.where(product > 0, etaplus, xp.where(product < 0, etaminus, 1.0))
    factor = factor.astype(step_size.dtype, copy=False)
    xp.clip(step_size * factor, step_size_min, step_size_max, out=step_size)
    g = xp.where(product < 0, xp.zeros((), g.dtype), g)
    param -= xp.sign(g) * step_size
    prev[...] = g


def _new_state(xp: Any, p: Any, group: dict[str, Any]) -> dict[str, Any]:
    """A parameter's first rprop state (beside ``step``)."""
    return {"prev": xp.zeros_like(p._data), "step_size": xp.full_like(p._data, group["lr"])}


class Rprop(Optimizer):
    """``torch.optim.Rprop``; the update is ``rprop_update``. State per parameter: ``step``,
    ``prev`` (the previous gradient) and ``step_size`` (starting at ``lr``)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_nonnegative(("learning rate", lr))
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        check_flags(differentiable=differentiable, foreach=foreach)
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
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
                etaminus, etaplus = group["etas"]
                step_size_min, step_size_max = group["step_sizes"]
                for p, xp, state in stepping(self.state, group, _new_state):
                    rprop_update(
                        xp,
                        p._data,
                        p.grad._data,
                        state["prev"]._data,
                        state["step_size"]._data,
                        etaminus=etaminus,
                        etaplus=etaplus,
                        step_size_min=step_size_min,
                        step_size_max=step_size_max,
                        maximize=group["maximize"],
                    )

        return self._run(closure, update)
