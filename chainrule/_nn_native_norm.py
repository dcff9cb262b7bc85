"""PyTorch's torch-level normalisation and dropout kernels: ``native_layer_norm``,
``native_batch_norm``, ``native_group_norm``, ``native_dropout``, ``native_norm`` and the
kernels ``nn.SyncBatchNorm`` is built from (``batch_norm_stats``, ``batch_norm_elemt``,
``batch_norm_gather_stats[_with_counts]``, ``batch_norm_backward_reduce``,
``batch_norm_backward_elemt``, ``batch_norm_update_stats``).

The normalised outputs are those of ``chainrule.nn.functional`` (same values and gradients);
the statistics returned beside them are computed here with chainrule ops, differentiable where
PyTorch's are (``native_group_norm``'s mean and rstd) and detached where they are not.

Differs from PyTorch: the sync-BN kernels (all but ``batch_norm_update_stats``) exist in
PyTorch only for CUDA tensors (CPU builds raise NotImplementedError), and ``native_norm`` only
for sparse ones; chainrule runs them on any tensor, with PyTorch's CUDA (respectively sparse)
semantics: the stats are not differentiable, and ``native_norm`` reduces over all elements.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule._tensor import Tensor
from chainrule.backends import backend_of

__all__ = [
    "native_layer_norm",
    "native_batch_norm",
    "native_group_norm",
    "native_dropout",
    "native_norm",
    "batch_norm_stats",
    "batch_norm_elemt",
    "batch_norm_gather_stats",
    "batch_norm_gather_stats_with_counts",
    "batch_norm_backward_reduce",
    "batch_norm_backward_elemt",
    "batch_norm_update_stats",
]


def _host(t: Tensor) -> np.ndarray:
    """``t``'s values on the host (a copy from a GPU): index structure is worked out there."""
    return backend_of(t._data).to_host(t._data)


def _F() -> Any:  # noqa: N802
    from chainrule.nn import functional

    return functional


def _ops() -> Any:
    from chainrule import ops

    return ops


def _no_grad() -> Any:
    from chainrule.autograd.grad_mode import no_grad

    return no_grad()


def _moments(x: Tensor, dims: tuple[int, ...], eps: float, keepdim: bool) -> tuple[Any, Any]:
    """Mean and 1 / sqrt(biased variance + eps) over ``dims``, recorded when grad is on."""
    ops = _ops()
    mean = ops.mean(x, dims, keepdim=True)
    xc = x - mean
    rstd = (ops.mean(xc * xc, dims, keepdim=keepdim) + eps) ** -0.5
    return (mean if keepdim else ops.squeeze(mean, dims)), rstd


def native_layer_norm(
    input: Tensor, normalized_shape: Any, weight: Tensor | None, bias: Tensor | None, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    """``(F.layer_norm(...), mean, rstd)``: mean and rstd = 1/sqrt(var + eps) over the trailing
    ``normalized_shape`` dims, shaped input.shape[:-k] + (1,) * k (not differentiable)."""
    out = _F().layer_norm(input, list(normalized_shape), weight, bias, eps)
    k = len(normalized_shape)
    with _no_grad():
        mean, rstd = _moments(input, tuple(range(input.ndim - k, input.ndim)), eps, True)
    return out, mean, rstd


def _empty(like: Tensor) -> Tensor:
    from chainrule import _creation

    return _creation.empty((0,), dtype=like.dtype, device=like.device)


def native_batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    """``(F.batch_norm(...), save_mean, save_invstd)``: in training the batch's per-channel
    mean and 1/sqrt(biased var + eps) (the running stats are updated as ``F.batch_norm``
    does); in evaluation both are empty. Not differentiable."""
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        return out, _empty(input), _empty(input)
    dims = tuple(i for i in range(input.ndim) if i != 1)
    with _no_grad():
        mean, invstd = _moments(input, dims, eps, False)
    return out, mean, invstd


def native_group_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    N: int,  # noqa: N803 - PyTorch's argument names
    C: int,  # noqa: N803
    HxW: int,  # noqa: N803
    group: int,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    """``(F.group_norm(...), mean, rstd)``, mean and rstd (N, group) over each group's
    channels and positions; all three outputs are differentiable, as PyTorch's."""
    if input.numel() != N * C * HxW:
        raise RuntimeError(
            "Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)"
        )
    out = _F().group_norm(input, group, weight, bias, eps)
    x = _ops().reshape(input, (N, group, -1))
    mean, rstd = _moments(x, (2,), eps, False)
    return out, mean, rstd


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """``(out, mask)``: with ``train`` (None counts as True) mask ~ Bernoulli(1 - p) (bool) and
    out = input * mask / (1 - p) (zeros for p = 1); otherwise ``(input.clone(), all True)``.
    Gradient: g * mask / (1 - p). The mask comes from chainrule's default generator, not
    PyTorch's stream."""
    from chainrule import _creation
    from chainrule.nn._functional._common import _const, _default_rng, _on_device

    if train is None or train:
        if not 0.0 <= p <= 1.0:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1.0 - p}")
        keep = _default_rng(input).random(tuple(input.shape)) >= p
        scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
        factor = keep.astype(np.float64) * scale
        return input * _const(factor, input), _on_device(keep, input)
    mask = _creation.ones(tuple(input.shape), dtype=np.bool_, device=input.device)
    return input.clone(), mask


