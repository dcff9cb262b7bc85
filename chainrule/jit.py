"""``chainrule.jit``: TorchScript's entry points, which run the code eagerly here.

``script`` and ``trace`` return the function or module unchanged, with a one-time warning, so
programs that script a model for speed still run (eagerly, with the same results). Saving or
loading TorchScript archives is not possible: ``jit.save``/``jit.load`` raise and say so.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, TypeVar

from chainrule import _futures

__all__ = [
    "script",
    "trace",
    "trace_module",
    "ignore",
    "unused",
    "export",
    "is_scripting",
    "is_tracing",
    "save",
    "load",
    "freeze",
    "optimize_for_inference",
    "Final",
    "ScriptModule",
    "ScriptFunction",
    "annotate",
    "fork",
    "wait",
]

F = TypeVar("F", bound=Callable[..., Any])
_warned: set[str] = set()


def _warn_once(what: str) -> None:
    if what not in _warned:
        _warned.add(what)
        warnings.warn(
            f"torch.jit.{what}: chainrule has no TorchScript; the object is returned unchanged "
            "and runs eagerly (same results).",
            UserWarning,
            stacklevel=3,
        )


def script(
    obj: Any,
    optimize: Any = None,
    _frames_up: int = 0,
    _rcb: Any = None,
    example_inputs: Any = None,
) -> Any:
    """Return ``obj`` (a function or module) unchanged: it runs eagerly."""
    _warn_once("script")
    return obj


def trace(func: Any, example_inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Return ``func`` unchanged: it runs eagerly (no trace is recorded)."""
    _warn_once("trace")
    return func


def trace_module(mod: Any, inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Return ``mod`` unchanged: it runs eagerly."""
    _warn_once("trace_module")
    return mod


def freeze(mod: Any, preserved_attrs: Any = None, optimize_numerics: bool = True) -> Any:
    """Return ``mod`` unchanged."""
    return mod


def optimize_for_inference(mod: Any, other_methods: Any = None) -> Any:
    """Return ``mod`` unchanged."""
    return mod


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Decorator that leaves a function as it is (usable bare or with arguments)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: F) -> F:
    """Decorator that leaves a function as it is."""
    return fn


def export(fn: F) -> F:
    """Decorator that leaves a function as it is."""
    return fn


def is_scripting() -> bool:
    """False: code never runs under TorchScript here."""
    return False


def is_tracing() -> bool:
    """False: code never runs under the tracer here."""
    return False


def annotate(the_type: Any, the_value: Any) -> Any:
    """Return ``the_value`` (a type annotation for TorchScript only)."""
    return the_value


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """TorchScript archives cannot be written: raises with what to use instead."""
    raise RuntimeError(
        "torch.jit.save: chainrule has no TorchScript archives; save the weights with "
        "torch.save(model.state_dict(), path) instead."
    )


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> Any:
    """TorchScript archives cannot be read: raises with what to use instead."""
    raise RuntimeError(
        "torch.jit.load: chainrule cannot run TorchScript archives; build the model in Python "
        "and load a state dict saved with torch.save instead."
    )


class _FinalMeta(type):
    def __getitem__(cls, item: Any) -> Any:
        return item


class Final(metaclass=_FinalMeta):
    """``torch.jit.Final[int]``: a type annotation only, the subscripted type itself."""


class ScriptModule:
    """Stand-in type for ``isinstance(m, torch.jit.ScriptModule)`` checks: nothing is one."""


class ScriptFunction:
    """Stand-in type for ``isinstance(f, torch.jit.ScriptFunction)`` checks: nothing is one."""


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``chainrule.fork``: run ``func`` now and return a completed Future (deprecated in
    PyTorch: a ``DeprecationWarning`` each call, as there)."""
    warnings.warn(
        "`torch.jit.fork` is deprecated. Please use `torch.compile` instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return _futures.fork(func, *args, **kwargs)


def wait(future: Any) -> Any:
    """``chainrule.wait``: the Future's value (deprecated in PyTorch, which warns)."""
    warnings.warn(
        "`torch.jit.wait` is deprecated. Please use `torch.compile` instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return _futures.wait(future)
