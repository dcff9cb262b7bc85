"""Loading per-parameter state that is not shaped like its parameter (Adafactor's row and
column accumulators, LBFGS's flat history)."""

from __future__ import annotations

import copy
from typing import Any

from chainrule._tensor import Tensor

__all__ = ["cast_state_any_shape"]


def cast_state_any_shape(param: Tensor, value: Any, index: Any, key: Any = None) -> Any:
    """``Optimizer._cast_state`` without its shape check: state tensors are copied and cast
    to a floating parameter's dtype (``step`` keeps its own), inside dicts and lists too, as
    PyTorch's ``load_state_dict`` does."""
    if isinstance(value, Tensor):
        data = value._data
        if key != "step" and param.is_floating_point():
            data = data.astype(param._data.dtype)
        return Tensor._wrap(data.copy())
    if isinstance(value, dict):
        return {k: cast_state_any_shape(param, v, index, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(cast_state_any_shape(param, v, index, key) for v in value)
    return copy.deepcopy(value)
