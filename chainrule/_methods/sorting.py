"""Tensor methods of the sorting family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule._dispatch import ops as _ops

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


class SortingMethods:
    __slots__ = ()

    def sort(
        self, dim: int = -1, descending: bool = False, *, stable: bool = False
    ) -> tuple[Tensor, Tensor]:
        return _ops.sort(self, dim, descending, stable=stable)

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
        return _ops.argsort(self, dim, descending, stable)

    def msort(self) -> Tensor:
        return _ops.msort(self)

    def topk(
        self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
    ) -> tuple[Tensor, Tensor]:
        return _ops.topk(self, k, dim, largest, sorted)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        return _ops.kthvalue(self, k, dim, keepdim)

    def median(self, dim: Any = None, keepdim: bool = False) -> Tensor | tuple[Tensor, ...]:
        return _ops.median(self, dim, keepdim)

    def nanmedian(self, dim: Any = None, keepdim: bool = False) -> Tensor | tuple[Tensor, ...]:
        return _ops.nanmedian(self, dim, keepdim)

    def mode(self, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        return _ops.mode(self, dim, keepdim)

    def cummax(self, dim: int) -> tuple[Tensor, Tensor]:
        return _ops.cummax(self, dim)

    def cummin(self, dim: int) -> tuple[Tensor, Tensor]:
        return _ops.cummin(self, dim)

    def unique(
        self,
        sorted: bool = True,
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: Any = None,
    ) -> Tensor | tuple[Tensor, ...]:
        return _ops.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(
        self, return_inverse: bool = False, return_counts: bool = False, dim: Any = None
    ) -> Tensor | tuple[Tensor, ...]:
        return _ops.unique_consecutive(self, return_inverse, return_counts, dim)
