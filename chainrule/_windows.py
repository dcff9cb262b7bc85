"""The signal windows of the torch namespace: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window`` and ``kaiser_window``, computed in float64 with NumPy and
returned in the requested floating dtype."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = [
    "hann_window",
    "hamming_window",
    "blackman_window",
    "bartlett_window",
    "kaiser_window",
]


def _window(
    name: str,
    window_length: int,
    periodic: bool,
    dtype: Any,
    device: Any,
    requires_grad: bool,
    f: Callable[[np.ndarray, int], Any],
) -> Any:
    from chainrule._creation import tensor
    from chainrule._dtype import get_default_dtype

    n = int(window_length)
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    dt = dtype if dtype is not None else get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if n == 0:
        w = np.zeros(0)
    elif n == 1:
        w = np.ones(1)
    else:
        m = n + 1 if periodic else n
        w = f(np.arange(m, dtype=np.float64), m)[:n]
    out = tensor(w, dtype=dt, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _cosine_sum(a0: float, a1: float, a2: float = 0.0) -> Callable[[np.ndarray, int], Any]:
    """The window a0 - a1 cos(2 pi n / (N - 1)) (+ a2 cos(4 pi n / (N - 1)) where a2 is not 0)."""

    def f(n: np.ndarray, m: int) -> Any:
        w = a0 - a1 * np.cos(2 * np.pi * n / (m - 1))
        return w + a2 * np.cos(4 * np.pi * n / (m - 1)) if a2 else w

    return f


def _bartlett(n: np.ndarray, m: int) -> Any:
    return 1 - np.abs(2 * n / (m - 1) - 1)


def _kaiser(beta: float) -> Callable[[np.ndarray, int], Any]:
    def f(n: np.ndarray, m: int) -> Any:
        return np.i0(beta * np.sqrt(np.clip(1 - (2 * n / (m - 1) - 1) ** 2, 0, None))) / np.i0(beta)

    return f


def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Hann window 0.5 - 0.5 cos(2 pi n / (N - 1)); ``periodic``: of length N + 1 with
    the last value dropped (for spectral analysis)."""
    f = _cosine_sum(0.5, 0.5)
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, f)


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Hamming window alpha - beta cos(2 pi n / (N - 1)) (``periodic`` as in
    :func:`hann_window`)."""
    f = _cosine_sum(alpha, beta)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, f)


def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Blackman window 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    f = _cosine_sum(0.42, 0.5, 0.08)
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, f)


def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The triangular Bartlett window 1 - |2 n / (N - 1) - 1|."""
    f = _bartlett
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, f)


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Kaiser window I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)."""
    f = _kaiser(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, f)
