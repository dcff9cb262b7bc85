"""SparseAdam: lazy Adam for sparse gradients (``Embedding(sparse=True)``): only the rows a
gradient touches are updated, PyTorch's ``SparseAdam`` (the update: ``adam_sparse`` in
``chainrule/optim/_sparse.py``); a dense gradient is PyTorch's error.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from chainrule.optim._checks import check_betas, check_nonnegative
from chainrule.optim._sparse import adam_sparse
from chainrule.optim.optimizer import Optimizer
from chainrule.sparse._coo import SparseTensor

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """``torch.optim.SparseAdam``: Adam's moments and update on the stored entries of each
    (coalesced) sparse gradient only. State per parameter: ``step`` (an int), ``exp_avg``,
    ``exp_avg_sq``."""

    _sparse_error = None

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
                    if p.grad is not None and not isinstance(p.grad, SparseTensor):
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider "
                            "Adam instead"
                        )
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        adam_sparse(p, p.grad, self.state[p], group)
                        p._bump_version()

        return self._run(closure, update)
