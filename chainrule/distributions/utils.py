"""Helpers shared by the distributions: broadcasting parameters, probabilities and logits,
``lazy_property``, triangular-matrix packing, and the random draws that are not written with
differentiable ops (gamma, Poisson, binomial, multinomial).
"""

from __future__ import annotations

import math
from functools import update_wrapper
from numbers import Number
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar, overload

import numpy as np

from chainrule import _creation, _dtype
from chainrule import ops as _ops
from chainrule._tensor import Size, Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.backends import backend_of

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "probs_to_logits",
    "clamp_probs",
    "lazy_property",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
    "euler_constant",
    "finfo",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


class finfo:
    """Machine limits of a floating chainrule dtype (``torch.finfo``'s fields)."""

    def __init__(self, dtype: Any = None) -> None:
        dtype = dtype or _dtype.get_default_dtype()
        f = np.finfo(np.dtype(dtype.np))
        self.dtype = dtype
        self.bits = f.bits
        self.eps = float(f.eps)
        self.max = float(f.max)
        self.min = float(f.min)
        self.tiny = float(f.tiny)
        self.smallest_normal = float(f.tiny)
        self.resolution = float(f.resolution)


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Broadcast tensors and numbers to one shape. Numbers become tensors of the first tensor's
    dtype (the default dtype when there is none).

    Raises:
        ValueError: when a value is neither a Tensor nor a number, as PyTorch.
    """
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
            "implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        ref = next((v for v in values if isinstance(v, Tensor)), None)
        dtype = ref.dtype if ref is not None else _dtype.get_default_dtype()
        device = ref.device if ref is not None else None
        values = tuple(
            v if isinstance(v, Tensor) else _creation.tensor(float(v), dtype=dtype, device=device)
            for v in values
        )
    shape = Size(np.broadcast_shapes(*[tuple(v.shape) for v in values]))
    return tuple(v if tuple(v.shape) == tuple(shape) else v.expand(shape) for v in values)


def broadcast_shapes(*shapes: Any) -> Size:
    return Size(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.ndim - dim]) + (-1,)).sum(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp probabilities to the open interval (eps, 1 - eps) of their dtype."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: sigmoid for a binary variable, else softmax over the last
    dimension."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped away from 0 and 1): log p - log(1 - p) for a binary
    variable, else log p (the logits of a categorical are defined up to a constant)."""
    ps = clamp_probs(probs)
    if is_binary:
        return ps.log() - (-ps).log1p()
    return ps.log()


_T = TypeVar("_T")


class lazy_property(Generic[_T]):
    """A property computed on first access and then stored on the instance (so that
    ``'probs' in d.__dict__`` tells which parametrization was given, as in PyTorch)."""

    def __init__(self, wrapped: Callable[[Any], _T]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    if TYPE_CHECKING:
        # The instance's own attribute takes the value (an __init__ may set it; __get__ stores
        # it there), so it reads as a settable attribute of type _T. At run time there is no
        # __set__: a non-data descriptor is what lets the instance's value win.
        def __set__(self, instance: Any, value: _T) -> None: ...

    @overload
    def __get__(self, instance: None, obj_type: Any = None) -> Any: ...
    @overload
    def __get__(self, instance: object, obj_type: Any = None) -> _T: ...
    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            from chainrule.distributions.constraints import _LazyPropertyMarker

            return _LazyPropertyMarker(self.wrapped)
        with _grad_mode.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (from diagonal ``diag``) of the last two dims, row by row."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = np.tril_indices(n, k=diag)
    return mat[
        ..., _creation.tensor(rows, device=mat.device), _creation.tensor(cols, device=mat.device)
    ]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """Inverse of ``tril_matrix_to_vec``: a lower-triangular matrix from its packed entries."""
    m = vec.shape[-1]
    # m = n (n + 1) / 2 + diag n - diag (diag + 1) / 2 for diag <= 0 (the packed count)
    n = int(round((-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * m)) / 2))
    rows, cols = np.tril_indices(n, k=diag)
    if len(rows) != m:
        raise ValueError(
            f"The size of last dimension is {m} which cannot be expressed as the "
            "lower triangular part of a square matrix."
        )
    idx = np.full((n, n), len(rows), dtype=np.int64)
    idx[rows, cols] = np.arange(len(rows))
    pad = _creation.zeros(tuple(vec.shape[:-1]) + (1,), dtype=vec.dtype, device=vec.device)
    padded = _ops.cat([vec, pad], -1)
    flat = padded[..., _creation.tensor(idx.reshape(-1), device=padded.device)]
    return flat.reshape(tuple(vec.shape[:-1]) + (n, n))


# Random draws without differentiable structure ----------------------------------------------


def _rng(ref: Any) -> np.random.Generator:
    """The default generator of the device of ``ref`` (the Tensor or the dtype, for the CPU,
    that the draws are for: Note [draws on the host])."""
    return _creation.rng_of(None, ref if isinstance(ref, Tensor) else "cpu")


# Note [draws on the host]
#     Draws come from the default generator on the host, from parameters read there (one copy
#     from a GPU), and go to the device of the tensor they are drawn for (``like``): the same
#     numbers on every device under one seed.


def _param_device(dist: Any) -> Any:
    """The device of a discrete distribution's parameter (``_param``: probs or logits)."""
    return dist._param.device


def _host(t: Tensor) -> np.ndarray:
    return backend_of(t._data).to_host(t._data).astype(np.float64)


def _as_tensor(a: np.ndarray, like: Any) -> Tensor:
    """The host array ``a`` as a tensor of ``like``'s dtype and device (``like``: a Tensor, or
    a dtype for the CPU)."""
    if not isinstance(like, Tensor):
        return _creation.tensor(np.asarray(a, dtype=np.dtype(like.np)))
    return _creation.tensor(np.asarray(a, dtype=np.dtype(like.dtype.np)), device=like.device)


def standard_normal(shape: Any, like: Any) -> Tensor:
    """Standard normal draws for ``like`` (a Tensor: its dtype and device; or a dtype)."""
    return _as_tensor(_rng(like).standard_normal(tuple(shape)), like)


def uniform01(shape: Any, like: Any) -> Tensor:
    """Uniform draws in [0, 1) for ``like`` (a Tensor: its dtype and device; or a dtype)."""
    return _as_tensor(_rng(like).random(tuple(shape)), like)


def poisson_sample(rate: Tensor) -> Tensor:
    return _as_tensor(_rng(rate).poisson(_host(rate)), rate)


def binomial_sample(count: Tensor, probs: Tensor) -> Tensor:
    n = _host(count)
    p = np.clip(_host(probs), 0, 1)
    n, p = np.broadcast_arrays(n, p)
    return _as_tensor(_rng(probs).binomial(n.astype(np.int64), p), probs)


def categorical_sample(probs: Tensor, shape: Any) -> Tensor:
    """``shape + probs.shape[:-1]`` category indices (int64) drawn from ``probs`` (rows are
    normalized; they need not sum to one)."""
    p = _host(probs)  # Note [draws on the host]
    p = p / p.sum(-1, keepdims=True)
    cdf = np.cumsum(p, -1)
    cdf[..., -1] = 1.0
    u = _rng(probs).random(tuple(shape) + p.shape[:-1] + (1,))
    idx = (u > cdf).sum(-1)
    # the last category with nonzero mass absorbs rounding at the top of the cdf
    return _creation.tensor(np.minimum(idx, p.shape[-1] - 1).astype(np.int64), device=probs.device)
