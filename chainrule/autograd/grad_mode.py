"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

The flags are thread-local, as in PyTorch: a ``no_grad`` block in one thread does not affect
another thread. Each mode works as a context manager and as a decorator.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from chainrule._grad_state import _State, _state  # noqa: F401  (the flags, below Tensor)

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    """Whether operations are being recorded for autograd in this thread."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside an ``inference_mode()`` block."""
    return _state.inference


class _DecoratorContextManager:
    """Base for the grad-mode context managers; also usable as a function decorator."""

    def __call__(self, func: F) -> F:
        # Bare @no_grad usage passes the function to __init__-less call; handled in subclasses.
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._clone():
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def _clone(self) -> _DecoratorContextManager:
        return self.__class__()

    if TYPE_CHECKING:  # each subclass defines them

        def __enter__(self) -> Any: ...
        def __exit__(self, *exc: object) -> Any: ...


class no_grad(_DecoratorContextManager):
    """Disable gradient recording: results of ops computed inside do not require grad.

    Example:
        >>> import chainrule as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    _prev: list[bool]  # the enabled flags at each (nested) entry

    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:
        self = super().__new__(cls)
        self._prev = []
        if orig_func is not None:  # used as ``@no_grad`` without parentheses
            return self(orig_func)
        return self

    def __init__(self, orig_func: Callable[..., Any] | None = None) -> None:
        pass

    def __enter__(self) -> None:
        self._prev.append(_state.enabled)
        _state.enabled = False

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev.pop()


class enable_grad(_DecoratorContextManager):
    """Enable gradient recording inside a ``no_grad`` block."""

    def __init__(self) -> None:
        self._prev: list[bool] = []

    def __enter__(self) -> None:
        self._prev.append(_state.enabled)
        _state.enabled = True

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev.pop()


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off. Takes effect at once (as a function call) and, used as a
    context manager, restores the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        self._prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev

    def _clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)

    def __call__(self, func: F) -> F:
        _state.enabled = self._prev  # decorating must not flip the mode at definition time

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(self.mode):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors created inside are marked as inference tensors: using
    one later in a recorded op raises, as in PyTorch."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self._prev: list[tuple[bool, bool]] = []

    def __enter__(self) -> None:
        self._prev.append((_state.enabled, _state.inference))
        if self.mode:
            _state.enabled = False
            _state.inference = True

    def __exit__(self, *exc: object) -> None:
        _state.enabled, _state.inference = self._prev.pop()

    def _clone(self) -> inference_mode:
        return self.__class__(self.mode)
