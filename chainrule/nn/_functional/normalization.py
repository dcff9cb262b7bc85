"""Normalization: batch_norm, layer_norm, group_norm, instance_norm, local_response_norm and
normalize (division by a p-norm)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.nn._functional._common import (
    _data,
    _legacy,
    _not_implemented_for_ints,
    _size,
)
from chainrule.nn._functional._device import on_device
from chainrule.ops import normalization as _norm_ops
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._conv_args import arg_type as _arg_type
from chainrule.ops.composite_node import composite as _composite_of
from chainrule.ops.reduction.norms import vector_norm_impl

__all__ = [
    "batch_norm",
    "layer_norm",
    "group_norm",
    "normalize",
    "instance_norm",
    "local_response_norm",
]


def _normalize_over(x: Tensor, dims: tuple[int, ...], eps: float) -> tuple[Tensor, Tensor]:
    mean = _ops.mean(x, dims, keepdim=True)
    xc = x - mean
    var = _ops.mean(xc * xc, dims, keepdim=True)
    return xc * (var + eps) ** -0.5, var


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """(x - mean) / sqrt(var + eps) * w + b per channel (dim 1). Training uses the batch's
    biased variance and updates the running stats in place (unbiased variance, ``momentum``);
    evaluation uses the running stats."""
    _not_implemented_for_ints("batch_norm", input)
    if momentum is not None and not isinstance(momentum, numbers.Real):
        raise TypeError(
            "batch_norm(): argument 'momentum' (position 7) must be float, not "
            f"{_arg_type(momentum)}"
        )
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    for name, t in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if _kinds.is_complex(input._data) and input._data.size:
        # PyTorch's kernel refuses complex input (an empty one it computes), after its check
        # of the batch size in training
        if not (training and input._data.size // max(c, 1) == 1):
            _refuse_complex("batch_norm", input)
    _check_norm_dtypes(input, running_mean, running_var, weight, bias)
    shape = [1] * input.ndim
    if input.ndim > 1:
        shape[1] = c
    dims = tuple(i for i in range(input.ndim) if i != 1)
    if training:
        count = input._data.size // max(c, 1)
        if count == 0:
            # An empty batch: an empty output (torch); the running stats are left alone.
            return _affine(input * 0.0, weight, bias, shape)
        if count == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input "
                f"size {_size(input)}"
            )
        if input.ndim > 1 and all(t is None or t.ndim == 1 for t in (weight, bias)):
            # One fused op: statistics, normalisation and the affine map (ops/normalization.py).
            y, bmean, bvar = _norm_ops.batch_norm_train(input, weight, bias, eps)
            weight = bias = None
        else:
            y, var = _normalize_over(input, dims, eps)
            bmean, bvar = None, var
        with _grad_mode.no_grad(), on_device(input):
            m = float(momentum) if momentum is not None else 0.0
            if running_mean is not None:
                bm = np.mean(_data(input), axis=dims) if bmean is None else _data(bmean)
                running_mean._data[...] = (1 - m) * _data(running_mean) + m * bm
                running_mean._bump_version()
            if running_var is not None:
                bv = np.reshape(_data(bvar), (c,)) * (count / (count - 1))
                running_var._data[...] = (1 - m) * _data(running_var) + m * bv
                running_var._bump_version()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        if input.ndim > 1 and all(t is None or t.ndim == 1 for t in (weight, bias)):
            # One op, NativeBatchNormBackward0 as in PyTorch (ops/normalization.py).
            with on_device(input):
                rm = np.reshape(_data(running_mean), shape)
                rv = np.reshape(_data(running_var), shape)
                invstd = (1 / np.sqrt(rv + eps)).astype(rv.dtype, copy=False)
                rm = rm.copy()
            return _norm_ops.batch_norm_eval(input, weight, bias, rm, invstd)
        rm = _ops.reshape(running_mean, shape)
        rv = _ops.reshape(running_var, shape)
        y = (input - rm) * (rv + eps) ** -0.5
    return _affine(y, weight, bias, shape)


def _check_norm_dtypes(input: Tensor, *params: Tensor | None) -> None:
    """Normalisation parameters share the input's dtype: no silent promotion (torch's CPU
    texts: a float32 input names the parameter's expected type)."""
    if any(p is not None and p.dtype != input.dtype for p in params):
        if input._data.dtype == np.float32:
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _refuse_complex(kernel: str, input: Tensor) -> None:
    """PyTorch's error where its normalisation kernel has no complex version."""
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy(input._data.dtype)}'")


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None, shape: Any) -> Tensor:
    """``y * weight + bias`` after a normalisation, each optional, reshaped to ``shape`` (None:
    they already broadcast)."""
    if weight is not None:
        y = y * (weight if shape is None else _ops.reshape(weight, shape))
    if bias is not None:
        y = y + (bias if shape is None else _ops.reshape(bias, shape))
    return y


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims (biased variance), then w, b."""
    ns_ = (
        (normalized_shape,)
        if isinstance(normalized_shape, numbers.Integral)
        else tuple(normalized_shape)
    )
    k = len(ns_)
    if tuple(input.shape[input.ndim - k :]) != tuple(int(s) for s in ns_) or k > input.ndim:
        raise RuntimeError(
            f"Given normalized_shape={list(ns_)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in ns_)}], but got input of size"
            f"{list(input.shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != tuple(int(s) for s in ns_):
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got "
                f"{name} of shape {list(t.shape)} and normalized_shape = "
                f"{list(ns_)}"
            )
    _not_implemented_for_ints("LayerNormKernelImpl", input)
    _check_norm_dtypes(input, weight, bias)
    if _kinds.is_complex(input._data):
        _refuse_complex("LayerNormKernelImpl", input)
    return _norm_ops.layer_norm(input, weight, bias, k, eps)  # NativeLayerNormBackward0


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """See ``_group_norm``; recorded as PyTorch\'s one ``NativeGroupNormBackward0``
    (Note [composite nodes] in chainrule/ops/composite_node.py)."""
    inputs = tuple(t for t in (input, weight, bias) if t is not None)
    return _composite_of(
        "NativeGroupNormBackward0",
        lambda *ts: _group_norm(**_with_affine(ts, weight, bias), eps=eps, num_groups=num_groups),
        inputs,
        # The bias enters additively: PyTorch's kernel does not save it.
        reads="affine" if bias is not None and len(inputs) > 1 else None,
    )


def _with_affine(ts: tuple[Tensor, ...], weight: Any, bias: Any) -> dict[str, Any]:
    """group_norm's (input, weight, bias) back from the Tensors given (None ones left out)."""
    it = iter(ts)
    x = next(it)
    w = next(it) if weight is not None else None
    b = next(it) if bias is not None else None
    return {"input": x, "weight": w, "bias": b}


