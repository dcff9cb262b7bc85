"""``chainrule.accelerator``: the device-agnostic accelerator API of ``torch.accelerator``.

On a machine without a GPU backend (CuPy and a visible GPU) there is no accelerator, and every
query answers as PyTorch's CPU build does: ``is_available()`` is False,
``current_accelerator()`` is None, ``device_count()`` is 0. With a GPU backend the accelerator
is ``device('cuda')``.
"""

from __future__ import annotations

from typing import Any

from chainrule._device import device as _device
from chainrule.backends import cuda_available

__all__ = [
    "is_available",
    "current_accelerator",
    "device_count",
    "current_device_index",
    "current_device_idx",
    "set_device_index",
    "set_device_idx",
    "synchronize",
    "empty_cache",
    "device_index",
]


def is_available() -> bool:
    """True when an accelerator (a CUDA GPU through CuPy) can be used."""
    return cuda_available()


def current_accelerator(check_available: bool = False) -> _device | None:
    """The accelerator's device type as a ``device`` (``device('cuda')``), or None without one."""
    if cuda_available():
        return _device("cuda")
    return None


def device_count() -> int:
    """Number of accelerator devices (0 without one)."""
    if not cuda_available():
        return 0
    from chainrule import cuda

    return cuda.device_count()


def _no_accelerator(what: str) -> RuntimeError:
    """PyTorch's error for ``what`` (an accelerator call) on a machine without one; scripts
    written for GPUs (pytorch/examples distributed/) call ``set_device_index`` first."""
    return RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    """Index of the current accelerator device."""
    if not cuda_available():
        raise _no_accelerator("current_device_index")
    from chainrule import cuda

    return cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device: Any) -> None:
    """Make ``device`` (an index or a device) the current accelerator device."""
    if not cuda_available():
        raise _no_accelerator("set_device_index")
    from chainrule import cuda

    cuda.set_device(device)


set_device_idx = set_device_index


def synchronize(device: Any = None) -> None:
    """Wait for the accelerator's queued work to finish."""
    if not cuda_available():
        raise _no_accelerator("synchronize")
    from chainrule import cuda

    cuda.synchronize(device)


def empty_cache() -> None:
    """Release the accelerator's cached memory; nothing to do without one."""
    if cuda_available():
        from chainrule import cuda

        cuda.empty_cache()


class device_index:
    """Context manager that makes ``device`` current inside its block (None: no change)."""

    def __init__(self, device: Any) -> None:
        self.idx = device
        self._prev: int | None = None

    def __enter__(self) -> None:
        if self.idx is not None:
            self._prev = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc: Any) -> None:
        if self._prev is not None:
            set_device_index(self._prev)
