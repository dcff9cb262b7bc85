"""``cupyx`` for the stand-in: ``scatter_add`` / ``scatter_max`` / ``scatter_min`` and
``errstate(linalg=...)``."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from tests._fakecupy import _core

# cupyx.errstate(linalg=...): 'ignore' (CuPy's default: failures give NaNs) or 'raise'.
LINALG = ["ignore"]


def _scatter(uf: np.ufunc, a: Any, slices: Any, value: Any) -> None:
    if type(a) is not _core.ndarray:
        raise _core._unsupported(a)
    _core.check_current(a, slices, value)
    uf.at(a._a, _core._index(slices), _core.unwrap(value))


def scatter_add(a: Any, slices: Any, value: Any) -> None:
    """``a[slices] += value``, unbuffered (``cupyx.scatter_add``)."""
    _scatter(np.add, a, slices, value)


def scatter_max(a: Any, slices: Any, value: Any) -> None:
    """``a[slices] = maximum(a[slices], value)``, unbuffered (``cupyx.scatter_max``)."""
    _scatter(np.maximum, a, slices, value)


def scatter_min(a: Any, slices: Any, value: Any) -> None:
    """``a[slices] = minimum(a[slices], value)``, unbuffered (``cupyx.scatter_min``)."""
    _scatter(np.minimum, a, slices, value)


@contextlib.contextmanager
def errstate(*, linalg: str | None = None) -> Iterator[None]:
    """``cupyx.errstate``: ``linalg='raise'`` makes ``cupy.linalg`` failures raise."""
    prev = LINALG[0]
    if linalg is not None:
        if linalg not in ("ignore", "raise"):
            raise ValueError(f"linalg must be 'ignore' or 'raise', got {linalg!r}")
        LINALG[0] = linalg
    try:
        yield
    finally:
        LINALG[0] = prev


def geterr() -> dict[str, str]:
    return {"linalg": LINALG[0]}


class _ScipyLinalg:
    """``cupyx.scipy.linalg``'s LU and triangular solvers (cupyx/scipy/linalg/_decomp_lu.py,
    _solve_triangular.py), as CuPy has them: ``lu_factor``, ``lu`` and ``lu_solve`` take one
    2-d matrix (``_util._assert_2d``: ``LinAlgError`` for any other number of dims), give
    0-based ``int32`` pivots, warn (``RuntimeWarning``) on an exactly singular matrix, and
    check for infs and NaNs unless ``check_finite=False``."""

    @staticmethod
    def _two_d(a: Any) -> np.ndarray:
        if type(a) is not _core.ndarray:
            raise _core._unsupported(a)
        _core.check_current(a)
        if a._a.ndim != 2:
            raise np.linalg.LinAlgError(
                f"{a._a.ndim}-dimensional array given. Array must be two-dimensional"
            )
        if a._a.dtype.char not in "fdFD":
            raise NotImplementedError(
                "Only float32, float64, complex64 and complex128 are supported."
            )
        return a._a

    def lu_factor(self, a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
        import warnings

        import scipy.linalg

        x = self._two_d(a)
        if check_finite and x.dtype.kind == "f" and not np.isfinite(x).all():
            raise ValueError("array must not contain infs or NaNs")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lu, piv = scipy.linalg.lu_factor(x, check_finite=False)
        k = min(x.shape)
        d = np.diagonal(lu)[:k]
        if (d == 0).any():
            warnings.warn(
                f"Diagonal number {int(np.flatnonzero(d == 0)[0]) + 1} is exactly zero. "
                "Singular matrix.",
                RuntimeWarning,
                stacklevel=2,
            )
        return (
            _core.wrap(np.asfortranarray(lu.astype(x.dtype)), a._dev),
            _core.wrap(piv.astype(np.int32), a._dev),
        )

    def lu_solve(
        self,
        lu_and_piv: Any,
        b: Any,
        trans: int = 0,
        overwrite_b: bool = False,
        check_finite: bool = True,
    ) -> Any:
        import scipy.linalg

        lu, piv = lu_and_piv
        x = self._two_d(lu)
        _core.check_current(piv, b)
        r = scipy.linalg.lu_solve((x, _core.unwrap(piv)), _core.unwrap(b), trans=trans)
        return _core.wrap(r, lu._dev)

    def lu(
        self, a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
    ) -> Any:
        import scipy.linalg

        x = self._two_d(a)
        return _core.wrap(scipy.linalg.lu(x, permute_l=permute_l), a._dev)

    def solve_triangular(
        self,
        a: Any,
        b: Any,
        trans: int = 0,
        lower: bool = False,
        unit_diagonal: bool = False,
        overwrite_b: bool = False,
        check_finite: bool = False,
    ) -> Any:
        import scipy.linalg

        _core.check_current(a, b)
        r = scipy.linalg.solve_triangular(
            _core.unwrap(a),
            _core.unwrap(b),
            trans=trans,
            lower=lower,
            unit_diagonal=unit_diagonal,
        )
        return _core.wrap(r, a._dev)


class _Scipy:
    """``cupyx.scipy`` (its submodules load on attribute access, as CuPy's)."""

    linalg = _ScipyLinalg()


scipy = _Scipy()
