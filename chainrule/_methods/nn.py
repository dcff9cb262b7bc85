"""Tensor methods of the nn family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import Any

from chainrule._dispatch import ops as _ops


class NnMethods:
    __slots__ = ()

    def softmax(self, dim: int, dtype: Any = None) -> Any:
        return _ops.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Any:
        return _ops.log_softmax(self, dim, dtype=dtype)
