"""``torch.backends.cudnn``'s flags. chainrule reaches cuDNN only through CuPy (if at all), so
the flags are kept for programs that set them; ``is_available()`` is False without a GPU."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

__all__ = [
    "enabled",
    "benchmark",
    "deterministic",
    "allow_tf32",
    "is_available",
    "version",
    "flags",
]

enabled: bool = True
benchmark: bool = False
benchmark_limit: int = 10
deterministic: bool = False
allow_tf32: bool = True


def is_available() -> bool:
    """True when cuDNN can be used (a CUDA GPU through CuPy with cuDNN)."""
    from chainrule.backends import cuda_available

    return cuda_available()


def version() -> int | None:
    """cuDNN's version, or None when it is not available (as PyTorch's CPU build)."""
    return None


@contextlib.contextmanager
def flags(
    enabled: bool = False,
    benchmark: bool = False,
    deterministic: bool = False,
    allow_tf32: bool = True,
    benchmark_limit: int = 10,
) -> Iterator[None]:
    """Set the flags inside a ``with`` block and restore them after it."""
    g = globals()
    names = ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit")
    old = {n: g[n] for n in names}
    new: dict[str, Any] = dict(
        zip(names, (enabled, benchmark, deterministic, allow_tf32, benchmark_limit))
    )
    g.update(new)
    try:
        yield
    finally:
        g.update(old)
