"""Tensor methods of the nn family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule._dispatch import ops as _ops

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


class NnMethods:
    __slots__ = ()

    def softmax(self, dim: int, dtype: Any = None) -> Tensor:
        return _ops.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Tensor:
        return _ops.log_softmax(self, dim, dtype=dtype)
