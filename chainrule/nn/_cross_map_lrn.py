"""The forward of ``nn.CrossMapLRN2d``: local response normalization across channels, with
the window of PyTorch's legacy (Lua Torch) kernel.

For channel c, with p = (size - 1) // 2 + 1, the kernel sums x_j^2 over
j in [c - p + 1, c + p - 1] (clipped to the channels); its running sum never drops channel 0,
so for c >= p the sum also holds x_0^2. Then y = x * (k + alpha / size * sum)^(-beta). Both
quirks are kept so that outputs equal PyTorch's.
"""

from __future__ import annotations

import numpy as np

from chainrule import ops as _ops
from chainrule._creation import tensor
from chainrule._tensor import Tensor

__all__: list[str] = []


def _window(channels: int, size: int) -> np.ndarray:
    """M[c, j] = 1 where x_j^2 enters channel c's sum."""
    p = (size - 1) // 2 + 1
    c = np.arange(channels)[:, None]
    j = np.arange(channels)[None, :]
    m = (j >= c - p + 1) & (j <= c + p - 1)
    m[:, 0] |= np.arange(channels) >= p
    return m.astype(np.float64)


def cross_map_lrn2d(input: Tensor, size: int, alpha: float, beta: float, k: float) -> Tensor:
    """y = x * (k + alpha / size * sum_{j in window(c)} x_j^2)^(-beta) over (N, C, H, W)."""
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    m = tensor(_window(input.shape[1], size), dtype=input.dtype)
    sums = _ops.einsum("cj,njhw->nchw", m, input * input)
    return input * (sums * (alpha / size) + k) ** (-beta)
