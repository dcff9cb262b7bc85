"""``Module``: the base class of every layer, holding parameters, buffers and child modules.

Note [module registries]
``__setattr__`` sorts what is assigned into three ordered dicts: ``_parameters`` (Parameters),
``_buffers`` (Tensors registered with ``register_buffer``) and ``_modules`` (child Modules).
``__getattr__`` reads them back, so ``self.weight`` works although ``weight`` is not in
``__dict__``. Every traversal (``named_parameters``, ``state_dict``, ``apply``, ``to``) walks
these dicts in insertion order, which is what fixes the order of ``parameters()`` and of the
keys of ``state_dict()``, as in PyTorch.

Long because Module carries PyTorch's module surface (calling and hooks, registration,
attribute access, traversal, modes, conversion, repr); the state dicts are in _state_dict.py.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections import OrderedDict
from typing import Any, Callable, Iterator, Mapping, TypeVar

from chainrule import _dispatch, _dtype
from chainrule._device import device as _device
from chainrule._device import parse_to
from chainrule._tensor import Tensor, _type_name
from chainrule.autograd.grad_mode import no_grad
from chainrule.nn.modules import _global_hooks
from chainrule.nn.modules._backward_hooks import attach_old_backward_hooks, backward_hook_of
from chainrule.nn.modules._global_hooks import CALL_HOOKS as _global_call_hooks
from chainrule.nn.modules._global_hooks import (
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from chainrule.nn.modules._state_dict import _IncompatibleKeys as _IncompatibleKeys
from chainrule.nn.modules._state_dict import _StateDictMixin
from chainrule.nn.parameter import Parameter
from chainrule.utils.hooks import RemovableHandle

__all__ = [
    "Module",
    "register_module_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    rest = [(" " * num_spaces) + line if line.strip() else "" for line in lines]
    return first + "\n" + "\n".join(rest)


def _typename(obj: Any) -> str:
    """``torch.typename``: ``torch.FloatTensor`` for tensors, ``module.Class`` otherwise."""
    if isinstance(obj, Tensor):
        return "torch." + _type_name(obj._data.dtype)
    cls = type(obj)
    module = cls.__module__
    if module in ("builtins", "__builtin__", None):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def _depth(name: str) -> int:
    return name.count(".")


def _add_hook(
    hooks: Any,
    takes_kwargs: dict[int, bool],
    hook: Callable[..., Any],
    prepend: bool,
    with_kwargs: bool,
) -> RemovableHandle:
    """Add ``hook`` to the ordered ``hooks`` (first when ``prepend``), noting in
    ``takes_kwargs`` whether it is called with the keyword arguments too."""
    handle = RemovableHandle(hooks, hook)
    if with_kwargs:
        takes_kwargs[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _place_after_init(cls: type) -> None:
    """Give the constructor of a chainrule layer with ``device=``/``dtype=`` arguments
    PyTorch's meaning for them: the parameters and buffers it makes are placed on ``device``
    and floating ones cast to ``dtype``, as torch's factory_kwargs do (the layers build them
    on the CPU in the default dtype, and this moves them once, at the end of ``__init__``).

    Only chainrule's own classes are wrapped: a user's subclass keeps its ``__init__`` as
    written."""
    init = cls.__dict__.get("__init__")
    if init is None or not cls.__module__.startswith("chainrule.") or hasattr(init, "_places"):
        return
    co = getattr(init, "__code__", None)
    if co is None:
        return
    # The argument names from the code object: cheaper than inspect.signature for the few
    # hundred layer classes defined when chainrule.nn is imported.
    names = co.co_varnames[: co.co_argcount + co.co_kwonlyargcount]
    if "device" not in names and "dtype" not in names:
        return
    # Position among the positional arguments after self (None: keyword-only).
    where = {
        n: (names.index(n) if names.index(n) < co.co_argcount else None)
        for n in ("device", "dtype")
        if n in names
    }

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        got = {}
        for n, i in where.items():
            v = kwargs.get(n, args[i - 1] if i is not None and 0 < i <= len(args) else None)
            if v is not None:
                got[n] = v
        dev, dt = got.get("device"), got.get("dtype")
        if dev is not None and _device(dev).type == "cuda":
            # the initial values are drawn from the GPU's generator, as PyTorch's are
            from chainrule._creation import cuda_index_of
            from chainrule._random import drawing_for_gpu

            with drawing_for_gpu(cuda_index_of(dev)):
                init(self, *args, **kwargs)
        else:
            init(self, *args, **kwargs)
        if dev is not None and _device(dev).type != "cpu":
            self.to(dev)
        if dt is not None and _dtype.to_dtype(dt).is_floating_point:
            self.to(dt)

    __init__._places = True  # type: ignore[attr-defined]
    cls.__init__ = __init__  # type: ignore[misc]


class Module(_StateDictMixin):
    """Base class of all layers; subclasses set attributes in ``__init__`` and define ``forward``.

    Calling a module runs its forward pre-hooks, ``forward`` and its forward hooks. See
    Note [module registries] for how attributes are stored.

    Differs from torch: no ``_metadata`` (versions) in
    ``state_dict``; ``load_state_dict`` checks every key and shape
    before copying anything, so a failed load leaves the module untouched (torch may have copied
    part of it before it raises).
    """

    training: bool
    _version: int = 1
    dump_patches: bool = False
    T_destination = TypeVar("T_destination", bound=dict[str, Any])
    call_super_init: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _place_after_init(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
                if kwargs
                else f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()

    def _forward_unimplemented(self, *input: Any) -> None:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    forward: Callable[..., Any] = _forward_unimplemented

    # Calling ----------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if (
            not self._forward_pre_hooks
            and not self._forward_hooks
            and not self._backward_hooks
            and not self._backward_pre_hooks
            and not _global_call_hooks
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call with hooks, in PyTorch's order: global then own forward pre-hooks, backward
        hooks set up on the inputs, forward, global then own forward hooks, backward hooks set
        up on the outputs. Forward hooks registered with ``always_call`` run even when forward
        (or an earlier hook) raised, their own errors then turned into warnings."""
        called: set[int] = set()
        state: list[Any] = [args, kwargs, None]
        try:
            return self._hooked_inner(state, called)
        except Exception:
            self._run_always_called(state, called)
            raise

    def _hooked_inner(self, state: list[Any], called: set[int]) -> Any:
        args, kwargs = state[0], state[1]
        gl = _global_hooks
        with_kwargs = self._forward_pre_hooks_with_kwargs
        for hid, hook in (*gl.forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
            if hid in with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {res}."
                        )
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
            state[0], state[1] = args, kwargs
        own_full = self.__dict__.get("_is_full_backward_hook")
        glob_full = gl.is_full_backward_hook[0]
        full_hooks = [
            *(gl.backward_hooks.values() if glob_full is True else ()),
            *(self._backward_hooks.values() if own_full is not False else ()),
        ]
        old_hooks = [
            *(gl.backward_hooks.values() if glob_full is False else ()),
            *(self._backward_hooks.values() if own_full is False else ()),
        ]
        bw_hook = backward_hook_of(
            self, full_hooks, [*gl.backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        )
        if bw_hook is not None:
            args = bw_hook.setup_input_hook(args)
            state[0] = args
        result = self.forward(*args, **kwargs)
        state[2] = result
        own_always = self.__dict__.get("_forward_hooks_always_called", {})
        own_kwargs = self._forward_hooks_with_kwargs
        for hid, hook in (*gl.forward_hooks.items(), *self._forward_hooks.items()):
            if hid in own_always or hid in gl.forward_hooks_always_called:
                called.add(hid)
            if hid in own_kwargs or hid in gl.forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
                state[2] = result
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a "
                    f"tuple of Tensors but received {type(result)}",
                    stacklevel=4,
                )
            else:
                result = bw_hook.setup_output_hook(result)
        if old_hooks:
            attach_old_backward_hooks(self, result, old_hooks)
        return result

    def _run_always_called(self, state: list[Any], called: set[int]) -> None:
        """The ``always_call`` forward hooks not yet run, after forward raised (PyTorch's
        order and warnings: global hooks get no kwargs)."""
        args, kwargs, result = state
        gl = _global_hooks
        for hid, hook in list(gl.forward_hooks.items()):
            if hid in gl.forward_hooks_always_called and hid not in called:
                try:
                    res = hook(self, args, result)
                    if res is not None:
                        result = res
                except Exception as e:
                    warnings.warn(
                        "global module forward hook with ``always_call=True`` raised an "
                        f"exception that was silenced as another error was raised in forward: "
                        f"{e}",
                        stacklevel=4,
                    )
        own_always = self.__dict__.get("_forward_hooks_always_called", {})
        for hid, hook in list(self._forward_hooks.items()):
            if hid in own_always and hid not in called:
                try:
                    if hid in self._forward_hooks_with_kwargs:
                        res = hook(self, args, kwargs, result)
                    else:
                        res = hook(self, args, result)
                    if res is not None:
                        result = res
                except Exception as e:
                    warnings.warn(
                        "module forward hook with ``always_call=True`` raised an exception "
                        f"that was silenced as another error was raised in forward: {e}",
                        stacklevel=4,
                    )

    _call_impl = __call__
    _wrapped_call_impl = __call__

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Run ``hook(module, grad_output)`` when the gradients w.r.t. the module's outputs are
        known; a non-None result (a tuple as long) replaces ``grad_output``."""
        return _add_hook(self._backward_pre_hooks, {}, hook, prepend, False)

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        self._backward_hook_kind(True)
        """Run ``hook(module, grad_input, grad_output)`` once per backward through the module:
        ``grad_input`` holds the gradients w.r.t. its positional inputs (None for those that are
        not Tensors or need no gradient); a non-None result replaces ``grad_input``."""
        return _add_hook(self._backward_hooks, {}, hook, prepend, False)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """The deprecated form: ``hook(module, grad_input, grad_output)`` on the backward node
        that made the module's (first) output, with that node's gradients (PyTorch's
        behaviour, which differs from the module's inputs when forward has several ops)."""
        self._backward_hook_kind(False)
        return _add_hook(self._backward_hooks, {}, hook, False, False)

    def _backward_hook_kind(self, full: bool) -> None:
        """A module's backward hooks are all full or all of the deprecated kind, as in torch."""
        if self.__dict__.get("_is_full_backward_hook") is (not full):
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them."
            )
        self.__dict__["_is_full_backward_hook"] = full

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Run ``hook(module, args)`` before ``forward``; a non-None result replaces ``args``
        (a non-tuple is wrapped). With ``with_kwargs``: ``hook(module, args, kwargs)`` returning
        ``None`` or ``(args, kwargs)``."""
        return _add_hook(
            self._forward_pre_hooks,
            self._forward_pre_hooks_with_kwargs,
            hook,
            prepend,
            with_kwargs,
        )

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Run ``hook(module, args, output)`` after ``forward``; a non-None result replaces the
        output. With ``with_kwargs``: ``hook(module, args, kwargs, output)``. With
        ``always_call``: it runs even when forward raised (its own error then a warning)."""
        always = self.__dict__.setdefault("_forward_hooks_always_called", OrderedDict())
        handle = _add_hook(
            self._forward_hooks, self._forward_hooks_with_kwargs, hook, prepend, with_kwargs
        )
        handle._extra_refs = (*handle._extra_refs, weakref.ref(always))
        if always_call:
            always[handle.id] = True
        return handle

    # State-dict hooks (run by _state_dict.py) ---------------------------------------------------
    def _hook_dict(self, name: str) -> Any:
        return self.__dict__.setdefault(name, OrderedDict())

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        return RemovableHandle(self._hook_dict("_state_dict_pre_hooks"), hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(module, state_dict, prefix, local_metadata)`` (it must return None) after
        ``state_dict`` saved this module and its children."""
        hook._from_public_api = True  # type: ignore[attr-defined]
        return RemovableHandle(self._hook_dict("_state_dict_hooks"), hook)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """The older form: ``hook(module, state_dict, prefix, local_metadata)`` may return a
        state dict that replaces it."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        return RemovableHandle(self._hook_dict("_state_dict_hooks"), hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module's entries are checked and loaded."""
        return RemovableHandle(self._hook_dict("_load_state_dict_pre_hooks"), hook)

    def _register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], with_module: bool = False
    ) -> RemovableHandle:
        fn = hook if with_module else (lambda module, *args: hook(*args))
        return RemovableHandle(self._hook_dict("_load_state_dict_pre_hooks"), fn)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Run ``hook(module, incompatible_keys)`` (it must return None and may empty the key
        lists, which ``strict`` then reads) after ``load_state_dict`` went through the keys."""
        return RemovableHandle(self._hook_dict("_load_state_dict_post_hooks"), hook)

    # Registration -----------------------------------------------------------------------------
    def _check_slot_name(self, kind: str, name: Any, store: Mapping[str, Any]) -> None:
        """``name`` must be a non-empty string without dots, not already taken by another
        attribute than an entry of ``store`` (re-registering replaces it)."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in store:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add ``param`` (or a ``None`` placeholder) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_slot_name("parameter", name, self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        if _global_hooks.parameter_registration_hooks:
            param = _global_hooks.registered(
                _global_hooks.parameter_registration_hooks, self, name, param
            )
        if _depth(getattr(param, "_param_name", None) or "") == 0:
            param._param_name = name
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a non-learnable tensor (running statistics, ...) under ``name``. A persistent
        buffer is part of ``state_dict()``; a non-persistent one is not."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_slot_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        if _global_hooks.buffer_registration_hooks:
            tensor = _global_hooks.registered(
                _global_hooks.buffer_registration_hooks, self, name, tensor
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add ``module`` as a child under ``name`` (reachable as an attribute)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if _global_hooks.module_registration_hooks:
            module = _global_hooks.registered(
                _global_hooks.module_registration_hooks, self, name, module
            )
        self._modules[name] = module

    register_module = add_module

    # Attribute access (Note [module registries]) ----------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(name, d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            if _global_hooks.module_registration_hooks:
                value = _global_hooks.registered(
                    _global_hooks.module_registration_hooks, self, name, value
                )
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            if _global_hooks.module_registration_hooks:
                value = _global_hooks.registered(
                    _global_hooks.module_registration_hooks, self, name, value
                )
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Tensor) and getattr(value, "_is_buffer", False):
            # An ``nn.Buffer(t, persistent=...)``: register it wherever it is assigned.
            _remove_from(name, d, self._parameters, self._modules)
            self.register_buffer(name, value, getattr(value, "persistent", True))
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            if _global_hooks.buffer_registration_hooks:
                value = _global_hooks.registered(
                    _global_hooks.buffer_registration_hooks, self, name, value
                )
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_backward_hooks", OrderedDict())
        self.__dict__.setdefault("_backward_pre_hooks", OrderedDict())

    # Traversal --------------------------------------------------------------------------------
    def _named_members(
        self,
        get: Callable[[Module], Any],
        prefix: str = "",
        recurse: bool = True,
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Any]]:
        memo: set[int] = set()
        mods = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for mod_prefix, mod in mods:
            for k, v in get(mod):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (mod_prefix + ("." if mod_prefix else "") + k), v

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted_name, parameter)`` pairs, each parameter once, in registration order.

        Also records the dotted name on each parameter as ``_param_name`` (a deeper name, seen
        from an outer module, replaces a shallower one) for error messages.
        """
        for name, p in self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        ):
            old = getattr(p, "_param_name", None)
            if old is None or _depth(name) >= _depth(old):
                p._param_name = name
            yield name, p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(
        self, memo: set[Any] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """``(dotted_name, module)`` for this module and all below it, depth first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def __hash__(self) -> int:
        return id(self)

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def _owner_and_name(self, target: str) -> tuple[Module, str]:
        """For a dotted ``target``: the submodule holding its last part, and that part."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        return mod, name

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted ``target`` (its parent must exist); with ``strict`` the
        last part must already be an attribute. What it replaces must be a Module."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        mod, name = self._owner_and_name(target)
        p = getattr(mod, name)
        if not isinstance(p, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return p

    def get_buffer(self, target: str) -> Tensor:
        mod, name = self._owner_and_name(target)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # Modes and gradients ----------------------------------------------------------------------
    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's forward in place, as ``torch.nn.Module.compile``: later calls
        of the module run ``chainrule.compile(self.forward, *args, **kwargs)`` (docs/compile.md)."""
        _dispatch.upper.compile_module(self, *args, **kwargs)

    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and all its children; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop (``set_to_none``) or zero every parameter's ``.grad``."""
        for p in self.parameters():
            if p._grad is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                g = p._grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every child (recursively), then on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # Conversion -------------------------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        # Parameters keep their identity (optimizers hold them): swap the array behind them.
        if recurse:
            for m in self.children():
                m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    p._data = new._data
                    p._bump_version()
                if p._grad is not None:
                    g = fn(p._grad)
                    if g is not p._grad:
                        p._grad = g.detach().requires_grad_(p._grad.requires_grad)
            for k, b in self._buffers.items():
                if b is not None:
                    self._buffers[k] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or ``to(tensor)``, in place.

        Only floating-point parameters and buffers change dtype, as in PyTorch.
        """
        dev, dt, _, _ = parse_to(args, kwargs, Tensor)
        if dt is not None:
            dt = _dtype.to_dtype(dt)
            if not dt.is_floating_point:
                raise TypeError(
                    "nn.Module.to only accepts floating point or complex dtypes, but got "
                    f"desired dtype={dt}"
                )

        def convert(t: Tensor) -> Tensor:
            out = t
            if dev is not None:
                out = out.to(dev)
            if dt is not None and out.is_floating_point():
                out = out.to(dt)
            return out

        return self._apply(convert)

    def float(self) -> Module:
        return self.to(_dtype.float32)

    def share_memory(self) -> Module:
        """Move every parameter and buffer to shared memory (``Tensor.share_memory_``), in
        place, so processes given this module update the same values (Hogwild). Gradients are
        not moved (as in PyTorch, they are made later, per process)."""
        return self._apply(lambda t: t.share_memory_())

    def double(self) -> Module:
        return self.to(_dtype.float64)

    def half(self) -> Module:
        return self.to(_dtype.float16)

    def bfloat16(self) -> Module:
        return self.to(_dtype.bfloat16)

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Module:
        """Move every parameter and buffer (and their ``.grad``) to GPU ``device`` (an index,
        ``'cuda:1'``, a device; the current GPU when None), in place."""
        if isinstance(device, int) and not isinstance(device, bool):
            device = _device(device)  # 'cuda:N' (RuntimeError without a GPU backend)
        return self.to("cuda" if device is None else device)

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Replace every parameter and buffer by an uninitialized tensor of its shape and dtype
        on ``device`` (children too when ``recurse``)."""
        from chainrule._creation import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def xpu(self, device: Any = None) -> Module:
        def fail(t: Tensor) -> Tensor:
            raise AssertionError("Torch not compiled with XPU enabled")

        return self._apply(fail)

    def ipu(self, device: Any = None) -> Module:
        def fail(t: Tensor) -> Tensor:
            raise RuntimeError("PyTorch is not linked with support for ipu devices")

        return self._apply(fail)

    def mtia(self, device: Any = None) -> Module:
        def fail(t: Tensor) -> Tensor:
            raise AssertionError(
                "Torch not compiled with MTIA enabled. Ensure you have `import "
                "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and "
                "include `//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!"
            )

        return self._apply(fail)

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    # Printing ---------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The layer's own settings, shown inside its ``repr``; subclasses override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"


def _remove_from(name: str, *stores: Any) -> None:
    """Drop ``name`` from each store (a dict or a set) that holds it."""
    for s in stores:
        if name in s:
            if isinstance(s, dict):
                del s[name]
            else:
                s.discard(name)
