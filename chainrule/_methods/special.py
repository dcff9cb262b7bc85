"""Tensor methods of the special-function family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import Any

from chainrule._dispatch import ops as _ops


class SpecialMethods:
    __slots__ = ()

    def lgamma(self) -> Any:
        return _ops.lgamma(self)

    def digamma(self) -> Any:
        return _ops.digamma(self)

    def polygamma(self, n: int) -> Any:
        return _ops.polygamma(n, self)

    def mvlgamma(self, p: int) -> Any:
        return _ops.mvlgamma(self, p)

    def erfinv(self) -> Any:
        return _ops.erfinv(self)

    def i0(self) -> Any:
        return _ops.i0(self)

    def xlogy(self, other: Any) -> Any:
        return _ops.xlogy(self, other)

    def igamma(self, other: Any) -> Any:
        return _ops.igamma(self, other)

    def igammac(self, other: Any) -> Any:
        return _ops.igammac(self, other)

    def logit(self, eps: float | None = None) -> Any:
        return _ops.logit(self, eps)
