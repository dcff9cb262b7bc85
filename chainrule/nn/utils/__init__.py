"""``chainrule.nn.utils``: gradient clipping, parameter/vector conversion,
parametrizations, pruning, BatchNorm fusion and ``functional_call``."""

from __future__ import annotations

from chainrule.nn.utils import rnn
from chainrule.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from chainrule.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
    "rnn",
]

from chainrule.nn.utils import parametrizations, parametrize, prune, stateless  # noqa: E402
from chainrule.nn.utils.fusion import (  # noqa: E402
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from chainrule.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from chainrule.nn.utils.weight_norm import remove_weight_norm, weight_norm  # noqa: E402

__all__ += [
    "parametrizations",
    "parametrize",
    "prune",
    "stateless",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "remove_spectral_norm",
    "spectral_norm",
    "remove_weight_norm",
    "weight_norm",
]
