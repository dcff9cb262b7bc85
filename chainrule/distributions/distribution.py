"""``Distribution``: the base class of all distributions (PyTorch's API and validation)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, TypeVar, cast

from chainrule._tensor import Size, Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.distributions import constraints
from chainrule.distributions.utils import lazy_property

__all__ = ["Distribution"]

_D = TypeVar("_D", bound="Distribution")


def _is_lazy(cls: type, name: str) -> bool:
    return any(isinstance(c.__dict__.get(name), lazy_property) for c in cls.__mro__)


def _fmt(v: Any) -> str:
    # PyTorch formats a 0-d tensor as its number inside f-strings.
    return str(v.item()) if isinstance(v, Tensor) and v.ndim == 0 else str(v)


class Distribution:
    """Abstract base class for probability distributions.

    Args:
        batch_shape: the shape over which parameters are batched.
        event_shape: the shape of a single sample (without batching).
        validate_args: whether to validate the parameters and the values given to ``log_prob``
            and friends; ``None`` takes the default (on, unless ``set_default_validate_args``
            turned it off or Python runs with ``-O``).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn validation on or off by default (on by default, as in PyTorch)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: Any = Size(),
        event_shape: Any = Size(),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with "
                    "`validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and _is_lazy(type(self), param):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {repr(self)} "
                        f"to satisfy the constraint {repr(constraint)}, "
                        f"but found invalid values:\n{value}"
                    )
        super().__init__()

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """A new distribution with batch dimensions expanded to ``batch_shape`` (parameters are
        expanded, not copied)."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    if TYPE_CHECKING:
        # Subclasses set these as class attributes (or properties), as PyTorch's do; the
        # properties below raise for one that does not.
        arg_constraints: dict[str, constraints.Constraint]
        support: Any
    else:

        @property
        def arg_constraints(self) -> dict[str, constraints.Constraint]:
            """Constraint of each argument, checked at construction when validating."""
            raise NotImplementedError

        @property
        def support(self) -> Any:
            """The constraint of the distribution's support."""
            raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        """Standard deviation: the square root of the variance."""
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without a graph."""
        with _grad_mode.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        """A reparameterized sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """``n`` samples; deprecated, as in PyTorch (use ``sample((n,))``)."""
        warnings.warn(
            "sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2
        )
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the probability density (or mass) at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse of the cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """All values of a discrete support, along a new leading dimension (expanded over the
        batch shape when ``expand``)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, over the batch shape."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: Any = Size()) -> Size:
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.ndim - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.shape} vs "
                f"{self._event_shape}."
            )
        actual_shape = value.shape
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual_shape} vs {expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. "
                "Please initialize the distribution with `validate_args=False` to turn off "
                "validation.",
                stacklevel=2,
            )
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({repr(support)}) "
                f"of the distribution {repr(self)}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls: type[_D], _instance: Any = None) -> _D:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        # an instance of type(self), a subclass of cls when expand is inherited
        return cast(_D, self.__new__(type(self))) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args = []
        for p in param_names:
            v = self.__dict__[p]
            args.append(f"{p}: {_fmt(v) if v.numel() == 1 else v.shape}")
        args_string = ", ".join(args)
        return self.__class__.__name__ + "(" + args_string + ")"
