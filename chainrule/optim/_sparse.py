"""Optimizer steps on sparse COO gradients (``Embedding(sparse=True)``), as PyTorch's:
``SGD`` (momentum buffers sparse too), ``Adagrad`` and ``SparseAdam`` (lazy Adam on the
touched rows); every other optimizer refuses them with PyTorch's error (docs/sparse.md).

Dense training pays one read of ``chainrule.sparse._coo.SEEN`` per step: the parameters are
searched for sparse gradients only once a sparse tensor was made.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from chainrule._tensor import Tensor, _new_tensor
from chainrule.sparse._coo import SEEN, SparseTensor, _linear, _make

__all__ = ["has_sparse_grad", "check_sparse", "sgd_sparse", "adagrad_sparse", "adam_sparse"]


def has_sparse_grad(params: Any) -> bool:
    """Whether any parameter's ``.grad`` is a sparse COO tensor."""
    if not SEEN[0]:
        return False
    return any(isinstance(p._grad, SparseTensor) for p in params)


def check_sparse(opt: Any) -> None:
    """PyTorch's error of an optimizer without sparse support (``opt._sparse_error``) when a
    parameter has a sparse gradient; checked before any parameter changes."""
    msg = opt._sparse_error
    if msg is None:
        return
    if has_sparse_grad(p for g in opt.param_groups for p in g["params"]):
        raise RuntimeError(msg.format(name=type(opt).__name__))


def with_sparse(
    opt: Any, update: Callable[[], None], fn: Callable[..., None]
) -> Callable[[], None]:
    """``update`` (the dense step) run with the sparse gradients held back, then ``fn(p, g,
    state, group)`` on each parameter whose gradient is sparse (parameters are independent,
    so the order does not change a value)."""

    def run() -> None:
        held = []
        for group in opt.param_groups:
            for p in group["params"]:
                if isinstance(p._grad, SparseTensor):
                    held.append((p, p._grad, group))
                    p._grad = None
        try:
            update()
        finally:
            for p, g, _ in held:
                p._grad = g
        for p, g, group in held:
            # SGD without momentum keeps no state, as torch's
            fn(p, g, {} if group.get("momentum") == 0 else opt.state[p], group)
            p._bump_version()

    return run


def _parts(g: SparseTensor) -> tuple[np.ndarray, np.ndarray]:
    """The stored indices (sparse_dim x nnz) and values of ``g``, as arrays."""
    return g._sp_indices._data, g._sp_values._data


def _coalesced(g: SparseTensor) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """``g.coalesce()``'s index (a tuple of arrays, to index a dense array) and values."""
    idx, vals = _parts(g)
    sizes = tuple(g.shape[: idx.shape[0]])
    lin = _linear(idx, sizes)
    uniq, inv = np.unique(lin, return_inverse=True)
    out = np.zeros((len(uniq),) + vals.shape[1:], dtype=vals.dtype)
    np.add.at(out, inv.reshape(-1), vals)
    return tuple(np.unravel_index(uniq, sizes)), out


def _add_into(dense: np.ndarray, g: SparseTensor, alpha: float) -> None:
    """``dense.add_(g, alpha=alpha)`` in place (duplicates add up)."""
    idx, vals = _parts(g)
    np.add.at(dense, tuple(idx), vals * alpha if alpha != 1 else vals)


def _sparse_like(g: SparseTensor, idx: np.ndarray, vals: np.ndarray) -> SparseTensor:
    return _make(_new_tensor(idx), _new_tensor(vals), tuple(g.shape), False)


def sgd_sparse(p: Tensor, g: SparseTensor, state: dict[str, Any], group: dict[str, Any]) -> None:
    """PyTorch's single-tensor SGD on a sparse gradient: ``g (+ momentum buffer)``; the buffer
    is a sparse tensor (``buf = m * buf + (1 - dampening) * g``); weight decay is PyTorch's
    ``add(sparse, dense)`` error."""
    idx, vals = _parts(g)
    if group["maximize"]:
        vals = -vals
    if group["weight_decay"] != 0:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    m = group["momentum"]
    if m != 0:
        buf = state.get("momentum_buffer")
        if buf is None:
            bidx, bvals = idx.copy(), vals.copy()
        else:
            oi, ov = _parts(buf)
            bidx = np.concatenate([oi, idx], axis=1)
            bvals = np.concatenate([ov * m, vals * (1 - group["dampening"])], axis=0)
        state["momentum_buffer"] = _sparse_like(g, bidx, bvals.astype(vals.dtype))
        if group["nesterov"]:
            idx = np.concatenate([idx, bidx], axis=1)
            vals = np.concatenate([vals, bvals * m], axis=0)
        else:
            idx, vals = bidx, bvals
    np.add.at(p._data, tuple(idx), (vals * -group["lr"]).astype(p._data.dtype))


def adagrad_sparse(
    p: Tensor, g: SparseTensor, state: dict[str, Any], group: dict[str, Any]
) -> None:
    """PyTorch's Adagrad on a sparse gradient: on the coalesced entries ``sum += g^2`` and
    ``p -= clr * g / (sqrt(sum) + eps)``, ``clr = lr / (1 + (step - 1) lr_decay)``."""
    state["step"]._data += 1
    step = float(state["step"]._data)
    if group["weight_decay"] != 0:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    at, vals = _coalesced(g)
    if group["maximize"]:
        vals = -vals
    clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
    acc = state["sum"]._data
    np.add.at(acc, at, vals * vals)
    std = np.sqrt(acc[at]) + group["eps"]
    p._data[at] += (vals / std * -clr).astype(p._data.dtype)


def adam_sparse(p: Tensor, g: SparseTensor, state: dict[str, Any], group: dict[str, Any]) -> None:
    """PyTorch's SparseAdam (lazy Adam): on the coalesced entries of ``g`` only,
    ``m += (1 - b1)(g - m)``, ``v += (1 - b2)(g^2 - v)`` and
    ``p -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)``."""
    if not state:
        state["step"] = 0
        state["exp_avg"] = _new_tensor(np.zeros_like(p._data))
        state["exp_avg_sq"] = _new_tensor(np.zeros_like(p._data))
    state["step"] += 1
    at, vals = _coalesced(g)
    if group["maximize"]:
        vals = -vals
    if vals.size == 0:
        return
    b1, b2 = group["betas"]
    m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
    old_m, old_v = m[at], v[at]
    m_up = (vals - old_m) * (1 - b1)
    v_up = (vals * vals - old_v) * (1 - b2)
    m[at] += m_up
    v[at] += v_up
    numer = m_up + old_m
    denom = np.sqrt(v_up + old_v) + group["eps"]
    t = state["step"]
    step_size = group["lr"] * math.sqrt(1 - b2**t) / (1 - b1**t)
    p._data[at] += (-step_size * (numer / denom)).astype(p._data.dtype)
