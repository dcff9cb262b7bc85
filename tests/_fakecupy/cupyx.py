"""``cupyx`` for the stand-in: ``scatter_add`` / ``scatter_max`` / ``scatter_min`` and
``errstate(linalg=...)``."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from tests._fakecupy import _core

# cupyx.errstate(linalg=...): 'ignore' (CuPy's default: failures give NaNs) or 'raise'.
LINALG = ["ignore"]


def _scatter(uf: np.ufunc, a: Any, slices: Any, value: Any) -> None:
    if type(a) is not _core.ndarray:
        raise _core._unsupported(a)
    uf.at(a._a, _core._index(slices), _core.unwrap(value))


def scatter_add(a: Any, slices: Any, value: Any) -> None:
    """``a[slices] += value``, unbuffered (``cupyx.scatter_add``)."""
    _scatter(np.add, a, slices, value)


def scatter_max(a: Any, slices: Any, value: Any) -> None:
    """``a[slices] = maximum(a[slices], value)``, unbuffered (``cupyx.scatter_max``)."""
    _scatter(np.maximum, a, slices, value)


def scatter_min(a: Any, slices: Any, value: Any) -> None:
    """``a[slices] = minimum(a[slices], value)``, unbuffered (``cupyx.scatter_min``)."""
    _scatter(np.minimum, a, slices, value)


@contextlib.contextmanager
def errstate(*, linalg: str | None = None) -> Iterator[None]:
    """``cupyx.errstate``: ``linalg='raise'`` makes ``cupy.linalg`` failures raise."""
    prev = LINALG[0]
    if linalg is not None:
        if linalg not in ("ignore", "raise"):
            raise ValueError(f"linalg must be 'ignore' or 'raise', got {linalg!r}")
        LINALG[0] = linalg
    try:
        yield
    finally:
        LINALG[0] = prev


def geterr() -> dict[str, str]:
    return {"linalg": LINALG[0]}
