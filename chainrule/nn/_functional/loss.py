"""Losses of torch.nn.functional that compare a prediction with a target value or class: nll_loss,
cross_entropy, mse_loss, l1_loss, smooth_l1_loss, huber_loss, the binary cross entropies,
kl_div, poisson_nll_loss and gaussian_nll_loss.

Long because each loss checks its arguments as PyTorch does (shapes, dtypes, the legacy
``size_average``/``reduce``) with PyTorch's messages; the margin losses are in margin_loss.py.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule import ops as _ops
from chainrule._autocast_state import state as _ac
from chainrule._tensor import Tensor, _new_tensor
from chainrule.nn._functional._common import (
    _check_same_size,
    _const,
    _data,
    _legacy,
    _legacy_reduction,
    _not_implemented_for_ints,
    _reduce,
    _size,
    _tensor_args,
    _weight_no_grad,
    _xp,
)
from chainrule.nn._functional._device import on_input_device
from chainrule.ops import _autocast
from chainrule.ops import losses as _losses
from chainrule.ops import nn as _nnops
from chainrule.ops import scalar_overloads as _sc

__all__ = [
    "nll_loss",
    "cross_entropy",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "poisson_nll_loss",
    "gaussian_nll_loss",
]


@on_input_device  # raw-array target checks: their GPU current
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood: loss_i = -w[t_i] x[i, t_i] (0 where t_i == ignore_index).

    ``mean`` divides by the sum of the weights of the non-ignored targets (NaN if none), as
    PyTorch. Input (C), (N, C) or (N, C, d1, ...); the pick is a ``gather_along`` the class dim,
    whose VJP scatters g back. The class weights are constants (PyTorch gives them no grad).
    """
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input = _autocast.fp32_1(input)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensor_args(
        "nll_loss_nd",
        ("input", 1, input, False),
        ("target", 2, target, False),
        ("weight", 3, weight, True),
    )
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    cdim = 0 if input.ndim == 1 else 1
    tb = target.shape[0] if target.ndim else 0
    if input.ndim >= 2 and tb != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({tb})."
        )
    c = input.shape[cdim]
    t = _data(target)
    expected = tuple(input.shape[:cdim]) + tuple(input.shape[cdim + 1 :])
    if input.ndim == 1 and t.ndim == 1 and t.shape != (1,):
        raise ValueError(
            f"For 1D input, 1D target must have size 1, but got target size: {t.shape[0]}"
        )
    if input.ndim == 4 and t.ndim != 3:  # torch's 2-d (spatial) kernel has its own texts
        raise RuntimeError(
            "only batches of spatial targets supported (3D tensors) but got "
            f"targets of dimension: {t.ndim}"
        )
    if input.ndim == 4 and t.shape != expected:
        raise RuntimeError(
            f"size mismatch (got input: {list(input.shape)} , target: {list(t.shape)}"
        )
    if input.ndim == 1 and t.ndim == 1:
        t = t.reshape(())
    if t.shape != expected:
        raise RuntimeError(
            f"Expected target size {list(expected)}, got {list(t.shape)}"
            if input.ndim > 2
            else "0D or 1D target tensor expected, multi-target not supported"
        )
    if t.dtype not in (np.int64, np.uint8):  # torch takes no other integer width
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_legacy(t.dtype)}")
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
    if weight is not None and tuple(weight.shape) != (c,):
        raise RuntimeError(
            f"weight tensor should be defined either for all {c} classes or no "
            f"classes but got weight tensor of shape: {list(weight.shape)}"
        )
    xp = _xp(input)
    safe = xp.where(keep, t, 0).astype(np.int64)
    wt = _data(weight)[safe] if weight is not None else xp.ones(t.shape, input._data.dtype)
    wt = xp.where(keep, wt, 0).astype(input._data.dtype)
    total = _nll_total(wt, input, reduction)
    # One op, NllLossBackward0 (NllLoss2DBackward0 for 4-d) as in PyTorch (ops/losses.py).
    if input.ndim == 3 or input.ndim > 4:
        # As PyTorch: viewed as (N, C, 1, -1) around the 2-d kernel.
        n = input.shape[0]
        x4 = _ops.reshape(input, (n, c, 1, -1))
        idx = xp.reshape(safe, (n, 1, 1, -1))
        out = _losses.nll_loss(x4, 1, idx, xp.reshape(wt, (n, 1, -1)), reduction, total)
        return _ops.reshape(out, tuple(t.shape)) if reduction == "none" else out
    return _losses.nll_loss(input, cdim, xp.expand_dims(safe, cdim), wt, reduction, total)


