"""The layer classes of ``chainrule.nn``."""

from __future__ import annotations

from chainrule.nn.modules.activation import (
    ELU, GELU, LeakyReLU, LogSoftmax, PReLU, ReLU, Sigmoid, SiLU, Softmax, Tanh,
)
from chainrule.nn.modules.container import ModuleDict, ModuleList, ParameterList, Sequential
from chainrule.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from chainrule.nn.modules.dropout import Dropout, Dropout2d
from chainrule.nn.modules.linear import Bilinear, Identity, Linear
from chainrule.nn.modules.loss import (
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss,
    NLLLoss, SmoothL1Loss,
)
from chainrule.nn.modules.module import Module
from chainrule.nn.modules.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from chainrule.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from chainrule.nn.modules.reshape import Flatten, PixelShuffle, PixelUnshuffle, Unflatten, Upsample
from chainrule.nn.modules.rnn import (
    GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase,
)
from chainrule.nn.modules.sparse import Embedding

__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
    "Identity", "Linear", "Bilinear", "Conv1d", "Conv2d", "ConvTranspose2d",
    "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Dropout", "Dropout2d", "Embedding",
    "ReLU", "LeakyReLU", "PReLU", "ELU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax",
    "LogSoftmax", "Flatten", "Unflatten", "PixelShuffle", "PixelUnshuffle", "Upsample",
    "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss",
    "BCEWithLogitsLoss", "KLDivLoss",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
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

__all__ += ["MultiheadAttention", "RMSNorm", "Transformer", "TransformerEncoder",
            "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer"]

from chainrule.nn.modules.activation_more import *  # noqa: E402, F403
from chainrule.nn.modules.activation_more import __all__ as _act_more  # noqa: E402
from chainrule.nn.modules.dropout_more import *  # noqa: E402, F403
from chainrule.nn.modules.dropout_more import __all__ as _drop_more  # noqa: E402
from chainrule.nn.modules.loss_more import *  # noqa: E402, F403
from chainrule.nn.modules.loss_more import __all__ as _loss_more  # noqa: E402
from chainrule.nn.modules.misc import *  # noqa: E402, F403
from chainrule.nn.modules.misc import __all__ as _misc_more  # noqa: E402

__all__ += [*_act_more, *_drop_more, *_loss_more, *_misc_more]
from chainrule.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402

__all__ += ["AdaptiveLogSoftmaxWithLoss"]
