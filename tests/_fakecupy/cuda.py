"""``cupy.cuda`` for the stand-in: devices, runtime, memory pool, streams and events on the CPU.

Two fake devices (``DEVICE_COUNT``). Work is synchronous, so streams and events are always
done; an event records ``time.perf_counter()``, and ``get_elapsed_time`` gives milliseconds.
"""

from __future__ import annotations

import time
from typing import Any

from tests._fakecupy import _core

DEVICE_COUNT = 2


class CUDARuntimeError(RuntimeError):
    """``cupy_backends.cuda.api.runtime.CUDARuntimeError``."""


def _check(i: int) -> int:
    if not 0 <= i < DEVICE_COUNT:
        raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
    return i


class _Runtime:
    """``cupy.cuda.runtime``."""

    CUDARuntimeError = CUDARuntimeError

    @staticmethod
    def getDeviceCount() -> int:
        return DEVICE_COUNT

    @staticmethod
    def getDevice() -> int:
        return _core.CURRENT[0]

    @staticmethod
    def setDevice(i: int) -> None:
        _core.CURRENT[0] = _check(int(i))

    @staticmethod
    def deviceSynchronize() -> None:
        pass

    @staticmethod
    def getDeviceProperties(i: int) -> dict[str, Any]:
        _check(int(i))
        return {
            "name": b"chainrule fake CUDA device",
            "major": 9,
            "minor": 0,
            "totalGlobalMem": 16 * 2**30,
            "multiProcessorCount": 4,
        }


runtime = _Runtime()


class Device:
    """``cupy.cuda.Device``: a context that makes the device current."""

    def __init__(self, device: Any = None) -> None:
        self.id = _core.CURRENT[0] if device is None else _check(int(device))
        self._prev: list[int] = []

    def __enter__(self) -> Device:
        self._prev.append(_core.CURRENT[0])
        _core.CURRENT[0] = self.id
        return self

    def __exit__(self, *exc: Any) -> None:
        _core.CURRENT[0] = self._prev.pop()

    def use(self) -> None:
        _core.CURRENT[0] = self.id

    def synchronize(self) -> None:
        pass

    @property
    def compute_capability(self) -> str:
        return "90"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return self.id

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


class MemoryPool:
    """``cupy.cuda.MemoryPool``: bytes held by live arrays, per device."""

    def malloc(self, nbytes: int) -> Any:
        return _core._Buffer(_core.CURRENT[0], nbytes)

    def used_bytes(self) -> int:
        return _core.USED.get(_core.CURRENT[0], 0)

    def total_bytes(self) -> int:
        return self.used_bytes()  # the stand-in caches nothing

    def free_bytes(self) -> int:
        return 0

    def free_all_blocks(self, stream: Any = None) -> None:
        pass


class _Memory:
    _POOL = MemoryPool()
    MemoryPool = MemoryPool

    def pool(self) -> MemoryPool:
        return self._POOL


memory = _Memory()


def set_allocator(allocator: Any = None) -> None:
    """``cupy.cuda.set_allocator``: ``allocator(nbytes)`` is called for each new buffer."""
    _core.ALLOCATOR[0] = allocator


def get_allocator() -> Any:
    return _core.ALLOCATOR[0] or memory.pool().malloc


class Event:
    """``cupy.cuda.Event(block, disable_timing, interprocess)``."""

    def __init__(
        self, block: bool = False, disable_timing: bool = False, interprocess: bool = False
    ) -> None:
        self.block, self.disable_timing = block, disable_timing
        self._t: float | None = None

    def record(self, stream: Any = None) -> None:
        self._t = time.perf_counter()

    def synchronize(self) -> None:
        pass

    @property
    def done(self) -> bool:
        return True


def get_elapsed_time(start_event: Event, end_event: Event) -> float:
    """Milliseconds between two recorded timing events."""
    if start_event.disable_timing or end_event.disable_timing:
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
    if start_event._t is None or end_event._t is None:
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
    return (end_event._t - start_event._t) * 1000.0


