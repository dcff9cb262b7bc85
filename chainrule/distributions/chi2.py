"""The chi-squared distribution: Gamma(df / 2, 1 / 2)."""

from __future__ import annotations

from typing import Any

from chainrule._tensor import Tensor
from chainrule.distributions import constraints
from chainrule.distributions.gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi-squared distribution with ``df`` degrees of freedom (Gamma(df/2, 1/2))."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        from chainrule.distributions.utils import broadcast_all

        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, df * 0 + 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)  # type: ignore[return-value]

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
