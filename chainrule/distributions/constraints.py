"""Constraints: the sets that distribution parameters and values live in (``torch``'s
``distributions.constraints``). ``check(value)`` returns a bool tensor over the batch shape (the
rightmost ``event_dim`` dimensions are reduced).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import chainrule as _cr
from chainrule._tensor import Tensor

__all__ = [
    "Constraint",
    "boolean",
    "cat",
    "corr_cholesky",
    "dependent",
    "dependent_property",
    "greater_than",
    "greater_than_eq",
    "independent",
    "integer_interval",
    "interval",
    "half_open_interval",
    "is_dependent",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "MixtureSameFamilyConstraint",
    "multinomial",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_semidefinite",
    "positive_definite",
    "positive_integer",
    "real",
    "real_vector",
    "simplex",
    "square",
    "stack",
    "symmetric",
    "unit_interval",
]


def _np(value: Any) -> np.ndarray:
    return np.asanyarray(value._data) if isinstance(value, Tensor) else np.asarray(value)


def _bool(a: Any) -> Tensor:
    return _cr.tensor(np.asarray(a, dtype=bool))


class Constraint:
    """A region over which a variable is valid.

    Attributes:
        is_discrete: whether the constrained space is discrete.
        event_dim: the number of rightmost dimensions that together define an event.
    """

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """A bool tensor of ``value.shape[:-event_dim]``: whether each event is in the set."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """Placeholder for variables whose support depends on other variables."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(
        self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
    ) -> _Dependent:
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` is a ``dependent`` placeholder."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property whose value is a constraint that depends on the distribution's parameters."""

    def __init__(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        is_discrete: Any = NotImplemented,
        event_dim: Any = NotImplemented,
    ) -> None:
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn: Callable[..., Any]) -> _DependentProperty:  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _LazyPropertyMarker(_Dependent):
    """What a ``lazy_property`` reads as on the class: a dependent constraint."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn


class _IndependentConstraint(Constraint):
    """Reinterprets the ``reinterpreted_batch_ndims`` rightmost batch dims as event dims."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError("base_constraint must be a Constraint")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError("reinterpreted_batch_ndims must be a non-negative int")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.ndim < n:
            expected = self.base_constraint.event_dim + n
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.ndim}")
        r = _np(result)
        if n:
            r = r.reshape(r.shape[: r.ndim - n] + (-1,)).all(-1)
        return _bool(r)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__[1:]}({repr(self.base_constraint)}, "
            f"{self.reinterpreted_batch_ndims})"
        )


class MixtureSameFamilyConstraint(Constraint):
    """The support constraint of a MixtureSameFamily: its component's, over the batch."""

    def __init__(self, base_constraint: Constraint) -> None:
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Tensor) -> Tensor:
        r = _np(self.base_constraint.check(value))
        return _bool(r.reshape(r.shape[: r.ndim - 1] + (-1,)).all(-1) if r.ndim else r)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({repr(self.base_constraint)})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool((v == 0) | (v == 1))


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool(((v == 0) | (v == 1)).all(-1) & (v.sum(-1) == 1))


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool((v % 1 == 0) & (_np(self.lower_bound) <= v) & (v <= _np(self.upper_bound)))

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
            f"upper_bound={self.upper_bound})"
        )


class _IntegerLessThan(Constraint):
    is_discrete = True

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool((v % 1 == 0) & (v <= _np(self.upper_bound)))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool((v % 1 == 0) & (v >= _np(self.lower_bound)))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool(v == v)  # False for nan only (PyTorch's check)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return _bool(_np(self.lower_bound) < _np(value))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value: Tensor) -> Tensor:
        return _bool(_np(self.lower_bound) <= _np(value))


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return _bool(_np(value) < _np(self.upper_bound))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool((_np(self.lower_bound) <= v) & (v <= _np(self.upper_bound)))

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
            f"upper_bound={self.upper_bound})"
        )


class _HalfOpenInterval(_Interval):
    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool((_np(self.lower_bound) <= v) & (v < _np(self.upper_bound)))


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool((v >= 0).all(-1) & (np.abs(v.sum(-1) - 1) < 1e-6))


class _Multinomial(Constraint):
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: int) -> None:
        self.upper_bound = upper_bound

    def check(self, x: Tensor) -> Tensor:
        v = _np(x)
        return _bool((v >= 0).all(-1) & (v.sum(-1) <= self.upper_bound))


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool((np.tril(v) == v).reshape(v.shape[:-2] + (-1,)).all(-1))


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        tri = (np.tril(v) == v).reshape(v.shape[:-2] + (-1,)).all(-1)
        pos = (np.diagonal(v, axis1=-2, axis2=-1) > 0).all(-1)
        return _bool(tri & pos)


class _CorrCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        tol = np.finfo(v.dtype).eps * v.shape[-1] * 10
        unit = (np.abs(np.linalg.norm(v, axis=-1) - 1) <= tol).all(-1)
        return _bool(_np(_LowerCholesky().check(value)) & unit)


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        v = _np(value)
        return _bool(np.full(v.shape[:-2], v.shape[-2] == v.shape[-1], dtype=bool))


class _Symmetric(_Square):
    def check(self, value: Tensor) -> Tensor:
        sq = _np(super().check(value))
        if not sq.all():
            return _bool(sq)
        v = _np(value)
        close = np.isclose(v, np.swapaxes(v, -1, -2), atol=1e-6)
        return _bool(close.reshape(v.shape[:-2] + (-1,)).all(-1))


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        sym = _np(super().check(value))
        if not sym.all():
            return _bool(sym)
        return _bool((np.linalg.eigvalsh(_np(value)) >= 0).all(-1))


class _PositiveDefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        sym = _np(super().check(value))
        if not sym.all():
            return _bool(sym)
        v = _np(value)
        flat = v.reshape((-1,) + v.shape[-2:])
        ok = np.empty(flat.shape[0], dtype=bool)
        for i, m in enumerate(flat):
            try:
                np.linalg.cholesky(m)
                ok[i] = True
            except np.linalg.LinAlgError:
                ok[i] = False
        return _bool(ok.reshape(v.shape[:-2]))


class _Cat(Constraint):
    """Applies ``cseq`` to consecutive pieces of ``dim`` of sizes ``lengths``."""

    def __init__(self, cseq: Any, dim: int = 0, lengths: Any = None) -> None:
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        checks, start = [], 0
        for c, n in zip(self.cseq, self.lengths):
            checks.append(c.check(value.narrow(self.dim, start, n)))
            start += n
        return _cr.cat(checks, self.dim)


class _Stack(Constraint):
    """Applies ``cseq`` to the slices of ``dim``."""

    def __init__(self, cseq: Any, dim: int = 0) -> None:
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        d = max(c.event_dim for c in self.cseq)
        return d + 1 if self.dim + d < 0 else d

    def check(self, value: Tensor) -> Tensor:
        parts = value.unbind(self.dim)
        return _cr.stack([c.check(v) for c, v in zip(self.cseq, parts)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
