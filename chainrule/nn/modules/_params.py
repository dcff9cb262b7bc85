"""Creating and initialising the ``weight``/``bias`` pair that most layers carry."""

from __future__ import annotations

import math
from typing import Any

from chainrule import _creation
from chainrule.nn import init
from chainrule.nn.parameter import Parameter

__all__ = ["add_weight_and_bias", "reset_fan_in_uniform", "reset_ones_zeros"]


def add_weight_and_bias(
    module: Any,
    weight_shape: Any,
    bias_shape: Any,
    dtype: Any,
    *,
    weight: bool = True,
    bias: bool = True,
) -> None:
    """Register ``weight`` and ``bias`` on ``module`` as uninitialised Parameters of the given
    shapes, or as ``None`` placeholders where absent (there is no bias without a weight)."""
    for name, shape, present in (
        ("weight", weight_shape, weight),
        ("bias", bias_shape, weight and bias),
    ):
        value = Parameter(_creation.empty(shape, dtype=dtype)) if present else None
        module.register_parameter(name, value)


def reset_fan_in_uniform(weight: Any, bias: Any) -> None:
    """PyTorch's default for ``Linear`` and the convolutions: ``kaiming_uniform_(a=sqrt(5))``
    on the weight, which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same range for the
    bias. With ``fan_in == 0`` the bias keeps its zeros."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        if fan_in > 0:
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(bias, -bound, bound)


def reset_ones_zeros(weight: Any, bias: Any) -> None:
    """The identity affine map of the normalisation layers: weight ones, bias zeros (either
    may be None)."""
    if weight is not None:
        init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)
