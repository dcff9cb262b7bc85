"""``cupy.random`` for the stand-in.

``RandomState`` is CuPy's legacy API (its methods take ``dtype=`` where CuPy's do, and return
0-d device arrays where NumPy returns Python numbers). ``Generator`` has only the methods
CuPy's has: no ``normal``, ``choice``, ``permutation``, ``shuffle`` or ``multinomial``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests._fakecupy import _core


def _w(r: Any, dtype: Any = None) -> Any:
    a = np.asarray(r)
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    return _core.wrap(a)


class RandomState:
    """``cupy.random.RandomState(seed)``, backed by ``numpy.random.RandomState``."""

    def __init__(self, seed: Any = None, method: Any = None) -> None:
        self._rs = np.random.RandomState(None if seed is None else int(seed) % 2**32)

    def seed(self, seed: Any = None) -> None:
        self._rs.seed(None if seed is None else int(seed) % 2**32)

    def random_sample(self, size: Any = None, dtype: Any = float) -> Any:
        return _w(self._rs.random_sample(size), dtype)

    def rand(self, *size: int, dtype: Any = float) -> Any:
        return _w(self._rs.random_sample(size), dtype)

    def randn(self, *size: int, dtype: Any = float) -> Any:
        return _w(self._rs.standard_normal(size), dtype)

    def standard_normal(self, size: Any = None, dtype: Any = float) -> Any:
        return _w(self._rs.standard_normal(size), dtype)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> Any:
        return _w(self._rs.normal(_core.unwrap(loc), _core.unwrap(scale), size), dtype)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = float) -> Any:
        return _w(self._rs.uniform(_core.unwrap(low), _core.unwrap(high), size), dtype)

    def randint(self, low: int, high: int | None = None, size: Any = None, dtype: Any = int) -> Any:
        return _w(self._rs.randint(low, high, size, dtype=np.int64), dtype)

    def permutation(self, num: Any) -> Any:
        return _w(self._rs.permutation(_core.unwrap(num)))

    def shuffle(self, a: Any) -> None:
        self._rs.shuffle(a._a)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        return _w(self._rs.choice(_core.unwrap(a), size, replace, _core.unwrap(p)))

    def exponential(self, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> Any:
        return _w(self._rs.exponential(_core.unwrap(scale), size), dtype)

    def standard_exponential(self, size: Any = None, dtype: Any = float) -> Any:
        return _w(self._rs.standard_exponential(size), dtype)

    def poisson(self, lam: Any = 1.0, size: Any = None, dtype: Any = int) -> Any:
        return _w(self._rs.poisson(_core.unwrap(lam), size), dtype)

    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = float) -> Any:
        return _w(self._rs.standard_gamma(_core.unwrap(shape), size), dtype)

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None, dtype: Any = float) -> Any:
        return _w(self._rs.gamma(_core.unwrap(shape), _core.unwrap(scale), size), dtype)

    def beta(self, a: Any, b: Any, size: Any = None, dtype: Any = float) -> Any:
        return _w(self._rs.beta(_core.unwrap(a), _core.unwrap(b), size), dtype)

    def binomial(self, n: Any, p: Any, size: Any = None, dtype: Any = int) -> Any:
        return _w(self._rs.binomial(_core.unwrap(n), _core.unwrap(p), size), dtype)

    def geometric(self, p: Any, size: Any = None, dtype: Any = int) -> Any:
        return _w(self._rs.geometric(_core.unwrap(p), size), dtype)

    def standard_cauchy(self, size: Any = None, dtype: Any = float) -> Any:
        return _w(self._rs.standard_cauchy(size), dtype)

    def lognormal(
        self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, dtype: Any = float
    ) -> Any:
        return _w(self._rs.lognormal(_core.unwrap(mean), _core.unwrap(sigma), size), dtype)


class Generator:
    """``cupy.random.Generator``: only the methods CuPy's has."""

    def __init__(self, bit_generator: Any = None) -> None:
        self._g = np.random.default_rng(bit_generator)

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        return _w(self._g.random(size, dtype=dtype))

    def uniform(
        self, low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = np.float64
    ) -> Any:
        return _w(self._g.uniform(low, high, size), dtype)

    def integers(
        self,
        low: Any,
        high: Any = None,
        size: Any = None,
        dtype: Any = np.int64,
        endpoint: bool = False,
    ) -> Any:
        return _w(self._g.integers(low, high, size, dtype=dtype, endpoint=endpoint))

    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        return _w(self._g.standard_normal(size, dtype=dtype))

    def standard_exponential(
        self, size: Any = None, dtype: Any = np.float64, method: str = "inv", out: Any = None
    ) -> Any:
        return _w(self._g.standard_exponential(size, dtype=dtype))

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        return _w(self._g.exponential(scale, size))

    def standard_gamma(
        self, shape: Any, size: Any = None, dtype: Any = np.float64, out: Any = None
    ) -> Any:
        return _w(self._g.standard_gamma(shape, size, dtype=dtype))

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None) -> Any:
        return _w(self._g.gamma(shape, scale, size))

    def beta(self, a: Any, b: Any, size: Any = None, dtype: Any = np.float64) -> Any:
        return _w(self._g.beta(a, b, size), dtype)

    def binomial(self, n: Any, p: Any, size: Any = None) -> Any:
        return _w(self._g.binomial(n, p, size))

    def poisson(self, lam: Any = 1.0, size: Any = None) -> Any:
        return _w(self._g.poisson(lam, size))

    def geometric(self, p: Any, size: Any = None) -> Any:
        return _w(self._g.geometric(p, size))


def default_rng(seed: Any = None) -> Generator:
    return Generator(seed)


_GLOBAL = [RandomState()]


def get_random_state() -> RandomState:
    return _GLOBAL[0]


def seed(seed: Any = None) -> None:
    _GLOBAL[0].seed(seed)


def rand(*size: int, dtype: Any = float) -> Any:
    return _GLOBAL[0].rand(*size, dtype=dtype)


def randn(*size: int, dtype: Any = float) -> Any:
    return _GLOBAL[0].randn(*size, dtype=dtype)