_STREAMS: list[Any] = []


class Stream:
    """``cupy.cuda.Stream``: ``with stream:`` makes it current."""

    null: Stream

    def __init__(self, null: bool = False, non_blocking: bool = False, ptr: int = 0) -> None:
        self.ptr = 0 if null else id(self)
        self.device_id = _core.CURRENT[0]

    def __enter__(self) -> Stream:
        _STREAMS.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _STREAMS.pop()

    def use(self) -> Stream:
        _STREAMS[:] = [self]
        return self

    def synchronize(self) -> None:
        pass

    @property
    def done(self) -> bool:
        return True

    def record(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        pass

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self) -> int:
        return self.ptr


Stream.null = Stream(null=True)


def get_current_stream(device_id: int | None = None) -> Stream:
    return _STREAMS[-1] if _STREAMS else Stream.null


# cuBLAS --------------------------------------------------------------------------------------
# The stand-in's "device pointers" are the host addresses of its arrays' NumPy buffers
# (ndarray.data.ptr), so the batched routines below read and write through them with ctypes.
# They must only ever be given pointers of the stand-in's own arrays, as a real cuBLAS call is.


def get_cublas_handle() -> int:
    """``cupy.cuda.get_cublas_handle()`` (also ``cupy.cuda.device.get_cublas_handle``)."""
    return 1 + _core.CURRENT[0]


class _DeviceModule:
    """``cupy.cuda.device``: the handle getters."""

    get_cublas_handle = staticmethod(get_cublas_handle)

    @staticmethod
    def get_device_id() -> int:
        return _core.CURRENT[0]


device = _DeviceModule()


def _at(ptr: int, dtype: Any, count: int) -> Any:
    import ctypes

    import numpy as np

    dt = np.dtype(dtype)
    buf = (ctypes.c_char * (dt.itemsize * count)).from_address(int(ptr))
    return np.frombuffer(buf, dtype=dt, count=count)


# (routine, batchSize) of each batched cuBLAS call, for tests to see which path ran.
CUBLAS_CALLS: list[tuple[str, int]] = []


def _getrf_batched(dtype: Any) -> Any:
    def getrf(
        handle: int, n: int, Aarray: int, lda: int, PivotArray: int, infoArray: int, batchSize: int
    ) -> None:
        """cuBLAS ``<t>getrfBatched``: in-place LU with partial pivoting of ``batchSize``
        column-major n-by-n matrices (``Aarray``: a device array of their pointers), 1-based
        pivots (n per matrix) and one ``info`` each (i > 0: U(i, i) is exactly zero, the
        factorization completed)."""
        import numpy as np
        import scipy.linalg

        CUBLAS_CALLS.append((f"{np.dtype(dtype).char}getrfBatched", batchSize))
        ptrs = _at(Aarray, np.uintp, batchSize)
        piv = _at(PivotArray, np.int32, n * batchSize).reshape(batchSize, n)
        info = _at(infoArray, np.int32, batchSize)
        for b in range(batchSize):
            # Column-major with leading dimension lda: element (i, j) at j * lda + i.
            cols = _at(int(ptrs[b]), dtype, lda * n).reshape(n, lda)
            a = cols[:, :n].T  # the matrix (a view)
            with np.errstate(all="ignore"):
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    lu, p = scipy.linalg.lu_factor(a, check_finite=False)
            a[...] = lu
            piv[b] = p + 1
            zero = np.flatnonzero(np.diagonal(lu) == 0)
            info[b] = zero[0] + 1 if zero.size else 0

    return getrf


class _Cublas:
    """``cupy.cuda.cublas`` (``cupy_backends.cuda.libs.cublas``): the batched LU."""

    sgetrfBatched = staticmethod(_getrf_batched("float32"))
    dgetrfBatched = staticmethod(_getrf_batched("float64"))
    cgetrfBatched = staticmethod(_getrf_batched("complex64"))
    zgetrfBatched = staticmethod(_getrf_batched("complex128"))


cublas = _Cublas()
