"""Tensor methods of the linalg family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import Any

from chainrule._dispatch import ops as _ops


class LinalgMethods:
    __slots__ = ()

    def mm(self, mat2: Any) -> Any:
        return _ops.mm(self, mat2)

    def bmm(self, mat2: Any) -> Any:
        return _ops.bmm(self, mat2)

    def mv(self, vec: Any) -> Any:
        return _ops.mv(self, vec)

    def dot(self, tensor: Any) -> Any:
        return _ops.dot(self, tensor)

    def outer(self, vec2: Any) -> Any:
        return _ops.outer(self, vec2)

    def addmm(self, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return _ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return _ops.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def baddbmm(self, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return _ops.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def det(self) -> Any:
        return _ops.det(self)

    def inverse(self) -> Any:
        return _ops.inverse(self)

    def slogdet(self) -> Any:
        return _ops.slogdet(self)

    def logdet(self) -> Any:
        return _ops.logdet(self)
