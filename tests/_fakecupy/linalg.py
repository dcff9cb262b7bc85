"""``cupy.linalg`` for the stand-in: NumPy's functions of the names CuPy's
``cupy/linalg/__init__.py`` exports (``_NAMES``; no ``multi_dot``, ``outer``, ``vector_norm``,
``matrix_norm``, ``svdvals``, ... : ``AttributeError`` as in CuPy), except that a failure
(singular matrix, not positive definite) gives NaNs unless ``cupyx.errstate(linalg='raise')``,
as in CuPy."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests._fakecupy import _core, cupyx

LinAlgError = np.linalg.LinAlgError


def _nan_like(r: np.ndarray) -> np.ndarray:
    return np.full(r.shape, np.nan, dtype=r.dtype)


def _guarded(name: str, shape_of: Any) -> Any:
    fn = getattr(np.linalg, name)

    def f(*args: Any, **kwargs: Any) -> Any:
        try:
            return _core.call(fn, args, kwargs)
        except np.linalg.LinAlgError:
            if cupyx.LINALG[0] == "raise":
                raise
            return _core.wrap(_nan_like(shape_of(*(_core.unwrap(a) for a in args))))

    f.__name__ = name
    return f


def _solve_shape(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    return np.linalg.solve(eye, b)


inv = _guarded("inv", lambda a, *_: np.empty_like(a))
cholesky = _guarded("cholesky", lambda a, *_: np.empty_like(a))
solve = _guarded("solve", lambda a, b, *_: _solve_shape(a, b))


# cupy.linalg.__all__ (CuPy's cupy/linalg/__init__.py).
_NAMES = {
    "matrix_power",
    "cross",
    "matmul",
    "matrix_transpose",
    "cholesky",
    "qr",
    "svd",
    "eigh",
    "eig",
    "eigvalsh",
    "eigvals",
    "norm",
    "cond",
    "det",
    "matrix_rank",
    "slogdet",
    "solve",
    "tensorsolve",
    "lstsq",
    "inv",
    "pinv",
    "tensorinv",
    "LinAlgError",
}


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module 'cupy.linalg' has no attribute '{name}'")
    obj = getattr(np.linalg, name)
    if not callable(obj) or isinstance(obj, type):
        return obj

    def fn(*args: Any, **kwargs: Any) -> Any:
        return _core.call(obj, args, kwargs)

    fn.__name__ = name
    return fn
