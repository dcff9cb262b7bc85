"""Transforms onto the simplex and onto Cholesky factors: Softmax, StickBreaking and
LowerCholesky."""

from __future__ import annotations

from typing import Any

import chainrule.nn.functional as F
from chainrule import _creation
from chainrule._tensor import Size, Tensor
from chainrule.distributions import constraints
from chainrule.distributions.transforms.base import Transform
from chainrule.distributions.transforms.elementwise import _clipped_sigmoid
from chainrule.distributions.utils import finfo

__all__ = ["LowerCholeskyTransform", "SoftmaxTransform", "StickBreakingTransform"]


class SoftmaxTransform(Transform):
    """x -> softmax(x) on the last dim (not bijective: the inverse is log, up to a constant)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        logprobs = x - x.amax(-1, keepdim=True)
        probs = logprobs.exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


def _cumsum_ones(x: Tensor, n: int) -> Tensor:
    return _creation.arange(1, n + 1, dtype=x.dtype, device=x.device)


class StickBreakingTransform(Transform):
    """R^(K-1) -> the K-simplex by stick breaking: z_k = sigmoid(x_k - log(K - k)) takes the
    fraction z_k of what remains of the stick. Bijective; the offsets make x = 0 the center."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        n = x.shape[-1]
        offset = (n + 1) - _cumsum_ones(x, n)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y: Tensor) -> Tensor:
        y_crop = y[..., :-1]
        n = y_crop.shape[-1]
        offset = y.shape[-1] - _cumsum_ones(y, n)
        sf = 1 - y_crop.cumsum(-1)
        # the remaining stick is clamped (not to reach 0) to keep the inverse finite
        sf = sf.clamp(min=finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        n = x.shape[-1]
        offset = (n + 1) - _cumsum_ones(x, n)
        x = x - offset.log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


def _diag_embed(d: Tensor) -> Tensor:
    n = d.shape[-1]
    return d.unsqueeze(-1) * _creation.eye(n, dtype=d.dtype, device=d.device)


class LowerCholeskyTransform(Transform):
    """An unconstrained square matrix -> a lower-triangular matrix with a positive diagonal:
    the strict lower triangle is kept and the diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return x.tril(-1) + _diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y: Tensor) -> Tensor:
        return y.tril(-1) + _diag_embed(y.diagonal(dim1=-2, dim2=-1).log())
