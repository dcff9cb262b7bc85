"""Shared by the indexing modules: the scatter-add of a backend, PyTorch's 0-dim message and
dtype names."""

from __future__ import annotations

from typing import Any

from chainrule.backends import backend_of

__all__ = []


def scatter_add_into(target: Any, index: Any, values: Any) -> None:
    """``target[index] += values`` where repeated indices all contribute, via the backend
    (``np.add.at`` on NumPy, an atomic scatter-add on GPU backends)."""
    backend_of(target).scatter_add(target, index, values)


ZERO_DIM_MSG = (
    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
    "C++ to convert a 0-dim tensor to a number"
)


def _legacy(dt: Any) -> str:
    from chainrule.ops._registry import _legacy_name

    return _legacy_name(dt)
