"""``chainrule.nn.functional``: the maths of neural-network layers, composed from ops.

Primitives with their own VJPs (softmax, log_softmax, the convolutions, gather/scatter along a
dim) live in ``chainrule/ops/nn.py`` and ``chainrule/ops/conv.py``. Everything else here is a
composition of registered ops (so every function has higher derivatives) plus constant arrays
(class weights, pooling and interpolation matrices, dropout masks).

Pooling by averaging and interpolation are linear and separable: they are two matmuls with
constant (out, in) matrices, one per spatial axis. Max pooling gathers the argmax of each
window (``chainrule.ops.conv.max_pool2d_with_indices``).

The activations and shape helpers at the end are thin wrappers that look up
``chainrule.ops.<name>`` at call time.

Long because it mirrors torch.nn.functional's surface: each function is short, there are many.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Sequence

import numpy as np

from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor, _type_name
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.ops import conv as _conv
from chainrule.ops import nn as _nnops
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._conv_args import arg_type as _arg_type
from chainrule.ops.linalg import check_addmm_dtype

__all__ = [
    "softmax", "log_softmax", "softmin", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "linear", "bilinear", "dropout", "dropout1d", "dropout2d", "dropout3d", "conv1d", "conv2d", "conv_transpose2d",
    "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "pixel_shuffle",
    "pixel_unshuffle", "interpolate", "batch_norm", "layer_norm", "group_norm", "embedding",
    "normalize", "cosine_similarity",
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "hardtanh",
    "hardsigmoid", "hardswish", "softplus", "logsigmoid", "sigmoid", "tanh", "pad", "one_hot",
    "prelu",
]


def _const(a: Any, like: Tensor) -> Tensor:
    """A constant tensor (no grad) of ``like``'s dtype."""
    return _new_tensor(np.asarray(a, dtype=like._data.dtype))


def _data(t: Any) -> np.ndarray:
    return np.asarray(t._data)


def _tensor_args(fn: str, *args: tuple[str, int, Any, bool]) -> None:
    """torch's TypeError for a non-Tensor argument (a list or a NumPy array passed by mistake),
    instead of an AttributeError from deep inside; ``(name, position, value, optional)``."""
    for name, pos, x, optional in args:
        if not isinstance(x, Tensor) and not (optional and x is None):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{_arg_type(x)}")


def _not_implemented_for_ints(kernel: str, input: Tensor) -> None:
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_legacy(input._data.dtype)}'")