def native_norm(
    input: Tensor,
    p: Any = 2,
    dim: Any = None,
    keepdim: bool = False,
    dtype: Any = None,
) -> Tensor:
    """The p-norm of all of ``input``'s elements, (sum |x|^p)^(1/p) (max |x| for inf), as
    PyTorch's sparse kernel: ``dim`` may only be empty or every dim, ``keepdim`` False and
    ``dtype`` None. Gradient: that of ``linalg.vector_norm``."""
    from chainrule import linalg

    full = list(range(input.ndim))
    if dim is not None:
        dims = sorted(d % max(input.ndim, 1) for d in ([dim] if isinstance(dim, int) else dim))
        if dims and dims != full:
            raise RuntimeError(
                "norm_sparse currently only supports full reductions, so 'dim' must either be "
                "empty or contain all dimensions of the input"
            )
    if keepdim:
        raise RuntimeError("norm_sparse currently does not support keepdim=True")
    if dtype is not None:
        raise RuntimeError("norm_sparse currently does not support 'dtype' argument")
    return linalg.vector_norm(input, 2 if p is None else p)


def _channel_dims(x: Tensor) -> tuple[int, ...]:
    return tuple(i for i in range(x.ndim) if i != 1)


def _bcast(t: Tensor, x: Tensor) -> Tensor:
    """A per-channel (C,) tensor shaped to broadcast against ``x`` (N, C, *)."""
    return _ops().reshape(t, (1, -1) + (1,) * (x.ndim - 2))


