"""Stochastic weight averaging (Izmailov et al., 2018) and exponential moving averages of a
model's weights: ``AveragedModel``, ``SWALR``, ``update_bn`` and the averaging functions, as
``torch.optim.swa_utils``.
"""

from __future__ import annotations

import copy
import itertools
import math
from typing import Any, Callable, Iterable

import numpy as np

from chainrule import _kinds
from chainrule._dtype import get_default_dtype
from chainrule._tensor import Tensor
from chainrule.autograd.grad_mode import no_grad
from chainrule.nn.modules.module import Module
from chainrule.optim._arith import lerp_
from chainrule.optim.lr_scheduler import LRScheduler
from chainrule.optim.optimizer import Optimizer

__all__ = [
    "AveragedModel",
    "SWALR",
    "update_bn",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

AvgFn = Callable[[Tensor, Tensor, Tensor], Tensor]
MultiAvgFn = Callable[[list[Tensor], list[Tensor], Tensor], None]


def _assign(dst: Tensor, value: Any) -> None:
    """``dst.copy_(value)`` outside autograd (a cast to ``dst``'s dtype truncates, as
    ``copy_`` does)."""
    dst._data[...] = value._data if isinstance(value, Tensor) else value
    dst._bump_version()


def _is_float(t: Tensor) -> bool:
    return _kinds.is_inexact(t._data)


def _default_float(x: Any) -> Any:
    """``x`` as the default float dtype: PyTorch computes an integer tensor times a Python
    float there (float32 unless changed)."""
    return np.asarray(x).astype(get_default_dtype().np)


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """In-place exponential moving average over lists of tensors:
    ema = ema + (1 - decay)(param - ema) (integer tensors: ema decay + param (1 - decay),
    truncated)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )

    def ema_update(ema_params: list[Tensor], params: list[Tensor], _: Any) -> None:
        with no_grad():
            for p_ema, p in zip(ema_params, params):
                if _is_float(p_ema):
                    lerp_(p_ema._data, p._data, 1 - decay)
                    p_ema._bump_version()
                else:
                    _assign(
                        p_ema,
                        _default_float(p_ema._data) * decay + _default_float(p._data) * (1 - decay),
                    )

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """In-place running mean over lists of tensors: avg = avg + (param - avg) / (n + 1),
    with n the number of models averaged so far.

    Differs from torch: integer tensors (``use_buffers=True`` with batch norm's
    ``num_batches_tracked``) get the truncated running mean; PyTorch's version raises for them
    (its integer path calls ``addcdiv``, which refuses integer division).
    """

    def swa_update(averaged: list[Tensor], params: list[Tensor], num_averaged: Any) -> None:
        if isinstance(num_averaged, Tensor):
            # 1 / (n + 1) with n an int64 tensor: a default-float (float32) tensor in PyTorch.
            weight = float(_default_float(1.0) / _default_float(num_averaged._data + 1))
        else:
            weight = 1.0 / (num_averaged + 1)
        with no_grad():
            for p_avg, p in zip(averaged, params):
                if _is_float(p_avg):
                    lerp_(p_avg._data, p._data, weight)
                    p_avg._bump_version()
                else:
                    _assign(p_avg, p_avg._data + (p._data - p_avg._data) * weight)

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """ema, param, n -> decay ema + (1 - decay) param."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """avg, param, n -> avg + (param - avg) / (n + 1)."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) are the
    running average of the models passed to ``update_parameters``: the equal-weight mean by
    default (SWA), or what ``avg_fn(avg, param, n)`` returns, or what
    ``multi_avg_fn(avg_list, param_list, n)`` does in place (called once per dtype, as
    PyTorch groups tensors). The first update copies the model. Without ``use_buffers`` the
    buffers are copied from ``model`` at every update. ``n_averaged`` is an int64 buffer.

    Differs from torch: ``device`` is accepted for the API's sake; chainrule has the CPU only.
    """

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: AvgFn | None = None,
        multi_avg_fn: MultiAvgFn | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", Tensor._wrap(np.zeros((), np.int64)))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> list[Tensor]:
        if self.use_buffers:
            return list(itertools.chain(model.parameters(), model.buffers()))
        return list(model.parameters())

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current weights into the average."""
        mine = [p.detach() for p in self._tensors(self.module)]
        theirs = [p.detach() for p in self._tensors(model)]
        n = int(self.n_averaged._data)
        if n == 0:
            for a, b in zip(mine, theirs):
                _assign(a, b)
        else:
            with no_grad():
                self._average(mine, theirs)
        if not self.use_buffers:
            # Buffers are not averaged: keep them in step with the source model.
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                _assign(b_avg, b_model.detach())
        self.n_averaged._data += 1
        self.n_averaged._bump_version()

    def _average(self, mine: list[Tensor], theirs: list[Tensor]) -> None:
        n_averaged = Tensor._wrap(self.n_averaged._data.copy())
        if self.avg_fn is not None and self.multi_avg_fn is None:
            for a, b in zip(mine, theirs):
                _assign(a, self.avg_fn(a, b, n_averaged))
            return
        # One call per dtype, in order of first appearance, as PyTorch's grouping.
        groups: dict[Any, tuple[list[Tensor], list[Tensor]]] = {}
        for a, b in zip(mine, theirs):
            group = groups.setdefault(a._data.dtype, ([], []))
            group[0].append(a)
            group[1].append(b)
        swa = get_swa_avg_fn()
        for group_mine, group_theirs in groups.values():
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(group_mine, group_theirs, n_averaged)
            else:
                # PyTorch's CPU path: the per-tensor running mean.
                for a, b in zip(group_mine, group_theirs):
                    _assign(a, swa(a, b, n_averaged))


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every batch-norm layer's running statistics with one pass over ``loader``
    (batches, or tuples/lists whose first entry is the input), as the cumulative average of
    the batch statistics (momentum None); the model's momenta and train/eval mode are
    restored afterwards."""
    from chainrule.nn.modules.normalization import _BatchNorm

    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


def _format_swa_lr(optimizer: Optimizer, swa_lrs: Any) -> list[float]:
    if isinstance(swa_lrs, (list, tuple)):
        if len(swa_lrs) != len(optimizer.param_groups):
            raise ValueError(
                "swa_lr must have the same length as optimizer.param_groups: swa_lr has "
                f"{len(swa_lrs)}, optimizer.param_groups has {len(optimizer.param_groups)}"
            )
        return list(swa_lrs)
    return [swa_lrs] * len(optimizer.param_groups)


class SWALR(LRScheduler):
    """Anneal each group's rate to its ``swa_lr`` over ``anneal_epochs`` steps and hold it:
    lr_t = swa_lr a(t) + lr_0 (1 - a(t)), t = min(1, step / anneal_epochs), with
    a(t) = (1 - cos(pi t)) / 2 (``"cos"``) or t (``"linear"``); lr_0 is recovered from the
    group's current rate, so the schedule composes with earlier changes."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = _format_swa_lr(optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        if self._anneal_func_type == "cos":
            return (1 - math.cos(math.pi * t)) / 2
        return t

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        # Invert lr = swa_lr alpha + lr_0 (1 - alpha) for lr_0.
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]