# Softmax family -------------------------------------------------------------------------------


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """exp(x) / sum exp(x) along ``dim`` (stable). VJP: s (g - sum(g s))."""
    if dim is None:
        dim = _nnops.implicit_dim("softmax", input.ndim)
    return _nnops.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """x - logsumexp(x) along ``dim``. VJP: g - softmax(x) sum(g)."""
    if dim is None:
        dim = _nnops.implicit_dim("log_softmax", input.ndim)
    return _nnops.log_softmax(input, dim, dtype=dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """softmax(-x) along ``dim``."""
    if dim is None:
        dim = _nnops.implicit_dim("softmin", input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return _nnops.softmax(-input, dim)


# Losses ---------------------------------------------------------------------------------------


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return _ops.mean(loss)
    if reduction == "sum":
        return _ops.sum(loss)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_same_size(input: Tensor, target: Tensor, name: str) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.", UserWarning, stacklevel=3)


def _size(t: Tensor) -> str:
    return "torch.Size([" + ", ".join(str(s) for s in t.shape) + "])"


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood: loss_i = -w[t_i] x[i, t_i] (0 where t_i == ignore_index).

    ``mean`` divides by the sum of the weights of the non-ignored targets (NaN if none), as
    PyTorch. Input (C), (N, C) or (N, C, d1, ...); the pick is a ``gather_along`` the class dim,
    whose VJP scatters g back. The class weights are constants (PyTorch gives them no grad).
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensor_args("nll_loss_nd", ("input", 1, input, False), ("target", 2, target, False),
                 ("weight", 3, weight, True))
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    cdim = 0 if input.ndim == 1 else 1
    tb = target.shape[0] if target.ndim else 0
    if input.ndim >= 2 and tb != input.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({tb}).")
    c = input.shape[cdim]
    t = _data(target)
    expected = tuple(input.shape[:cdim]) + tuple(input.shape[cdim + 1:])
    if input.ndim == 1 and t.ndim == 1 and t.shape != (1,):
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                         f"{t.shape[0]}")
    if input.ndim == 4 and t.ndim != 3:  # torch's 2-d (spatial) kernel has its own texts
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {t.ndim}")
    if input.ndim == 4 and t.shape != expected:
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                           f"{list(t.shape)}")
    if input.ndim == 1 and t.ndim == 1:
        t = t.reshape(())
    if t.shape != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(t.shape)}"
                           if input.ndim > 2 else
                           "0D or 1D target tensor expected, multi-target not supported")
    if t.dtype not in (np.int64, np.uint8):  # torch takes no other integer width
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{_legacy(t.dtype)}")
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
    if weight is not None and tuple(weight.shape) != (c,):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    safe = np.where(keep, t, 0).astype(np.int64)
    wt = _data(weight)[safe] if weight is not None else np.ones(t.shape, input._data.dtype)
    wt = np.where(keep, wt, 0).astype(input._data.dtype)
    picked = _nnops.gather_along(input, cdim, np.expand_dims(safe, cdim))
    picked = _ops.squeeze(picked, cdim)
    loss = -(picked * _new_tensor(wt))
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _ops.sum(loss)
    if reduction == "mean":
        total = wt.sum(dtype=np.float64)
        if total == 0:
            return _ops.sum(loss) * float("nan")
        return _ops.sum(loss) / float(total) if input._data.dtype == np.float64 else \
            _ops.sum(loss) / _const(wt.sum(), input)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy(d: Any) -> str:
    from chainrule.ops._registry import _legacy_name

    return _legacy_name(d)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim, then nll_loss (class-index targets) or
    -sum(target * logp * w) (class-probability targets), with PyTorch's label smoothing:
    (1 - eps) * nll + eps / C * smooth, smooth = -sum_c w_c logp_c (normalized like nll)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _tensor_args("cross_entropy_loss", ("input", 1, input, False), ("target", 2, target, False),
                 ("weight", 3, weight, True))
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim == 0 and target._data.dtype.kind != "f":
        # torch takes a 0-d input for a class-probability one; its text.
        raise RuntimeError("Expected floating point type for target with class probabilities, "
                           f"got {_legacy(target._data.dtype)}")
    cdim = 0 if input.ndim == 1 else 1
    c = input.shape[cdim]
    logp = _nnops.log_softmax(input, cdim)
    wshape = [1] * input.ndim
    wshape[cdim] = c
    if target._data.dtype.kind == "f" and tuple(target.shape) == tuple(input.shape):
        if weight is not None and tuple(weight.shape) != (c,):
            raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                               f"{c} classes or no classes but got weight tensor of shape: "
                               f"{list(weight.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * _ops.reshape(weight, wshape)
        if reduction == "none":
            return -_ops.sum(prod, cdim)
        if reduction == "sum":
            return -_ops.sum(prod)
        if reduction == "mean":
            n = input._data.size // c if c else 0
            if n == 0:
                return -_ops.sum(prod) * float("nan")
            return -_ops.sum(prod) / n
        raise ValueError(f"{reduction} is not a valid value for reduction")
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
        ret = _ops.sum(smooth) / _const(denom, input) if denom else \
            _ops.sum(smooth) * float("nan")
    return nll * (1 - label_smoothing) + ret * (label_smoothing / c)


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """(x - t)**2, reduced."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target, "mse_loss")
    if input._data.dtype.kind not in "fc" and target._data.dtype.kind not in "fc":
        _not_implemented_for_ints("mse_cpu", input)
    d = input - target
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """|x - t|, reduced (subgradient 0 at x == t)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target, "l1_loss")
    loss = _ops.abs(input - target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (plain L1 for beta == 0)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target, "smooth_l1_loss")
    if input._data.dtype.kind not in "fc" and target._data.dtype.kind not in "fc":
        _not_implemented_for_ints("smooth_l1_cpu", input)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = input - target
    ad = _ops.abs(d)
    if beta == 0:
        return _reduce(ad, reduction)
    loss = _ops.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    _check_same_size(input, target, "huber_loss")
    if input._data.dtype.kind not in "fc" and target._data.dtype.kind not in "fc":
        _not_implemented_for_ints("huber_cpu", input)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = input - target
    ad = _ops.abs(d)
    loss = _ops.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """-w (t log x + (1 - t) log(1 - x)), each log clamped to >= -100 as PyTorch.

    Differs from torch: at x exactly 0 or 1 the clamped log has gradient 0 here, where PyTorch
    divides by max(x (1 - x), 1e-12).
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}) is deprecated. Please ensure they have the same size.")
    _weight_no_grad("binary_cross_entropy", weight)
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_legacy(target._data.dtype)} but expected "
                           f"{_legacy(input._data.dtype)}")
    xa = _data(input)
    if np.any((xa < 0) | (xa > 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = -(target * _clamped_log(input) + (1 - target) * _clamped_log(1 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _weight_no_grad(name: str, weight: Any, arg: str = "weight") -> None:
    if weight is not None and weight.requires_grad and _grad_mode.is_grad_enabled():
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to "
                           f"argument '{arg}'. This input cannot have requires_grad True.")


def _clamped_log(x: Tensor) -> Tensor:
    pos = x > 0
    lx = _ops.log(_ops.where(pos, x, 1.0))
    return _ops.where(pos & (lx >= -100), lx, -100.0)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """(1 - t) x + (1 + (pw - 1) t) softplus(-x), the stable form of
    -w [pw t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))]."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size(target)}) must be the same as input size "
                         f"({_size(input)})")
    _weight_no_grad("binary_cross_entropy_with_logits", weight)
    _weight_no_grad("binary_cross_entropy_with_logits", pos_weight, "pos_weight")
    sp = _nnops.neg_log_sigmoid(input)
    if pos_weight is not None:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """target (log target - input) pointwise (0 where target == 0), or exp(t) (t - input) with
    ``log_target``; 'batchmean' divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.", UserWarning, stacklevel=2)
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


# Linear layers and dropout -------------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x W^T + b. An input with more than two dims is flattened to (-1, in_features) around
    one matrix product, as PyTorch does: the weight's gradient is then one GEMM, not a batch
    of GEMMs summed over the batch."""
    _tensor_args("linear", ("input", 1, input, False), ("weight", 2, weight, False),
                 ("bias", 3, bias, True))
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {weight.ndim}D")
    if bias is not None and weight.ndim == 2:
        # torch computes this as addmm(b, x, W^T): its dtype rule and texts.
        check_addmm_dtype(bias, input, weight)
    if input.ndim > 2 and weight.ndim == 2 and input.shape[-1] == weight.shape[1]:
        lead = tuple(input.shape[:-1])
        out = _ops.matmul(_ops.reshape(input, (-1, input.shape[-1])), _ops.t(weight))
        if bias is not None:
            out = out + bias
        return _ops.reshape(out, lead + (weight.shape[0],))  # grad_fn ViewBackward0, as torch
    out = _ops.matmul(input, _ops.t(weight) if weight.ndim == 2 else weight)
    return out + bias if bias is not None else out


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """y_k = x1^T W_k x2 + b_k: x1 against W reshaped to (in1, out*in2), then a product with
    x2 summed over in2."""
    o, i1, i2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = _ops.reshape(input1, (-1, i1))
    x2 = _ops.reshape(input2, (-1, i2))
    wf = _ops.reshape(_ops.permute(weight, (1, 0, 2)), (i1, o * i2))
    t = _ops.reshape(_ops.matmul(x1, wf), (-1, o, i2))
    out = _ops.sum(t * _ops.unsqueeze(x2, 1), -1)
    if bias is not None:
        out = out + bias
    return _ops.reshape(out, lead + (o,))


