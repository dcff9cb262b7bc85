"""The array module and backend that forwards see for Tracer arrays (Note [tracing arrays]
in _tracer.py)."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from chainrule._compile._tracer import (
    _DATA_SHAPED,
    _METADATA,
    ACTIVE,
    Tracer,
    _function_call,
    _has_tracer,
    _strip,
)
from chainrule.backends.numpy_backend import NumpyBackend

if TYPE_CHECKING:
    from chainrule._compile._recorder import Recorder

__all__ = ["TRACING_BACKEND", "LiveRng", "RecordingRng"]


class _RecordingNumpy:
    """NumPy as a forward on Tracers sees it (``xp``): every function it hands out is recorded
    while a capture runs, so that the conversions NumPy does not dispatch to a Tracer
    (``asarray``, ``ascontiguousarray``) and the arrays that factories make (``xp.zeros``,
    then written with values from the data) are slots of the program, not constants."""

    def __init__(self, module: Any = np) -> None:
        self._module = module

    @staticmethod
    def _recorded(f: Callable[..., Any], name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            rec = ACTIVE[0]
            if rec is None or rec.paused:
                return f(*_strip(args), **_strip(kwargs))
            if name in _DATA_SHAPED or name in _METADATA or name == "where" and len(args) == 1:
                if _has_tracer(args) or _has_tracer(kwargs):
                    return _function_call(f, args, kwargs)
                return f(*args, **kwargs)
            if hasattr(f, "_implementation") and (_has_tracer(args) or _has_tracer(kwargs)):
                # A function NumPy dispatches (``copyto``, ``put_along_axis``...): handed to
                # Tracer.__array_function__ as a direct ``np.`` call would be, which knows the
                # ones that write into an argument.
                return f(*args, **kwargs)
            return rec.call(f, args, kwargs, f"np.{name}")

        call.__name__ = name
        return call

    def __getattr__(self, name: str) -> Any:
        if name == "asnumpy":  # CuPy's name: code that tests ``xp is np`` takes it for CuPy
            v: Any = np.asanyarray
        else:
            v = getattr(self._module, name)
        if isinstance(v, np.ufunc):  # a ufunc given a Tracer dispatches by itself
            return v
        if isinstance(v, types.ModuleType):  # xp.lib.stride_tricks, xp.linalg
            w = _RecordingNumpy(v)
            self.__dict__[name] = w
            return w
        if callable(v) and not isinstance(v, type) and not name.startswith("_"):
            w = self._recorded(v, name)
            self.__dict__[name] = w
            return w
        return v


class _TracingBackend(NumpyBackend):
    """NumPy's backend, for Tracer arrays: its ``xp`` records conversions."""

    xp = _RecordingNumpy()  # type: ignore[assignment]

    def ensure_array(self, value: Any) -> np.ndarray:
        return value if isinstance(value, np.ndarray) else np.asarray(value)

    def asarray(self, obj: Any, dtype: Any = None, device: Any = None) -> np.ndarray:
        return self.xp.asarray(obj, dtype=dtype)

    def from_host(self, array: Any, device: Any = None) -> np.ndarray:
        return self.xp.asarray(array)

    def to_host(self, array: Any) -> np.ndarray:
        """The array itself (NumPy's host is its device): a Python read of it comes later,
        at ``.item()`` or ``.tolist()``, and breaks there."""
        return array if isinstance(array, Tracer) else np.asarray(array)

    def scatter_add(self, target: np.ndarray, index: Any, values: Any) -> None:
        np.add.at(target, index, values)

    # NumPy functions that do not dispatch to an array subclass: through the recording xp.
    def as_strided(self, array: Any, shape: Any, strides: Any) -> np.ndarray:
        return self.xp.lib.stride_tricks.as_strided(
            array, shape=shape, strides=strides, writeable=False
        )

    def copy_to_device(self, array: Any, device: Any = None) -> np.ndarray:
        return self.xp.array(array, copy=True)

    def check_index_bounds(self, index: Any, size: int, dim: int = 0) -> None:
        """NumPy's check, as one boolean read of the data (a checked read, Note [checked
        reads], when the index is a Tracer), then NumPy's own message."""
        if isinstance(index, Tracer) and index.size:
            if not bool(((index < -size) | (index >= size)).any()):
                return
        NumpyBackend.check_index_bounds(self, _strip(index), size, dim)


TRACING_BACKEND = _TracingBackend()


class LiveRng:
    """A draw from a generator's current stream (read at each replay: ``manual_seed`` makes a
    new NumPy generator)."""

    __slots__ = ("generator", "name")

    def __init__(self, generator: Any, name: str) -> None:
        self.generator = generator
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from chainrule._random import rng_of_eager

        return getattr(rng_of_eager(self.generator), self.name)(*args, **kwargs)


class RecordingRng:
    """A NumPy generator whose draws are recorded as program instructions."""

    def __init__(self, rec: Recorder, generator: Any) -> None:
        from chainrule._random import rng_of_eager

        self._rec = rec
        self._gen = generator
        self._rng = rng_of_eager(generator)

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._rng, name)
        if not callable(real):
            return real
        rec = self._rec
        live = LiveRng(self._gen, name)

        def draw(*args: Any, **kwargs: Any) -> Any:
            if not rec.recording:
                return real(*args, **kwargs)
            res = rec.call(live, args, kwargs, f"Generator.{name}", random=True)
            if not isinstance(res, np.ndarray):
                return res
            return res

        return draw
