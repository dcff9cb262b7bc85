"""Shared by the composite modules: the ops package (reached at call time) and constants."""

from __future__ import annotations

from typing import Any

from chainrule.backends import as_array, backend_of

__all__ = []


def _ops() -> Any:
    # The sibling families through the op table (chainrule/_dispatch.py), not the package,
    # which imports this module.
    from chainrule._dispatch import ops

    return ops


def _t(data: Any) -> Any:
    from chainrule._tensor import _new_tensor

    return _new_tensor(as_array(data))


def _xp(t: Any) -> Any:
    """The array module of Tensor ``t``'s device (NumPy for anything else)."""
    return backend_of(t._data if hasattr(t, "_data") else t).xp


def _is_t(x: Any) -> bool:
    return hasattr(x, "_data")
