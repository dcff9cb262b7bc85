"""Dropout: dropout, dropout1d/2d/3d (whole channels) and the alpha dropouts (dropped units
set to SELU's saturation value)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.nn._functional._common import (
    _const,
    _default_rng,
    _into,
    _rng,
)

__all__ = [
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
]


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p, scale the rest by 1 / (1 - p) (identity when not
    training). The mask comes from the default generator (``manual_seed`` reproduces it).
    Differs from torch: the random stream, hence the mask, is not PyTorch's."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p != p:  # (NaN passes the Python check; PyTorch's kernel refuses it)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        mask = np.zeros(input.shape, input._data.dtype)
    else:
        keep = _default_rng(input).random(input.shape) >= p
        mask = keep.astype(input._data.dtype) * np.asarray(1.0 / (1.0 - p), input._data.dtype)
    if inplace:
        return input.mul_(_const(mask, input))
    return input * _const(mask, input)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """Zero whole channels: one draw per (n, c), broadcast over the trailing dims."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p != p:  # (NaN passes the Python check; PyTorch's kernel refuses it)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    dt = input._data.dtype
    if p == 1.0:
        mask = np.zeros(shape, dt)
    else:
        mask = (_default_rng(input).random(shape) >= p).astype(dt) * np.asarray(1.0 / (1.0 - p), dt)
    if inplace:
        return input.mul_(_const(mask, input))
    return input * _const(mask, input)


def _unbatched_feature_dropout(
    input: Tensor, p: float, training: bool, inplace: bool, batched: bool
) -> Tensor:
    if batched or not training or p == 0.0:
        return _feature_dropout(input, p, training, inplace)
    out = _feature_dropout(_ops.unsqueeze(input, 0), p, training, False)
    out = _ops.squeeze(out, 0)
    if inplace and out is not input:
        input.copy_(out)
        return input
    return out


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Channel-wise dropout of (N, C, L) or (C, L) inputs."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p != p:  # (NaN passes the Python check; PyTorch's kernel refuses it)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, "
            "a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs)."
        )
    return _unbatched_feature_dropout(input, p, training, inplace, input.ndim == 3)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Channel-wise dropout of (N, C, H, W) inputs (a 3-D input is taken as (N, C, L), with
    PyTorch's warning)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p != p:  # (NaN passes the Python check; PyTorch's kernel refuses it)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).",
            UserWarning,
            stacklevel=2,
        )
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning,
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W) inputs."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p != p:  # (NaN passes the Python check; PyTorch's kernel refuses it)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).",
            UserWarning,
            stacklevel=2,
        )
    return _unbatched_feature_dropout(input, p, training, inplace, input.ndim == 5)


_SELU_NEG = 1.7580993408473766


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p != p:  # (NaN passes the Python check; PyTorch's kernel refuses it)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * _const(0, input)
        return _into(input, out) if inplace else out
    shape = tuple(input.shape)
    if feature:
        shape = shape[:2] + (1,) * (input.ndim - 2)
    keep = (_rng(input).random(shape) >= p).astype(input._data.dtype)
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
