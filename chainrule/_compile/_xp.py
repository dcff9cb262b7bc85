"""The array module and backend that forwards see for Tracer arrays (Note [tracing arrays]
in _tracer.py)."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from chainrule._compile._tracer import (
    _DATA_SHAPED,
    _METADATA,
    _WRITES_FIRST,
    ACTIVE,
    CUPY_TYPES,
    CuTracer,
    Tracer,
    _function_call,
    _has_tracer,
    _strip,
    is_array,
)
from chainrule.backends.cupy_backend import CupyBackend
from chainrule.backends.numpy_backend import NumpyBackend

if TYPE_CHECKING:
    from chainrule._compile._recorder import Recorder

__all__ = ["TRACING_BACKEND", "LiveRng", "RecordingRng", "cuda_tracing_backend"]


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


# Note [CUDA tracing backend]
#     While a capture runs, the CUDA backend that ``get_backend('cuda')`` and
#     ``backend_of(CuTracer)`` hand out is a :class:`TracingCupyBackend`: the live
#     ``CupyBackend``'s methods, run with ``xp``/``_cp``/``_cpx`` replaced by recording
#     wrappers of the ``cupy`` and ``cupyx`` modules, so every array function a forward, a VJP
#     or a backend method calls (``xp.add``, ``cupyx.scatter_add``, ``cupy.asarray`` of a host
#     array, ``cupy.asnumpy``) is one instruction of the program. ``cupy.cuda`` (devices,
#     streams, the runtime) is not wrapped, and the device runtime (device counts, generators,
#     memory statistics, streams, events) is the live backend's own. ``ndarray`` is CuTracer
#     while the capture records, so the backward engine's per-node device switch
#     (``on_node_devices``) sees the traced gradients, and the plain CuPy type while it is
#     paused, so an optimizer step (run on the plain arrays) finds its parameters' GPU
#     (``optim/_devices.run_on_param_devices``). Each instruction records the device that
#     was current when it ran (Note [replay devices] in replay.py).

_CUDA_WRITES_FIRST = _WRITES_FIRST | {"scatter_add", "scatter_max", "scatter_min"}
# cupy functions whose array result is new memory, never a view of an argument (Note [CUDA
# slots] in _recorder.py); the factories that read no array need no entry.
_CUDA_FRESH = frozenset(
    {
        "zeros_like",
        "empty_like",
        "ones_like",
        "full_like",
        "matmul",
        "dot",
        "concatenate",
        "stack",
        "copy",
        "where",
        "clip",
        "sum",
        "prod",
        "mean",
        "amax",
        "amin",
        "max",
        "min",
        "argmax",
        "argmin",
        "tensordot",
        "outer",
        "cumsum",
    }
)
# The live backend's device runtime, shared by the tracing backend as it is.
_LIVE_METHODS = (
    "device_count",
    "check_device",
    "current_device",
    "set_device",
    "device_guard",
    "synchronize",
    "device_properties",
    "generator",
    "reseed",
    "default_rng",
    "memory_allocated",
    "memory_reserved",
    "max_memory_allocated",
    "reset_peak_memory_stats",
    "empty_cache",
    "new_stream",
    "current_stream",
    "default_stream",
    "use_stream",
    "stream_synchronize",
    "stream_query",
    "stream_wait_event",
    "new_event",
    "event_record",
    "event_synchronize",
    "event_query",
    "event_elapsed_ms",
)


def _cuda_call(
    f: Callable[..., Any], name: str, args: Any, kwargs: Any, fresh: bool = False
) -> Any:
    """One call of a ``cupy``/``cupyx`` function during a capture (Note [CUDA tracing
    backend]): recorded when it reads a traced array or makes an array; a call that reads no
    traced array and returns no array (``cupy.result_type``, a context manager) runs as is."""
    rec = ACTIVE[0]
    if rec is None or rec.paused:
        return f(*_strip(args), **_strip(kwargs))
    traced = _has_tracer(args) or _has_tracer(kwargs)
    if name in _METADATA:
        return f(*_strip(args), **_strip(kwargs))
    if traced and (name in _DATA_SHAPED or name == "where" and len(args) + len(kwargs) == 1):
        why = f"cupy.{name} (its result's shape depends on the data)"
        return rec.shaped_call(f, args, kwargs, f"cupy.{name}", why)
    return rec.call(
        f,
        args,
        kwargs,
        f"cupy.{name}",
        writes_first=name in _CUDA_WRITES_FIRST,
        value_ok=not traced,
        fresh=fresh or name in _CUDA_FRESH,
    )


class _RecordingUfunc:
    """A CuPy ufunc whose calls, ``at``, ``reduce``, ``outer`` and ``accumulate`` are
    recorded."""

    def __init__(self, uf: Any) -> None:
        self._uf = uf
        self.__name__ = getattr(uf, "__name__", "ufunc")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _cuda_call(self._uf, self.__name__, args, kwargs, fresh=True)

    def __getattr__(self, name: str) -> Any:
        v = getattr(self._uf, name)
        if name in ("at", "reduce", "outer", "accumulate", "reduceat"):

            def method(*args: Any, **kwargs: Any) -> Any:
                rec = ACTIVE[0]
                if rec is None or rec.paused:
                    return v(*_strip(args), **_strip(kwargs))
                return rec.call(
                    v, args, kwargs, f"cupy.{self.__name__}.{name}", writes_first=name == "at"
                )

            return method
        return v


class _RecordingCupy:
    """``cupy`` (or ``cupyx``, or one of their submodules) as a forward on CuTracers sees it
    (Note [CUDA tracing backend]): functions and ufuncs recorded, ``cuda`` and types as they
    are."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        v = getattr(self._module, name)
        if name in ("cuda", "ndarray") or name.startswith("_") or isinstance(v, type):
            return v
        if hasattr(v, "nin") and hasattr(v, "nout") and callable(v):  # a ufunc
            w: Any = _RecordingUfunc(v)
        elif isinstance(v, types.ModuleType) or _namespace(v):
            w = _RecordingCupy(v)  # cupy.linalg, cupy.fft, cupy.lib.stride_tricks, cupyx.scipy
        elif callable(v) and not isinstance(v, type):
            w = _recorded_cuda(v, name)
        else:
            return v
        self.__dict__[name] = w
        return w


