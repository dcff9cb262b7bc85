"""Muon: momentum orthogonalised by a Newton-Schulz iteration (Jordan et al., 2024), as
``torch.optim.Muon`` defines it, for 2-d parameters.

PyTorch runs the Newton-Schulz iteration in bfloat16. NumPy has no bfloat16, so
``_round_bf16`` rounds float32 values to the nearest bfloat16 (ties to even) after each
operation PyTorch does in bfloat16, and products are accumulated in float32 as PyTorch's CPU
kernels do. The result agrees with PyTorch's to bfloat16 rounding: an element can differ by one
bfloat16 unit where float32 sums in a different order land on either side of a rounding
boundary.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import numpy as np

from chainrule.backends import backend_of
from chainrule.optim._arith import lerp_
from chainrule.optim.optimizer import Optimizer, _state_tensor

__all__ = ["Muon", "muon_update", "zeropower_via_newtonschulz"]

_ADJUST_LR_FNS = (None, "original", "match_rms_adamw")


def _round_bf16(x: Any) -> np.ndarray:
    """Round to the nearest bfloat16 value (ties to even); returned as float32."""
    xp = backend_of(x).xp  # the array's device (NumPy for a Python number)
    x32 = xp.ascontiguousarray(x, dtype=np.float32)
    bits = x32.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32).reshape(x32.shape)
    return xp.where(xp.isnan(x32), x32, out)


def zeropower_via_newtonschulz(
    grad: Any, ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float
) -> np.ndarray:
    """Approximate the orthogonal factor U V^T of ``grad`` = U S V^T (bfloat16 values).

    X = G / max(||G||_F, eps) (on the transpose when G has more rows than columns), then
    ``ns_steps`` times: A = X X^T, B = b A + c A A, X = a X + B X.
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    a, b, c = ns_coefficients
    x = _round_bf16(grad)
    transposed = grad.shape[0] > grad.shape[1]
    if transposed:
        x = x.T
    norm = _round_bf16(np.sqrt(np.sum(x * x, dtype=np.float32)))
    x = _round_bf16(x / _round_bf16(np.maximum(norm, _round_bf16(eps).item())))
    for _ in range(ns_steps):
        gram = _round_bf16(x @ x.T)
        gram_update = _round_bf16(np.float32(b) * gram + np.float32(c) * (gram @ gram))
        x = _round_bf16(np.float32(a) * x + gram_update @ x)
    return x.T if transposed else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    else:  # "match_rms_adamw": match AdamW's update RMS (Liu et al., 2025)
        ratio = 0.2 * math.sqrt(max(rows, cols))
    return lr * ratio


def muon_update(
    xp: Any,
    param: Any,
    grad: Any,
    buf: Any,
    *,
    lr: float,
    weight_decay: float,
    momentum: float,
    nesterov: bool,
    ns_coefficients: tuple[float, float, float],
    eps: float,
    ns_steps: int,
    adjust_lr_fn: str | None,
) -> None:
    """One Muon step on arrays, in place.

    b = b + (1 - mu)(g - b);   u = g + mu (b - g) (Nesterov) or u = b
    O = NewtonSchulz(u);   lr' = lr sqrt(max(1, m / n)) ("original") or 0.2 lr sqrt(max(m, n))
    param = param (1 - lr wd) - lr' O
    """
    lerp_(buf, grad, 1 - momentum)
    if nesterov:
        upd = grad.copy()
        lerp_(upd, buf, momentum)
    else:
        upd = buf
    ortho = zeropower_via_newtonschulz(upd, ns_coefficients, ns_steps, eps)
    adjusted_lr = _adjust_lr(lr, adjust_lr_fn, param.shape)
    param[...] = param * (1 - lr * weight_decay)
    param += ortho.astype(param.dtype) * (-adjusted_lr)


class Muon(Optimizer):
    """``torch.optim.Muon``; the update is ``muon_update``. Only 2-d parameters; state per
    parameter: ``momentum_buffer``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
        eps: float = 1e-7,
        ns_steps: int = 5,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn not in _ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(
            lr=lr,
            weight_decay=weight_decay,
            momentum=momentum,
            nesterov=nesterov,
            ns_coefficients=ns_coefficients,
            eps=eps,
            ns_steps=ns_steps,
            adjust_lr_fn=adjust_lr_fn,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: torch.Size({list(p.shape)})"
                    )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        def update() -> None:
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    xp = p._backend.xp
                    state = self.state[p]
                    if len(state) == 0:
                        state["momentum_buffer"] = _state_tensor(xp.zeros_like(p.grad._data))
                    muon_update(
                        xp,
                        p._data,
                        p.grad._data,
                        state["momentum_buffer"]._data,
                        lr=group["lr"],
                        weight_decay=group["weight_decay"],
                        momentum=group["momentum"],
                        nesterov=group["nesterov"],
                        ns_coefficients=group["ns_coefficients"],
                        eps=group["eps"],
                        ns_steps=group["ns_steps"],
                        adjust_lr_fn=group["adjust_lr_fn"],
                    )
                    p._bump_version()

        return self._run(closure, update)
