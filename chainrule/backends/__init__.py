"""Array backends. Only this package may import CuPy.

A :class:`Backend` names the array module (``xp``) and the few operations where NumPy and CuPy
really differ (``backends/base.py`` lists them). ``backend_of(*arrays)`` picks one from the
arrays' types, caching the answer per type; ``get_backend(device)`` picks one for a device.

CuPy is imported only when a CUDA device is first asked for, never by ``import chainrule``.
The hook :func:`set_cupy_module` (or the environment variable ``CHAINRULE_CUPY_MODULE``, read
when CuPy is first needed) names a module to use in its place: the test suite registers its
strict CPU stand-in ``tests/_fakecupy`` that way, as the ``cuda`` device.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import Any

import numpy as np

from chainrule import _device
from chainrule.backends.base import Backend
from chainrule.backends.numpy_backend import NumpyBackend

__all__ = [
    "Backend",
    "NumpyBackend",
    "backend_of",
    "get_backend",
    "cuda_available",
    "set_cupy_module",
    "cupy_module",
    "seed_cuda",
    "multi_gpu_backend",
    "as_array",
    "register_array_type",
    "loaded_cuda_backend",
    "swap_cuda_backend",
]

_NUMPY = NumpyBackend()
_BY_TYPE: dict[type, Backend] = {np.ndarray: _NUMPY}
# Array types that another layer registered (register_array_type), for _lookup after a clear.
_REGISTERED: dict[type, Backend] = {}

# The CUDA backend: None until first asked for; False when CuPy could not be loaded.
_CUDA: list[Any] = [None]
# Seeds asked for before the CUDA backend exists, by device index (None: every device).
_CUDA_SEEDS: dict[int | None, int] = {}
# Why the CUDA backend could not be made (shown in get_backend's error).
_WHY = [""]
# The module standing in for ``cupy`` (set_cupy_module / CHAINRULE_CUPY_MODULE), or None.
_OVERRIDE: list[Any] = [None]

_NO_CUDA = (
    "Torch not compiled with CUDA enabled (chainrule: no GPU backend is available here; "
    "it needs CuPy and a visible GPU). Keep tensors on 'cpu', or guard GPU code with "
    "`device = 'cuda' if chainrule.cuda.is_available() else 'cpu'`."
)


def set_cupy_module(module: ModuleType | str | None) -> ModuleType | None:
    """Use ``module`` (a module or its dotted name) as ``cupy``; ``None`` restores the real one.

    The module must offer the part of CuPy's API that chainrule uses and a ``cupyx``
    attribute standing for the ``cupyx`` module. Returns the previous override. Clears the
    cached backends, so arrays made before the switch map to the new module's backend only if
    they are of its array type.
    """
    prev = _OVERRIDE[0]
    if isinstance(module, str):
        module = importlib.import_module(module)
    _OVERRIDE[0] = module
    _CUDA[0] = None
    for t, b in list(_BY_TYPE.items()):
        if b is not _NUMPY:
            del _BY_TYPE[t]
    return prev


def cupy_module() -> ModuleType | None:
    """The module used as ``cupy`` (importing it on first call), or None when unavailable."""
    b = _cuda_backend()
    return b.xp if b else None


def _load_modules() -> tuple[Any, Any]:
    mod = _OVERRIDE[0]
    if mod is None:
        name = os.environ.get("CHAINRULE_CUPY_MODULE")
        if name:
            mod = _OVERRIDE[0] = importlib.import_module(name)
    if mod is not None:
        return mod, mod.cupyx
    return importlib.import_module("cupy"), importlib.import_module("cupyx")


def _cuda_backend() -> Any:
    """The CUDA backend, or False when CuPy cannot be imported."""
    b = _CUDA[0]
    if b is None:
        try:
            cupy, cupyx = _load_modules()
        except Exception as e:  # ImportError, or CuPy failing to load its CUDA libraries
            b = False
            _WHY[0] = f"{type(e).__name__}: {e}"
        else:
            from chainrule.backends.cupy_backend import CupyBackend

            b = CupyBackend(cupy, cupyx, _CUDA_SEEDS)
            _BY_TYPE[cupy.ndarray] = b
        _CUDA[0] = b
    return b


def cuda_available() -> bool:
    """True when CuPy (or the registered stand-in) imports and sees at least one GPU."""
    b = _cuda_backend()
    if not b:
        return False
    try:
        return b.device_count() > 0
    except Exception:  # CuPy raises CUDARuntimeError when no driver or device is present
        return False


# ``device(0)`` asks the backends whether a GPU is there (the leaf _device imports no backend).
_device.register_accelerator(cuda_available)


def seed_cuda(seed: int, device: int | None = None) -> None:
    """Seed the random source of GPU ``device`` (every GPU when None).

    Never imports CuPy: before the CUDA backend is first used the seed is kept and applied when
    each device's generator is made, as PyTorch queues seeds until CUDA is initialised.
    """
    seed = int(seed)
    if device is None:
        _CUDA_SEEDS.clear()
    _CUDA_SEEDS[device] = seed
    b = _CUDA[0]
    if b:
        b.reseed(device)


def multi_gpu_backend() -> Any:
    """The CUDA backend when it is in use and sees more than one GPU, else None (never loads
    CuPy): the backward engine then makes each node's GPU current (Note [the inputs' device
    is current] in ops/_apply.py)."""
    b = _CUDA[0]
    return b if b and b.multi_gpu else None


def loaded_cuda_backend(load: bool = False) -> Any:
    """The CUDA backend when it has been made, else None. ``load``: make it now when CuPy
    (or the module standing in for it) is already imported or registered; never imports
    CuPy itself."""
    b = _CUDA[0]
    if b is None and load:
        if _OVERRIDE[0] is not None or "cupy" in sys.modules:
            b = _cuda_backend()
    return b if b else None


def swap_cuda_backend(backend: Any) -> Any:
    """Make ``backend`` the CUDA backend that ``get_backend('cuda')`` and
    ``multi_gpu_backend()`` hand out, and return the previous one: ``chainrule.compile``'s
    capture puts its tracing backend there while it records, and the live one back after
    (Note [CUDA tracing backend] in _compile/_xp.py). The array types that mapped to the
    previous one map to ``backend`` too, so that ``backend_of`` gives one CUDA backend."""
    prev = _CUDA[0]
    _CUDA[0] = backend
    for t, b in list(_BY_TYPE.items()):
        if b is prev and prev:
            _BY_TYPE[t] = backend
    return prev


def _lookup(t: type) -> Backend:
    b = _BY_TYPE.get(t) or _REGISTERED.get(t)
    if b is not None:
        _BY_TYPE[t] = b
        return b
    b = _NUMPY
    root = t.__module__.split(".")[0]
    if root == "cupy" or _OVERRIDE[0] is not None:
        cb = _cuda_backend()
        if cb and issubclass(t, cb.ndarray):
            b = cb
    _BY_TYPE[t] = b
    return b


def register_array_type(t: type, backend: Backend) -> None:
    """Make ``backend_of`` give ``backend`` for arrays of type ``t`` (an array subclass that
    another layer owns: ``chainrule._compile``'s tracing arrays, a NumPy backend whose ``xp``
    records conversions); kept when ``set_cupy_module`` clears the cache."""
    _REGISTERED[t] = backend
    _BY_TYPE[t] = backend


def _is_scalar(a: Any) -> bool:
    # A host scalar may join device arrays: Python and NumPy numbers, 0-d NumPy arrays.
    return not isinstance(a, np.ndarray) or a.ndim == 0


def backend_of(*arrays: Any) -> Backend:
    """The backend owning ``arrays``; NumPy arrays, scalars and other objects map to NumPy.

    Arrays on different devices raise PyTorch's error (naming a GPU before the CPU, as
    PyTorch's elementwise ops do); host scalars (Python and NumPy numbers,
    0-d NumPy arrays) may go with GPU arrays, as 0-d CPU tensors may in PyTorch.
    """
    if len(arrays) == 1:
        t = type(arrays[0])
        b = _BY_TYPE.get(t)
        return b if b is not None else _lookup(t)
    found: Backend | None = None
    first: Any = None
    for a in arrays:
        t = type(a)
        b = _BY_TYPE.get(t) or _lookup(t)
        if found is None:
            found, first = b, a
        elif b is not found:
            if b.device == "cpu" and found.device == "cpu":
                # NumPy and a host array type another layer registered (compile's tracing
                # arrays): one device; the registered backend wins, so its xp sees the op.
                if found is _NUMPY:
                    found, first = b, a
                continue
            if b.device == "cpu" and _is_scalar(a):
                continue
            if found.device == "cpu" and _is_scalar(first):
                found, first = b, a
                continue
            if found.device == "cpu":  # PyTorch names the GPU first: "cuda:0 and cpu"
                _mixed(b.device_of(a), "cpu")
            _mixed(found.device_of(first), b.device_of(a))
        elif b.device != "cpu" and b.multi_gpu and a.device.id != first.device.id:
            _mixed(found.device_of(first), b.device_of(a))
    return found if found is not None else _NUMPY


# NumPy's scalar types (np.float32, np.int64, np.bool_, ...), which NumPy's ufuncs and
# reductions return for 0-d results.
_NP_SCALARS = frozenset(t for t in np.sctypeDict.values() if issubclass(t, np.generic))
_np_asarray = np.asarray


def as_array(value: Any) -> Any:
    """An op's raw result as an array of its own backend: NumPy scalars (what NumPy's
    reductions return) become 0-d NumPy arrays; device arrays are returned as they are."""
    t = type(value)
    if t is np.ndarray:
        return value
    if t in _NP_SCALARS:  # what an op on 0-d arrays returns: no backend lookup, no method call
        return _np_asarray(value)
    b = _BY_TYPE.get(t) or _lookup(t)
    return b.ensure_array(value)


def _mixed(a: str, b: str) -> None:
    raise RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, "
        f"{a} and {b}!"
    )


def get_backend(device: Any) -> Backend:
    """The backend for a device: ``'cpu'`` (NumPy) or ``'cuda'`` (CuPy, when available)."""
    name = str(device).split(":")[0] if device is not None else "cpu"
    if name == "cpu":
        return _NUMPY
    if name == "cuda":
        if cuda_available():
            return _CUDA[0]
        # AssertionError, as PyTorch's CPU build raises, so that old `except` clauses still match.
        why = _WHY[0] if _CUDA[0] is False else "CuPy sees no GPU"
        raise AssertionError(f"{_NO_CUDA} [{why}]")
    if isinstance(device, int) and not isinstance(device, bool):  # device=0: 'cuda:0'
        return get_backend(_device.device(device))  # (RuntimeError without a GPU backend)
    raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {device}")


# torch.backends' flag modules (``torch.backends.cudnn.benchmark = True`` ...), loaded on use.
_FLAG_MODULES = {"cudnn", "mps", "mkldnn", "cuda"}


def __getattr__(name: str) -> Any:
    if name in _FLAG_MODULES:
        return importlib.import_module(f"chainrule.backends.{name}")
    raise AttributeError(f"module 'chainrule.backends' has no attribute {name!r}")