def _default_rng() -> np.random.Generator:
    from chainrule._random import rng_of

    return rng_of(None)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
            ) -> Tensor:
    """Zero each element with probability p, scale the rest by 1 / (1 - p) (identity when not
    training). The mask comes from the default generator (``manual_seed`` reproduces it).
    Differs from torch: the random stream, hence the mask, is not PyTorch's."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        mask = np.zeros(input.shape, input._data.dtype)
    else:
        keep = _default_rng().random(input.shape) >= p
        mask = keep.astype(input._data.dtype) * np.asarray(1.0 / (1.0 - p), input._data.dtype)
    if inplace:
        return input.mul_(_new_tensor(mask))
    return input * _new_tensor(mask)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """Zero whole channels: one draw per (n, c), broadcast over the trailing dims."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    dt = input._data.dtype
    if p == 1.0:
        mask = np.zeros(shape, dt)
    else:
        mask = (_default_rng().random(shape) >= p).astype(dt) * np.asarray(1.0 / (1.0 - p), dt)
    if inplace:
        return input.mul_(_new_tensor(mask))
    return input * _new_tensor(mask)


def _unbatched_feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                               batched: bool) -> Tensor:
    if batched or not training or p == 0.0:
        return _feature_dropout(input, p, training, inplace)
    out = _feature_dropout(_ops.unsqueeze(input, 0), p, training, False)
    out = _ops.squeeze(out, 0)
    if inplace and out is not input:
        input.copy_(out)
        return input
    return out


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Channel-wise dropout of (N, C, L) or (C, L) inputs."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, "
            "a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _unbatched_feature_dropout(input, p, training, inplace, input.ndim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Channel-wise dropout of (N, C, H, W) inputs (a 3-D input is taken as (N, C, L), with
    PyTorch's warning)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", UserWarning, stacklevel=2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning, stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W) inputs."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).", UserWarning, stacklevel=2)
    return _unbatched_feature_dropout(input, p, training, inplace, input.ndim == 5)


