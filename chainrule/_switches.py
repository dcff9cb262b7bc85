"""Constants, global switches and build queries of the torch namespace: the math constants
(``pi`` ...), anomaly mode, warn-always, the default tensor type, flush-denormal,
the ``typename``/``is_storage``, the error classes, and the build queries (``has_lapack``
...), answered for chainrule's NumPy build."""

from __future__ import annotations

import math
import warnings
from typing import Any

__all__ = [
    "pi",
    "e",
    "inf",
    "nan",
    "newaxis",
    "has_lapack",
    "has_spectral",
    "has_mkl",
    "has_openmp",
    "is_storage",
    "typename",
    "set_default_tensor_type",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "set_anomaly_enabled",
    "is_warn_always_enabled",
    "set_warn_always",
    "set_flush_denormal",
    "is_vulkan_available",
    "compiled_with_cxx11_abi",
    "is_distributed",
    "OutOfMemoryError",
    "AcceleratorError",
    "init_num_threads",
    "to_dlpack",
]

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None

# chainrule computes with NumPy (its LAPACK, its FFT); it has no MKL or OpenMP of its own.
has_lapack = True
has_spectral = True
has_mkl = False
has_openmp = False


# Queries and switches --------------------------------------------------------------------


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage (an ``UntypedStorage`` or a ``TypedStorage``)."""
    from chainrule.storage import TypedStorage, UntypedStorage

    return isinstance(obj, (UntypedStorage, TypedStorage))


def typename(obj: Any) -> str:
    """The type name of ``obj``: 'torch.FloatTensor' for a float32 tensor, else the class's
    qualified name."""
    from chainrule._tensor import Tensor

    if isinstance(obj, Tensor):
        return "torch." + obj.type().split(".")[-1]
    module = getattr(obj, "__module__", "") or ""
    qual = getattr(obj, "__qualname__", None)
    if qual is None:
        qual = type(obj).__qualname__
        module = type(obj).__module__
    if module in ("", "builtins"):
        return qual
    return f"{module.replace('chainrule', 'torch', 1)}.{qual}"


_TENSOR_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16"}


def set_default_tensor_type(t: Any) -> None:
    """Deprecated (warns): set the default float dtype from a legacy type (``torch.
    DoubleTensor`` or ``'torch.DoubleTensor'``)."""
    from chainrule import _dtype

    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    short = name.split(".")[-1]
    if isinstance(t, str) and "." in t and not t.startswith(("torch.", "chainrule.")):
        raise ModuleNotFoundError(f"No module named '{t.rsplit('.', 1)[0]}'")
    if short not in _TENSOR_TYPES:
        if isinstance(t, str) and "." not in t:
            raise ValueError(f"invalid type: '{t}'")
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(getattr(_dtype, _TENSOR_TYPES[short]))


def is_anomaly_enabled() -> bool:
    """Whether autograd's anomaly detection is on."""
    from chainrule.autograd import is_anomaly_enabled as f

    return f()


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks the backward's outputs for nan."""
    from chainrule.autograd import is_anomaly_check_nan_enabled as f

    return f()


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``autograd.set_detect_anomaly``)."""
    from chainrule.autograd import set_detect_anomaly

    set_detect_anomaly(enabled, check_nan)


_warn_always = [False]


def is_warn_always_enabled() -> bool:
    """Whether warnings PyTorch gives once are given every time (the flag is kept; chainrule
    leaves repetition to Python's warning filters)."""
    return _warn_always[0]


def set_warn_always(b: bool) -> None:
    """Set the flag of :func:`is_warn_always_enabled`."""
    _warn_always[0] = bool(b)


def set_flush_denormal(mode: bool) -> bool:
    """Whether denormal floats can be flushed to zero: NumPy gives no control over the CPU's
    flag, so this returns False, as PyTorch does on CPUs without the feature."""
    return False


def is_vulkan_available() -> bool:
    """Whether the Vulkan backend is available (never)."""
    return False


def compiled_with_cxx11_abi() -> bool:
    """Whether PyTorch's C++ parts use the C++11 ABI (chainrule has none; True, as current
    PyTorch builds answer)."""
    return True


def is_distributed(input: Any) -> bool:
    """Whether ``input`` is a distributed tensor (never)."""
    return False


class OutOfMemoryError(RuntimeError):
    """Raised when a device runs out of memory (``torch.OutOfMemoryError``)."""


class AcceleratorError(RuntimeError):
    """Raised for errors of an accelerator's runtime (``torch.AcceleratorError``)."""


def init_num_threads() -> None:
    """Initialise the intra-op thread pool of the calling thread (NumPy's BLAS needs none)."""


def to_dlpack(tensor: Any) -> Any:
    """A DLPack capsule sharing ``tensor``'s memory (``tensor.__dlpack__()``)."""
    return tensor.__dlpack__()
