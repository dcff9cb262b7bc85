"""``F.linear_cross_entropy``: cross entropy of a linear map's logits (PyTorch 2.13).

logits[n, c, d...] = sum_i input[n, i] * W[c, d..., i] (+ bias[c, d...]), then
``cross_entropy(logits, target, ...)``.

Differs from torch: ``options`` (``LinearCrossEntropyOptions``: batch chunking to save
memory) is accepted and has no effect; the logits are formed whole.
"""

from __future__ import annotations

from typing import Any

from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.nn._functional.loss import cross_entropy

__all__ = ["linear_cross_entropy"]


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """``cross_entropy(input @ linear_weight^T (+ linear_bias), target)``.

    Args:
        input: (N, in_features) or (in_features,).
        linear_weight: (C, in_features), or (C, d_1, ..., d_K, in_features) for a
            K-dimensional loss.
        target: class indices or probabilities, as ``cross_entropy`` takes them.
        linear_bias: (C,) or (C, d_1, ..., d_K).
        weight, reduction, label_smoothing: as in ``cross_entropy``.
        ignore_index: as in ``cross_entropy``; None means -100.
        options: chunking options (no effect in chainrule).
    """
    if input.ndim not in (1, 2):
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    logits = _ops.tensordot(input, linear_weight, dims=([input.ndim - 1], [linear_weight.ndim - 1]))
    if linear_bias is not None:
        logits = logits + linear_bias
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )
