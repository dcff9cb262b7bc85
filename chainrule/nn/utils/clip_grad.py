"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_``.

Both work on the gradients' arrays in place (gradients are not part of any graph here) and
bump the gradients' version counters.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from chainrule._tensor import Tensor
from chainrule.backends import backend_of
from chainrule.sparse._coo import not_supported

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm"]


def _grads(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _norm(xp: Any, a: Any, norm_type: float) -> Any:
    """The ``norm_type``-norm of array ``a`` over all elements, in a's dtype."""
    a = xp.abs(a)
    if norm_type == math.inf:
        return a.max() if a.size else xp.zeros((), a.dtype)
    if norm_type == -math.inf:
        return a.min() if a.size else xp.zeros((), a.dtype)
    if norm_type == 0:
        return xp.asarray((a != 0).sum(), a.dtype)
    if norm_type == 1:
        return a.sum()
    if norm_type == 2:
        return xp.sqrt((a * a).sum())
    return (a**norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(
    tensors: Iterable[Tensor] | Tensor,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The norm of the per-tensor norms, i.e. the norm of all elements taken together."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._wrap(np.zeros((), np.float32))
    be = backend_of(tensors[0]._data)  # the device of the gradients (one, as in PyTorch)
    xp = be.xp
    if any(t._sparse for t in tensors):  # PyTorch's error: no sparse norm kernel
        raise not_supported("linalg_vector_norm")
    norms = [_norm(xp, t._data, norm_type) for t in tensors]
    dtype = np.result_type(*[n.dtype for n in norms])
    total = _norm(xp, xp.stack([xp.asarray(n, dtype) for n in norms]), norm_type)
    if error_if_nonfinite and not xp.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return Tensor._wrap(xp.asarray(total, dtype))


def clip_grad_norm_(
    parameters: Iterable[Tensor] | Tensor,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale all gradients by min(1, max_norm / (total_norm + 1e-6)), where total_norm is
    the ``norm_type``-norm of all gradients taken as one vector; returns total_norm.

    Raises:
        RuntimeError: with ``error_if_nonfinite`` when total_norm is nan or inf.
    """
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    coef = float(max_norm) / (total._data + 1e-6)
    be = backend_of(total._data)
    coef = be.xp.minimum(coef, 1.0).astype(total._data.dtype)
    # A non-finite norm gives coef 0 and inf * 0 = nan, silently, as in PyTorch.
    with be.errstate(invalid="ignore"):
        for g in grads:
            g._data *= coef.astype(g._data.dtype)
            g._bump_version()
    return total


def clip_grad_value_(
    parameters: Iterable[Tensor] | Tensor, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient element into [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        if g._sparse:  # PyTorch's error: no sparse clamp kernel
            raise not_supported("clamp_min_")
        backend_of(g._data).xp.clip(g._data, -clip_value, clip_value, out=g._data)
        g._bump_version()
