"""``autocast``: mixed-precision regions, as ``torch.autocast``.

What chainrule does: ``enabled=False`` regions, and CUDA regions on a machine without a GPU
(PyTorch warns and disables them there), run unchanged, so the common
``with torch.autocast(device_type=device, enabled=use_amp):`` runs as on PyTorch's CPU build.
Differs from PyTorch: an *enabled* CPU region (PyTorch casts matmuls and convolutions to
bfloat16) raises a RuntimeError saying so, rather than silently computing in float32.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, TypeVar

from chainrule.backends import cuda_available

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

F = TypeVar("F", bound=Callable[..., Any])


def is_autocast_available(device_type: str) -> bool:
    """Whether chainrule can run an enabled autocast region on ``device_type`` (never yet)."""
    return False


class autocast:
    """Context manager and decorator for an autocast region.

    Args:
        device_type: ``'cuda'`` or ``'cpu'`` (other strings raise as PyTorch does).
        dtype: the lower-precision dtype (PyTorch's default: float16 on CUDA, bfloat16 on CPU).
        enabled: False makes the region a no-op.
        cache_enabled: accepted for compatibility.
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
        self.fast_dtype = dtype
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

    def __enter__(self) -> autocast:
        if self._enabled:
            raise RuntimeError(
                f"autocast on '{self.device}' is not supported by chainrule: its ops compute in "
                "the dtype of their inputs. Use enabled=False (or cast the model with .half() "
                "yourself)."
            )
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

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
