"""The hook forms ``torch.nn.utils.spectral_norm`` / ``remove_spectral_norm``.

``spectral_norm(m)`` moves the parameter ``weight`` to ``weight_orig``, keeps the power-iteration
vectors in buffers ``weight_u`` and ``weight_v``, and sets the plain attribute
``m.weight = weight_orig / sigma`` in a forward pre-hook (one power iteration per call in
training mode; none in eval mode).

Differs from torch: no state-dict version hooks (chainrule's ``state_dict`` has no
``_metadata``); checkpoints of the current format load as in PyTorch.
"""

from __future__ import annotations

from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.autograd import no_grad
from chainrule.nn import functional as F
from chainrule.nn.modules.module import Module
from chainrule.nn.parameter import Parameter

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]

_TRANSPOSED = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")


class SpectralNorm:
    """The forward pre-hook of the old-style spectral norm on one parameter."""

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """weight_orig / (u . W v), after ``n_power_iterations`` steps v <- normalize(W^T u),
        u <- normalize(W v) written into the buffers when ``do_power_iteration``."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                m = mat.detach()
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(_ops.mv(m.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(_ops.mv(m, v), dim=0, eps=self.eps))
            u = u.clone()
            v = v.clone()
        sigma = _ops.dot(u, _ops.mv(mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: object) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            mat = fn.reshape_weight_to_matrix(weight)
            h, w = mat.shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """w / sigma(w) through a forward pre-hook; ``dim`` defaults to 1 for transposed
    convolutions, else 0."""
    if dim is None:
        dim = 1 if any(c.__name__ in _TRANSPOSED for c in type(module).__mro__) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Turn ``name`` back into one plain Parameter holding the current normalized weight."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
