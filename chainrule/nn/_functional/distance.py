"""Distances and similarities: cosine_similarity, pairwise_distance and pdist."""

from __future__ import annotations

import math

import numpy as np

from chainrule import _kinds
from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.nn._functional._common import (
    _const,
    _data,
)
from chainrule.nn._functional._device import on_input_device
from chainrule.ops import scalar_overloads as _sc
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops.composite_node import composite as _composite_of

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


@on_input_device
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum((x1 / ||x1||) (x2 / ||x2||)) along ``dim``, each norm clamped to >= eps without
    grad (PyTorch's current formula: the clamp does not change the gradient's path)."""

    def unit(x: Tensor, d: int) -> Tensor:
        norm = _ops.sqrt(_ops.sum(x * x, d, keepdim=True))
        nd = _data(norm)
        adj = np.maximum(nd, eps) - nd
        if np.any(adj):
            norm = norm + _new_tensor(adj.astype(nd.dtype))
        return x / norm

    nd = max(x1.ndim, x2.ndim)
    d = wrap_dim(dim, nd)
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    a = _ops.expand(x1, shape) if tuple(x1.shape) != shape else x1
    b = _ops.expand(x2, shape) if tuple(x2.shape) != shape else x2
    return _ops.sum(unit(a, d) * unit(b, d), d)


def _pnorm(x: Tensor, p: float, dim: int, keepdim: bool = False) -> Tensor:
    if p == 2:
        return _ops.sqrt(_ops.sum(x * x, dim, keepdim=keepdim))
    if p == 1:
        return _ops.sum(_ops.abs(x), dim, keepdim=keepdim)
    if math.isinf(p):
        ax = _ops.abs(x)
        return _ops.amax(ax, dim, keepdim=keepdim) if p > 0 else _ops.amin(ax, dim, keepdim=keepdim)
    if p == 0:
        return _ops.sum(_const(np.asanyarray(x._data) != 0, x), dim, keepdim=keepdim)
    return _ops.sum(_ops.abs(x) ** p, dim, keepdim=keepdim) ** (1.0 / p)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """||x1 - x2 + eps||_p along the last dim (broadcasting x1 against x2), recorded as
    PyTorch's ``NormBackward1`` over ``AddBackward1`` over ``SubBackward0``."""
    nd = max(x1.ndim, x2.ndim)
    diff = _sc.add_scalar(x1 - x2, eps)
    if nd == 0:
        return _ops.abs(diff)
    if not _kinds.is_floating(diff._data):
        return _pnorm(diff, p, nd - 1, keepdim)
    return _sc.norm_dim(diff, p, (nd - 1,), keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """See ``_pdist``; recorded as PyTorch\'s one ``PdistBackward0``
    (Note [composite nodes] in chainrule/ops/composite_node.py)."""
    inputs = (input,)
    return _composite_of("PdistBackward0", lambda *ts: _pdist(ts[0], p), inputs)


def _pdist(input: Tensor, p: float = 2) -> Tensor:
    """||x_i - x_j||_p for every row pair i < j of an (N, M) input, in row-major order."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    diff = input[_new_tensor(i)] - input[_new_tensor(j)]
    return _pnorm(diff, p, 1)
