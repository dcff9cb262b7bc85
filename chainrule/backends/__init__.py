"""Array backends. Only this package may import CuPy.

A :class:`Backend` names the array module (``xp``) and the few operations where NumPy and CuPy
really differ. ``backend_of(array)`` picks one from the array's type and caches the answer.
"""

from __future__ import annotations

import importlib
from typing import Any

from chainrule.backends.numpy_backend import NumpyBackend

__all__ = ["Backend", "backend_of", "get_backend", "NumpyBackend", "cuda_available"]

Backend = NumpyBackend  # the interface every backend implements

_NUMPY = NumpyBackend()
_BY_TYPE: dict[type, Any] = {}


def backend_of(array: Any) -> NumpyBackend:
    """The backend owning ``array``; NumPy arrays and scalars map to the NumPy backend."""
    t = type(array)
    b = _BY_TYPE.get(t)
    if b is None:
        mod = t.__module__.split(".")[0]
        if mod == "cupy":
            b = get_backend("cuda")
        else:
            b = _NUMPY
        _BY_TYPE[t] = b
    return b


def cuda_available() -> bool:
    """True when CuPy imports and sees at least one GPU."""
    try:
        import cupy  # noqa: F401

        return bool(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return False


def get_backend(device: Any) -> NumpyBackend:
    """The backend for a device: ``'cpu'`` (NumPy) or ``'cuda'`` (CuPy, when available)."""
    name = str(device).split(":")[0] if device is not None else "cpu"
    if name == "cpu":
        return _NUMPY
    if name == "cuda":
        # AssertionError, as PyTorch's CPU build raises, so that old `except` clauses still match.
        raise AssertionError(
            "Torch not compiled with CUDA enabled (chainrule: no GPU backend is available here; "
            "it needs CuPy and a visible GPU). Keep tensors on 'cpu', or guard GPU code with "
            "`device = 'cuda' if chainrule.cuda.is_available() else 'cpu'`."
        )
    raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {device}")


# torch.backends' flag modules (``torch.backends.cudnn.benchmark = True`` ...), loaded on use.
_FLAG_MODULES = {"cudnn", "mps", "mkldnn", "cuda"}


def __getattr__(name: str) -> Any:
    if name in _FLAG_MODULES:
        return importlib.import_module(f"chainrule.backends.{name}")
    raise AttributeError(f"module 'chainrule.backends' has no attribute {name!r}")
