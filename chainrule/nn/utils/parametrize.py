"""``torch.nn.utils.parametrize``: express a module's tensor as a function of other tensors.

Note [parametrized modules]
``register_parametrization(m, "weight", p)`` moves ``m.weight`` into
``m.parametrizations.weight.original`` (a Parameter stays the same Parameter object, so an
optimizer holding it keeps working) and swaps ``m``'s class for a subclass,
``Parametrized<Class>``, with a property ``weight`` that evaluates ``p(original)`` on every
read. Assigning ``m.weight = value`` runs the parametrizations' ``right_inverse`` in reverse
and stores the result in the originals. State-dict keys are PyTorch's:
``parametrizations.weight.original`` (or ``original0``, ``original1``, ... when
``right_inverse`` returns a sequence). Every check runs before the module is changed, so a
failed registration leaves it as it was.
"""

from __future__ import annotations

import copy
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from chainrule._tensor import Tensor
from chainrule.autograd import no_grad
from chainrule.nn.modules.container import ModuleDict, ModuleList
from chainrule.nn.modules.module import Module
from chainrule.nn.parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "type_before_parametrizations",
]

# Note: caching is process-wide, as in PyTorch: inside ``cached()`` each parametrized tensor
# is computed once (per module and name) and reused until the outermost ``cached()`` exits.
_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside this context a parametrized tensor is computed on first access and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _set_data(dest: Tensor, src: Tensor) -> None:
    """``dest.set_(src)`` under no_grad: ``dest`` keeps its identity and takes ``src``'s
    values (and its shape, as ``set_`` allows)."""
    with no_grad():
        if tuple(dest.shape) == tuple(src.shape):
            dest.copy_(src)
        else:
            dest._data = src.detach().clone()._data
            dest._bump_version()


def _register_tensor(module: Module, name: str, t: Tensor) -> None:
    if isinstance(t, Parameter):
        module.register_parameter(name, t)
    else:
        module.register_buffer(name, t)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its original tensor(s).

    ``self()`` is ``p_n(...p_1(p_0(original)))`` (``p_0(*originals)`` when ``right_inverse``
    gave a sequence); ``right_inverse(value)`` runs the ``right_inverse`` of each
    parametrization in reverse and stores the result in the originals.
    """

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new: Any = original
            for m in reversed(self):
                if hasattr(m, "right_inverse"):
                    # A right_inverse that raises NotImplementedError counts as the identity
                    # here, as in PyTorch (orthogonal's maps without trivialization).
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:
                        pass
        if isinstance(new, Tensor):
            if not unsafe and new.dtype != original.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}"
                )
            self.is_tensor = True
            self.ntensors = 1
            # The original itself is registered; its values are set by the caller once every
            # check has passed (Note [parametrized modules]).
            self._pending = new
            _register_tensor(self, "original", original)
        else:
            if not isinstance(new, (list, tuple)):
                raise ValueError(
                    "'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                    f"tuple...). Got {type(new).__name__}"
                )
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                        f"tuple...). Got element {i} of the sequence with type "
                        f"{type(t).__name__}."
                    )
            self.is_tensor = False
            self.ntensors = len(new)
            self._pending = None
            for i, t in enumerate(new):
                t = t.detach().clone()
                if isinstance(original, Parameter):
                    t = Parameter(t, original.requires_grad)
                _register_tensor(self, f"original{i}", t)

    def _commit(self) -> None:
        """Store the pending ``right_inverse(original)`` in ``original``."""
        if self._pending is not None:
            if self._pending is not self.original:
                _set_data(self.original, self._pending)
            self._pending = None

    def _originals(self) -> tuple[Tensor, ...]:
        if self.is_tensor:
            pending = self.__dict__.get("_pending")
            return (self.original if pending is None else pending,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def right_inverse(self, value: Tensor) -> None:
        """Store ``right_inverse(value)`` (through every parametrization, last first) in the
        originals, so that reading the tensor gives ``value`` back."""
        with no_grad():
            for m in reversed(self):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(m).__name__} does not implement right_inverse."
                    )
                value = m.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                        f"`original` has dtype {self.original.dtype}"
                    )
                _set_data(self.original, value)
            else:
                if not isinstance(value, (list, tuple)):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors. "
                        f"Got {type(value).__name__}."
                    )
                if len(value) != self.ntensors:
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors of length "
                        f"{self.ntensors}. Got a sequence of length {len(value)}."
                    )
                for i, t in enumerate(value):
                    orig = getattr(self, f"original{i}")
                    if not isinstance(t, Tensor):
                        raise ValueError(
                            f"`right_inverse` must return a sequence of tensors. Got element "
                            f"{i} of type {type(t).__name__}"
                        )
                    if t.dtype != orig.dtype:
                        raise ValueError(
                            f"Tensor {i} returned by `right_inverse` has dtype {t.dtype} while "
                            f"`original{i}` has dtype {orig.dtype}"
                        )
                    _set_data(orig, t)

    def forward(self) -> Tensor:
        x = self[0](*self._originals())
        for m in list(self)[1:]:
            x = m(x)
        return x


def _parametrized_getstate(self: Module) -> Any:
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
    )


def _parametrized_deepcopy(self: Module, memo: dict[int, Any]) -> Module:
    new = object.__new__(type(self))
    memo[id(self)] = new
    for k, v in self.__dict__.items():
        new.__dict__[k] = copy.deepcopy(v, memo)
    return new


def _inject_class(module: Module) -> None:
    cls = module.__class__
    new_cls = type(
        f"Parametrized{cls.__name__}",
        (cls,),
        {
            "__getstate__": _parametrized_getstate,
            "__deepcopy__": _parametrized_deepcopy,
            "__module__": __name__,
        },
    )
    module.__class__ = new_cls


def _inject_property(module: Module, name: str) -> None:
    def get(self: Module) -> Tensor:
        plist = self.parametrizations[name]
        if _cache_enabled:
            key = (id(self), name)
            t = _cache.get(key)
            if t is None:
                t = _cache[key] = plist()
            return t
        return plist()

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    setattr(module.__class__, name, property(get, set_))


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (on ``tensor_name`` when given)."""
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if plists is None or not isinstance(plists, ModuleDict):
        return False
    if tensor_name is None:
        return len(plists) > 0
    return tensor_name in plists


