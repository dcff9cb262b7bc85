"""More of ``torch.nn.functional``: the remaining activations, alpha dropouts, margin / ranking
/ likelihood losses, distances, ``channel_shuffle`` and ``gumbel_softmax``.

Every function is a composition of registered differentiable ops (``chainrule.ops``) plus
constant arrays (masks, random draws), so gradients and higher derivatives come for free.
Re-exported from ``chainrule.nn.functional``.

Long because it mirrors a wide surface of torch.nn.functional: each function is short.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.ops import nn as _nnops
from chainrule.ops._broadcast import wrap_dim

__all__ = [
    "glu",
    "hardshrink",
    "softshrink",
    "softsign",
    "tanhshrink",
    "threshold",
    "threshold_",
    "rrelu",
    "rrelu_",
    "relu_",
    "elu_",
    "celu_",
    "selu_",
    "leaky_relu_",
    "hardtanh_",
    "alpha_dropout",
    "feature_alpha_dropout",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "cosine_embedding_loss",
    "pairwise_distance",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "pdist",
    "channel_shuffle",
    "native_channel_shuffle",
    "gumbel_softmax",
]


def _const(a: Any, like: Tensor) -> Tensor:
    """A constant tensor (no grad) of ``like``'s dtype."""
    return _new_tensor(np.asarray(a, dtype=like._data.dtype))


def _rng() -> np.random.Generator:
    from chainrule._random import rng_of

    return rng_of(None)


def _into(input: Tensor, out: Tensor) -> Tensor:
    """Write ``out`` into ``input`` (an in-place form through the differentiable ``copy_``)."""
    input.copy_(out)
    return input


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return _ops.mean(loss)
    if reduction == "sum":
        return _ops.sum(loss)
    raise ValueError(f"{reduction} is not a valid value for reduction")


