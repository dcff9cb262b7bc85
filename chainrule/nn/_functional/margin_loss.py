"""Margin, ranking and embedding losses of torch.nn.functional: margin_ranking_loss,
hinge_embedding_loss, soft_margin_loss, cosine_embedding_loss, the triplet losses and the
multi-class / multi-label margin losses."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from chainrule import ops as _ops
from chainrule._autocast_state import state as _ac
from chainrule._tensor import Tensor
from chainrule.nn._functional._common import (
    _const,
    _host,
    _legacy_reduction,
    _on_device,
    _reduce,
    _size,
)
from chainrule.nn._functional.distance import pairwise_distance
from chainrule.ops import _autocast
from chainrule.ops import scalar_overloads as _sc
from chainrule.ops.composite_node import composite as _composite_of

__all__ = [
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "cosine_embedding_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
]


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -y (x1 - x2) + margin)."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input1, input2, target = _autocast.fp32(input1, input2, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size(input1)}, input2: {_size(input2)}, target: {_size(target)} "
        )
    loss = _ops.clamp_min(_sc.add_scalar(-target * (input1 - input2), margin), 0)  # AddBackward1
    return _reduce(loss, reduction)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """x where y = 1, max(0, margin - x) where y = -1 (summed where y is neither)."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target = _autocast.fp32(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    zero = _const(0, input)
    hinge = _ops.where(target != 1, _ops.clamp_min(margin - input, 0), zero)
    same = _ops.where(target != -1, input, zero)
    return _reduce(hinge + same, reduction)


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """See ``_soft_margin_loss``; recorded as PyTorch\'s one ``SoftMarginLossBackward0``
    (Note [composite nodes] in chainrule/ops/composite_node.py)."""
    inputs = (input, target)
    return _composite_of(
        "SoftMarginLossBackward0",
        lambda x, t: _soft_margin_loss(x, t, size_average, reduce, reduction),
        inputs,
    )


