"""``chainrule.cuda``: GPU availability queries, as ``torch.cuda``.

The GPU backend (CuPy) plugs in behind ``chainrule.backends.get_backend('cuda')``; without it,
``is_available()`` is False and moving a tensor to 'cuda' fails as PyTorch's CPU build does.
"""

from __future__ import annotations

from typing import Any

from chainrule.backends import cuda_available, get_backend

__all__ = [
    "is_available",
    "device_count",
    "current_device",
    "manual_seed",
    "manual_seed_all",
    "synchronize",
    "empty_cache",
    "set_device",
    "amp",
]


def is_available() -> bool:
    """True when CuPy is installed and sees a GPU."""
    return cuda_available()


def device_count() -> int:
    """Number of visible GPUs (0 without a GPU backend)."""
    if not cuda_available():
        return 0
    import importlib

    cupy = importlib.import_module("cupy")
    return int(cupy.cuda.runtime.getDeviceCount())


def current_device() -> int:
    """Index of the current GPU; fails like PyTorch's CPU build when there is none."""
    get_backend("cuda")
    return 0


def manual_seed(seed: int) -> None:
    """Seed the GPU generator; a no-op without a GPU backend (as in PyTorch)."""


def manual_seed_all(seed: int) -> None:
    """Seed all GPU generators; a no-op without a GPU backend (as in PyTorch)."""


def synchronize(device: Any = None) -> None:
    """Wait for GPU work to finish; fails like PyTorch's CPU build when there is no GPU."""
    get_backend("cuda")


def empty_cache() -> None:
    """Release cached GPU memory; a no-op without a GPU backend."""


def set_device(device: Any) -> None:
    """Select the current GPU; fails like PyTorch's CPU build when there is none."""
    get_backend("cuda")


def __getattr__(name: str) -> Any:
    # torch.cuda.amp loads on first use.
    if name == "amp":
        import importlib

        return importlib.import_module("chainrule.cuda.amp")
    raise AttributeError(f"module 'chainrule.cuda' has no attribute {name!r}")