# Activations ----------------------------------------------------------------------------------


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = _ops.chunk(input, 2, d)
    return a * _ops.sigmoid(b)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    return _ops.where(_ops.abs(input) > lambd, input, _const(0, input))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0 (lambd >= 0)."""
    if lambd < 0:
        dt = str(input._data.dtype)
        kind = {"float32": "Float", "float64": "Double", "float16": "Half"}.get(dt, dt)
        top = {"float64": "1.79769e+308", "float16": "65504"}.get(dt, "3.40282e+38")
        raise RuntimeError(
            f"lambda must be in range [0, {top}] for input dtype {kind}, but found {lambd:g}"
        )
    zero = _const(0, input)
    return _ops.where(input > lambd, input - lambd, _ops.where(input < -lambd, input + lambd, zero))


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (_ops.abs(input) + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - _ops.tanh(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value``."""
    out = _ops.where(input > threshold, input, _const(value, input))
    return _into(input, out) if inplace else out


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return globals()["threshold"](input, threshold, value, inplace=True)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """x where x >= 0, else a x. In training a ~ U(lower, upper) per element (drawn from the
    default generator, so ``manual_seed`` reproduces it; not PyTorch's stream); in eval
    a = (lower + upper) / 2."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training:
        a = _const(_rng().uniform(lower, upper, size=tuple(input.shape)), input)
    else:
        a = _const((lower + upper) / 2, input)
    out = _ops.where(input >= 0, input, input * a)
    return _into(input, out) if inplace else out


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


def relu_(input: Tensor) -> Tensor:
    """In-place relu."""
    return _ops.relu_(input)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place elu."""
    return _ops.elu(input, alpha, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place celu."""
    return _ops.celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In-place selu."""
    return _ops.selu(input, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place leaky_relu."""
    return _ops.leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place hardtanh."""
    return _ops.hardtanh(input, min_val, max_val, inplace=True)


# Alpha dropout --------------------------------------------------------------------------------

# -scale * alpha of SELU: the value SELU saturates to; dropped units are set to it.
_SELU_NEG = 1.7580993408473766


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * _const(0, input)
        return _into(input, out) if inplace else out
    shape = tuple(input.shape)
    if feature:
        shape = shape[:2] + (1,) * (input.ndim - 2)
    keep = (_rng().random(shape) >= p).astype(input._data.dtype)
    # Keep mean 0 / variance 1 of a standardised input: a (x keep + alpha' (1 - keep)) + b.
    a = 1.0 / math.sqrt((_SELU_NEG**2 * p + 1) * (1 - p))
    b = (keep - 1) * (_SELU_NEG * a) + _SELU_NEG * a * p
    out = input * _const(keep * a, input) + _const(b, input)
    return _into(input, out) if inplace else out


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for SELU networks: dropped units take SELU's negative saturation value and the
    result is affinely rescaled so that zero mean and unit variance are kept."""
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """:func:`alpha_dropout` dropping whole channels (one draw per (n, c))."""
    return _alpha_dropout(input, p, training, inplace, feature=True)


# Losses ---------------------------------------------------------------------------------------


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
    reduction = _reduction(size_average, reduce, reduction)
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
    vd = np.asarray(var._data)
    if np.any(vd < 0):
        raise ValueError("var has negative entry/entries")
    adj = np.maximum(vd, eps) - vd
    if np.any(adj):
        var = var + _new_tensor(adj.astype(vd.dtype))
    loss = 0.5 * (_ops.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def _size(t: Tensor) -> str:
    return "torch.Size([" + ", ".join(str(s) for s in t.shape) + "])"


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
    reduction = _reduction(size_average, reduce, reduction)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {_size(input1)}, input2: {_size(input2)}, target: {_size(target)} "
        )
    loss = _ops.clamp_min(-target * (input1 - input2) + margin, 0)
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
    reduction = _reduction(size_average, reduce, reduction)
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
    """log(1 + exp(-y x))."""
    reduction = _reduction(size_average, reduce, reduction)
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
    reduction = _reduction(size_average, reduce, reduction)
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


def _pnorm(x: Tensor, p: float, dim: int, keepdim: bool = False) -> Tensor:
    if p == 2:
        return _ops.sqrt(_ops.sum(x * x, dim, keepdim=keepdim))
    if p == 1:
        return _ops.sum(_ops.abs(x), dim, keepdim=keepdim)
    if math.isinf(p):
        ax = _ops.abs(x)
        return _ops.amax(ax, dim, keepdim=keepdim) if p > 0 else _ops.amin(ax, dim, keepdim=keepdim)
    if p == 0:
        return _ops.sum(_const(np.asarray(x._data) != 0, x), dim, keepdim=keepdim)
    return _ops.sum(_ops.abs(x) ** p, dim, keepdim=keepdim) ** (1.0 / p)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """||x1 - x2 + eps||_p along the last dim (broadcasting x1 against x2)."""
    nd = max(x1.ndim, x2.ndim)
    diff = x1 - x2 + eps
    if nd == 0:
        return _ops.abs(diff)
    return _pnorm(diff, p, nd - 1, keepdim)


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
    reduction = _reduction(size_average, reduce, reduction)
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
    t = np.asarray(target._data).reshape(-1).astype(np.int64)
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
    """sum over i != y of w[y] max(0, margin - x[y] + x[i])^p / C, per sample."""
    reduction = _reduction(size_average, reduce, reduction)
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
    xy = _ops.gather(x, 1, _new_tensor(t.reshape(-1, 1)))
    h = _ops.clamp_min(margin - xy + x, 0)
    if p == 2:
        h = h * h
    h = h * _const(1 - onehot, x)
    if weight is not None:
        h = h * _ops.reshape(weight[_new_tensor(t)], (n, 1))
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
    """sum over targets j (the indices before the first -1) and non-targets i of
    max(0, 1 - (x[y_j] - x[i])) / C, per sample."""
    reduction = _reduction(size_average, reduce, reduction)
    x = input if input.ndim == 2 else _ops.reshape(input, (1, -1))
    n, c = x.shape
    t = np.asarray(target._data).reshape(n, -1).astype(np.int64)
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
    xy = _ops.gather(x, 1, _new_tensor(safe))  # (n, c): x[y_j]
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
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * _ops.logsigmoid(input) + (1 - target) * _ops.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    c = input.shape[-1] if input.ndim else 1
    loss = _ops.sum(loss, input.ndim - 1) / c if input.ndim else loss
    return _reduce(loss, reduction)


# Distances, shuffles, sampling ------------------------------------------------------------------


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """||x_i - x_j||_p for every row pair i < j of an (N, M) input, in row-major order."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    diff = input[_new_tensor(i)] - input[_new_tensor(j)]
    return _pnorm(diff, p, 1)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the C channels into ``groups`` groups and interleave them: (N, g, C/g, *) ->
    (N, C/g, g, *) -> (N, C, *)."""
    if input.ndim <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with "
            f"sizes {list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = tuple(input.shape[2:])
    x = _ops.reshape(input, (n, groups, c // groups) + rest)
    return _ops.reshape(_ops.transpose(x, 1, 2), (n, c) + rest)


native_channel_shuffle = channel_shuffle


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1) from the default generator. ``hard``
    returns the one-hot argmax in the forward pass and the soft sample's gradient
    (straight-through: y_hard - sg(y_soft) + y_soft)."""
    g = -np.log(_rng().exponential(1.0, size=tuple(logits.shape)))
    y = _nnops.softmax((logits + _const(g, logits)) / tau, wrap_dim(dim, max(logits.ndim, 1)))
    if not hard:
        return y
    d = wrap_dim(dim, max(logits.ndim, 1))
    idx = np.expand_dims(np.argmax(np.asarray(y._data), axis=d), d)
    y_hard = np.zeros(tuple(y.shape), y._data.dtype)
    np.put_along_axis(y_hard, idx, 1, axis=d)
    return _const(y_hard, y) - y.detach() + y


# Deprecated resizing names, kept by PyTorch as warnings around ``interpolate`` ----------------


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of ``interpolate`` (with PyTorch's warning)."""
    import warnings

    from chainrule.nn.functional import interpolate

    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(mode='nearest')`` (with PyTorch's warning)."""
    import warnings

    from chainrule.nn.functional import interpolate

    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(mode='bilinear', align_corners=True)`` (with PyTorch's
    warning)."""
    import warnings

    from chainrule.nn.functional import interpolate

    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ += ["upsample", "upsample_nearest", "upsample_bilinear"]