# Convolution and pooling ---------------------------------------------------------------------

conv1d = _conv.conv1d
conv2d = _conv.conv2d


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """2-d transposed convolution (see chainrule.ops.conv)."""
    return _conv.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                  dilation)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over windows; with ``return_indices`` also the flat (h * W + w) argmax indices.
    VJP: g scattered to each window's argmax."""
    _tensor_args("max_pool2d", ("input", 1, input, False))
    out, idx = _conv.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                             ceil_mode)
    return (out, idx) if return_indices else out


def _pair(v: Any) -> tuple[int, int]:
    return _conv._pair(v)


def _sep_apply(x: Tensor, mats: Sequence[np.ndarray | None]) -> Tensor:
    """Apply one constant (out, in) matrix per trailing spatial axis (None: identity)."""
    nd = len(mats)
    for i, m in enumerate(mats):
        if m is None:
            continue
        axis = x.ndim - nd + i
        if axis == x.ndim - 1:
            x = _ops.matmul(x, _const(m.T, x))
        else:
            # (..., in, rest) -> contract the axis by moving it last.
            x = _ops.movedim(x, axis, -1)
            x = _ops.matmul(x, _const(m.T, x))
            x = _ops.movedim(x, -1, axis)
    return x


def _avg_matrix(n: int, k: int, s: int, p: int, ceil_mode: bool, count_include_pad: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """0/1 window matrix (out, n) and the per-output divisors with and without padding."""
    o = _conv.pool_out_size(n, k, s, p, 1, ceil_mode)
    m = np.zeros((o, n))
    inc = np.zeros(o)
    real = np.zeros(o)
    for i in range(o):  # one row per output position along one axis, not per pixel
        start = i * s - p
        end = min(start + k, n + p)
        inc[i] = end - start
        a, b = max(start, 0), min(end, n)
        m[i, a:b] = 1.0
        real[i] = b - a
    return m, inc, real


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Mean over windows: the window sums are a conv2d of each (n, c) plane with a ones kernel
    (zero padding, extra zeros on the right for ``ceil_mode``), then scaled by 1 / divisor."""
    _tensor_args("avg_pool2d", ("input", 1, input, False))
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    k = _conv.pool_pair("avg_pool2d", "kernel_size", kernel_size, 2)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else _conv.pool_pair("avg_pool2d", "stride", stride, 3)
    p = _conv.pool_pair("avg_pool2d", "padding", padding, 4)
    _conv.check_pool2d(tuple(input.shape), k, s, p, (1, 1), ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    h, w = input.shape[-2:]
    mh, inch, realh = _avg_matrix(h, k[0], s[0], p[0], ceil_mode, count_include_pad)
    mw, incw, realw = _avg_matrix(w, k[1], s[1], p[1], ceil_mode, count_include_pad)
    if divisor_override is not None:
        div = np.full((len(mh), len(mw)), float(divisor_override))
    elif count_include_pad:
        div = np.outer(inch, incw)
    else:
        div = np.outer(realh, realw)
    oh, ow = len(mh), len(mw)
    lead = tuple(input.shape[:-2])
    planes = _ops.reshape(input, (int(np.prod(lead)), 1, h, w))  # not -1: N may be 0
    extra = [max(0, (o - 1) * st + kk - (n + 2 * pp))
             for o, st, kk, n, pp in ((oh, s[0], k[0], h, p[0]), (ow, s[1], k[1], w, p[1]))]
    ones = _const(np.ones((1, 1, k[0], k[1])), input)
    sums = _ops.apply_op(_conv._conv2d, (planes, ones, None), {
        "stride": s, "padding": ((p[0], p[0] + extra[0]), (p[1], p[1] + extra[1])),
        "dilation": (1, 1), "groups": 1})
    out = _ops.reshape(sums, lead + (oh, ow))
    return out * _const(1.0 / div, input)


def _adaptive_bounds(n: int, o: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)


def _out_pair(output_size: Any, h: int, w: int) -> tuple[int, int]:
    if isinstance(output_size, (list, tuple)):
        a, b = output_size
        return (h if a is None else int(a)), (w if b is None else int(b))
    return int(output_size), int(output_size)


def _check_adaptive(fn: str, input: Tensor, colon: str) -> None:
    _tensor_args(fn, ("input", 1, input, False))
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{fn}(): Expected 3D or 4D tensor, but got{colon} {list(input.shape)}")
    for d in range(input.ndim - 3, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Mean over the windows [floor(i n / o), ceil((i + 1) n / o)) per axis (separable)."""
    _check_adaptive("adaptive_avg_pool2d", input, "")
    h, w = input.shape[-2:]
    oh, ow = _out_pair(output_size, h, w)
    if oh < 0 or ow < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{{oh}, {ow}}}")
    mats = []
    for n, o in ((h, oh), (w, ow)):
        st, en = _adaptive_bounds(n, o)
        m = np.zeros((o, n))
        for i in range(o):
            m[i, st[i]:en[i]] = 1.0 / (en[i] - st[i])
        mats.append(m)
    return _sep_apply(input, mats)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over the adaptive windows; the argmax is found on arrays (windows padded to the
    largest size with -inf), then gathered, so the VJP scatters to it."""
    _check_adaptive("adaptive_max_pool2d", input, ":")
    x = input if input.ndim == 4 else _ops.unsqueeze(input, 0)
    n, c, h, w = x.shape
    oh, ow = _out_pair(output_size, h, w)
    if oh < 0 or ow < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(oh, ow)}: "
                           f"{list(x.shape[:2]) + [oh, ow]}" if input.ndim == 4 else
                           f"Trying to create tensor with negative dimension {min(oh, ow)}: "
                           f"{[c, oh, ow]}")
    if oh == 0 or ow == 0:
        # An empty output size: nothing to pick, an empty result (as torch).
        out = _ops.reshape(_ops.reshape(x, (n, c, h * w))[:, :, :0], (n, c, oh, ow))
        ind = _new_tensor(np.zeros((n, c, oh, ow), dtype=np.int64))
        if input.ndim == 3:
            out, ind = _ops.squeeze(out, 0), _ops.squeeze(ind, 0)
        return (out, ind) if return_indices else out
    xa = _data(x)
    sh, eh = _adaptive_bounds(h, oh)
    sw, ew = _adaptive_bounds(w, ow)
    kh, kw = int((eh - sh).max()), int((ew - sw).max())
    rows = sh[:, None] + np.arange(kh)  # (oh, kh)
    cols = sw[:, None] + np.arange(kw)  # (ow, kw)
    vr = rows < eh[:, None]
    vc = cols < ew[:, None]
    rows = np.minimum(rows, h - 1)
    cols = np.minimum(cols, w - 1)
    win = xa[:, :, rows[:, :, None, None], cols[None, None, :, :]]  # (n, c, oh, kh, ow, kw)
    valid = vr[:, :, None, None] & vc[None, None, :, :]
    fill = -np.inf if xa.dtype.kind == "f" else np.iinfo(xa.dtype).min
    win = np.where(valid, win, fill).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, oh, ow, kh * kw)
    am = np.argmax(win, axis=-1)
    i, j = np.divmod(am, kw)
    r = sh[:, None] + i
    cc = sw[None, :] + j
    idx = (r * w + cc).astype(np.int64)
    flat = _ops.reshape(x, (n, c, h * w))
    out = _ops.reshape(_nnops.gather_along(flat, 2, idx.reshape(n, c, oh * ow)), (n, c, oh, ow))
    ind = _new_tensor(idx)
    if input.ndim == 3:
        out, ind = _ops.squeeze(out, 0), _ops.squeeze(ind, 0)
    return (out, ind) if return_indices else out


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError("pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    nl = len(lead)
    x = _ops.reshape(input, (*lead, c // (r * r), r, r, h, w))
    perm = list(range(nl)) + [nl, nl + 3, nl + 1, nl + 4, nl + 2]
    x = _ops.permute(x, perm)
    return _ops.reshape(x, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError("pixel_unshuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {r}" if h % r else
                           "pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    nl = len(lead)
    x = _ops.reshape(input, (*lead, c, h // r, r, w // r, r))
    perm = list(range(nl)) + [nl, nl + 2, nl + 4, nl + 1, nl + 3]
    x = _ops.permute(x, perm)
    return _ops.reshape(x, (*lead, c * r * r, h // r, w // r))


def _interp_matrix(n_in: int, n_out: int, mode: str, align_corners: bool | None,
                   scale: float | None) -> np.ndarray | None:
    if n_in == n_out and mode in ("nearest", "nearest-exact") and scale is None:
        return None
    m = np.zeros((n_out, n_in))
    dst = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        # PyTorch computes the source index in float32.
        sc = np.float32(1.0 / scale) if scale is not None else np.float32(n_in) / np.float32(
            n_out)
        off = np.float32(0.5) if mode == "nearest-exact" else np.float32(0.0)
        src = np.floor((dst.astype(np.float32) + off) * sc).astype(np.int64)
        src = np.minimum(src, n_in - 1)
        m[dst, src] = 1.0
        return m
    if align_corners:
        sc = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = sc * dst
    else:
        sc = 1.0 / scale if scale is not None else n_in / n_out
        src = np.maximum(sc * (dst + 0.5) - 0.5, 0.0)
    i0 = np.floor(src).astype(np.int64)
    i0 = np.minimum(i0, n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    np.add.at(m, (dst, i0), 1.0 - lam)
    np.add.at(m, (dst, i1), lam)
    return m


def _interpolate_basic(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the trailing spatial dims (nearest, nearest-exact, linear, bilinear): a constant
    interpolation matrix per axis, applied with matmul (so the VJP is its transpose)."""
    nd = input.ndim - 2
    if nd < 1:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                         f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
                         f"trilinear | lanczos | area | nearest-exact (got {mode})")
    lin = {"linear": 1, "bilinear": 2}
    if mode in lin and lin[mode] != nd:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {lin[mode] + 2}D input")
    if mode not in ("nearest", "nearest-exact", "linear", "bilinear"):
        raise NotImplementedError(f"interpolate mode {mode!r} is not implemented in chainrule")
    if mode in ("nearest", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("antialias=True is not implemented in chainrule")
    if mode in lin and align_corners is None:
        align_corners = False
    spatial = tuple(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = [int(s) for s in (size if isinstance(size, (list, tuple)) else [size] * nd)]
        if len(sizes) != nd:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(spatial)} and output size of {sizes}. Please provide input "
                             "tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, "
                             "o2, ...,oK) format.")
        scales: list[float | None] = [None] * nd
    elif scale_factor is not None:
        sf = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else \
            [scale_factor] * nd
        sizes = [int(math.floor(float(n) * float(f))) for n, f in zip(spatial, sf)]
        scales = [None] * nd if recompute_scale_factor else [float(f) for f in sf]
    else:
        raise ValueError("either size or scale_factor should be defined")
    mats = [_interp_matrix(n, o, mode, align_corners, s)
            for n, o, s in zip(spatial, sizes, scales)]
    if all(m is None for m in mats):
        return _ops.clone(input)  # a new tensor, as PyTorch, never an alias of the input
    return _sep_apply(input, mats)


