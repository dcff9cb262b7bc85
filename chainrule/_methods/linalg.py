"""Tensor methods of the linalg family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import Any

_ops: Any = None  # bound to chainrule.ops by _tensor.py


class LinalgMethods:
    __slots__ = ()
