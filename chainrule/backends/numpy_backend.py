"""The NumPy (CPU) backend."""

from __future__ import annotations

from typing import Any

import numpy as np


class NumpyBackend:
    """CPU arrays through NumPy."""

    name = "numpy"
    device = "cpu"
    xp = np

    def asarray(self, obj: Any, dtype: Any = None) -> np.ndarray:
        return np.asarray(obj, dtype=dtype)

    def to_host(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def scatter_add(self, target: np.ndarray, index: Any, values: Any) -> None:
        """target[index] += values, unbuffered, so repeated indices all contribute."""
        np.add.at(target, index, values)