def _soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """log(1 + exp(-y x))."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, target = _autocast.fp32(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce(-_ops.logsigmoid(target * input), reduction)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1, with
    cos = <x1, x2> / sqrt((|x1|^2 + 1e-12)(|x2|^2 + 1e-12)) along the last dim."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input1, input2, target = _autocast.fp32(input1, input2, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    d = target.ndim
    if input1.ndim != d + 1 or input2.ndim != d + 1 or d > 1:
        raise RuntimeError(
            f"{d}D target tensor expects {d + 1}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    prod = _ops.sum(input1 * input2, d)
    m1 = _ops.sum(input1 * input1, d) + 1e-12
    m2 = _ops.sum(input2 * input2, d) + 1e-12
    cos = prod / _ops.sqrt(m1 * m2)
    zero = _const(0, cos)
    loss = _ops.where(target == 1, 1 - cos, zero) + _ops.where(
        target == -1, _ops.clamp_min(cos - margin, 0), zero
    )
    return _reduce(loss, reduction)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with d the pairwise p-norm distance (``swap``:
    d(a, n) replaced by min(d(a, n), d(p, n)))."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        anchor, positive, negative = _autocast.fp32(anchor, positive, negative)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    a, po, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == po == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {po}D, and negative {n}D inputs"
        )
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_ops.clamp_min(margin + d_pos - d_neg, 0), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) for any distance function d (default:
    :func:`pairwise_distance`)."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, po, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == po == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {po}D, and negative {n}D inputs"
        )
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _ops.minimum(d_neg, dist(positive, negative))
    return _reduce(_ops.clamp_min(margin + d_pos - d_neg, 0), reduction)


def _class_targets(input: Tensor, target: Tensor) -> tuple[Tensor, np.ndarray, int]:
    """(N, C) view of ``input`` and (N,) int targets, checked to lie in [0, C)."""
    x = input if input.ndim == 2 else _ops.reshape(input, (1, -1))
    c = x.shape[1]
    t = _host(target).reshape(-1).astype(np.int64)
    if t.shape[0] != x.shape[0]:
        raise RuntimeError(
            f"inconsistent target size, expected {x.shape[0]} but got {list(target.shape)}"
        )
    if np.any((t < 0) | (t >= c)):
        raise RuntimeError("target out of range")
    return x, t, c


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """See ``_multi_margin_loss``; recorded as PyTorch\'s one ``MultiMarginLossBackward0``
    (Note [composite nodes] in chainrule/ops/composite_node.py)."""
    inputs = (input, target) if weight is None else (input, target, weight)
    return _composite_of(
        "MultiMarginLossBackward0",
        lambda *ts: _multi_margin_loss(
            ts[0], ts[1], p, margin, ts[2] if len(ts) > 2 else None, size_average, reduce, reduction
        ),
        inputs,
    )


def _multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """sum over i != y of w[y] max(0, margin - x[y] + x[i])^p / C, per sample."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input = _autocast.fp32_1(input)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if input.ndim > 2:
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, "
            f"but got: {list(input.shape)}"
        )
    x, t, c = _class_targets(input, target)
    n = x.shape[0]
    onehot = np.zeros((n, c), dtype=x._data.dtype)
    onehot[np.arange(n), t] = 1
    xy = _ops.gather(x, 1, _on_device(t.reshape(-1, 1), x))
    h = _ops.clamp_min(margin - xy + x, 0)
    if p == 2:
        h = h * h
    h = h * _const(1 - onehot, x)
    if weight is not None:
        h = h * _ops.reshape(weight[_on_device(t, x)], (n, 1))
    loss = _ops.sum(h, 1) / c
    if input.ndim < 2:
        loss = _ops.reshape(loss, ())
    return _reduce(loss, reduction)


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """See ``_multilabel_margin_loss``; recorded as PyTorch\'s one ``MultilabelMarginLossBackward0``
    (Note [composite nodes] in chainrule/ops/composite_node.py)."""
    inputs = (input, target)
    return _composite_of(
        "MultilabelMarginLossBackward0",
        lambda x, t: _multilabel_margin_loss(x, t, size_average, reduce, reduction),
        inputs,
    )


def _multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """sum over targets j (the indices before the first -1) and non-targets i of
    max(0, 1 - (x[y_j] - x[i])) / C, per sample."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input = _autocast.fp32_1(input)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x = input if input.ndim == 2 else _ops.reshape(input, (1, -1))
    n, c = x.shape
    t = _host(target).reshape(n, -1).astype(np.int64)
    if t.shape[1] != c:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    # Valid targets: those before the first -1 in each row.
    valid = np.cumprod(t != -1, axis=1).astype(bool)
    if np.any(valid & ((t < 0) | (t >= c))):
        raise RuntimeError("argument #2 'target' is out of range")
    safe = np.where(valid, t, 0)
    is_target = np.zeros((n, c), bool)
    rows = np.repeat(np.arange(n), c).reshape(n, c)
    is_target[rows[valid], safe[valid]] = True
    xy = _ops.gather(x, 1, _on_device(safe, x))  # (n, c): x[y_j]
    h = _ops.clamp_min(1 - _ops.unsqueeze(xy, 2) + _ops.unsqueeze(x, 1), 0)  # (n, j, i)
    mask = valid[:, :, None] & ~is_target[:, None, :]
    loss = _ops.sum(h * _const(mask, x), (1, 2)) / c
    if input.ndim < 2:
        loss = _ops.reshape(loss, ())
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """-mean over classes of w (y log sigmoid(x) + (1 - y) log sigmoid(-x)), per sample."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * _ops.logsigmoid(input) + (1 - target) * _ops.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    c = input.shape[-1] if input.ndim else 1
    loss = _ops.sum(loss, input.ndim - 1) / c if input.ndim else loss
    return _reduce(loss, reduction)
