"""Weight initialisers (``chainrule.nn.init``), in place, with PyTorch's formulas.

Each function fills ``tensor``'s array in place, outside autograd (as under ``no_grad``),
bumps its version counter and returns ``tensor``. Random ones draw from ``generator`` (a
``chainrule.Generator``) or the default generator.

Differs from torch: the random streams are NumPy's, so the values (not the distributions)
differ from PyTorch's for the same seed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chainrule._creation import rng_of as _rng_on
from chainrule._tensor import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
]


def _fill(tensor: Tensor, values: Any) -> Tensor:
    """Write ``values`` (host array or scalar) into ``tensor`` in place and bump its version."""
    data = tensor._data
    data[...] = np.asarray(values).astype(data.dtype, copy=False)
    tensor._bump_version()
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (``relu``: sqrt(2), ``tanh``: 5/3,
    ``leaky_relu``: sqrt(2 / (1 + slope^2)), ``selu``: 3/4, linear-like ones: 1)."""
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """fan_in = size(1) * receptive field, fan_out = size(0) * receptive field, where the
    receptive field is the product of the dims after the first two."""
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from U(a, b)."""
    return _fill(tensor, _rng_on(generator, tensor.device).uniform(a, b, size=tuple(tensor.shape)))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from N(mean, std^2)."""
    return _fill(
        tensor, _rng_on(generator, tensor.device).normal(mean, std, size=tuple(tensor.shape))
    )


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """Fill with draws from N(mean, std^2) restricted to [a, b] (by redrawing the values that
    fall outside; a and b are absolute bounds, as in PyTorch)."""
    rng = _rng_on(generator, tensor.device)
    out = rng.normal(mean, std, size=tuple(tensor.shape))
    bad = (out < a) | (out > b)
    for _ in range(1000):
        if not bad.any():
            break
        out[bad] = rng.normal(mean, std, size=int(bad.sum()))
        bad = (out < a) | (out > b)
    else:
        out = np.clip(out, a, b)
    return _fill(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the main diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a {3,4,5}-D conv weight with the Dirac delta (identity convolution)."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    w = np.zeros(tuple(sizes))
    for g in range(groups):
        for d in range(min_dim):
            w[(g * out_per_group + d, d) + tuple(s // 2 for s in sizes[2:])] = 1
    return _fill(tensor, w)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan_mode) (He et al., 2015)."""
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan_mode)."""
    if 0 in tensor.shape:
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix (rows or columns orthonormal) from the QR decomposition of a
    Gaussian matrix, with the signs fixed so that the result is uniformly distributed (Saxe et
    al., 2013); dims after the first are flattened."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rng_on(generator, tensor.device).normal(0.0, 1.0, size=(rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    d = np.sign(np.diag(r))
    d[d == 0] = 1
    q = q * d
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tuple(tensor.shape)))
