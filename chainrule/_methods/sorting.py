"""Tensor methods of the sorting family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import Any

from chainrule._dispatch import ops as _ops


class SortingMethods:
    __slots__ = ()

    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
        return _ops.sort(self, dim, descending, stable=stable)

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
        return _ops.argsort(self, dim, descending, stable)

    def msort(self) -> Any:
        return _ops.msort(self)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        return _ops.topk(self, k, dim, largest, sorted)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> Any:
        return _ops.kthvalue(self, k, dim, keepdim)

    def median(self, dim: Any = None, keepdim: bool = False) -> Any:
        return _ops.median(self, dim, keepdim)

    def nanmedian(self, dim: Any = None, keepdim: bool = False) -> Any:
        return _ops.nanmedian(self, dim, keepdim)

    def mode(self, dim: int = -1, keepdim: bool = False) -> Any:
        return _ops.mode(self, dim, keepdim)

    def cummax(self, dim: int) -> Any:
        return _ops.cummax(self, dim)

    def cummin(self, dim: int) -> Any:
        return _ops.cummin(self, dim)

    def unique(
        self,
        sorted: bool = True,
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: Any = None,
    ) -> Any:
        return _ops.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(
        self, return_inverse: bool = False, return_counts: bool = False, dim: Any = None
    ) -> Any:
        return _ops.unique_consecutive(self, return_inverse, return_counts, dim)
