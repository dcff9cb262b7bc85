"""Tensor methods of the inplace family (see chainrule/_methods/__init__.py).

``zero_``, ``fill_``, ``copy_``, ``add_``, ``sub_``, ``mul_``, ``div_`` and the ``+=``-style
operators for those four live in _tensor.py; ``masked_fill_``, ``index_add_``, ``scatter_``,
``scatter_add_`` and ``index_put_`` in _methods/indexing.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule._dispatch import ops as _ops

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


class InplaceMethods:
    __slots__ = ()

    def pow_(self, exponent: Any) -> Tensor:
        return _ops.pow_(self, exponent)

    def __ipow__(self, exponent: Any) -> Tensor:
        return _ops.pow_(self, exponent)

    def relu_(self) -> Tensor:
        return _ops.relu_(self)

    def sigmoid_(self) -> Tensor:
        return _ops.sigmoid_(self)

    def tanh_(self) -> Tensor:
        return _ops.tanh_(self)

    def exp_(self) -> Tensor:
        return _ops.exp_(self)

    def neg_(self) -> Tensor:
        return _ops.neg_(self)

    def abs_(self) -> Tensor:
        return _ops.abs_(self)

    def sqrt_(self) -> Tensor:
        return _ops.sqrt_(self)

    def log_(self) -> Tensor:
        return _ops.log_(self)

    def sin_(self) -> Tensor:
        return _ops.sin_(self)

    def cos_(self) -> Tensor:
        return _ops.cos_(self)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp_(self, min, max)

    def clip_(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops.clamp_(self, min, max)

    def clamp_min_(self, min: Any) -> Tensor:
        return _ops.clamp_min_(self, min)

    def clamp_max_(self, max: Any) -> Tensor:
        return _ops.clamp_max_(self, max)