def _namespace(v: Any) -> bool:
    """Whether ``v`` is a namespace of functions that is not a module (an object standing for
    ``cupy.lib`` or ``cupy.lib.stride_tricks``): not callable, no array, no plain value."""
    return not callable(v) and hasattr(v, "__dict__") and not is_array(v)


def _recorded_cuda(f: Callable[..., Any], name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return _cuda_call(f, name, args, kwargs)

    call.__name__ = name
    return call


class TracingCupyBackend(CupyBackend):
    """The live CUDA backend as a capture sees it (Note [CUDA tracing backend])."""

    def __init__(self, live: CupyBackend) -> None:  # the live backend's state, not a new one
        self._live = live
        self.xp = self._cp = _RecordingCupy(live._cp)  # type: ignore[assignment]
        self._cpx = _RecordingCupy(live._cpx)
        for name in _LIVE_METHODS:
            setattr(self, name, getattr(live, name))

    def __getattr__(self, name: str) -> Any:  # the live backend's other state
        if name == "_live":
            raise AttributeError(name)
        return getattr(self._live, name)

    @property
    def multi_gpu(self) -> bool:  # type: ignore[override]
        return self._live.multi_gpu

    @property
    def ndarray(self) -> Any:  # type: ignore[override]
        """The array type that the code asking holds: CuTracer while the capture records,
        the plain CuPy type while it is paused (an optimizer step, which runs on the plain
        arrays, Note [an unrecorded step on CUDA] in capture.py, and finds its parameters'
        GPU by this type; the rest of a call after a graph break)."""
        rec = ACTIVE[0]
        return CuTracer if rec is not None and not rec.paused else self._live.ndarray

    def ensure_array(self, value: Any) -> Any:
        return value if is_array(value) else self._cp.asarray(value)

    def on_node_devices(self, evaluate: Any) -> Any:
        """The backward engine's per-node device switch for CuTracers (this backend's
        ``ndarray``) and, around it, the live backend's for plain CuPy arrays: the gradients
        that a backward makes after a graph break are plain (Note [de-tracing after a break]
        in _tracer.py), and a node on another GPU than the current one needs its switch."""
        return CupyBackend.on_node_devices(self, self._live.on_node_devices(evaluate))

    def lu_factor(self, a: Any) -> tuple[Any, Any]:
        """cupyx's one-matrix LU per matrix (the batched cuBLAS call reads raw pointers, which
        a replay cannot follow)."""
        rec = ACTIVE[0]
        if rec is not None and not rec.paused and a.ndim > 2:
            rec.graph_break("a batched LU through raw cuBLAS pointers")
        return CupyBackend.lu_factor(self, a)


_CUDA_TRACING: dict[int, TracingCupyBackend] = {}


def cuda_tracing_backend(live: Any) -> TracingCupyBackend:
    """The tracing backend of the live CUDA backend ``live`` (made once per backend), with
    CuTracer registered as its array type."""
    from chainrule.backends import register_array_type

    b = _CUDA_TRACING.get(id(live))
    if b is None or b._live is not live:
        b = _CUDA_TRACING[id(live)] = TracingCupyBackend(live)
    register_array_type(CuTracer, b)
    CUPY_TYPES[:] = [live.ndarray]
    return b


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