def batch_norm_stats(input: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """Per-channel ``(mean, invstd)`` of this process's batch, invstd = 1/sqrt(biased var +
    eps): the first step of SyncBatchNorm."""
    with _no_grad():
        return _moments(input, _channel_dims(input), eps, False)


def batch_norm_elemt(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    mean: Tensor,
    invstd: Tensor,
    eps: float,
) -> Tensor:
    """(x - mean) * invstd * weight + bias per channel (``eps`` is unused, as in PyTorch)."""
    with _no_grad():
        y = (input - _bcast(mean, input)) * _bcast(invstd, input)
        if weight is not None:
            y = y * _bcast(weight, input)
        if bias is not None:
            y = y + _bcast(bias, input)
    return y


def batch_norm_gather_stats_with_counts(
    input: Tensor,
    mean: Tensor,
    invstd: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    momentum: float,
    eps: float,
    counts: Tensor,
) -> tuple[Tensor, Tensor]:
    """Combine per-process stats (``mean``, ``invstd`` (W, C), ``counts`` (W,)) into the global
    ``(mean, invstd)``: with n = sum counts, mean = sum c_i m_i / n and
    var = sum c_i (1/invstd_i^2 - eps + (m_i - mean)^2) / n; invstd = 1/sqrt(var + eps). The
    running stats move by ``momentum`` towards mean and the unbiased var * n / (n - 1)."""
    ops = _ops()
    with _no_grad():
        c = ops.reshape(counts.to(mean.dtype), (-1, 1))
        n = ops.sum(c)
        g_mean = ops.sum(c * mean, 0) / n
        var_i = invstd**-2 - eps
        dev = mean - g_mean
        var = ops.sum(c * (var_i + dev * dev), 0) / n
        g_invstd = (var + eps) ** -0.5
        m = float(momentum)
        if running_mean is not None:
            running_mean.mul_(1 - m).add_(g_mean.to(running_mean.dtype) * m)
        if running_var is not None:
            unbiased = var * (n / (n - 1))
            running_var.mul_(1 - m).add_(unbiased.to(running_var.dtype) * m)
    return g_mean, g_invstd


def batch_norm_gather_stats(
    input: Tensor,
    mean: Tensor,
    invstd: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    momentum: float,
    eps: float,
    count: int,
) -> tuple[Tensor, Tensor]:
    """:func:`batch_norm_gather_stats_with_counts` with every process counting ``count``."""
    from chainrule import _creation

    counts = _creation.full((mean.shape[0],), float(count), dtype=mean.dtype, device=mean.device)
    return batch_norm_gather_stats_with_counts(
        input, mean, invstd, running_mean, running_var, momentum, eps, counts
    )


def batch_norm_backward_reduce(
    grad_out: Tensor,
    input: Tensor,
    mean: Tensor,
    invstd: Tensor,
    weight: Tensor | None,
    input_g: bool,
    weight_g: bool,
    bias_g: bool,
) -> tuple[Tensor | None, Tensor | None, Tensor | None, Tensor | None]:
    """Per-channel sums for the backward of SyncBatchNorm: ``(sum_dy, sum_dy_xmu,
    grad_weight, grad_bias)`` with sum_dy = sum g, sum_dy_xmu = sum g (x - mean),
    grad_weight = sum_dy_xmu * invstd and grad_bias = sum_dy; the first two only with
    ``input_g``, the others only with their flags (None otherwise)."""
    ops = _ops()
    dims = _channel_dims(input)
    with _no_grad():
        sum_dy = ops.sum(grad_out, dims)
        sum_dy_xmu = ops.sum(grad_out * (input - _bcast(mean, input)), dims)
        grad_weight = sum_dy_xmu * invstd if weight_g else None
        grad_bias = sum_dy if bias_g else None
    if not input_g:
        return None, None, grad_weight, grad_bias
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(
    grad_out: Tensor,
    input: Tensor,
    mean: Tensor,
    invstd: Tensor,
    weight: Tensor | None,
    sum_dy: Tensor,
    sum_dy_xmu: Tensor,
    count: Tensor,
) -> Tensor:
    """The input's gradient from the all-reduced sums, with n = sum(count):
    (g - sum_dy / n - (x - mean) invstd^2 sum_dy_xmu / n) * invstd * weight."""
    ops = _ops()
    with _no_grad():
        n = float(_host(ops.sum(count)))
        inv = _bcast(invstd, input)
        xmu = input - _bcast(mean, input)
        gi = grad_out - _bcast(sum_dy, input) / n - xmu * inv * inv * _bcast(sum_dy_xmu, input) / n
        gi = gi * inv
        if weight is not None:
            gi = gi * _bcast(weight, input)
    return gi


def batch_norm_update_stats(
    input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, momentum: float
) -> tuple[Tensor, Tensor]:
    """The batch's per-channel ``(mean, biased var)``; the running stats, when given, move by
    ``momentum`` towards the mean and the unbiased variance."""
    ops = _ops()
    dims = _channel_dims(input)
    with _no_grad():
        mean = ops.mean(input, dims)
        xc = input - _bcast(mean, input)
        var = ops.mean(xc * xc, dims)
        n = input.numel() // max(input.shape[1], 1)
        m = float(momentum)
        if running_mean is not None:
            running_mean.mul_(1 - m).add_(mean * m)
        if running_var is not None:
            running_var.mul_(1 - m).add_(var * (m * n / max(n - 1, 1)))
    return mean, var
