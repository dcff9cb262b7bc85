"""PyTorch's autocast state functions (``torch.get_autocast_dtype``, ``set_autocast_enabled``,
``autocast_increment_nesting``...), over the thread-local state of _autocast_state.py.

The deprecated per-device spellings (``get_autocast_cpu_dtype``, ``is_autocast_cpu_enabled``,
``set_autocast_gpu_dtype``...) do what their replacements do and warn as PyTorch warns.
"""

from __future__ import annotations

import warnings
from typing import Any

from chainrule import _dtype
from chainrule._autocast_state import state

__all__ = [
    "is_autocast_enabled",
    "set_autocast_enabled",
    "get_autocast_dtype",
    "set_autocast_dtype",
    "is_autocast_cpu_enabled",
    "set_autocast_cpu_enabled",
    "get_autocast_cpu_dtype",
    "set_autocast_cpu_dtype",
    "get_autocast_gpu_dtype",
    "set_autocast_gpu_dtype",
    "is_autocast_ipu_enabled",
    "set_autocast_ipu_enabled",
    "get_autocast_ipu_dtype",
    "set_autocast_ipu_dtype",
    "is_autocast_xla_enabled",
    "set_autocast_xla_enabled",
    "get_autocast_xla_dtype",
    "set_autocast_xla_dtype",
    "autocast_increment_nesting",
    "autocast_decrement_nesting",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
]

_KNOWN = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
    "vulkan, mps, meta, hpu, mtia, privateuseone"
)


def _device(device_type: Any) -> str:
    name = str(device_type).split(":")[0]
    if name not in state.enabled:
        if name in _KNOWN.split(", "):
            state.enabled[name] = False
            state.dtypes[name] = _dtype.float16
        else:
            raise RuntimeError(
                f"Expected one of {_KNOWN} device type at start of device string: {device_type}"
            )
    return name


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated. Please use {new} instead.", DeprecationWarning, 3)


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an autocast region is enabled on ``device_type`` (CUDA's when omitted)."""
    return state.enabled[_device("cuda" if device_type is None else device_type)]


def set_autocast_enabled(device_type: Any, enabled: Any = None) -> None:
    """Enable or disable autocast on ``device_type``; ``set_autocast_enabled(flag)`` sets
    CUDA's. Enabling it on the CPU makes the listed ops cast (Note [autocast])."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    state.set_enabled(_device(device_type), bool(enabled))


def get_autocast_dtype(device_type: str) -> _dtype.dtype:
    """The lower-precision dtype of ``device_type``'s autocast regions (CPU: bfloat16)."""
    return state.dtypes[_device(device_type)]


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the dtype :func:`get_autocast_dtype` returns (and regions without ``dtype=`` use)."""
    state.dtypes[_device(device_type)] = _dtype.to_dtype(dtype)


def is_autocast_cpu_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled('cpu')``."""
    _deprecated("torch.is_autocast_cpu_enabled()", "torch.is_autocast_enabled('cpu')")
    return state.enabled["cpu"]


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled('cpu', enabled)``."""
    _deprecated(
        "torch.set_autocast_cpu_enabled(enabled)", "torch.set_autocast_enabled('cpu', enabled)"
    )
    state.set_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> _dtype.dtype:
    """Deprecated: ``get_autocast_dtype('cpu')``."""
    _deprecated("torch.get_autocast_cpu_dtype()", "torch.get_autocast_dtype('cpu')")
    return state.dtypes["cpu"]


def set_autocast_cpu_dtype(dtype: Any) -> None:
    """Deprecated: ``set_autocast_dtype('cpu', dtype)``."""
    _deprecated("torch.set_autocast_cpu_dtype(dtype)", "torch.set_autocast_dtype('cpu', dtype)")
    state.dtypes["cpu"] = _dtype.to_dtype(dtype)


def get_autocast_gpu_dtype() -> _dtype.dtype:
    """Deprecated: ``get_autocast_dtype('cuda')``."""
    _deprecated("torch.get_autocast_gpu_dtype()", "torch.get_autocast_dtype('cuda')")
    return state.dtypes["cuda"]


def set_autocast_gpu_dtype(dtype: Any) -> None:
    """Deprecated: ``set_autocast_dtype('cuda', dtype)``."""
    _deprecated("torch.set_autocast_gpu_dtype(dtype)", "torch.set_autocast_dtype('cuda', dtype)")
    state.dtypes["cuda"] = _dtype.to_dtype(dtype)


def is_autocast_ipu_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled('ipu')``."""
    _deprecated("torch.is_autocast_ipu_enabled()", "torch.is_autocast_enabled('ipu')")
    return state.enabled["ipu"]


def set_autocast_ipu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled('ipu', enabled)``."""
    _deprecated(
        "torch.set_autocast_ipu_enabled(enabled)", "torch.set_autocast_enabled('ipu', enabled)"
    )
    state.set_enabled("ipu", enabled)


def get_autocast_ipu_dtype() -> _dtype.dtype:
    """Deprecated: ``get_autocast_dtype('ipu')``."""
    _deprecated("torch.get_autocast_ipu_dtype()", "torch.get_autocast_dtype('ipu')")
    return state.dtypes["ipu"]


def set_autocast_ipu_dtype(dtype: Any) -> None:
    """Deprecated: ``set_autocast_dtype('ipu', dtype)``."""
    _deprecated("torch.set_autocast_ipu_dtype(dtype)", "torch.set_autocast_dtype('ipu', dtype)")
    state.dtypes["ipu"] = _dtype.to_dtype(dtype)


def is_autocast_xla_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled('xla')``."""
    _deprecated("torch.is_autocast_xla_enabled()", "torch.is_autocast_enabled('xla')")
    return state.enabled["xla"]


def set_autocast_xla_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled('xla', enabled)``."""
    _deprecated(
        "torch.set_autocast_xla_enabled(enabled)", "torch.set_autocast_enabled('xla', enabled)"
    )
    state.set_enabled("xla", enabled)


def get_autocast_xla_dtype() -> _dtype.dtype:
    """Deprecated: ``get_autocast_dtype('xla')``."""
    _deprecated("torch.get_autocast_xla_dtype()", "torch.get_autocast_dtype('xla')")
    return state.dtypes["xla"]


def set_autocast_xla_dtype(dtype: Any) -> None:
    """Deprecated: ``set_autocast_dtype('xla', dtype)``."""
    _deprecated("torch.set_autocast_xla_dtype(dtype)", "torch.set_autocast_dtype('xla', dtype)")
    state.dtypes["xla"] = _dtype.to_dtype(dtype)


def autocast_increment_nesting() -> int:
    """Count one more nested autocast region (``autocast.__enter__`` does); returns the count."""
    state.nesting += 1
    return state.nesting


def autocast_decrement_nesting() -> int:
    """Count one region fewer; returns the count (at 0 ``autocast.__exit__`` clears the cache)."""
    state.nesting -= 1
    return state.nesting


def is_autocast_cache_enabled() -> bool:
    """Whether autocast regions cache the casts of leaf tensors (the flag; default True)."""
    return state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Set the flag of :func:`is_autocast_cache_enabled`."""
    state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Empty the autocast cast cache: chainrule casts afresh each time, so there is none."""
