"""``torch.nn.utils.parametrizations``: weight normalization and spectral normalization as
parametrizations (``parametrize.register_parametrization``), with PyTorch's state-dict keys
(``parametrizations.weight.original0`` / ``original1`` for weight_norm's g and v;
``parametrizations.weight.original`` plus ``parametrizations.weight.0._u`` / ``._v`` for
spectral_norm's power-iteration vectors).
``orthogonal`` lives in ``_orthogonal.py``.
"""

from __future__ import annotations

from typing import Any

from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.autograd import no_grad
from chainrule.nn import functional as F
from chainrule.nn.modules.module import Module
from chainrule.nn.utils import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """||v||_2 over every axis but ``dim`` (kept with size 1); over all axes when
    ``dim == -1`` (a 0-d result)."""
    if dim == -1:
        return _ops.sqrt(_ops.sum(v * v))
    axes = tuple(a for a in range(v.ndim) if a != dim)
    return _ops.sqrt(_ops.sum(v * v, axes, keepdim=True)) if axes else _ops.abs(v)


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """w = g * v / ||v|| (norm over all axes but ``dim``)."""
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    """w = g v / ||v||: forward(g, v); right_inverse(w) = (||w||, w)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as w = g v / ||v||, the norm taken over every axis but
    ``dim`` (over all when ``dim is None``); g is ``original0``, v is ``original1``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


def _l2_normalize(x: Tensor, eps: float) -> Tensor:
    return F.normalize(x, dim=0, eps=eps)


class _SpectralNorm(Module):
    """w / sigma(w), sigma estimated by power iteration on the weight as a matrix (axis ``dim``
    first, the others flattened); the vectors ``_u`` and ``_v`` are buffers, advanced
    ``n_power_iterations`` times on each evaluation in training mode."""

    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            with no_grad():
                mat = self._reshape_weight_to_matrix(weight)
                h, w = mat.shape
                u = weight.new_empty(h).normal_(0, 1)
                v = weight.new_empty(w).normal_(0, 1)
                self.register_buffer("_u", _l2_normalize(u, eps))
                self.register_buffer("_v", _l2_normalize(v, eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.flatten(1)

    def _power_method(self, mat: Tensor, n: int) -> None:
        # u <- normalize(W v), v <- normalize(W^T u), written into the buffers in place.
        with no_grad():
            mat = mat.detach()
            for _ in range(n):
                self._u.copy_(_l2_normalize(_ops.mv(mat, self._v), self.eps))
                self._v.copy_(_l2_normalize(_ops.mv(mat.t(), self._u), self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return _l2_normalize(weight, self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = _ops.dot(u, _ops.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        # The value is taken to be already spectrally normalized, as in PyTorch.
        return value


_TRANSPOSED = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Reparametrize ``module.<name>`` as w / sigma(w), sigma the largest singular value of the
    weight seen as a matrix along ``dim`` (1 for transposed convolutions, else 0), estimated
    by power iteration."""
    weight: Any = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        cls = parametrize.type_before_parametrizations(module)
        dim = 1 if any(c.__name__ in _TRANSPOSED for c in cls.__mro__) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module


from chainrule.nn.utils._orthogonal import orthogonal  # noqa: E402
