"""``chainrule.cuda``: the GPU device API, as ``torch.cuda``.

Everything here goes through the CUDA :class:`~chainrule.backends.Backend`
(``chainrule/backends/cupy_backend.py``): CuPy on a machine with a GPU, or the CPU stand-in
that tests register through ``chainrule.backends.set_cupy_module``. Without a GPU backend the
queries answer as PyTorch's CPU build does (``is_available()`` False, ``device_count()`` 0,
``memory_allocated()`` 0, seeding a no-op) and the calls that need a device raise its
``AssertionError: Torch not compiled with CUDA enabled``.

Differs from torch: ``max_memory_allocated`` counts from the first call of it or of
``reset_peak_memory_stats`` (CuPy's pool keeps no peak; chainrule watches allocations from
then on), and stream priorities are accepted but not used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule.backends import cuda_available, get_backend
from chainrule.cuda._devindex import _index
from chainrule.cuda.random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from chainrule.cuda.streams import Event, Stream, current_stream, default_stream, stream

if TYPE_CHECKING:
    from chainrule.cuda import amp as amp  # loaded on first use (__getattr__)

__all__ = [
    "is_available",
    "device_count",
    "current_device",
    "set_device",
    "device",
    "synchronize",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "get_rng_state_all",
    "set_rng_state_all",
    "empty_cache",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "get_device_name",
    "get_device_capability",
    "get_device_properties",
    "Stream",
    "Event",
    "stream",
    "current_stream",
    "default_stream",
    "amp",
]


def _backend() -> Any:
    """The CUDA backend; PyTorch's CPU-build AssertionError when there is none."""
    return get_backend("cuda")


def is_available() -> bool:
    """True when CuPy is installed and sees a GPU."""
    return cuda_available()


def device_count() -> int:
    """Number of visible GPUs (0 without a GPU backend)."""
    return _backend().device_count() if cuda_available() else 0


def current_device() -> int:
    """Index of the current GPU."""
    return _backend().current_device()


def set_device(device: Any) -> None:
    """Make ``device`` the current GPU (a negative index does nothing, as in PyTorch)."""
    idx = _index(device)
    if idx is not None and idx < 0:
        return
    _backend().set_device(idx)


class device:
    """Context manager that makes ``device`` current and restores the previous GPU on exit.

    ``device(None)`` and ``device(-1)`` do nothing, as in PyTorch.
    """

    def __init__(self, device: Any) -> None:
        self.idx = _index(device)
        self._guard: Any = None

    def __enter__(self) -> device:
        if self.idx is None or self.idx < 0:
            return self
        if not cuda_available():
            raise RuntimeError(
                "PyTorch was compiled without CUDA support (chainrule: no GPU backend is "
                "available here; it needs CuPy and a visible GPU)"
            )
        self._guard = _backend().device_guard(self.idx)
        self._guard.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._guard is not None:
            self._guard.__exit__(*exc)
            self._guard = None


def synchronize(device: Any = None) -> None:
    """Wait until all work queued on ``device`` (default: the current GPU) has finished."""
    _backend().synchronize(_index(device))


def empty_cache() -> None:
    """Release the cached blocks of CuPy's memory pool; a no-op without a GPU backend."""
    if cuda_available():
        _backend().empty_cache()


def memory_allocated(device: Any = None) -> int:
    """Bytes held by arrays on ``device`` (0 without a GPU backend, as in PyTorch)."""
    return _backend().memory_allocated(_index(device)) if cuda_available() else 0


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated` since the last :func:`reset_peak_memory_stats`
    (counted from the first call of either; 0 without a GPU backend)."""
    return _backend().max_memory_allocated(_index(device)) if cuda_available() else 0


def memory_reserved(device: Any = None) -> int:
    """Bytes held by CuPy's memory pool, in use or cached (0 without a GPU backend)."""
    return _backend().memory_reserved(_index(device)) if cuda_available() else 0


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start counting the peak of :func:`memory_allocated` afresh from now."""
    _backend().reset_peak_memory_stats(_index(device))


class _CudaDeviceProperties:
    """What :func:`get_device_properties` returns (PyTorch's field names)."""

    def __init__(self, props: dict[str, Any]) -> None:
        self.name: str = props["name"]
        self.major: int = props["major"]
        self.minor: int = props["minor"]
        self.total_memory: int = props["total_memory"]
        self.multi_processor_count: int = props["multi_processor_count"]

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // 2**20}MB, "
            f"multi_processor_count={self.multi_processor_count})"
        )


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    """Name, compute capability, memory and multiprocessor count of a GPU."""
    return _CudaDeviceProperties(_backend().device_properties(_index(device)))


def get_device_name(device: Any = None) -> str:
    """The name of a GPU (default: the current one)."""
    return get_device_properties(device).name


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The compute capability ``(major, minor)`` of a GPU."""
    p = get_device_properties(device)
    return p.major, p.minor


def __getattr__(name: str) -> Any:
    # torch.cuda.amp loads on first use.
    if name == "amp":
        import importlib

        return importlib.import_module("chainrule.cuda.amp")
    raise AttributeError(f"module 'chainrule.cuda' has no attribute {name!r}")
