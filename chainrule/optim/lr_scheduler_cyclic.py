"""Cyclic schedulers of ``chainrule.optim.lr_scheduler``: ``CyclicLR`` (Smith, 2017),
``OneCycleLR`` (Smith and Topin, 2018) and ``CosineAnnealingWarmRestarts`` (SGDR, Loshchilov
and Hutter, 2017); import them from ``chainrule.optim.lr_scheduler``.

``CyclicLR`` and ``OneCycleLR`` also cycle the momentum (``momentum``, or the first of
``betas`` for Adam-like optimizers) in the opposite direction, as PyTorch does, unless
``cycle_momentum=False``.
"""

from __future__ import annotations

import math
import types
from typing import Any, Callable

from chainrule.optim._lr_base import LRScheduler, _not_replayable
from chainrule.optim.optimizer import Optimizer

__all__ = ["CyclicLR", "OneCycleLR", "CosineAnnealingWarmRestarts"]


def _format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """One value per param group: a list or tuple of that length, or one value for all."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
        return list(param)
    return [param] * len(optimizer.param_groups)


def _momentum_setup(
    optimizer: Optimizer, base_momentum: Any, max_momentum: Any, last_epoch: int
) -> tuple[bool, list[Any], list[Any]]:
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
        )
    use_beta1 = "betas" in optimizer.defaults
    base = _format_param("base_momentum", optimizer, base_momentum)
    top = _format_param("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for m, b, group in zip(top, base, optimizer.param_groups):
            _set_momentum(group, m, use_beta1)
            group["max_momentum"] = m
            group["base_momentum"] = b
    return use_beta1, base, top


def _set_momentum(group: dict[str, Any], value: float, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class CyclicLR(LRScheduler):
    """The rate moves between ``base_lr`` and ``max_lr`` along a triangle of
    ``step_size_up`` + ``step_size_down`` steps (``step()`` is called per batch), its height
    scaled per cycle (``triangular``: 1, ``triangular2``: 1 / 2^(cycle - 1)) or per step
    (``exp_range``: gamma^t), or by ``scale_fn``. The momentum moves from ``max_momentum`` to
    ``base_momentum`` and back, in antiphase."""

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, self.base_momentums, self.max_momentums = _momentum_setup(
                optimizer, base_momentum, max_momentum, last_epoch
            )
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        # Built-in policies are named methods (not lambdas) so the scheduler pickles.
        self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x: float) -> float:
        """The height multiplier at cycle (or step) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [
            base + (top - base) * scale_factor * self.scale_fn(at)
            for base, top in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            for group, base, top in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums
            ):
                momentum = top - (top - base) * scale_factor * self.scale_fn(at)
                _set_momentum(group, momentum, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """As the base class; a custom ``scale_fn`` is saved as None (a function) or as its
        ``__dict__`` (a callable object), as in PyTorch."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


def _anneal(kind: str, start: float, end: float, pct: float) -> float:
    if kind == "cos":
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
    return (end - start) * pct + start


class OneCycleLR(LRScheduler):
    """One cycle over ``total_steps`` (or ``epochs * steps_per_epoch``) ``step()`` calls:
    from max_lr / div_factor up to ``max_lr`` during the first ``pct_start`` of the steps,
    then down to initial_lr / final_div_factor (``three_phase``: back to the initial rate
    first), by cosine or linear annealing; the momentum goes the other way."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        n = self.total_steps
        if three_phase:
            self._schedule_phases = [
                dict(
                    end_step=float(pct_start * n) - 1,
                    start_lr="initial_lr",
                    end_lr="max_lr",
                    start_momentum="max_momentum",
                    end_momentum="base_momentum",
                ),
                dict(
                    end_step=float(2 * pct_start * n) - 2,
                    start_lr="max_lr",
                    end_lr="initial_lr",
                    start_momentum="base_momentum",
                    end_momentum="max_momentum",
                ),
                dict(
                    end_step=n - 1,
                    start_lr="initial_lr",
                    end_lr="min_lr",
                    start_momentum="max_momentum",
                    end_momentum="max_momentum",
                ),
            ]
        else:
            self._schedule_phases = [
                dict(
                    end_step=float(pct_start * n) - 1,
                    start_lr="initial_lr",
                    end_lr="max_lr",
                    start_momentum="max_momentum",
                    end_momentum="base_momentum",
                ),
                dict(
                    end_step=n - 1,
                    start_lr="max_lr",
                    end_lr="min_lr",
                    start_momentum="base_momentum",
                    end_momentum="max_momentum",
                ),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, _, _ = _momentum_setup(
                optimizer, base_momentum, max_momentum, last_epoch
            )
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = _anneal(
                        self._anneal_func_type,
                        group[phase["start_lr"]],
                        group[phase["end_lr"]],
                        pct,
                    )
                    if self.cycle_momentum:
                        momentum = _anneal(
                            self._anneal_func_type,
                            group[phase["start_momentum"]],
                            group[phase["end_momentum"]],
                            pct,
                        )
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
        return lrs


class CosineAnnealingWarmRestarts(LRScheduler):
    """eta = eta_min + (base_lr - eta_min)(1 + cos(pi T_cur / T_i)) / 2, restarting
    (T_cur = 0) after T_i epochs, with T_i = T_0 T_mult^k for the k-th period.
    ``step(epoch)`` accepts fractional epochs (per-batch schedules) without a warning."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [
            self.eta_min
            + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
            for base in self.base_lrs
        ]

    def step(self, epoch: float | None = None) -> None:
        _not_replayable()
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur - self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    # The period k holding this epoch: T_0 (T_mult^k - 1) / (T_mult - 1) <= t.
                    k = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**k - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**k
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._step_count += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._group_lrs()
