"""The casts an autocast region applies to a listed op's inputs (Note [autocast] in
_autocast_state.py): to the CPU autocast dtype for the lower-precision ops, to float32 for
the float32 ops. Only float16, bfloat16 and float32 tensors are cast, as PyTorch's
``is_eligible`` does (float64 and non-floating tensors pass unchanged); the cast is the
differentiable ``to_dtype``, so gradients flow back to the inputs in their own dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _dtype
from chainrule._autocast_state import state
from chainrule._tensor import Tensor
from chainrule.ops.shape.conversion import to_dtype

__all__ = ["lower", "fp32", "lower1", "fp32_1"]

_ELIGIBLE_NATIVE = (np.dtype(np.float16), np.dtype(np.float32))


def _cast(a: Any, target: np.dtype) -> Any:
    if not isinstance(a, Tensor):
        return a
    d = a._data.dtype
    if d == target or not (d in _ELIGIBLE_NATIVE or d == _dtype.bfloat16.np):
        return a
    if a.device.type != "cpu":
        return a
    return to_dtype(a, target)


def lower(*args: Any) -> tuple[Any, ...]:
    """The arguments of a lower-precision op, floating tensors cast to the autocast dtype."""
    target = state.dtypes["cpu"].np
    return tuple(_cast(a, target) for a in args)


def lower1(a: Any) -> Any:
    """``lower`` for one argument."""
    return _cast(a, state.dtypes["cpu"].np)


_F32 = np.dtype(np.float32)


def fp32(*args: Any) -> tuple[Any, ...]:
    """The arguments of a float32 op, float16 and bfloat16 tensors cast to float32."""
    return tuple(_cast(a, _F32) for a in args)


def fp32_1(a: Any) -> Any:
    """``fp32`` for one argument."""
    return _cast(a, _F32)
