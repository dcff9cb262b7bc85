"""The NumPy (CPU) backend."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, ContextManager

import numpy as np

from chainrule.backends.base import Backend

__all__ = ["NumpyBackend"]

_UFUNCS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum}


class NumpyBackend(Backend):
    """CPU arrays through NumPy."""

    name = "numpy"
    device = "cpu"
    xp = np

    def device_of(self, array: Any) -> str:
        return "cpu"

    def device_index(self, array: Any) -> int | None:
        return None

    def asarray(self, obj: Any, dtype: Any = None, device: Any = None) -> np.ndarray:
        return np.asarray(obj, dtype=dtype)

    def to_host(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def from_host(self, array: Any, device: Any = None) -> np.ndarray:
        # asanyarray: a host array that chainrule.compile traces (a GPU array's copy brought
        # back by ``.cpu()`` during a capture) stays a Tracer, so what reads it is recorded.
        return np.asanyarray(array)

    def copy_to_device(self, array: Any, device: Any = None) -> np.ndarray:
        return np.array(array, copy=True)

    def scatter_add(self, target: np.ndarray, index: Any, values: Any) -> None:
        np.add.at(target, index, values)

    def scatter_reduce(self, target: np.ndarray, index: Any, values: Any, reduce: str) -> None:
        try:
            uf = _UFUNCS[reduce]
        except KeyError:
            raise ValueError(
                f"scatter_reduce: reduce must be one of {sorted(_UFUNCS)}, got {reduce!r}"
            ) from None
        uf.at(target, index, values)

    def writeable(self, array: Any) -> bool:
        return bool(array.flags.writeable)

    def accumulate(self, array: Any, axis: int, reduce: str) -> np.ndarray:
        return _UFUNCS[reduce].accumulate(array, axis=axis)

    def errstate(self, **kwargs: Any) -> ContextManager[Any]:
        return np.errstate(**kwargs)

    def default_rng(self, seed: int | None = None, device: Any = None) -> Any:
        # numpy.random loads on first use (a sixth of NumPy's import time).
        return np.random.default_rng(seed)

    def ensure_array(self, value: Any) -> np.ndarray:
        return value if type(value) is np.ndarray else np.asarray(value)

    def check_index_bounds(self, index: Any, size: int, dim: int = 0) -> None:
        index = np.asarray(index)
        if index.size == 0:
            return
        lo, hi = int(index.min()), int(index.max())
        bad = lo if lo < -size else hi if hi >= size else None
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")

    def linalg_errors(self) -> ContextManager[Any]:
        return contextlib.nullcontext()  # NumPy's linalg raises LinAlgError by itself

    def float_to_int(self, array: Any, dtype: Any) -> np.ndarray:
        # NumPy warns "invalid value encountered in cast" for NaN/inf; PyTorch does not.
        with np.errstate(invalid="ignore"):
            return np.trunc(array).astype(dtype)

    def sliding_window_view(self, array: Any, window_shape: Any, axis: Any = None) -> np.ndarray:
        return np.lib.stride_tricks.sliding_window_view(array, window_shape, axis=axis)

    def as_strided(self, array: Any, shape: Any, strides: Any) -> np.ndarray:
        return np.lib.stride_tricks.as_strided(array, shape=shape, strides=strides, writeable=False)

    def einsum(self, subscripts: str, *operands: Any, out: Any = None) -> Any:
        if out is None:
            return np.einsum(subscripts, *operands)
        return np.einsum(subscripts, *operands, out=out)

    def lu_factor(self, a: Any) -> tuple[Any, Any]:
        import scipy.linalg  # an optional dependency, imported on first use

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SciPy warns on an exactly singular matrix
            lu, piv = scipy.linalg.lu_factor(np.asarray(a), check_finite=False)
        return lu, (piv + 1).astype(np.int32)
