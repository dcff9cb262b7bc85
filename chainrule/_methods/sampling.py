"""Tensor methods that sample: the in-place samplers (``normal_``, ``uniform_`` ...) and
``bernoulli``/``multinomial`` (see chainrule/_sampling.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from chainrule import _kinds
from chainrule._dispatch import sampling as _sampling
from chainrule.backends import backend_of

if TYPE_CHECKING:
    from chainrule._tensor import Tensor


def _s() -> Any:
    # chainrule._sampling sits above _tensor, which inherits this mixin: reached through the
    # table it registers into (chainrule/_dispatch.py).
    return _sampling


class SamplingMethods:
    """The in-place samplers and ``bernoulli``/``multinomial`` as Tensor methods."""

    __slots__ = ()

    def normal_(self: Any, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        _s().float_only(self, "normal_kernel_cpu")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        return _s().fill_sampled(
            self, _s().rng(generator, self).standard_normal(tuple(self.shape)) * std + mean
        )

    def uniform_(
        self: Any, from_: float = 0.0, to: float = 1.0, *, generator: Any = None, **kw: Any
    ) -> Tensor:
        from_ = kw.pop("from", from_)
        _s().float_only(self, "check_uniform_bounds")
        if from_ > to:
            raise RuntimeError(
                f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}"
            )
        return _s().fill_sampled(
            self, _s().rng(generator, self).uniform(from_, to, tuple(self.shape))
        )

    def bernoulli_(self: Any, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        if hasattr(p, "_data"):  # read on the host (Note [sampling on the host])
            prob = backend_of(p._data).to_host(p._data).astype(np.float64)
        else:
            prob = np.asarray(p, dtype=np.float64)
        if ((prob < 0) | (prob > 1)).any():
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        draws = _s().rng(generator, self).random(tuple(self.shape)) < prob
        return _s().fill_sampled(self, draws)

    def exponential_(self: Any, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
        _s().float_only(self, "exponential_cpu")
        if lambd <= 0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
        return _s().fill_sampled(
            self, _s().rng(generator, self).exponential(1.0 / lambd, tuple(self.shape))
        )

    def geometric_(self: Any, p: float, *, generator: Any = None) -> Tensor:
        if not 0 < p < 1:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
        return _s().fill_sampled(self, _s().rng(generator, self).geometric(p, tuple(self.shape)))

    def cauchy_(
        self: Any, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None
    ) -> Tensor:
        _s().float_only(self, "cauchy_cpu")
        return _s().fill_sampled(
            self, median + sigma * _s().rng(generator, self).standard_cauchy(tuple(self.shape))
        )

    def log_normal_(
        self: Any, mean: float = 1.0, std: float = 2.0, *, generator: Any = None
    ) -> Tensor:
        _s().float_only(self, "log_normal_cpu")
        if std <= 0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
        return _s().fill_sampled(
            self, _s().rng(generator, self).lognormal(mean, std, tuple(self.shape))
        )

    def random_(
        self: Any, from_: int = 0, to: int | None = None, *, generator: Any = None, **kw: Any
    ) -> Tensor:
        from_ = kw.pop("from", from_)
        dt = self._data.dtype
        if to is None:
            if to is None and from_ != 0 and not _kinds.is_bool(dt):
                to, from_ = from_, 0
            elif _kinds.is_floating(dt):
                to = 2 ** (np.finfo(dt).nmant + 1) + 1
            elif _kinds.is_bool(dt):
                to = 2
            else:
                to = int(np.iinfo(dt).max) + 1
        if from_ >= to:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}"
            )
        return _s().fill_sampled(
            self, _s().rng(generator, self).integers(from_, to, tuple(self.shape))
        )

    def bernoulli(self: Any, p: Any = None, *, generator: Any = None) -> Tensor:
        return _s().bernoulli(self, p, generator=generator)

    def multinomial(
        self: Any, num_samples: int, replacement: bool = False, *, generator: Any = None
    ) -> Tensor:
        return _s().multinomial(self, num_samples, replacement, generator=generator)
