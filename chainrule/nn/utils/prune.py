"""``torch.nn.utils.prune``: mask entries or channels of a module's tensor.

Pruning ``m.weight`` moves the Parameter to ``m.weight_orig``, stores the 0/1 mask in the
buffer ``m.weight_mask`` and sets the plain attribute ``m.weight = weight_orig * weight_mask``,
recomputed by a forward pre-hook (the pruning method itself) before each call. Pruning the same
tensor again combines the methods in a ``PruningContainer``: the new method only sees the
entries (unstructured) or channels (structured) still kept. ``remove`` makes the pruned weight
permanent. The mask is computed before the module is changed, so a bad ``amount`` leaves the
module as it was.

Long because it is PyTorch's whole ``prune`` surface: six pruning methods, the container, and
the function form of each.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from chainrule import ops as _ops
from chainrule._creation import ones_like, rand, rand_like, zeros_like
from chainrule._tensor import Tensor
from chainrule.autograd import no_grad
from chainrule.nn.modules.module import Module
from chainrule.nn.utils.convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]


def _validate_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
            "integer"
        )


def _nparams_toprune(amount: Any, size: int) -> int:
    """An int ``amount`` is a count; a float is a fraction of ``size``, rounded."""
    if isinstance(amount, numbers.Integral):
        if int(amount) > size:
            raise ValueError(
                f"amount={amount} should be smaller than the number of parameters to prune={size}"
            )
        return int(amount)
    return round(amount * size)


def _validate_structured(t: Tensor, dim: int) -> None:
    if t.ndim <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor "
            f"of shape {t.shape} with {t.ndim} dims"
        )
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _channel_mask(t: Tensor, dim: int, keep: Any) -> Tensor:
    """Ones on the channels ``keep`` (indices or a bool vector) along ``dim``, zeros elsewhere."""
    mask = zeros_like(t)
    slc: list[Any] = [slice(None)] * t.ndim
    slc[dim] = keep
    mask[tuple(slc)] = 1
    return mask


class BasePruningMethod(ABC):
    """A pruning method: ``compute_mask(t, default_mask)`` gives the new mask; used as the
    forward pre-hook that recomputes ``module.<name> = <name>_orig * <name>_mask``."""

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for ``t``, combined with ``default_mask`` (the mask so far)."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_orig * <name>_mask`` (the mask cast to the tensor's dtype)."""
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        *args: Any,
        importance_scores: Tensor | None = None,
        **kwargs: Any,
    ) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` (combined with any earlier
        pruning of the same tensor); returns the hook now registered."""
        old = [
            (k, h)
            for k, h in module._forward_pre_hooks.items()
            if isinstance(h, BasePruningMethod) and h._tensor_name == name
        ]
        if len(old) > 1:
            raise AssertionError(
                f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                f"{module}. Use a PruningContainer."
            )
        method: BasePruningMethod = cls(*args, **kwargs)
        method._tensor_name = name
        if old:
            prev = old[0][1]
            if isinstance(prev, PruningContainer):
                prev.add_pruning_method(method)
                method = prev
            else:
                container = PruningContainer(prev)
                container.add_pruning_method(method)
                method = container
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of {module}"
                )
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        with no_grad():
            if first:
                default_mask = ones_like(orig)
            else:
                default_mask = getattr(module, name + "_mask").detach().clone()
            mask = method.compute_mask(importance_scores.detach(), default_mask=default_mask)
        # The mask is known: only now is the module changed.
        for k, _ in old:
            del module._forward_pre_hooks[k]
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(
        self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None
    ) -> Tensor:
        """``t`` times its mask (computed from ``importance_scores`` when given)."""
        scores = t if importance_scores is None else importance_scores
        with no_grad():
            mask = self.compute_mask(
                scores.detach(), default_mask=ones_like(t) if default_mask is None else default_mask
            )
        return t * mask.to(dtype=t.dtype)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes the Parameter ``<name>_orig`` holding
        the masked values; the mask and ``_orig`` go."""
        name = self._tensor_name
        with no_grad():
            weight = self.apply_mask(module)
        if name in module.__dict__:
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        with no_grad():
            orig.copy_(weight)
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The sequence of pruning methods applied to one tensor; its mask is the last method's
    mask computed on what the earlier ones kept."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for m in args:
                self.add_pruning_method(m)

    def add_pruning_method(self, method: BasePruningMethod | None) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and getattr(self, "_tensor_name", None) != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{getattr(self, '_tensor_name', None)}' to PruningContainer {self}. "
                f"Found '{method._tensor_name}'"
            )
        if method is not None:
            self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype).clone()
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc: Any = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    "Pruning methods of PRUNING_TYPE 'structured' need to have the attribute "
                    "`dim` defined."
                )
            dim = method.dim if method.dim >= 0 else method.dim + t.ndim
            others = tuple(d for d in range(t.ndim) if d != dim)
            keep = _ops.sum(default_mask, others) != 0
            s: list[Any] = [slice(None)] * t.ndim
            s[dim] = keep
            slc = tuple(s)
        elif kind == "global":
            slc = (slice(None),) * t.ndim
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask stays all ones (useful to add the ``_orig`` / ``_mask``
    structure)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Zeros ``amount`` entries chosen uniformly at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _nparams_toprune(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            idx = _ops.topk(rand_like(t).reshape(-1), k).indices
            mask.view(-1)[idx] = 0
        return mask

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        amount: int | float,  # type: ignore[override]
    ) -> BasePruningMethod:
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Zeros the ``amount`` entries of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _nparams_toprune(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            idx = _ops.topk(_ops.abs(t).reshape(-1), k, largest=False).indices
            mask.view(-1)[idx] = 0
        return mask

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        amount: int | float,  # type: ignore[override]
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Zeros ``amount`` channels along ``dim`` chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured(t, self.dim)
        n = t.shape[self.dim]
        k = _nparams_toprune(self.amount, n)
        if k == 0:
            return default_mask
        prob = rand(n)
        threshold = _ops.kthvalue(prob, n - k).values
        mask = _channel_mask(t, self.dim, prob <= threshold)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        amount: int | float,  # type: ignore[override]
        dim: int = -1,
    ) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Zeros the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured(t, self.dim)
        dim = self.dim if self.dim >= 0 else self.dim + t.ndim
        size = t.shape[dim]
        k = _nparams_toprune(self.amount, size)
        if k == 0:
            return default_mask
        others = tuple(d for d in range(t.ndim) if d != dim)
        from chainrule.linalg import vector_norm

        norm = vector_norm(t, self.n, dim=others)
        keep = _ops.topk(norm, size - k, largest=True).indices
        mask = _channel_mask(t, dim, keep)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        amount: int | float,
        n: Any,  # type: ignore[override]
        dim: int,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Multiplies the mask by a given 0/1 ``mask``."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match self.mask shape "
                f"{self.mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        mask: Tensor,  # type: ignore[override]
    ) -> BasePruningMethod:
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Add the pruning structure to ``module.<name>`` with an all-ones mask."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Zero ``amount`` random entries of ``module.<name>`` (int: a count; float: a fraction)."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(
    module: Module, name: str, amount: int | float, importance_scores: Tensor | None = None
) -> Module:
    """Zero the ``amount`` entries of ``module.<name>`` with the smallest |score| (the
    tensor's own values by default)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Zero ``amount`` random channels of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: Module,
    name: str,
    amount: int | float,
    n: Any,
    dim: int,
    importance_scores: Tensor | None = None,
) -> Module:
    """Zero the ``amount`` channels along ``dim`` of smallest L``n`` norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Iterable[tuple[Module, str]],
    pruning_method: type,
    importance_scores: dict | None = None,
    **kwargs: Any,
) -> None:
    """Prune several tensors together: the mask of ``pruning_method(**kwargs)`` is computed on
    all their (still kept) entries at once, then applied to each with ``custom_from_mask``."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    with no_grad():
        scores = parameters_to_vector(
            [importance_scores.get((m, n), getattr(m, n)) for m, n in parameters]
        )
        default_mask = parameters_to_vector(
            [
                getattr(m, n + "_mask", None)
                if hasattr(m, n + "_mask")
                else ones_like(getattr(m, n))
                for m, n in parameters
            ]
        )
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found '
            f"method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    with no_grad():
        final = container.compute_mask(scores.detach(), default_mask)
    start = 0
    for m, n in parameters:
        p = getattr(m, n)
        custom_from_mask(m, n, final[start : start + p.numel()].reshape(p.shape))
        start += p.numel()


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` with the given 0/1 ``mask``."""
    CustomFromMask.apply(module, name, mask=mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent (see ``BasePruningMethod.remove``)."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module: Module) -> bool:
    """Whether any module below (or at) ``module`` has a pruning hook."""
    return any(
        isinstance(h, BasePruningMethod)
        for m in module.modules()
        for h in m._forward_pre_hooks.values()
    )
