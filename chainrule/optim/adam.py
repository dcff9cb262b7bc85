"""Adam and AdamW (Kingma and Ba, 2014; Loshchilov and Hutter, 2017), with AMSGrad."""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import numpy as np

from chainrule.backends import _chunked
from chainrule.optim._arith import addcdiv, addcmul, lerp_
from chainrule.optim._checks import check_capturable, check_flags
from chainrule.optim.optimizer import Optimizer, _state_tensor

__all__ = ["Adam", "AdamW", "adam_update"]


def adam_update(
    xp: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_avg_sq: Any,
    max_exp_avg_sq: Any,
    *,
    step: float,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    amsgrad: bool,
    maximize: bool,
    decoupled_weight_decay: bool,
) -> None:
    """One Adam(W) step on arrays, in place; ``step`` counts from 1.

    g = -grad if maximize else grad
    weight decay: param = param * (1 - lr * wd) (AdamW, decoupled) or g = g + wd * param
    m = m + (1 - beta1) (g - m);   v = beta2 v + (1 - beta2) g^2
    AMSGrad: v_max = max(v_max, v), used in place of v below
    param = param - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            param[...] = param * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * param
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = math.sqrt(bias_correction2)
    if not _inplace_ok(xp, param, g, exp_avg, exp_avg_sq):
        lerp_(exp_avg, g, 1 - beta1)
        exp_avg_sq[...] = addcmul(exp_avg_sq * beta2, g, g, 1 - beta2)
        if amsgrad:
            xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            denom = xp.sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps
        else:
            denom = xp.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
        param[...] = addcdiv(param, exp_avg, denom, -step_size)
        return
    arrays = [param, g, exp_avg, exp_avg_sq] + ([max_exp_avg_sq] if amsgrad else [])
    consts = (1 - beta1, beta2, bias_correction2_sqrt, eps, step_size)
    parts = _chunked.ranges(param.size, param.size)
    if (
        len(parts) > 1
        and type(param) is np.ndarray
        and all(a.flags.c_contiguous and a.shape == param.shape for a in arrays)
    ):
        # Large parameters: the same passes over parts of the flattened arrays, split over the
        # intra-op pool (backends/_chunked.py); each element's update is the same bits.
        flats = [a.reshape(-1) for a in arrays]
        _chunked.run(lambda r: _adam_inplace(xp, [f[r[0] : r[1]] for f in flats], *consts), parts)
        return
    _adam_inplace(xp, arrays, *consts)


def _adam_inplace(
    xp: Any,
    arrays: list[Any],
    weight: float,
    beta2: float,
    bias_correction2_sqrt: float,
    eps: float,
    step_size: float,
) -> None:
    """The update of ``adam_update`` in place on ``[param, g, m, v(, v_max)]``."""
    param, g, exp_avg, exp_avg_sq = arrays[:4]
    amsgrad = len(arrays) == 5
    max_exp_avg_sq = arrays[4] if amsgrad else None
    # The same operations in the same order (so the same rounding as PyTorch's kernels, see
    # optim/_arith.py), in place and through two scratch arrays instead of nine temporaries.
    tmp = xp.subtract(g, exp_avg)
    if abs(weight) < 0.5:  # lerp_ from the start: m + w (g - m)
        tmp *= weight
        exp_avg += tmp
    else:  # lerp_ from the end: g - (g - m) (1 - w)
        tmp *= 1 - weight
        xp.subtract(g, tmp, out=exp_avg)
    xp.multiply(g, 1 - beta2, out=tmp)
    tmp *= g
    exp_avg_sq *= beta2
    exp_avg_sq += tmp
    if amsgrad:
        xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
    denom = xp.sqrt(max_exp_avg_sq if amsgrad else exp_avg_sq)
    denom /= bias_correction2_sqrt
    denom += eps
    xp.multiply(exp_avg, -step_size, out=tmp)
    tmp /= denom
    param += tmp


def _inplace_ok(xp: Any, param: Any, g: Any, m: Any, v: Any) -> bool:
    """Whether the in-place update applies: one floating dtype and shape throughout."""
    dt = param.dtype
    return (
        dt.kind == "f"
        and g.dtype == dt == m.dtype == v.dtype
        and g.shape == param.shape == m.shape == v.shape
    )


class Adam(Optimizer):
    """``torch.optim.Adam``; the update is ``adam_update``. State per parameter: ``step``
    (a float32 scalar tensor), ``exp_avg``, ``exp_avg_sq`` and, with AMSGrad,
    ``max_exp_avg_sq``."""

    _sparse_error = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        check_flags(differentiable=differentiable, fused=fused, foreach=foreach)
        super().__init__(params, defaults)

    def _state_keys(self, group: dict[str, Any]) -> tuple[str, ...]:
        keys = ("step", "exp_avg", "exp_avg_sq")
        return keys + ("max_exp_avg_sq",) if group["amsgrad"] else keys

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                check_capturable(group)
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = _state_tensor(np.zeros((), np.float32))
                        state["exp_avg"] = _state_tensor(p._backend.xp.zeros_like(p._data))
                        state["exp_avg_sq"] = _state_tensor(p._backend.xp.zeros_like(p._data))
                        if group["amsgrad"]:
                            state["max_exp_avg_sq"] = _state_tensor(
                                p._backend.xp.zeros_like(p._data)
                            )
                    state["step"]._data += 1
                    adam_update(
                        p._backend.xp,
                        p._data,
                        p.grad._data,
                        state["exp_avg"]._data,
                        state["exp_avg_sq"]._data,
                        state["max_exp_avg_sq"]._data if group["amsgrad"] else None,
                        step=float(state["step"]._data),
                        lr=group["lr"],
                        beta1=beta1,
                        beta2=beta2,
                        eps=group["eps"],
                        weight_decay=group["weight_decay"],
                        amsgrad=group["amsgrad"],
                        maximize=group["maximize"],
                        decoupled_weight_decay=group["decoupled_weight_decay"],
                    )
                    p._bump_version()

        return self._run(closure, update)


class AdamW(Adam):
    """``torch.optim.AdamW``: Adam with decoupled weight decay (default 1e-2)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
