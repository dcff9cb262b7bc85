"""Selections and counts (not differentiable): nonzero, argwhere, take, isin, bincount, histc,
tril_indices and triu_indices."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops.composite._common import _is_t, _t, _xp

__all__ = [
    "nonzero",
    "argwhere",
    "take",
    "isin",
    "bincount",
    "histc",
    "tril_indices",
    "triu_indices",
]


# Selections and counts (not differentiable) ------------------------------------------------------


def nonzero(input: Any, *, as_tuple: bool = False) -> Any:
    """Indices of the nonzero elements: an (n, ndim) int64 tensor, or one 1-d tensor per dim
    with ``as_tuple=True`` (a 0-d input counts as 1-d)."""
    xp, a = _xp(input), input._data
    if as_tuple:
        idx = xp.nonzero(xp.atleast_1d(a))
        return tuple(_t(i.astype(np.int64)) for i in idx)
    return _t(xp.argwhere(a).astype(np.int64))


def argwhere(input: Any) -> Any:
    """``nonzero(input)``: an (n, ndim) int64 tensor of the nonzero positions."""
    return nonzero(input)


def take(input: Any, index: Any) -> Any:
    """Elements of the flattened ``input`` at ``index`` (any shape; the result has its shape)."""
    n = input.numel()
    idx = index._data
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = idx.max() if idx.max() >= n else idx.min()
        raise IndexError(
            f"out of range: tried to access index {int(bad)} on a tensor of {n} elements."
        )
    return input.reshape(-1)[_t(idx.astype(np.int64))]


@refuses_complex("isin", 2)
def isin(
    elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False
) -> Any:
    """True where an element of ``elements`` occurs in ``test_elements`` (either may be a
    scalar)."""
    xp = _xp(elements if _is_t(elements) else test_elements)
    e = xp.asarray(elements._data if _is_t(elements) else elements)
    t = xp.asarray(test_elements._data if _is_t(test_elements) else test_elements)
    return _t(xp.isin(e, t, invert=invert))


@refuses_complex("bincount", 1)
def bincount(input: Any, weights: Any = None, minlength: int = 0) -> Any:
    """Count of each value in the 1-d non-negative integer ``input`` (or the sum of
    ``weights`` at them), of length ``max(input) + 1`` or ``minlength``."""
    xp, a = _xp(input), input._data
    if a.ndim != 1 or not _kinds.is_integral(a, include_bool=True):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _t(xp.bincount(a, minlength=minlength).astype(np.int64))
    w = weights._data
    out = xp.bincount(a, weights=w, minlength=minlength)
    return _t(
        out.astype(w.dtype if _kinds.is_floating(w) and w.dtype.itemsize == 4 else np.float64)
    )


@refuses_complex("histc", 1)
def histc(input: Any, bins: int = 100, min: Any = 0, max: Any = 0) -> Any:
    """Histogram of ``bins`` equal-width bins over [min, max] (the data's range when both are
    0); values outside are ignored; the last bin includes ``max``."""
    xp, a = _xp(input), input._data
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("max must be larger than min")
    counts, _ = xp.histogram(a[(a >= lo) & (a <= hi)], bins=bins, range=(lo, hi))
    return _t(counts.astype(a.dtype))


def _tri_indices(row: int, col: int, offset: int, lower: bool, dtype: Any, device: Any) -> Any:
    from chainrule import _dtype

    f = np.tril_indices if lower else np.triu_indices
    r, c = f(row, offset, col)
    dt = _dtype.int64 if dtype is None else dtype
    return _t(np.stack([r, c]).astype(np.int64)).to(device, dt)


def tril_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = None,
    device: Any = None,
    layout: Any = None,
) -> Any:
    """The (2, N) coordinates of the lower triangle (on and below diagonal ``offset``)."""
    return _tri_indices(row, col, offset, True, dtype, device)


def triu_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = None,
    device: Any = None,
    layout: Any = None,
) -> Any:
    """The (2, N) coordinates of the upper triangle (on and above diagonal ``offset``)."""
    return _tri_indices(row, col, offset, False, dtype, device)
