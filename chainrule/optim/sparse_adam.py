"""SparseAdam: Adam for sparse gradients, which chainrule does not produce.

PyTorch's ``SparseAdam.step()`` refuses dense gradients; chainrule's gradients are always
dense (``Embedding(sparse=True)`` is not implemented), so ``step()`` raises PyTorch's error
whenever a parameter has a gradient. The class exists so that code which builds a
``SparseAdam`` imports and fails at the same place and with the same message as in PyTorch.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from chainrule.optim._checks import check_betas, check_nonnegative
from chainrule.optim.optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """``torch.optim.SparseAdam``'s constructor and checks; see the module docstring."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        check_nonnegative(("learning rate", lr), ("epsilon value", eps))
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider "
                            "Adam instead"
                        )

        return self._run(closure, update)
