"""Helpers shared by the shape family's modules: argument normalising and index building."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__: list[str] = []


def _ints(seq: Any) -> tuple[int, ...]:
    if isinstance(seq, (int, np.integer)) or (hasattr(seq, "ndim") and seq.ndim == 0):
        return (int(seq),)
    return tuple(int(s) for s in seq)


def _type(t: Any) -> str:
    from chainrule._tensor import _type_name

    return "torch." + _type_name(t._data.dtype)


def _slice_index(dim: int, part: Any) -> tuple[Any, ...]:
    return (slice(None),) * dim + (part, Ellipsis)
