"""Tensor methods of the indexing family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule._dispatch import ops as _ops

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


class IndexingMethods:
    __slots__ = ()

    def gather(self, dim: int, index: Any, *, sparse_grad: bool = False) -> Tensor:
        return _ops.gather(self, dim, index)

    def scatter(
        self, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: str | None = None
    ) -> Tensor:
        return _ops.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_(
        self, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: str | None = None
    ) -> Tensor:
        return _ops.scatter_(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim: int, index: Any, src: Any) -> Tensor:
        return _ops.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim: int, index: Any, src: Any) -> Tensor:
        return _ops.scatter_add_(self, dim, index, src)

    def index_select(self, dim: int, index: Any) -> Tensor:
        return _ops.index_select(self, dim, index)

    def index_add(self, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.index_add(self, dim, index, source, alpha=alpha)

    def index_add_(self, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
        return _ops.index_add_(self, dim, index, source, alpha=alpha)

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        return _ops.masked_fill(self, mask, value)

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        return _ops.masked_fill_(self, mask, value)

    def masked_select(self, mask: Any) -> Tensor:
        return _ops.masked_select(self, mask)

    def take_along_dim(self, indices: Any, dim: int | None = None) -> Tensor:
        return _ops.take_along_dim(self, indices, dim)

    def index_put_(self, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
        return _ops.index_put_(self, indices, values, accumulate)

    def index_put(self, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
        return _ops.index_put(self, indices, values, accumulate)
