"""Hooks common to every Module: PyTorch's ``torch.nn.modules.module.register_module_*``.

The call-time hooks (forward pre-hooks, forward hooks, backward pre-hooks and backward hooks)
run on every module's call before the module's own hooks of the same kind; the registration
hooks run when a parameter, buffer or submodule is registered and may replace it. Each
call-time hook is also entered in ``CALL_HOOKS`` (removed with it through the handle's
``extra_dict``), so that ``Module.__call__``'s fast path reads one dict to know there are none.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, TypeVar

from chainrule.utils.hooks import RemovableHandle

__all__ = [
    "register_module_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]

forward_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
forward_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
forward_hooks_with_kwargs: OrderedDict[int, bool] = OrderedDict()
forward_hooks_always_called: OrderedDict[int, bool] = OrderedDict()
backward_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
backward_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
# None until a global backward hook is registered; then whether they are full ones.
is_full_backward_hook: list[bool | None] = [None]
buffer_registration_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
module_registration_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
parameter_registration_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()

_T = TypeVar("_T")

# Every call-time global hook: empty means Module.__call__ may skip all global-hook work.
CALL_HOOKS: OrderedDict[int, Callable[..., Any]] = OrderedDict()  # weakly referenced by handles


def _call_hook(store: dict[int, Any], hook: Callable[..., Any], *extra: dict[int, Any]) -> Any:
    return RemovableHandle(store, hook, extra_dict=[CALL_HOOKS, *extra])


def _finish(handle: RemovableHandle, hook: Callable[..., Any]) -> RemovableHandle:
    CALL_HOOKS[handle.id] = hook
    return handle


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(module, args)`` before every module's ``forward`` (before its own
    pre-hooks); a non-None result replaces ``args`` (a non-tuple is wrapped)."""
    return _finish(_call_hook(forward_pre_hooks, hook), hook)


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Run ``hook(module, args, output)`` after every module's ``forward`` (before its own
    forward hooks; ``hook(module, args, kwargs, output)`` with ``with_kwargs``); a non-None
    result replaces the output. With ``always_call`` it also runs when forward raised."""
    handle = _call_hook(forward_hooks, hook, forward_hooks_with_kwargs, forward_hooks_always_called)
    if with_kwargs:
        forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        forward_hooks_always_called[handle.id] = True
    return _finish(handle, hook)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """The deprecated global backward hook (``Module.register_backward_hook``'s kind) for
    every module; it cannot be mixed with global full backward hooks."""
    if is_full_backward_hook[0] is True:
        raise RuntimeError(
            "Cannot use both regular backward hooks and full backward hooks as a global Module "
            "hook. Please use only one of them."
        )
    is_full_backward_hook[0] = False
    return _finish(_call_hook(backward_hooks, hook), hook)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(module, grad_output)`` for every module when the gradients of its outputs
    are known (before its own backward pre-hooks); a non-None result replaces them."""
    return _finish(_call_hook(backward_pre_hooks, hook), hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(module, grad_input, grad_output)`` once per backward through every module
    (before its own backward hooks); a non-None result replaces ``grad_input``."""
    if is_full_backward_hook[0] is False:
        raise RuntimeError(
            "Cannot use both regular backward hooks and full backward hooks as a global Module "
            "hook. Please use only one of them."
        )
    is_full_backward_hook[0] = True
    return _finish(_call_hook(backward_hooks, hook), hook)


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(module, name, buffer)`` whenever a buffer is registered on any module; a
    non-None result is registered instead."""
    return RemovableHandle(buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(module, name, submodule)`` whenever a submodule is registered on any module;
    a non-None result is registered instead."""
    return RemovableHandle(module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Run ``hook(module, name, param)`` whenever a parameter is registered on any module; a
    non-None result is registered instead."""
    return RemovableHandle(parameter_registration_hooks, hook)


def registered(store: dict[int, Callable[..., Any]], module: Any, name: str, value: _T) -> _T:
    """``value`` after the registration hooks of ``store`` (each may replace it)."""
    for hook in list(store.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value