def type_before_parametrizations(module: Module) -> type:
    """The class ``module`` had before its first parametrization."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def _check_tensor(what: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    return x


def _append(module: Module, name: str, parametrization: Module, unsafe: bool) -> None:
    """Add ``parametrization`` after those already on ``module.name``."""
    if not unsafe:
        y = getattr(module, name)
        x = _check_tensor(name, parametrization(y))
        for attr, what in (("dtype", "dtype"), ("shape", "shape")):
            if getattr(x, attr) != getattr(y, attr):
                raise ValueError(
                    f"Registering a parametrization may not change the {what} of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{name}.{attr}: {getattr(y, attr)}\n"
                    f"parametrization(module.{name}).{attr}: {getattr(x, attr)}"
                )
        if hasattr(parametrization, "right_inverse"):
            z = parametrization.right_inverse(x)
            if not isinstance(z, Tensor):
                raise ValueError(
                    f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}"
                )
            for attr in ("dtype", "shape"):
                if getattr(z, attr) != getattr(y, attr):
                    raise ValueError(
                        "The tensor returned by parametrization.right_inverse must have the "
                        f"same {attr} as module.{name}, unless the `unsafe` flag is enabled.\n"
                        f"module.{name}.{attr}: {getattr(y, attr)}\n"
                        f"returned {attr}: {getattr(z, attr)}"
                    )
    module.parametrizations[name].append(parametrization)
    module.parametrizations[name].unsafe |= unsafe


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` read as ``parametrization(original)``.

    Args:
        module: the module holding the tensor (a parameter, a buffer, or an already
            parametrized tensor, to which ``parametrization`` is then appended).
        tensor_name: the attribute name.
        parametrization: a Module; its optional ``right_inverse(X)`` maps a value back to
            originals (one tensor or a sequence of them), used at registration and on
            assignment.
        unsafe: skip the checks that the parametrization keeps shape and dtype.

    Returns:
        ``module``, whose class is now ``Parametrized<Class>`` (Note [parametrized modules]).
    """
    if not isinstance(parametrization, Module):
        raise AttributeError(f"'{type(parametrization).__name__}' object has no attribute 'train'")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        _append(module, tensor_name, parametrization, unsafe)
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized "
            f"element with name '{tensor_name}'"
        )
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    if not unsafe:
        z = _check_tensor(tensor_name, plist())
        if z.dtype != original.dtype:
            raise ValueError(
                "Registering a parametrization may not change the dtype of the tensor, unless "
                f"`unsafe` flag is enabled.\nunparametrized dtype: {original.dtype}\n"
                f"parametrized dtype: {z.dtype}"
            )
        if z.shape != original.shape:
            raise ValueError(
                "Registering a parametrization may not change the shape of the tensor, unless "
                f"`unsafe` flag is enabled.\nunparametrized shape: {original.shape}\n"
                f"parametrized shape: {z.shape}"
            )
    plist._commit()
    # Only now is the module changed.
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_class(module)
        module.parametrizations = ModuleDict()
    _inject_property(module, tensor_name)
    module.parametrizations[tensor_name] = plist
    return module


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Undo ``register_parametrization`` on ``module.<tensor_name>``.

    With ``leave_parametrized`` the tensor keeps its current (parametrized) value, stored in
    the original Parameter object; otherwise the original value comes back.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            if t.dtype != original.dtype:
                raise ValueError(
                    "The parametrization changes the dtype of the tensor; it cannot be left "
                    f"parametrized in place.\noriginal dtype: {original.dtype}\n"
                    f"parametrized dtype: {t.dtype}"
                )
            _set_data(original, t)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        t = getattr(module, tensor_name)
        # A Parameter when some original requires grad (as PyTorch decides), else a buffer.
        original = Parameter(t.detach(), True) if t.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module
