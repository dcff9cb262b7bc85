"""``on_device(t)``: a context with ``t``'s GPU current, for the raw-array code of
nn.functional (running statistics, target checks) that runs outside the op table, where
nothing else makes the inputs' GPU current (Note [the inputs' device is current] in
ops/_apply.py). On the CPU it is a no-op context after one type check."""

from __future__ import annotations

import functools
from contextlib import nullcontext
from typing import Any, Callable, ContextManager

import numpy as np

_NULL = nullcontext()


def on_device(t: Any) -> ContextManager[Any]:
    """A context in which the GPU of Tensor ``t`` is current (no-op for CPU tensors and with
    one GPU)."""
    a = t._data
    if type(a) is np.ndarray:
        return _NULL
    return t._backend.array_device(a)


def on_input_device(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` (a function whose first argument, ``input``, is a Tensor) run with ``input``'s
    GPU current, for functions that compute on raw arrays (a type check on the CPU)."""

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        x = args[0] if args else kwargs.get("input")
        a = getattr(x, "_data", None)
        if a is None or type(a) is np.ndarray:
            return f(*args, **kwargs)
        with x._backend.array_device(a):  # type: ignore[union-attr]
            return f(*args, **kwargs)

    return wrapped