def _nll_total(wt: Any, input: Tensor, reduction: str) -> Any:
    """What nll_loss's ``mean`` divides by: the summed weights of the kept targets (in float64
    for a float64 input, else in the input's dtype; None for the other reductions)."""
    if reduction not in ("none", "sum", "mean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction != "mean":
        return None
    total = wt.sum(dtype=np.float64)
    if input._data.dtype != np.float64 and total != 0:
        total = wt.sum()
    return total


def _prob_target_reduce(prod: Tensor, input: Tensor, c: int, cdim: int, reduction: str) -> Tensor:
    """cross_entropy's reduction for class-probability targets: -sum over the class dim,
    ``mean`` over the other elements."""
    if reduction == "none":
        return -_ops.sum(prod, cdim)
    if reduction == "sum":
        return -_ops.sum(prod)
    if reduction == "mean":
        n = input._data.size // c if c else 0
        if n == 0:
            return -_ops.sum(prod) * float("nan")
        return _sc.div_scalar(-_ops.sum(prod), n)  # PyTorch's DivBackward1
    raise ValueError(f"{reduction} is not a valid value for reduction")


@on_input_device  # raw-array target checks: their GPU current
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """log_softmax over the class dim, then nll_loss (class-index targets) or
    -sum(target * logp * w) (class-probability targets), with PyTorch's label smoothing:
    (1 - eps) * nll + eps / C * smooth, smooth = -sum_c w_c logp_c (normalized like nll)."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target = _autocast.fp32(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensor_args(
        "cross_entropy_loss",
        ("input", 1, input, False),
        ("target", 2, target, False),
        ("weight", 3, weight, True),
    )
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim == 0 and not _kinds.is_floating(target._data):
        # torch takes a 0-d input for a class-probability one; its text.
        raise RuntimeError(
            "Expected floating point type for target with class probabilities, "
            f"got {_legacy(target._data.dtype)}"
        )
    cdim = 0 if input.ndim == 1 else 1
    c = input.shape[cdim]
    logp = _nnops.log_softmax(input, cdim)
    wshape = [1] * input.ndim
    wshape[cdim] = c
    if _kinds.is_floating(target._data) and tuple(target.shape) == tuple(input.shape):
        if weight is not None and tuple(weight.shape) != (c,):
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all "
                f"{c} classes or no classes but got weight tensor of shape: "
                f"{list(weight.shape)}"
            )
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * _ops.reshape(weight, wshape)
        return _prob_target_reduce(prod, input, c, cdim, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    t = _data(target)
    keep = t != ignore_index
    lw = logp * _ops.reshape(weight, wshape) if weight is not None else logp
    smooth = -_ops.sum(lw, cdim) * _new_tensor(keep.astype(input._data.dtype))
    if reduction == "none":
        ret = smooth
    elif reduction == "sum":
        ret = _ops.sum(smooth)
    else:
        if weight is not None:
            denom = _data(weight)[t[keep]].sum()
        else:
            denom = keep.sum()
        ret = _ops.sum(smooth) / _const(denom, input) if denom else _ops.sum(smooth) * float("nan")
    # PyTorch's MulBackward1 nodes (a Python number)
    return _sc.mul_scalar(nll, 1 - label_smoothing) + _sc.mul_scalar(ret, label_smoothing / c)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """(x - t)**2, reduced."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target = _autocast.fp32(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target, "mse_loss")
    if not _kinds.is_inexact(input._data) and not _kinds.is_inexact(target._data):
        _not_implemented_for_ints("mse_cpu", input)
    if weight is None and _one_op(input, target, reduction):
        return _losses.mse_loss(input, target, reduction)  # one op: MseLossBackward0, as torch
    d = input - target
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """|x - t|, reduced (subgradient 0 at x == t)."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target = _autocast.fp32(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target, "l1_loss")
    loss = _ops.abs(input - target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _one_op(input: Tensor, target: Any, reduction: str, *consts: Tensor | None) -> bool:
    """Whether a loss can run as its one op of ops/losses.py: Tensors of one shape and dtype,
    a known reduction, and constant weights of that dtype that broadcast to that shape."""
    if not (isinstance(input, Tensor) and isinstance(target, Tensor)):
        return False
    shape, dtype = tuple(input.shape), input._data.dtype
    if tuple(target.shape) != shape or target._data.dtype != dtype:
        return False
    if reduction not in ("none", "sum", "mean") or not _kinds.is_floating(input._data):
        return False
    for c in consts:
        if c is None:
            continue
        if not isinstance(c, Tensor) or c.requires_grad or c._data.dtype != dtype:
            return False
        if np.broadcast_shapes(tuple(c.shape), shape) != shape:
            return False
    return True


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (plain L1 for beta == 0)."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target = _autocast.fp32(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target, "smooth_l1_loss")
    if not _kinds.is_inexact(input._data) and not _kinds.is_inexact(target._data):
        _not_implemented_for_ints("smooth_l1_cpu", input)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if _one_op(input, target, reduction):
        return _losses.smooth_l1_loss(input, target, reduction, float(beta))  # SmoothL1Loss
    d = input - target
    ad = _ops.abs(d)
    if beta == 0:
        return _reduce(ad, reduction)
    loss = _ops.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target = _autocast.fp32(input, target)
    _check_same_size(input, target, "huber_loss")
    if not _kinds.is_inexact(input._data) and not _kinds.is_inexact(target._data):
        _not_implemented_for_ints("huber_cpu", input)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None and _one_op(input, target, reduction):
        return _losses.huber_loss(input, target, reduction, float(delta))  # HuberLossBackward0
    d = input - target
    ad = _ops.abs(d)
    loss = _ops.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@on_input_device
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """-w (t log x + (1 - t) log(1 - x)), each log clamped to >= -100 as PyTorch; one op
    (BinaryCrossEntropyBackward0, PyTorch's gradient w (x - t) / max(x (1 - x), 1e-12)) when
    input and target share shape and dtype and the weight broadcasts to them."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target, weight = _autocast.fp32(input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}) is deprecated. Please ensure they have the same size."
        )
    _weight_no_grad("binary_cross_entropy", weight)
    if target.dtype != input.dtype:
        raise RuntimeError(
            f"Found dtype {_legacy(target._data.dtype)} but expected {_legacy(input._data.dtype)}"
        )
    xa = _data(input)
    if np.any((xa < 0) | (xa > 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if _one_op(input, target, reduction, weight):
        w = _data(weight) if weight is not None else None
        return _losses.binary_cross_entropy(input, target, reduction, w)  # as PyTorch's node
    loss = -(target * _clamped_log(input) + (1 - target) * _clamped_log(1 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _clamped_log(x: Tensor) -> Tensor:
    pos = x > 0
    lx = _ops.log(_ops.where(pos, x, 1.0))
    return _ops.where(pos & (lx >= -100), lx, -100.0)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """(1 - t) x + (1 + (pw - 1) t) softplus(-x), the stable form of
    -w [pw t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))]."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target, weight, pos_weight = _autocast.fp32(input, target, weight, pos_weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({_size(target)}) must be the same as input size ({_size(input)})"
        )
    _weight_no_grad("binary_cross_entropy_with_logits", weight)
    _weight_no_grad("binary_cross_entropy_with_logits", pos_weight, "pos_weight")
    if _one_op(input, target, reduction, weight, pos_weight):
        w = _data(weight) if weight is not None else None
        pw = _data(pos_weight) if pos_weight is not None else None
        # One op: BinaryCrossEntropyWithLogitsBackward0, as PyTorch (ops/losses.py).
        return _losses.binary_cross_entropy_with_logits(input, target, reduction, w, pw)
    sp = _nnops.neg_log_sigmoid(input)
    if pos_weight is not None:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """target (log target - input) pointwise (0 where target == 0), or exp(t) (t - input) with
    ``log_target``; 'batchmean' divides the sum by the batch size."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target = _autocast.fp32(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    if log_target:
        loss = _ops.exp(target) * (target - input)
    else:
        pos = target > 0
        tlogt = _ops.where(pos, target * _ops.log(_ops.where(pos, target, 1.0)), 0.0)
        loss = tlogt - target * input
    if reduction == "batchmean":
        s = _ops.sum(loss)
        return s / input.shape[0] if input.ndim else s
    return _reduce(loss, reduction)


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: Any = None,
    eps: float = 1e-8,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """exp(x) - t x (``log_input``) or x - t log(x + eps); ``full`` adds Stirling's term
    t log t - t + log(2 pi t) / 2 where t > 1."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target = _autocast.fp32(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_input:
        loss = _ops.exp(input) - target * input
    else:
        loss = input - target * _ops.log(input + eps)
    if full:
        t = target
        safe = _ops.where(t > 1, t, _const(1, t))
        stirling = safe * _ops.log(safe) - safe + 0.5 * _ops.log(2 * math.pi * safe)
        loss = loss + _ops.where(t > 1, stirling, _const(0, t))
    return _reduce(loss, reduction)


@on_input_device
def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """(log(max(var, eps)) + (x - t)^2 / max(var, eps)) / 2 (+ log(2 pi) / 2 if ``full``).
    The clamp is applied to values only: the gradient flows to ``var`` unclamped, as in
    PyTorch."""
    if not isinstance(var, Tensor):
        var = _const(np.full(tuple(input.shape), var), input)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = _ops.unsqueeze(var, -1)
        elif (
            tuple(input.shape[:-1]) == tuple(var.shape[:-1])
            and var.ndim >= 1
            and var.shape[-1] == 1
        ):
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    vd = var._data  # type: ignore[union-attr]  (var is a Tensor by now)
    if np.any(vd < 0):
        raise ValueError("var has negative entry/entries")
    adj = np.maximum(vd, eps) - vd
    if np.any(adj):
        var = var + _new_tensor(adj.astype(vd.dtype))
    loss = 0.5 * (_ops.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
