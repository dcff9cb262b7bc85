"""Tensor methods of the shape family (see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule._dispatch import ops as _ops

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


def _sizes(args: tuple[Any, ...]) -> Any:
    """``f(2, 3)`` or ``f((2, 3))``."""
    if len(args) == 1 and not isinstance(args[0], int) and hasattr(args[0], "__len__"):
        return tuple(args[0])
    return args


class ShapeMethods:
    __slots__ = ()

    def unflatten(self, dim: int, sizes: Any) -> Tensor:
        return _ops.unflatten(self, dim, sizes)

    def movedim(self, source: Any, destination: Any) -> Tensor:
        return _ops.movedim(self, source, destination)

    def moveaxis(self, source: Any, destination: Any) -> Tensor:
        return _ops.movedim(self, source, destination)

    def repeat(self, *repeats: Any) -> Tensor:
        return _ops.repeat(self, _sizes(repeats))

    def tile(self, *dims: Any) -> Tensor:
        return _ops.tile(self, _sizes(dims))

    def flip(self, *dims: Any) -> Tensor:
        return _ops.flip(self, _sizes(dims))

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        return _ops.roll(self, shifts, dims)

    def split(self, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.split(self, split_size, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.unbind(self, dim)

    def narrow(self, dim: int, start: Any, length: int) -> Tensor:
        return _ops.narrow(self, dim, start, length)

    def select(self, dim: int, index: int) -> Tensor:
        return _ops.select(self, dim, index)

    def tril(self, diagonal: int = 0) -> Tensor:
        return _ops.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        return _ops.triu(self, diagonal)

    def tril_(self, diagonal: int = 0) -> Tensor:
        return _ops.tril_(self, diagonal)

    def triu_(self, diagonal: int = 0) -> Tensor:
        return _ops.triu_(self, diagonal)

    def diag(self, diagonal: int = 0) -> Tensor:
        return _ops.diag(self, diagonal)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return _ops.diagonal(self, offset, dim1, dim2)
