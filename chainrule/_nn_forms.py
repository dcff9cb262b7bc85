"""The torch-namespace forms of ``torch.nn.functional``'s functions (``torch.prelu``,
``torch.kl_div``, ``torch.max_pool1d`` ...), with the signatures of PyTorch's native
functions: positional ``train``/``training`` flags without defaults, and the loss reduction
as PyTorch's integer enum (0: 'none', 1: 'mean', 2: 'sum'). Called without a reduction,
PyTorch's Python bindings of these losses do not reduce (observed with PyTorch 2.13, whatever
their schemas say); so here the default is 0. Each calls the
``chainrule.nn.functional`` function, so values and gradients are that function's.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "avg_pool1d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool3d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose3d",
    "channel_shuffle",
    "native_channel_shuffle",
    "hardshrink",
    "prelu",
    "rrelu",
    "rrelu_",
    "celu_",
    "selu_",
    "threshold",
    "threshold_",
    "alpha_dropout",
    "alpha_dropout_",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "dropout_",
    "pairwise_distance",
    "pdist",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "poisson_nll_loss",
    "triplet_margin_loss",
    "instance_norm",
    "rms_norm",
    "convolution",
    "ctc_loss",
]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _F() -> Any:  # noqa: N802
    from chainrule.nn import functional

    return functional


def _reduction(r: Any) -> str:
    if isinstance(r, bool) or not isinstance(r, int) or r not in _REDUCTIONS:
        raise ValueError(f"{r} is not a valid value for reduction")
    return _REDUCTIONS[r]


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Any:
    """``F.adaptive_avg_pool1d``."""
    return _F().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input: Any, output_size: Any) -> Any:
    """``(values, indices)`` of ``F.adaptive_max_pool1d`` (the native form returns both)."""
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def avg_pool1d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Any:
    """``F.avg_pool1d``."""
    return _F().avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def _stride(stride: Any) -> Any:
    # The native functions take stride=[] for "the kernel size", as F's None.
    return None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else stride


def max_pool1d(
    input: Any,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Any:
    """``F.max_pool1d``."""
    return _F().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(
    input: Any,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Any:
    """``(values, indices)`` of ``F.max_pool1d``."""
    return _F().max_pool1d(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices=True
    )


def max_pool3d(
    input: Any,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
) -> Any:
    """``F.max_pool3d``."""
    return _F().max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def conv3d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Any:
    """``F.conv3d``."""
    return _F().conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Any:
    """``F.conv_transpose1d``."""
    return _F().conv_transpose1d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )


def conv_transpose3d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Any:
    """``F.conv_transpose3d``."""
    return _F().conv_transpose3d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )


def channel_shuffle(input: Any, groups: int) -> Any:
    """``F.channel_shuffle``."""
    return _F().channel_shuffle(input, groups)


def native_channel_shuffle(input: Any, groups: int) -> Any:
    """``F.channel_shuffle``."""
    return _F().channel_shuffle(input, groups)


def hardshrink(input: Any, lambd: float = 0.5) -> Any:
    """``F.hardshrink``: x where |x| > lambd, else 0."""
    return _F().hardshrink(input, lambd)


def prelu(input: Any, weight: Any) -> Any:
    """``F.prelu``."""
    return _F().prelu(input, weight)


def rrelu(
    input: Any,
    lower: float = 0.125,
    upper: float = 1.0 / 3,
    training: bool = False,
    generator: Any = None,
) -> Any:
    """``F.rrelu``."""
    return _F().rrelu(input, lower, upper, training)


def rrelu_(
    input: Any,
    lower: float = 0.125,
    upper: float = 1.0 / 3,
    training: bool = False,
    generator: Any = None,
) -> Any:
    """``F.rrelu_``."""
    return _F().rrelu_(input, lower, upper, training)


def celu_(input: Any, alpha: float = 1.0) -> Any:
    """``F.celu_``."""
    return _F().celu_(input, alpha)


def selu_(input: Any) -> Any:
    """``F.selu_``."""
    return _F().selu_(input)


def threshold(input: Any, threshold: float, value: float) -> Any:
    """``F.threshold``: x where x > threshold, else value."""
    return _F().threshold(input, threshold, value)


def threshold_(input: Any, threshold: float, value: float) -> Any:
    """``F.threshold_``."""
    return _F().threshold_(input, threshold, value)


def alpha_dropout(input: Any, p: float, train: bool) -> Any:
    """``F.alpha_dropout(input, p, train)``."""
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input: Any, p: float, train: bool) -> Any:
    """``F.alpha_dropout(input, p, train, inplace=True)``."""
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Any, p: float, train: bool) -> Any:
    """``F.feature_alpha_dropout(input, p, train)``."""
    return _F().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Any, p: float, train: bool) -> Any:
    """``F.feature_alpha_dropout(input, p, train, inplace=True)``."""
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def _feature_dropout(input: Any, p: float, train: bool, inplace: bool) -> Any:
    # Whole channels (dim 1) are zeroed, whatever the number of spatial dims.
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    F = _F()
    if input.ndim == 3:
        return F.dropout1d(input, p, train, inplace)
    if input.ndim == 4:
        return F.dropout2d(input, p, train, inplace)
    if input.ndim == 5:
        return F.dropout3d(input, p, train, inplace)
    return (
        F.dropout1d(input.unsqueeze(-1), p, train).squeeze(-1)
        if not inplace
        else input.copy_(F.dropout1d(input.unsqueeze(-1), p, train).squeeze(-1))
    )


def feature_dropout(input: Any, p: float, train: bool) -> Any:
    """Channel-wise dropout (``F.dropout1d/2d/3d`` by the input's rank)."""
    return _feature_dropout(input, p, train, False)


def feature_dropout_(input: Any, p: float, train: bool) -> Any:
    """In-place :func:`feature_dropout`."""
    return _feature_dropout(input, p, train, True)


def dropout_(input: Any, p: float, train: bool) -> Any:
    """``F.dropout(input, p, train, inplace=True)``."""
    return _F().dropout(input, p, train, inplace=True)


def pairwise_distance(
    x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Any:
    """``F.pairwise_distance``."""
    return _F().pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input: Any, p: float = 2) -> Any:
    """``F.pdist``."""
    return _F().pdist(input, p)


def binary_cross_entropy_with_logits(
    input: Any, target: Any, weight: Any = None, pos_weight: Any = None, reduction: int = 0
) -> Any:
    """``F.binary_cross_entropy_with_logits`` with the reduction as an int."""
    return _F().binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(reduction), pos_weight=pos_weight
    )


