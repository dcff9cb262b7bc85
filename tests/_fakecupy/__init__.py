"""A strict CPU stand-in for CuPy, registered as the ``cuda`` device in tests.

It wraps NumPy arrays in its own :class:`ndarray` type and behaves as CuPy does where CuPy and
NumPy differ, so that code written for the GPU is exercised on a machine without one:

- implicit conversion to NumPy (``np.asarray(x)``, ``x.__array__()``) raises ``TypeError`` with
  CuPy's text; ``.get()``, ``cupy.asnumpy``, ``.item()``, ``.tolist()``, ``float(x)``,
  ``int(x)`` and ``bool(x)`` (on one-element arrays) are allowed, as in CuPy;
- host (NumPy) arrays are refused as operands of ufuncs, operators and functions
  (``TypeError: Unsupported type <class 'numpy.ndarray'>``); Python and NumPy scalars are fine;
  NumPy functions called on device arrays dispatch here (``__array_ufunc__``,
  ``__array_function__``), as with CuPy;
- reductions return 0-d device arrays, not NumPy scalars;
- ``ufunc.at`` exists only for add, subtract, maximum, minimum and the bitwise ufuncs
  (``multiply.at`` raises ``NotImplementedError``); there is no ``errstate``;
- ``random.Generator`` lacks ``normal``, ``choice``, ``permutation``, ``shuffle`` and
  ``multinomial``; the legacy ``random.RandomState`` has them;
- ``linalg`` has only CuPy's names (no ``multi_dot``, ``vector_norm``, ...), and its failures
  give NaNs unless ``cupyx.errstate(linalg='raise')``; ``fft`` has CuPy's signatures (no
  ``out=``) and dtypes; ``cupyx.scipy.linalg`` has ``lu_factor``/``lu_solve``/``lu``/
  ``solve_triangular`` for single matrices, as CuPy's;
- a kernel runs on the current device: an operand on another device is CuPy's
  ``ValueError`` ("... is different from the current device (0). Peer access is unavailable
  between these devices."), and results are made on the current device; views keep their
  base's device, and ``copy``/``asarray``/``array`` copy across devices;
- ``cuda`` offers ``Device``, ``runtime``, ``Stream``, ``Event``, ``get_elapsed_time``,
  ``set_allocator`` and a memory pool, backed by the CPU (two fake devices).

Use it through the documented hook: ``chainrule.backends.set_cupy_module("tests._fakecupy")``
or ``CHAINRULE_CUPY_MODULE=tests._fakecupy`` (see tests/_fakecupy/plugin.py's fixture).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests._fakecupy import _core, cuda, cupyx, fft, linalg, random
from tests._fakecupy._core import call, ndarray, ufunc, unwrap, wrap

__all__ = [
    "ndarray",
    "ufunc",
    "asarray",
    "array",
    "asnumpy",
    "get_array_module",
    "cuda",
    "random",
    "linalg",
    "fft",
    "cupyx",
    "lib",
    "get_default_memory_pool",
]

_UFUNCS: dict[str, ufunc] = {
    n: ufunc(getattr(np, n)) for n in dir(np) if isinstance(getattr(np, n, None), np.ufunc)
}
globals().update(_UFUNCS)

# What NumPy has and CuPy does not (the host-side error machinery, Python-object iteration).
_ABSENT = {
    "errstate",
    "seterr",
    "geterr",
    "seterrcall",
    "geterrcall",
    "nditer",
    "nested_iters",
    "frompyfunc",
    "ndenumerate",
    "memmap",
    "ma",
    "char",
    "rec",
    "ctypeslib",
    "polynomial",
    "testing",
}


def asarray(a: Any, dtype: Any = None, order: Any = None, *, blocking: bool = False) -> ndarray:
    """A device array from a device array (no copy when nothing changes) or host data."""
    if type(a) is ndarray:
        if a._dev != _core.CURRENT[0]:  # CuPy copies an array of another device to this one
            a = a.copy()
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    return wrap(
        np.array(unwrap(a) if isinstance(a, (list, tuple)) else a, dtype=dtype, order=order or "K")
    )


def array(
    obj: Any,
    dtype: Any = None,
    copy: bool = True,
    order: str = "K",
    subok: bool = False,
    ndmin: int = 0,
    *,
    blocking: bool = False,
) -> ndarray:
    """A device array copied from ``obj`` (device or host data)."""
    src = obj._a if type(obj) is ndarray else unwrap(obj) if isinstance(obj, (list, tuple)) else obj
    # Made on the current device, from an array of any device (CuPy's peer copy).
    return wrap(np.array(src, dtype=dtype, copy=True, order=order, ndmin=ndmin))


asanyarray = asarray


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None) -> np.ndarray:
    """A host copy of a device array (host data is returned as a NumPy array)."""
    if type(a) is ndarray:
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def get_array_module(*args: Any) -> Any:
    import sys

    return sys.modules[__name__] if any(type(a) is ndarray for a in args) else np


class _StrideTricks:
    """``cupy.lib.stride_tricks``: ``as_strided`` on device arrays."""

    @staticmethod
    def as_strided(x: ndarray, shape: Any = None, strides: Any = None) -> ndarray:
        r = np.lib.stride_tricks.as_strided(x._a, shape=shape, strides=strides)
        return wrap(r, x._dev, x)


class _Lib:
    stride_tricks = _StrideTricks()


lib = _Lib()


def get_default_memory_pool() -> Any:
    return cuda.memory.pool()


def __getattr__(name: str) -> Any:
    if name in _ABSENT or name.startswith("_"):
        raise AttributeError(f"module 'cupy' has no attribute '{name}'")
    obj = getattr(np, name)  # AttributeError as for any missing name
    if isinstance(obj, type) or isinstance(obj, (np.dtype, int, float)) or obj is None:
        return obj  # dtypes, scalar types, constants: CuPy re-exports NumPy's
    if not callable(obj):
        raise AttributeError(f"module 'cupy' has no attribute '{name}'")

    def fn(*args: Any, **kwargs: Any) -> Any:
        return call(obj, args, kwargs)

    fn.__name__ = name
    globals()[name] = fn  # made once per name
    return fn
