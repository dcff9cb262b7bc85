"""Constants and helpers shared by the unary modules."""

from __future__ import annotations

import math
from typing import Any

from chainrule import _kinds

__all__ = []


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _cast(x: Any, like: Any) -> Any:
    return x.astype(like.dtype, copy=False)


def _legacy(t: Any) -> str:
    from chainrule.ops._registry import _legacy_name

    return _legacy_name(t._data.dtype)


def _float_only(input: Any, kernel: str) -> None:
    # PyTorch's activation kernels are defined for floating dtypes only.
    d = getattr(input, "_data", None)
    if d is not None and not _kinds.is_floating(d):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy(input)}'")
