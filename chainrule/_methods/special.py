"""Tensor methods of the special-function family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule._dispatch import ops as _ops

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


class SpecialMethods:
    __slots__ = ()

    def lgamma(self) -> Tensor:
        return _ops.lgamma(self)

    def digamma(self) -> Tensor:
        return _ops.digamma(self)

    def polygamma(self, n: int) -> Tensor:
        return _ops.polygamma(n, self)

    def mvlgamma(self, p: int) -> Tensor:
        return _ops.mvlgamma(self, p)

    def erfinv(self) -> Tensor:
        return _ops.erfinv(self)

    def i0(self) -> Tensor:
        return _ops.i0(self)

    def xlogy(self, other: Any) -> Tensor:
        return _ops.xlogy(self, other)

    def igamma(self, other: Any) -> Tensor:
        return _ops.igamma(self, other)

    def igammac(self, other: Any) -> Tensor:
        return _ops.igammac(self, other)

    def logit(self, eps: float | None = None) -> Tensor:
        return _ops.logit(self, eps)