def _group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over (channels of a group, spatial dims) per sample, then per-channel w, b."""
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by "
            f"num_groups, but got input of shape {list(input.shape)} and "
            f"num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of "
                f"channels in input, but got {name} of shape {list(t.shape)} and "
                f"input of shape {list(input.shape)}"
            )
    _not_implemented_for_ints("GroupNormKernelImpl", input)
    _check_norm_dtypes(input, weight, bias)
    if _kinds.is_complex(input._data):
        _refuse_complex("GroupNormKernelImpl", input)
    x = _ops.reshape(input, (n, num_groups, int(np.prod(input.shape[1:])) // num_groups))
    y, _ = _normalize_over(x, (2,), eps)
    y = _ops.reshape(y, tuple(input.shape))
    shape = [1] * input.ndim
    shape[1] = c
    return _affine(y, weight, bias, shape)


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``, recorded as PyTorch's DivBackward0 over
    ExpandBackward0 over ClampMinBackward0 over LinalgVectorNormBackward0."""
    d = wrap_dim(dim, input.ndim)
    norm = vector_norm_impl(input, p, d, True)
    return input / _ops.expand(_ops.clamp_min(norm, eps), tuple(input.shape))


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each (sample, channel) over its spatial dims:
    y = (x - mean) / sqrt(var + eps) * w[c] + b[c] (biased variance). With ``use_input_stats``
    the running stats, if given, move towards the batch mean of the per-instance stats
    (unbiased variance); otherwise they normalize."""
    if input.ndim < 3:
        raise ValueError(f"Expected 2D+ input for instance_norm, got {input.ndim}D")
    n, c = input.shape[:2]
    count = int(np.prod(input.shape[2:]))
    if use_input_stats and count == 1:  # (no spatial elements: PyTorch computes)
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {_size(input)}"
        )
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    # PyTorch's graph: the (N, C, *) input viewed as one sample of N*C channels, the affine
    # parameters and running stats repeated N times, one batch_norm (NativeBatchNormBackward0),
    # the result viewed back; the running stats then take the mean of their N copies.
    x = _ops.reshape(input, (1, n * c) + tuple(input.shape[2:]))
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    y = batch_norm(x, rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats:
        with _grad_mode.no_grad():
            for run, rep in ((running_mean, rm), (running_var, rv)):
                if run is not None and rep is not None:
                    run.copy_(_ops.mean(_ops.reshape(rep, (n, c)), 0))
    return _ops.reshape(y, tuple(input.shape))


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Normalize over neighbouring channels:
    y[c] = x[c] / (k + alpha / size * sum_{c' in [c - size//2, c + (size-1)//2]} x[c']^2)^beta
    (zeros beyond the channel range)."""
    if input.ndim < 3:
        raise ValueError(
            # (PyTorch's text has a source line's indentation inside it)
            "Expected 3D or higher dimensionality"
            + " " * 26
            + f"input (got {input.ndim} dimensions)"
        )
    if input.numel() == 0:
        return input
    if _kinds.is_complex(input._data):  # PyTorch's average pooling of the squares refuses it
        _refuse_complex("avg_pool2d" if input.ndim == 3 else "avg_pool3d_out_frame", input)
    c = input.shape[1]
    sq = input * input
    x = _ops.movedim(sq, 1, -1)
    x = _ops.pad(x, [size // 2, (size - 1) // 2])
    acc = None
    for j in range(size):  # one slice per window offset, never per element
        part = x[..., j : j + c]
        acc = part if acc is None else acc + part
    div = _ops.movedim(acc, -1, 1) * (float(alpha) / size) + float(k)
    return input / div ** float(beta)
