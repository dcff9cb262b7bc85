"""``chainrule.nn.functional``: the maths of neural-network layers, composed from ops.

Primitives with their own VJPs (softmax, log_softmax, the convolutions, gather/scatter along a
dim) live in ``chainrule/ops/nn.py`` and ``chainrule/ops/conv.py``. Everything else is a
composition of registered ops (so every function has higher derivatives) plus constant arrays
(class weights, pooling and interpolation matrices, dropout masks).

This module is the public face only: it re-exports, by name, the functions of the topic modules
in ``chainrule/nn/_functional/`` (activation, loss, margin_loss, distance, linear, dropout, conv,
pooling, adaptive_pooling, fractional_pooling, normalization, vision) and of the files beside it
(``_attention_functional``, ``_mha_functional``, ``_ctc``, ``_functional_sample``).
"""

from __future__ import annotations

from chainrule._tensor import Tensor as Tensor  # torch.nn.functional has ``Tensor`` too

# Private helpers the attention layers call as ``F._canonical_mask``, as PyTorch's do.
from chainrule.nn._attention_functional import _canonical_mask as _canonical_mask
from chainrule.nn._attention_functional import _none_or_dtype as _none_or_dtype
from chainrule.nn._attention_functional import (
    rms_norm,
    scaled_dot_product_attention,
)
from chainrule.nn._ctc import ctc_loss
from chainrule.nn._functional.activation import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from chainrule.nn._functional.adaptive_pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
)
from chainrule.nn._functional.conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from chainrule.nn._functional.distance import (
    cosine_similarity,
    pairwise_distance,
    pdist,
)
from chainrule.nn._functional.dropout import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from chainrule.nn._functional.fractional_pooling import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from chainrule.nn._functional.linear import (
    bilinear,
    embedding,
    linear,
)
from chainrule.nn._functional.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    gaussian_nll_loss,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
)
from chainrule.nn._functional.margin_loss import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from chainrule.nn._functional.normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
)
from chainrule.nn._functional.pooling import (
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from chainrule.nn._functional.vision import (
    channel_shuffle,
    fold,
    native_channel_shuffle,
    one_hot,
    pad,
    pixel_shuffle,
    pixel_unshuffle,
    unfold,
)
from chainrule.nn._functional_bag import embedding_bag
from chainrule.nn._functional_lce import linear_cross_entropy
from chainrule.nn._functional_sample import (
    affine_grid,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from chainrule.nn._mha_functional import multi_head_attention_forward
from chainrule.nn._resample_more import (
    GRID_SAMPLE_INTERPOLATION_MODES,
    GRID_SAMPLE_PADDING_MODES,
    grid_sample,
    interpolate,
)

__all__ = [
    "softmax", "log_softmax", "softmin", "relu", "relu6", "leaky_relu", "elu", "selu", "celu",
    "gelu", "silu", "mish", "hardtanh", "hardsigmoid", "hardswish", "softplus", "logsigmoid",
    "sigmoid", "tanh", "prelu", "glu", "hardshrink", "softshrink", "softsign", "tanhshrink",
    "threshold", "threshold_", "rrelu", "rrelu_", "relu_", "elu_", "celu_", "selu_", "leaky_relu_",
    "hardtanh_", "gumbel_softmax", "nll_loss", "cross_entropy", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "soft_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "cosine_similarity", "pairwise_distance", "pdist", "linear",
    "bilinear", "embedding", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "conv1d", "conv2d", "conv_transpose2d", "conv3d", "conv_transpose1d",
    "conv_transpose3d", "max_pool2d", "avg_pool2d", "max_pool1d_with_indices", "max_pool1d",
    "max_pool2d_with_indices", "max_pool3d_with_indices", "max_pool3d", "avg_pool1d", "avg_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "adaptive_avg_pool2d", "adaptive_max_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool1d", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "adaptive_max_pool3d", "fractional_max_pool2d",
    "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices", "batch_norm", "layer_norm", "group_norm", "normalize",
    "instance_norm", "local_response_norm", "pixel_shuffle", "pixel_unshuffle", "pad", "one_hot",
    "channel_shuffle", "native_channel_shuffle", "upsample", "upsample_nearest",
    "upsample_bilinear", "unfold", "fold", "scaled_dot_product_attention",
    "multi_head_attention_forward", "rms_norm", "ctc_loss", "interpolate", "grid_sample",
    "affine_grid", "embedding_bag", "linear_cross_entropy", "GRID_SAMPLE_INTERPOLATION_MODES",
    "GRID_SAMPLE_PADDING_MODES",
]