# Normalization --------------------------------------------------------------------------------


def _normalize_over(x: Tensor, dims: tuple[int, ...], eps: float) -> tuple[Tensor, Tensor]:
    mean = _ops.mean(x, dims, keepdim=True)
    xc = x - mean
    var = _ops.mean(xc * xc, dims, keepdim=True)
    return xc * (var + eps) ** -0.5, var


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * w + b per channel (dim 1). Training uses the batch's
    biased variance and updates the running stats in place (unbiased variance, ``momentum``);
    evaluation uses the running stats."""
    _not_implemented_for_ints("batch_norm", input)
    if momentum is not None and not isinstance(momentum, numbers.Real):
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not "
                        f"{_arg_type(momentum)}")
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
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
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {_size(input)}")
        y, var = _normalize_over(input, dims, eps)
        with _grad_mode.no_grad():
            m = float(momentum) if momentum is not None else 0.0
            if running_mean is not None:
                bm = np.mean(_data(input), axis=dims)
                running_mean._data[...] = (1 - m) * _data(running_mean) + m * bm
                running_mean._bump_version()
            if running_var is not None:
                bv = np.reshape(_data(var), (c,)) * (count / (count - 1))
                running_var._data[...] = (1 - m) * _data(running_var) + m * bv
                running_var._bump_version()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
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


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None, shape: Any) -> Tensor:
    """``y * weight + bias`` after a normalisation, each optional, reshaped to ``shape`` (None:
    they already broadcast)."""
    if weight is not None:
        y = y * (weight if shape is None else _ops.reshape(weight, shape))
    if bias is not None:
        y = y + (bias if shape is None else _ops.reshape(bias, shape))
    return y


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims (biased variance), then w, b."""
    ns_ = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else \
        tuple(normalized_shape)
    k = len(ns_)
    if tuple(input.shape[input.ndim - k:]) != tuple(int(s) for s in ns_) or k > input.ndim:
        raise RuntimeError(
            f"Given normalized_shape={list(ns_)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in ns_)}], but got input of size"
            f"{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != tuple(int(s) for s in ns_):
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(ns_)}")
    _not_implemented_for_ints("LayerNormKernelImpl", input)
    _check_norm_dtypes(input, weight, bias)
    dims = tuple(range(input.ndim - k, input.ndim))
    y, _ = _normalize_over(input, dims, eps)
    return _affine(y, weight, bias, None)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize over (channels of a group, spatial dims) per sample, then per-channel w, b."""
    if input.ndim < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} and "
                               f"input of shape {list(input.shape)}")
    _not_implemented_for_ints("GroupNormKernelImpl", input)
    _check_norm_dtypes(input, weight, bias)
    x = _ops.reshape(input, (n, num_groups, int(np.prod(input.shape[1:])) // num_groups))
    y, _ = _normalize_over(x, (2,), eps)
    y = _ops.reshape(y, tuple(input.shape))
    shape = [1] * input.ndim
    shape[1] = c
    return _affine(y, weight, bias, shape)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``; the ``padding_idx`` row gets no
    gradient (the picked rows there come from a detached weight)."""
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "embedding: max_norm, scale_grad_by_freq and sparse are not implemented in chainrule")
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    _tensor_args("embedding", ("weight", 1, weight, False), ("indices", 2, input, False))
    if input._data.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"chainrule.{_type_name(input._data.dtype)} instead (while checking "
                           "arguments for embedding)")
    idx = _data(input)
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        # torch's text; plain indexing would wrap a negative index around silently.
        raise IndexError("index out of range in self")
    out = weight[input]
    if padding_idx is not None and weight.requires_grad:
        is_pad = _new_tensor(np.expand_dims(_data(input) == padding_idx, -1))
        out = _ops.where(is_pad, weight.detach()[input], out)
    return out


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``."""
    d = wrap_dim(dim, input.ndim)
    if p == 2:
        norm = _ops.sqrt(_ops.sum(input * input, d, keepdim=True))
    elif p == 1:
        norm = _ops.sum(_ops.abs(input), d, keepdim=True)
    else:
        norm = _ops.sum(_ops.abs(input) ** p, d, keepdim=True) ** (1.0 / p)
    denom = _ops.where(norm > eps, norm, float(eps))
    return input / denom


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


# Activations and shape helpers, registered in chainrule/ops by their families --------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return _ops.relu_(input) if inplace else _ops.relu(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6)."""
    return _ops.relu6(input, inplace=inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x if x > 0 else negative_slope x."""
    return _ops.leaky_relu(input, negative_slope, inplace=inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x if x > 0 else alpha (exp(x) - 1)."""
    return _ops.elu(input, alpha, inplace=inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the SELU constants."""
    return _ops.selu(input, inplace=inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    return _ops.celu(input, alpha, inplace=inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x Phi(x) (or its tanh approximation)."""
    return _ops.gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x sigmoid(x)."""
    return _ops.silu(input, inplace=inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x tanh(softplus(x))."""
    return _ops.mish(input, inplace=inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """clamp(x, min_val, max_val)."""
    return _ops.hardtanh(input, min_val, max_val, inplace=inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return _ops.hardsigmoid(input, inplace=inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x relu6(x + 3) / 6."""
    return _ops.hardswish(input, inplace=inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta (x where beta x > threshold)."""
    return _ops.softplus(input, beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x))."""
    return _ops.logsigmoid(input)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return _ops.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return _ops.tanh(input)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Pad the trailing dims by ``pad`` (last dim first), as torch.nn.functional.pad."""
    return _ops.pad(input, pad, mode, value)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim."""
    return _ops.one_hot(tensor, num_classes)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else a x, with one slope ``a`` or one per channel (dim 1)."""
    c = input.shape[1] if input.ndim >= 2 else 1
    k = weight._data.size
    if k != 1 and k != c:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {k} and channel size = {c}.")
    if k == 1 or input.ndim < 2:
        a = _ops.reshape(weight, ())
    else:
        a = _ops.reshape(weight, (c,) + (1,) * (input.ndim - 2))
    return _ops.where(input > 0, input, input * a)


# Attention and RMS norm live in their own files (chainrule/nn/_attention_functional.py,
# chainrule/nn/_mha_functional.py).
from chainrule.nn._attention_functional import (  # noqa: E402, I001
    _canonical_mask as _canonical_mask,
    _none_or_dtype as _none_or_dtype,
    rms_norm,
    scaled_dot_product_attention,
)
from chainrule.nn._mha_functional import multi_head_attention_forward  # noqa: E402

__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward", "rms_norm"]



def _reexport(module: Any) -> None:
    """Make ``module``'s public functions part of this namespace (its ``__all__``)."""
    g = globals()
    for name in module.__all__:
        g[name] = getattr(module, name)
        if name not in __all__:
            __all__.append(name)


# The rest of torch.nn.functional lives in topic files beside this one: activations, alpha
# dropouts, margin/likelihood losses and distances; CTC; convolutions, pools and norms beyond
# 2-d; resampling (interpolate's extra modes, grid_sample, affine_grid).
from chainrule.nn import _ctc, _functional_conv_more, _functional_more  # noqa: E402
from chainrule.nn import _functional_sample  # noqa: E402

for _m in (_functional_more, _ctc, _functional_conv_more, _functional_sample):
    _reexport(_m)
# Written out for readers and linters: interpolate is _functional_sample's (all modes).
from chainrule.nn._functional_sample import interpolate  # noqa: E402
from chainrule.nn._functional_bag import embedding_bag  # noqa: E402
__all__.append("embedding_bag")
from chainrule.nn._resample_more import grid_sample, interpolate  # noqa: E402, F811
from chainrule.nn._resample_more import GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES  # noqa: E402, E501, F401
from chainrule.nn._functional_lce import linear_cross_entropy  # noqa: E402
__all__.append("linear_cross_entropy")
