"""Tensor methods of the linalg family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule._dispatch import ops as _ops

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


class LinalgMethods:
    __slots__ = ()

    def mm(self, mat2: Any) -> Tensor:
        return _ops.mm(self, mat2)

    def bmm(self, mat2: Any) -> Tensor:
        return _ops.bmm(self, mat2)

    def mv(self, vec: Any) -> Tensor:
        return _ops.mv(self, vec)

    def dot(self, tensor: Any) -> Tensor:
        return _ops.dot(self, tensor)

    def outer(self, vec2: Any) -> Tensor:
        return _ops.outer(self, vec2)

    def addmm(self, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _ops.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def baddbmm(self, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _ops.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def det(self) -> Tensor:
        return _ops.det(self)

    def inverse(self) -> Tensor:
        return _ops.inverse(self)

    def slogdet(self) -> tuple[Tensor, Tensor]:
        return _ops.slogdet(self)

    def logdet(self) -> Tensor:
        return _ops.logdet(self)
