"""Tensor methods of the reduction family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

from chainrule._dispatch import ops as _ops

if TYPE_CHECKING:
    from chainrule._tensor import Tensor
    from chainrule.return_types import _ValuesIndices as _ReturnType


class ReductionMethods:
    __slots__ = ()

    def prod(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.prod(self, dim, keepdim, dtype=dtype)

    @overload
    def max(self, dim: None = None, keepdim: bool = False) -> Tensor: ...
    @overload
    def max(self, dim: int, keepdim: bool = False) -> _ReturnType: ...
    @overload
    def max(self, dim: Any, keepdim: bool = False) -> Tensor | tuple[Tensor, ...]: ...
    def max(self, dim: Any = None, keepdim: bool = False) -> Tensor | tuple[Tensor, ...]:
        return _ops.max(self, dim, keepdim)

    @overload
    def min(self, dim: None = None, keepdim: bool = False) -> Tensor: ...
    @overload
    def min(self, dim: int, keepdim: bool = False) -> _ReturnType: ...
    @overload
    def min(self, dim: Any, keepdim: bool = False) -> Tensor | tuple[Tensor, ...]: ...
    def min(self, dim: Any = None, keepdim: bool = False) -> Tensor | tuple[Tensor, ...]:
        return _ops.min(self, dim, keepdim)

    def amax(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        return _ops.amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: bool = False) -> Tensor:
        return _ops.amin(self, dim, keepdim)

    def argmax(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.argmax(self, dim, keepdim)

    def argmin(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.argmin(self, dim, keepdim)

    def var(
        self,
        dim: Any = None,
        unbiased: Any = None,
        keepdim: bool = False,
        *,
        correction: Any = None,
    ) -> Tensor:
        return _ops.var(self, dim, unbiased, keepdim, correction=correction)

    def std(
        self,
        dim: Any = None,
        unbiased: Any = None,
        keepdim: bool = False,
        *,
        correction: Any = None,
    ) -> Tensor:
        return _ops.std(self, dim, unbiased, keepdim, correction=correction)

    def norm(
        self, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
    ) -> Tensor:
        return _ops.norm(self, p, dim, keepdim, dtype)

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Tensor:
        return _ops.logsumexp(self, dim, keepdim)

    def cumsum(self, dim: int, *, dtype: Any = None) -> Tensor:
        return _ops.cumsum(self, dim, dtype=dtype)

    def cumprod(self, dim: int, *, dtype: Any = None) -> Tensor:
        return _ops.cumprod(self, dim, dtype=dtype)

    def all(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.all(self, dim, keepdim)

    def any(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _ops.any(self, dim, keepdim)

    def count_nonzero(self, dim: Any = None) -> Tensor:
        return _ops.count_nonzero(self, dim)