def kl_div(input: Any, target: Any, reduction: int = 0, *, log_target: bool = False) -> Any:
    """``F.kl_div`` with the reduction as an int (1, 'mean', averages over all elements)."""
    r = _reduction(reduction)
    if r == "mean":  # the native function's mean is over all elements, without F's warning
        return _F().kl_div(input, target, reduction="none", log_target=log_target).mean()
    return _F().kl_div(input, target, reduction=r, log_target=log_target)


def cosine_embedding_loss(
    input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: int = 0
) -> Any:
    """``F.cosine_embedding_loss`` with the reduction as an int."""
    return _F().cosine_embedding_loss(
        input1, input2, target, margin, reduction=_reduction(reduction)
    )


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, reduction: int = 0) -> Any:
    """``F.hinge_embedding_loss`` with the reduction as an int."""
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(
    input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: int = 0
) -> Any:
    """``F.margin_ranking_loss`` with the reduction as an int."""
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(
    input: Any, target: Any, log_input: bool, full: bool, eps: float, reduction: int
) -> Any:
    """``F.poisson_nll_loss`` with every argument positional and the reduction as an int."""
    return _F().poisson_nll_loss(
        input, target, log_input, full, eps=eps, reduction=_reduction(reduction)
    )


def triplet_margin_loss(
    anchor: Any,
    positive: Any,
    negative: Any,
    margin: float = 1.0,
    p: float = 2.0,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: int = 0,
) -> Any:
    """``F.triplet_margin_loss`` with the reduction as an int."""
    return _F().triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction)
    )


def instance_norm(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Any:
    """``F.instance_norm`` in the native argument order (weight and bias first)."""
    return _F().instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def rms_norm(
    input: Any, normalized_shape: Any, weight: Any = None, eps: float | None = None
) -> Any:
    """``F.rms_norm``."""
    return _F().rms_norm(input, normalized_shape, weight, eps)


def convolution(
    input: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: bool,
    output_padding: Any,
    groups: int,
) -> Any:
    """The convolution of ``F.conv1d/2d/3d`` (``transposed``: ``F.conv_transpose1d/2d/3d``)
    picked by the number of spatial dims of ``input``."""
    F = _F()
    nd = input.ndim - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
            f"input of size: {list(input.shape)}"
        )
    if transposed:
        f = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return f(input, weight, bias, stride, padding, output_padding, groups, dilation)
    f = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return f(input, weight, bias, stride, padding, dilation, groups)


def ctc_loss(
    log_probs: Any,
    targets: Any,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: int = 0,
    zero_infinity: bool = False,
) -> Any:
    """``F.ctc_loss`` with the reduction as an int (1, 'mean': each loss divided by its target
    length, then averaged)."""
    return _F().ctc_loss(
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank,
        _reduction(reduction),
        zero_infinity,
    )
