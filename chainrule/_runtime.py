"""Process-wide settings of ``torch``'s top level: thread counts, determinism, matmul precision.

Thread counts: ``set_num_threads(n)`` sets the intra-op count of chainrule's own thread pool
(``backends/_threads.py``: the samples of a convolution run on it) and limits the BLAS thread
pool to the same count through threadpoolctl (imported when first called). ``get_num_threads()``
reports that count: as PyTorch, ``OMP_NUM_THREADS`` when set, else the number of cores. The
inter-op count is recorded for programs that read it back.
Determinism: chainrule's kernels are deterministic already, so the flag is recorded only.
"""

from __future__ import annotations

import os
from typing import Any

from chainrule.backends import _threads

__all__ = [
    "set_num_threads",
    "get_num_threads",
    "set_num_interop_threads",
    "get_num_interop_threads",
    "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode",
    "get_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "get_float32_matmul_precision",
]

_state: dict[str, Any] = {
    "threads": None,
    "limiter": None,
    "interop": None,
    "deterministic": False,
    "warn_only": False,
    "matmul_precision": "highest",
}


def _check_count(fn: str, n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{fn} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{fn} expects a positive integer")
    return n


def set_num_threads(int: Any) -> None:  # noqa: A002 - PyTorch's argument name
    """Use ``int`` threads for intra-op parallelism: chainrule's pool and BLAS's."""
    n = _check_count("set_num_threads", int)
    from threadpoolctl import threadpool_limits

    # Constructing the limiter applies the limit; it stays until the next call.
    _state["limiter"] = threadpool_limits(limits=n)
    _state["threads"] = n
    _threads.set_threads(n)


def get_num_threads() -> int:
    """Number of threads used for intra-op parallelism: the last ``set_num_threads``, else
    ``OMP_NUM_THREADS``, else the number of cores this process may run on (PyTorch's default)."""
    if _state["threads"] is not None:
        return _state["threads"]
    return _threads.num_threads()


def set_num_interop_threads(int: Any) -> None:  # noqa: A002
    """Record the inter-op thread count (chainrule runs ops one after another)."""
    n = _check_count("set_num_interop_threads", int)
    if _state["interop"] is not None:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _state["interop"] = n


def get_num_interop_threads() -> int:
    """The inter-op thread count (default: the number of cores, as PyTorch)."""
    return _state["interop"] or (os.cpu_count() or 1)


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms; chainrule's kernels always are, so this is recorded."""
    if not isinstance(mode, bool):
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    _state["deterministic"] = mode
    _state["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` was turned on."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether determinism was requested with ``warn_only=True``."""
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode: Any) -> None:
    """0/'default', 1/'warn' or 2/'error', as PyTorch; maps onto the deterministic flag."""
    names = {"default": 0, "warn": 1, "error": 2}
    mode = names.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if mode not in (0, 1, 2):
        raise RuntimeError(
            "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
            f"{debug_mode}"
        )
    use_deterministic_algorithms(mode != 0, warn_only=mode == 1)


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn only) or 2 (error), from the deterministic flag."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """Record 'highest', 'high' or 'medium'; NumPy's float32 matmuls are always 'highest'."""
    if precision not in ("highest", "high", "medium"):
        import warnings

        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision last set with :func:`set_float32_matmul_precision` (default 'highest')."""
    return _state["matmul_precision"]
