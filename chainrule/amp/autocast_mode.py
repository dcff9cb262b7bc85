"""``autocast``: mixed-precision regions, as ``torch.autocast``.

An enabled CPU region casts the inputs of PyTorch's CPU-listed ops (Note [autocast] in
chainrule/_autocast_state.py): matrix products, ``linear`` and the convolutions run in the
region's dtype (bfloat16 by default, or float16), the losses and a few numerically delicate
ops in float32, every other op in the dtypes it is given. CUDA regions on a machine without
a GPU, and regions on other devices, are disabled with PyTorch's warnings, so
``with torch.autocast(device_type=device, enabled=use_amp):`` runs as on PyTorch's CPU build.
Differs from torch: casts are not cached (``cache_enabled`` is kept as a flag only).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, TypeVar

from chainrule import _autocast_api as _api
from chainrule import _dtype
from chainrule.backends import cuda_available

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

F = TypeVar("F", bound=Callable[..., Any])


def is_autocast_available(device_type: str) -> bool:
    """Whether ``device_type`` is a device type autocast knows (PyTorch answers True for all of
    its device types, whether or not the machine has such a device)."""
    return device_type in _api.state.enabled


class autocast:
    """Context manager and decorator for an autocast region.

    Args:
        device_type: ``'cpu'``, ``'cuda'``, ... (other strings raise as PyTorch does).
        dtype: the lower-precision dtype (default :func:`chainrule.get_autocast_dtype`: float16
            on CUDA, bfloat16 on CPU); a CPU region takes bfloat16 or float16 only.
        enabled: False makes the region a no-op (and disables an enclosing one inside it).
        cache_enabled: the cast-cache flag (default :func:`chainrule.is_autocast_cache_enabled`).
    """

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in ("cuda", "cpu", "mps", "xpu", "hpu", "xla", "mtia", "maia"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {device_type}"
            )
        self.device = device_type
        self.fast_dtype = (
            _api.get_autocast_dtype(device_type) if dtype is None else _dtype.to_dtype(dtype)
        )
        self._cache_enabled = (
            _api.is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        )
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cuda" and not cuda_available():
            warnings.warn(
                "CUDA is not available or torch_xla is imported. Disabling autocast.",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled and device_type not in ("cpu", "cuda"):
            warnings.warn(
                f"User provided device_type of '{device_type}', but it is not available. Disabling",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False
        if (
            self._enabled
            and device_type == "cpu"
            and self.fast_dtype not in (_dtype.bfloat16, _dtype.float16)
        ):
            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False

    def __enter__(self) -> autocast:
        st = _api.state
        self.prev_cache_enabled = st.cache_enabled
        self.prev = st.enabled[self.device]
        self.prev_fastdtype = st.dtypes[self.device]
        st.set_enabled(self.device, self._enabled)
        st.dtypes[self.device] = self.fast_dtype
        _api.autocast_increment_nesting()
        st.cache_enabled = self._cache_enabled
        return self

    def __exit__(self, *exc: Any) -> bool:
        st = _api.state
        if _api.autocast_decrement_nesting() == 0:
            _api.clear_autocast_cache()
        st.set_enabled(self.device, self.prev)
        st.dtypes[self.device] = self.prev_fastdtype
        st.cache_enabled = self.prev_cache_enabled
        return False

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def custom_fwd(fwd: Any = None, *, device_type: str = "cuda", cast_inputs: Any = None) -> Any:
    """Decorator for a custom Function's ``forward`` under autocast; regions are no-ops here."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd: Any = None, *, device_type: str = "cuda") -> Any:
    """Decorator for a custom Function's ``backward`` under autocast; regions are no-ops here."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
