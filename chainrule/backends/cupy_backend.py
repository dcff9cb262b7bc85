"""The CuPy (CUDA) backend, and the device runtime behind ``chainrule.cuda``.

CuPy is never imported at module level: :class:`CupyBackend` is given the ``cupy`` and
``cupyx`` modules by ``chainrule.backends`` (which imports them on first GPU use, or loads a
stand-in named by the documented hook ``chainrule.backends.set_cupy_module``). Everything here
uses only CuPy's public API, so the same code runs on a GPU and, in tests, on the CPU stand-in
``tests/_fakecupy``.

This file is over 300 lines because it holds two halves of one object: the array differences
(:class:`~chainrule.backends.base.Backend`'s methods) and the device runtime (devices,
memory, streams, events) that ``chainrule.cuda`` exposes.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, ContextManager

import numpy as np

from chainrule.backends.base import Backend, doubling_scan, unbuffered_apply

__all__ = ["CupyBackend", "CupyRandom"]

_NULL = contextlib.nullcontext()


class CupyRandom:
    """A :class:`~chainrule.backends.base.RandomSource` on one GPU.

    CuPy's ``Generator`` lacks ``normal``, ``choice``, ``permutation`` and ``multinomial``, so
    this wraps the legacy ``cupy.random.RandomState`` (cuRAND), under NumPy ``Generator``
    names. Streams differ from NumPy's: the same seed gives other numbers than on the CPU.
    """

    def __init__(self, cupy: Any, seed: int | None, device: int) -> None:
        self._cp = cupy
        self._device = device
        with cupy.cuda.Device(device):
            self._rs = cupy.random.RandomState(seed)

    def _run(self, name: str, *args: Any, **kwargs: Any) -> Any:
        with self._cp.cuda.Device(self._device):
            return getattr(self._rs, name)(*args, **kwargs)

    def random(self, size: Any = None, dtype: Any = np.float64) -> Any:
        return self._run("random_sample", size=size, dtype=dtype)

    def standard_normal(self, size: Any = None, dtype: Any = np.float64) -> Any:
        return self._run("standard_normal", size=size, dtype=dtype)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        return self._run("normal", loc, scale, size)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
        return self._run("uniform", low, high, size)

    def integers(
        self,
        low: int,
        high: int | None = None,
        size: Any = None,
        dtype: Any = np.int64,
        endpoint: bool = False,
    ) -> Any:
        if high is None:
            low, high = 0, low
        return self._run("randint", low, high + 1 if endpoint else high, size, dtype)

    def permutation(self, x: Any) -> Any:
        return self._run("permutation", x)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        return self._run("choice", a, size, replace, p)

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        return self._run("exponential", scale, size)

    def standard_exponential(self, size: Any = None, dtype: Any = np.float64) -> Any:
        return self._run("standard_exponential", size, dtype)

    def poisson(self, lam: Any = 1.0, size: Any = None) -> Any:
        return self._run("poisson", lam, size)

    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = np.float64) -> Any:
        return self._run("standard_gamma", shape, size, dtype)

    def binomial(self, n: Any, p: Any, size: Any = None) -> Any:
        return self._run("binomial", n, p, size)

    def geometric(self, p: Any, size: Any = None) -> Any:
        return self._run("geometric", p, size)

    def standard_cauchy(self, size: Any = None) -> Any:
        return self._run("standard_cauchy", size)

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None) -> Any:
        return self._run("lognormal", mean, sigma, size)

    def beta(self, a: Any, b: Any, size: Any = None) -> Any:
        return self._run("beta", a, b, size)


class CupyBackend(Backend):
    """GPU arrays through CuPy (or, in tests, its CPU stand-in)."""

    name = "cupy"
    device = "cuda"

    def __init__(self, cupy: Any, cupyx: Any, seeds: dict[int | None, int] | None = None) -> None:
        self.xp = cupy
        self._cp = cupy
        self._cpx = cupyx
        self.ndarray = cupy.ndarray
        self._peak: dict[int, int] = {}
        self._tracking = False
        self._rngs: dict[int, CupyRandom] = {}
        # Seeds by device index (None: all), shared with chainrule.backends.seed_cuda.
        self._seeds = {} if seeds is None else seeds

    # Where arrays live -------------------------------------------------------------------
    def device_of(self, array: Any) -> str:
        return f"cuda:{array.device.id}"

    def device_index(self, array: Any) -> int:
        return int(array.device.id)

    def asarray(self, obj: Any, dtype: Any = None, device: Any = None) -> Any:
        if device is None:
            return self._cp.asarray(obj, dtype=dtype)
        with self._cp.cuda.Device(self.check_device(device)):
            return self._cp.asarray(obj, dtype=dtype)

    def to_host(self, array: Any) -> np.ndarray:
        return self._cp.asnumpy(array)

    def from_host(self, array: Any, device: Any = None) -> Any:
        return self.asarray(array, device=device)

    def copy_to_device(self, array: Any, device: Any = None) -> Any:
        dev = self.check_device(device)
        if dev == int(array.device.id):
            with self._cp.cuda.Device(dev):  # ndarray.copy copies to the current device
                return array.copy()
        # Between two GPUs through the host: simple, and rare enough not to matter.
        return self.from_host(self.to_host(array), dev)

    # What the libraries do differently ---------------------------------------------------
    def scatter_add(self, target: Any, index: Any, values: Any) -> None:
        self._cpx.scatter_add(target, index, values)

    def scatter_reduce(self, target: Any, index: Any, values: Any, reduce: str) -> None:
        if reduce == "add":
            self._cpx.scatter_add(target, index, values)
        elif reduce == "maximum":
            self._cpx.scatter_max(target, index, values)
        elif reduce == "minimum":
            self._cpx.scatter_min(target, index, values)
        elif reduce == "multiply":  # CuPy has no multiply.at
            unbuffered_apply(self._cp, self._cp.multiply, target, index, values)
        else:
            raise ValueError(
                "scatter_reduce: reduce must be one of ['add', 'maximum', 'minimum', "
                f"'multiply'], got {reduce!r}"
            )

    def writeable(self, array: Any) -> bool:
        return True  # CuPy has no read-only flag

    def accumulate(self, array: Any, axis: int, reduce: str) -> Any:
        uf = self._cp.maximum if reduce == "maximum" else self._cp.minimum
        return doubling_scan(self._cp, uf, array, axis)

    def errstate(self, **kwargs: Any) -> ContextManager[Any]:
        return contextlib.nullcontext()  # GPU arithmetic sets no flags and never warns

    def default_rng(self, seed: int | None = None, device: Any = None) -> CupyRandom:
        dev = self.current_device() if device is None else self.check_device(device)
        return CupyRandom(self._cp, seed, dev)

    def ensure_array(self, value: Any) -> Any:
        return value if isinstance(value, self.ndarray) else self._cp.asarray(value)

    def linalg_errors(self) -> ContextManager[Any]:
        return self._cpx.errstate(linalg="raise")

    def float_to_int(self, array: Any, dtype: Any) -> Any:
        return self._cp.trunc(array).astype(dtype)

    def sliding_window_view(self, array: Any, window_shape: Any, axis: Any = None) -> Any:
        # Windows over the given axes (all when None), appended as trailing dimensions, as
        # NumPy's sliding_window_view; built on as_strided, which CuPy has.
        ws = (window_shape,) if isinstance(window_shape, int) else tuple(window_shape)
        if axis is None:
            axes = tuple(range(array.ndim))
        else:
            axes = (axis,) if isinstance(axis, int) else tuple(axis)
        if len(axes) != len(ws):
            raise ValueError("Must provide matching length window_shape and axis")
        axes = tuple(a % array.ndim for a in axes)
        shape = list(array.shape)
        for a, w in zip(axes, ws):
            if shape[a] < w:
                raise ValueError("window shape cannot be larger than input array shape")
            shape[a] -= w - 1
        strides = tuple(array.strides) + tuple(array.strides[a] for a in axes)
        return self._cp.lib.stride_tricks.as_strided(
            array, shape=tuple(shape) + ws, strides=strides
        )

    def as_strided(self, array: Any, shape: Any, strides: Any) -> Any:
        return self._cp.lib.stride_tricks.as_strided(array, shape=shape, strides=strides)

    def einsum(self, subscripts: str, *operands: Any, out: Any = None) -> Any:
        r = self._cp.einsum(subscripts, *operands)
        if out is None:
            return r
        out[...] = r
        return out

    def lu_factor(self, a: Any) -> tuple[Any, Any]:
        # A batch of square matrices: cuBLAS's getrfBatched, one call (as CuPy's own
        # linalg._decomposition._lu_factor, with its heuristic). Otherwise
        # cupyx.scipy.linalg.lu_factor (cuSOLVER getrf), which takes one 2-d matrix and gives
        # 0-based pivots: one call per matrix of the batch, on the device.
        cp = self._cp
        m, n = a.shape[-2:]
        batch = tuple(a.shape[:-2])
        count = int(np.prod(batch)) if batch else 1
        if m == n and count > 1 and a.dtype.char in "fdFD" and count * 65536 >= n * n:
            return self._lu_factor_batched(a, count)
        getrf = self._cpx.scipy.linalg.lu_factor
        flat = a.reshape((-1, m, n))
        lus, pivs = [], []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # CuPy warns on an exactly singular matrix
            for i in range(flat.shape[0]):
                lu, piv = getrf(flat[i], check_finite=False)
                lus.append(lu)
                pivs.append(piv)
        lu = cp.ascontiguousarray(cp.stack(lus).reshape(a.shape))
        piv = (cp.stack(pivs) + 1).astype(cp.int32).reshape(batch + (min(m, n),))
        return lu, piv

    def _lu_factor_batched(self, a: Any, count: int) -> tuple[Any, Any]:
        """LU of ``count`` square matrices in one ``cublas.<t>getrfBatched`` call; 1-based
        int32 pivots. cuBLAS is column-major, so a C-ordered stack of the transposes is, to
        it, the stack of the matrices; the copy also keeps ``a`` from being overwritten."""
        cp = self._cp
        n = a.shape[-1]
        getrf = getattr(cp.cuda.cublas, "sdcz"["fdFD".index(a.dtype.char)] + "getrfBatched")
        at = cp.ascontiguousarray(a.reshape((count, n, n)).swapaxes(-1, -2))
        if at.data.ptr == a.data.ptr:
            at = at.copy()
        piv = cp.empty((count, n), dtype=cp.int32)
        info = cp.empty((count,), dtype=cp.int32)
        step = n * n * at.itemsize
        start = at.data.ptr
        ptrs = cp.arange(start, start + step * count, step, dtype=cp.uintp)
        getrf(
            cp.cuda.get_cublas_handle(),
            n,
            ptrs.data.ptr,
            n,
            piv.data.ptr,
            info.data.ptr,
            count,
        )
        lu = cp.ascontiguousarray(at.swapaxes(-1, -2)).reshape(a.shape)
        return lu, piv.reshape(tuple(a.shape[:-2]) + (n,))

    # Devices -------------------------------------------------------------------------------
    @property
    def multi_gpu(self) -> bool:
        """Whether more than one GPU is visible (only then can two arrays' devices differ)."""
        m = self.__dict__.get("_multi")
        if m is None:
            m = self._multi = self.device_count() > 1
        return m

    def device_count(self) -> int:
        """Number of visible GPUs."""
        return int(self._cp.cuda.runtime.getDeviceCount())

    def check_device(self, device: Any) -> int:
        """A device index (int, ``'cuda:1'``, a ``chainrule.device``) checked against the
        visible GPUs; ``None`` means the current one. Raises PyTorch's error otherwise."""
        if device is None:
            return self.current_device()
        idx = _index_of(device)
        if idx is None:
            return self.current_device()
        if not 0 <= idx < self.device_count():
            raise RuntimeError(
                "CUDA error: invalid device ordinal (chainrule: device index "
                f"{idx}, but {self.device_count()} GPU(s) are visible)"
            )
        return idx

    def current_device(self) -> int:
        return int(self._cp.cuda.runtime.getDevice())

    def set_device(self, device: Any) -> None:
        self._cp.cuda.runtime.setDevice(self.check_device(device))

    def device_guard(self, device: Any) -> ContextManager[Any]:
        """A context that makes ``device`` current and restores the previous one."""
        return self._cp.cuda.Device(self.check_device(device))

    def array_device(self, array: Any) -> ContextManager[Any]:
        """``cupy.cuda.Device(array's GPU)`` when it is not the current one; a no-op context
        with a single GPU or when it already is (Note [the inputs' device is current] in
        ops/_apply.py)."""
        if not self.multi_gpu:
            return _NULL
        dev = array.device.id
        if dev == self._cp.cuda.runtime.getDevice():
            return _NULL
        return self._cp.cuda.Device(dev)

    def on_node_devices(self, evaluate: Any) -> Any:
        """``evaluate(node, buf, release, freed_at)`` (the backward engine's run of one node)
        with the GPU of the node's incoming gradients made current before it runs, and that
        of its outgoing gradients after, for the engine's routing (sums, casts, buffer adds)
        that follows. The engine restores the caller's device at the end of the backward."""
        runtime = self._cp.cuda.runtime
        nd = self.ndarray

        def use(grads: Any) -> None:
            for g in grads:
                if g is not None:
                    a = getattr(g, "_data", g)  # Tensors under create_graph
                    if type(a) is nd:
                        d = a.device.id
                        if d != runtime.getDevice():
                            runtime.setDevice(d)
                    return

        def run(node: Any, buf: Any, release: bool, freed_at: Any) -> Any:
            if buf:
                use(buf)
            outs = evaluate(node, buf, release, freed_at)
            if outs:
                use(outs)
            return outs

        return run

    def synchronize(self, device: Any = None) -> None:
        self._cp.cuda.Device(self.check_device(device)).synchronize()

    def device_properties(self, device: Any = None) -> dict[str, Any]:
        """``name``, ``major``, ``minor``, ``total_memory``, ``multi_processor_count``."""
        p = self._cp.cuda.runtime.getDeviceProperties(self.check_device(device))
        name = p["name"]
        return {
            "name": name.decode() if isinstance(name, bytes) else str(name),
            "major": int(p["major"]),
            "minor": int(p["minor"]),
            "total_memory": int(p["totalGlobalMem"]),
            "multi_processor_count": int(p["multiProcessorCount"]),
        }

    # Random numbers ----------------------------------------------------------------------
    def generator(self, device: Any = None) -> CupyRandom:
        """The default random source of a GPU, made on first use from the seed given to
        ``chainrule.backends.seed_cuda`` for it (or for all GPUs), else from OS entropy."""
        idx = self.check_device(device)
        g = self._rngs.get(idx)
        if g is None:
            seed = self._seeds.get(idx, self._seeds.get(None))
            g = self._rngs[idx] = CupyRandom(self._cp, _seed64(seed), idx)
        return g

    def reseed(self, device: int | None = None) -> None:
        """Drop the generator of ``device`` (all when None), so the next use takes its seed."""
        if device is None:
            self._rngs.clear()
        else:
            self._rngs.pop(device, None)

    # Memory --------------------------------------------------------------------------------
    # CuPy's memory pool knows the bytes in use but no peak. The peak is kept by an allocator
    # that wraps the pool's and looks at the bytes in use after each allocation (the peak is
    # always reached right after one); it is installed on the first max_memory_allocated() or
    # reset_peak_memory_stats() call, so the hot path pays nothing until a peak is asked for.
    def _pool(self) -> Any:
        return self._cp.get_default_memory_pool()

    def memory_allocated(self, device: Any = None) -> int:
        with self._cp.cuda.Device(self.check_device(device)):
            return int(self._pool().used_bytes())

    def memory_reserved(self, device: Any = None) -> int:
        with self._cp.cuda.Device(self.check_device(device)):
            return int(self._pool().total_bytes())

    def _track_peaks(self) -> None:
        if self._tracking:
            return
        pool, cp = self._pool(), self._cp

        def malloc(nbytes: int) -> Any:
            mem = pool.malloc(nbytes)
            dev = cp.cuda.runtime.getDevice()
            used = pool.used_bytes()
            if used > self._peak.get(dev, 0):
                self._peak[dev] = used
            return mem

        cp.cuda.set_allocator(malloc)
        self._tracking = True

    def max_memory_allocated(self, device: Any = None) -> int:
        idx = self.check_device(device)
        self._track_peaks()
        now = self.memory_allocated(idx)
        self._peak[idx] = max(self._peak.get(idx, 0), now)
        return self._peak[idx]

    def reset_peak_memory_stats(self, device: Any = None) -> None:
        idx = self.check_device(device)
        self._track_peaks()
        self._peak[idx] = self.memory_allocated(idx)

    def empty_cache(self) -> None:
        self._pool().free_all_blocks()

    # Streams and events ------------------------------------------------------------------
    def new_stream(self, device: Any = None, priority: int = 0) -> Any:
        with self._cp.cuda.Device(self.check_device(device)):
            return self._cp.cuda.Stream(non_blocking=False)

    def current_stream(self, device: Any = None) -> Any:
        with self._cp.cuda.Device(self.check_device(device)):
            return self._cp.cuda.get_current_stream()

    def default_stream(self, device: Any = None) -> Any:
        return self._cp.cuda.Stream.null

    def use_stream(self, stream: Any) -> ContextManager[Any]:
        """A context making ``stream`` current (CuPy's ``with stream:``)."""
        return stream

    def stream_synchronize(self, stream: Any) -> None:
        stream.synchronize()

    def stream_query(self, stream: Any) -> bool:
        return bool(stream.done)

    def stream_wait_event(self, stream: Any, event: Any) -> None:
        stream.wait_event(event)

    def new_event(self, enable_timing: bool = False, blocking: bool = False) -> Any:
        return self._cp.cuda.Event(block=blocking, disable_timing=not enable_timing)

    def event_record(self, event: Any, stream: Any = None) -> None:
        event.record(stream)

    def event_synchronize(self, event: Any) -> None:
        event.synchronize()

    def event_query(self, event: Any) -> bool:
        return bool(event.done)

    def event_elapsed_ms(self, start: Any, end: Any) -> float:
        return float(self._cp.cuda.get_elapsed_time(start, end))


def _seed64(seed: int | None) -> int | None:
    return None if seed is None else int(seed) & 0xFFFFFFFFFFFFFFFF


def _index_of(device: Any) -> int | None:
    """The index in ``0``, ``'cuda:1'``, ``'cuda'`` (None) or a ``chainrule.device``."""
    if isinstance(device, bool):
        raise TypeError(f"Invalid device, must be cuda device: {device!r}")
    if isinstance(device, (int, np.integer)):
        return int(device)
    index = getattr(device, "index", None)
    kind = getattr(device, "type", None)
    if kind is None:
        s = str(device)
        kind, _, rest = s.partition(":")
        index = int(rest) if rest else None
    if kind != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return index
