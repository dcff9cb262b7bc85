"""The layer classes of ``chainrule.nn``."""

from __future__ import annotations

from chainrule.nn.modules.activation import (
    ELU,
    GELU,
    LeakyReLU,
    LogSoftmax,
    PReLU,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from chainrule.nn.modules.container import ModuleDict, ModuleList, ParameterList, Sequential
from chainrule.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from chainrule.nn.modules.dropout import Dropout, Dropout2d
from chainrule.nn.modules.linear import Bilinear, Identity, Linear
from chainrule.nn.modules.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from chainrule.nn.modules.module import Module
from chainrule.nn.modules.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from chainrule.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from chainrule.nn.modules.reshape import Flatten, PixelShuffle, PixelUnshuffle, Unflatten, Upsample
from chainrule.nn.modules.rnn import (
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)
from chainrule.nn.modules.sparse import Embedding

__all__ = [
    "Module",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "Identity",
    "Linear",
    "Bilinear",
    "Conv1d",
    "Conv2d",
    "ConvTranspose2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "LayerNorm",
    "GroupNorm",
    "Dropout",
    "Dropout2d",
    "Embedding",
    "ReLU",
    "LeakyReLU",
    "PReLU",
    "ELU",
    "GELU",
    "SiLU",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "LogSoftmax",
    "Flatten",
    "Unflatten",
    "PixelShuffle",
    "PixelUnshuffle",
    "Upsample",
    "MaxPool2d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "CrossEntropyLoss",
    "NLLLoss",
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
    "RNNBase",
    "RNN",
    "LSTM",
    "GRU",
    "RNNCellBase",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
]

from chainrule.nn.modules.attention import MultiheadAttention  # noqa: E402, I001
from chainrule.nn.modules.normalization import RMSNorm  # noqa: E402
from chainrule.nn.modules.transformer import (  # noqa: E402
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ += [
    "MultiheadAttention",
    "RMSNorm",
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]

from chainrule.nn.modules import (  # noqa: E402  # noqa: E402
    activation_more,
    adaptive,
    conv_more,
    dropout_more,
    loss_more,
    misc,
    normalization_more,
    padding,
    pooling_more,  # noqa: E402
)


def _reexport(module: object) -> None:
    """Make ``module``'s layer classes (its ``__all__``) part of this namespace."""
    g = globals()
    for name in module.__all__:  # type: ignore[attr-defined]
        g[name] = getattr(module, name)
        if name not in __all__:
            __all__.append(name)


for _m in (
    activation_more,
    dropout_more,
    loss_more,
    misc,
    adaptive,
    conv_more,
    pooling_more,
    padding,
    normalization_more,
):
    _reexport(_m)

from chainrule.nn.modules import embedding_bag  # noqa: E402

_reexport(embedding_bag)

from chainrule.nn.modules import lazy  # noqa: E402

_reexport(lazy)

from chainrule.nn.modules import legacy  # noqa: E402

_reexport(legacy)

from chainrule.nn.modules import loss_lce  # noqa: E402

_reexport(loss_lce)
