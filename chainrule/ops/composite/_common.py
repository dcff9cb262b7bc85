"""Shared by the composite modules: the ops package (reached at call time) and constants."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = []


def _ops() -> Any:
    # The sibling families through the op table (chainrule/_dispatch.py), not the package,
    # which imports this module.
    from chainrule._dispatch import ops

    return ops


def _t(data: Any) -> Any:
    from chainrule._tensor import _new_tensor

    return _new_tensor(np.asarray(data))


def _is_t(x: Any) -> bool:
    return hasattr(x, "_data")
