"""``cupy.fft`` for the stand-in: NumPy's transforms with CuPy's signatures and dtypes.

What CuPy's ``cupy/fft/_fft.py`` does (checked against its source) and this models:

- the 19 names of ``cupy.fft.__all__`` (``fft``, ``ifft``, ``fft2``, ``ifft2``, ``fftn``,
  ``ifftn``, ``rfft``, ``irfft``, ``rfft2``, ``irfft2``, ``rfftn``, ``irfftn``, ``hfft``,
  ``ihfft``, ``fftfreq``, ``rfftfreq``, ``fftshift``, ``ifftshift``, ``config``); nothing
  else (NumPy's ``out=`` keyword, added in NumPy 2.0, does not exist: a ``TypeError``);
- the input must be a device array (``TypeError: The input array a must be a cupy.ndarray``);
- ``norm`` is None, ``"backward"``, ``"ortho"`` or ``"forward"`` (``ValueError`` otherwise);
- the precision follows the input: float16/float32/complex64 give complex64 (and float32 for
  the real outputs), everything else complex128/float64 (``_output_dtype``);
- ``axes=()`` returns the input itself for the complex transforms.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests._fakecupy import _core

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
    "config",
]


class _Config:
    """``cupy.fft.config``: the plan cache switches (nothing to cache on the host)."""

    enable_nd_planning = True
    use_multi_gpus = False

    @staticmethod
    def get_plan_cache() -> Any:
        return None


config = _Config()

_SINGLE = (np.float16, np.float32, np.complex64)


def _complex(dt: np.dtype) -> np.dtype:
    return np.dtype(np.complex64 if dt in _SINGLE else np.complex128)


def _real(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32 if dt in _SINGLE else np.float64)


def _transform(name: str, real_out: bool) -> Any:
    fn = getattr(np.fft, name)

    def f(a: Any, s_or_n: Any = None, axes_or_axis: Any = None, norm: Any = None) -> Any:
        if type(a) is not _core.ndarray:
            raise TypeError("The input array a must be a cupy.ndarray")
        if norm is None:
            norm = "backward"
        if norm not in ("backward", "ortho", "forward"):
            raise ValueError(
                f'Invalid norm value {norm}, should be "backward", "ortho", or "forward".'
            )
        _core.check_current(a)
        x = a._a
        dt = _real(x.dtype) if real_out else _complex(x.dtype)
        if axes_or_axis == () and not real_out and name in ("fftn", "ifftn", "fft2", "ifft2"):
            return a
        with np.errstate(all="ignore"):
            r = fn(x, s_or_n, axes_or_axis, norm=norm)
        return _core.wrap(np.asarray(r).astype(dt, copy=False))

    f.__name__ = name
    return f


def _one(name: str, real_out: bool) -> Any:
    g = _transform(name, real_out)

    def f(a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> Any:
        return g(a, n, axis, norm)

    f.__name__ = name
    return f


def _many(name: str, real_out: bool, default_axes: Any) -> Any:
    g = _transform(name, real_out)

    def f(a: Any, s: Any = None, axes: Any = default_axes, norm: Any = None) -> Any:
        return g(a, s, axes, norm)

    f.__name__ = name
    return f


fft = _one("fft", False)
ifft = _one("ifft", False)
rfft = _one("rfft", False)
irfft = _one("irfft", True)
hfft = _one("hfft", True)
ihfft = _one("ihfft", False)
fft2 = _many("fft2", False, (-2, -1))
ifft2 = _many("ifft2", False, (-2, -1))
rfft2 = _many("rfft2", False, (-2, -1))
irfft2 = _many("irfft2", True, (-2, -1))
fftn = _many("fftn", False, None)
ifftn = _many("ifftn", False, None)
rfftn = _many("rfftn", False, None)
irfftn = _many("irfftn", True, None)


def fftfreq(n: int, d: float = 1.0) -> Any:
    """The sample frequencies of an n-point DFT (a device array of float64)."""
    return _core.wrap(np.fft.fftfreq(n, d))


def rfftfreq(n: int, d: float = 1.0) -> Any:
    """The non-negative sample frequencies of an n-point real DFT (float64, device)."""
    return _core.wrap(np.fft.rfftfreq(n, d))


def fftshift(x: Any, axes: Any = None) -> Any:
    """The zero frequency moved to the centre (a device array)."""
    return _core.call(np.fft.fftshift, (x,), {"axes": axes})


def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of ``fftshift``."""
    return _core.call(np.fft.ifftshift, (x,), {"axes": axes})
