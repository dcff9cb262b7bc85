"""Tensor methods of the composite and stacking families (ops/composite/, ops/stacking.py;
see chainrule/_methods/__init__.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from chainrule._dispatch import ops as _ops
from chainrule._methods._base import TensorAttrs

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


class CompositeMethods(TensorAttrs):
    __slots__ = ()

    def addcmul(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        return _ops.addcmul(self, tensor1, tensor2, value=value)

    def addcmul_(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        # through inplace_compute, whose write refuses a result of a higher kind than self's
        # dtype (a complex operand on a real self: PyTorch's "result type ... can't be cast")
        return _ops.inplace_compute(
            cast("Tensor", self),
            lambda a: _ops.addcmul(a, tensor1, tensor2, value=value),
            (tensor1, tensor2),
        )

    def addcdiv(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        return _ops.addcdiv(self, tensor1, tensor2, value=value)

    def addcdiv_(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        return _ops.inplace_compute(
            cast("Tensor", self),
            lambda a: _ops.addcdiv(a, tensor1, tensor2, value=value),
            (tensor1, tensor2),
        )

    def addr(self, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _ops.addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def addbmm(self, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _ops.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def inner(self, other: Any) -> Tensor:
        return _ops.inner(self, other)

    def ger(self, vec2: Any) -> Tensor:
        return _ops.ger(self, vec2)

    def matrix_power(self, n: int) -> Tensor:
        return _ops.matrix_power(self, n)

    def trace(self) -> Tensor:
        return _ops.trace(self)

    def dist(self, other: Any, p: float = 2) -> Tensor:
        return _ops.dist(self, other, p)

    def renorm(self, p: float, dim: int, maxnorm: float) -> Tensor:
        return _ops.renorm(self, p, dim, maxnorm)

    def diff(self, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Tensor:
        return _ops.diff(self, n, dim, prepend, append)

    def nansum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.nansum(self, dim, keepdim, dtype=dtype)

    def nanmean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.nanmean(self, dim, keepdim, dtype=dtype)

    def aminmax(self, *, dim: int | None = None, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        return _ops.aminmax(self, dim=dim, keepdim=keepdim)

    def cov(self, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Tensor:
        return _ops.cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self) -> Tensor:
        return _ops.corrcoef(self)

    def hypot(self, other: Any) -> Tensor:
        return _ops.hypot(self, other)

    def sinc(self) -> Tensor:
        return _ops.sinc(self)

    def heaviside(self, values: Any) -> Tensor:
        return _ops.heaviside(self, values)

    def copysign(self, other: Any) -> Tensor:
        return _ops.copysign(self, other)

    def logaddexp(self, other: Any) -> Tensor:
        return _ops.logaddexp(self, other)

    def logaddexp2(self, other: Any) -> Tensor:
        return _ops.logaddexp2(self, other)

    def logcumsumexp(self, dim: int) -> Tensor:
        return _ops.logcumsumexp(self, dim)

    def exp2(self) -> Tensor:
        return _ops.exp2(self)

    def deg2rad(self) -> Tensor:
        return _ops.deg2rad(self)

    def rad2deg(self) -> Tensor:
        return _ops.rad2deg(self)

    def positive(self) -> Tensor:
        return _ops.positive(self)

    def sgn(self) -> Tensor:
        return _ops.sgn(self)

    def signbit(self) -> Tensor:
        return _ops.signbit(self)

    def isposinf(self) -> Tensor:
        return _ops.isposinf(self)

    def isneginf(self) -> Tensor:
        return _ops.isneginf(self)

    def isreal(self) -> Tensor:
        return _ops.isreal(self)

    def nonzero(self, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
        return _ops.nonzero(self, as_tuple=as_tuple)

    def argwhere(self) -> Tensor:
        return _ops.argwhere(self)

    def take(self, index: Any) -> Tensor:
        return _ops.take(self, index)

    def bincount(self, weights: Any = None, minlength: int = 0) -> Tensor:
        return _ops.bincount(self, weights, minlength)

    def histc(self, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
        return _ops.histc(self, bins, min, max)

    def kron(self, other: Any) -> Tensor:
        return _ops.kron(self, other)

    def repeat_interleave(
        self, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
    ) -> Tensor:
        if repeats is None:
            return _ops.repeat_interleave(self)
        return _ops.repeat_interleave(self, repeats, dim, output_size=output_size)

    def broadcast_to(self, size: Any) -> Tensor:
        return _ops.broadcast_to(self, size)

    def tensor_split(self, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.tensor_split(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections: Any) -> tuple[Tensor, ...]:
        return _ops.hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections: Any) -> tuple[Tensor, ...]:
        return _ops.vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections: Any) -> tuple[Tensor, ...]:
        return _ops.dsplit(self, indices_or_sections)

    def rot90(self, k: int = 1, dims: Any = (0, 1)) -> Tensor:
        return _ops.rot90(self, k, dims)

    def fliplr(self) -> Tensor:
        return _ops.fliplr(self)

    def flipud(self) -> Tensor:
        return _ops.flipud(self)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        return _ops.diag_embed(self, offset, dim1, dim2)

    def diagflat(self, offset: int = 0) -> Tensor:
        return _ops.diagflat(self, offset)
