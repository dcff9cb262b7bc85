"""Padding layers (``ZeroPad``, ``ConstantPad``, ``ReflectionPad``, ``ReplicationPad``,
``CircularPad``, 1-3 d) over ``functional.pad``. ``padding`` is one int (every side) or
2 n ints (left, right, top, bottom, front, back), stored as that tuple."""

from __future__ import annotations

from typing import Any

from chainrule._tensor import Tensor
from chainrule.nn import functional as F
from chainrule.nn.modules.module import Module

__all__ = [
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
]


def _widths(padding: Any, n: int) -> tuple[int, ...]:
    if isinstance(padding, (list, tuple)):
        if len(padding) != 2 * n:
            raise ValueError(f"expected {2 * n} padding values, got {len(padding)}")
        return tuple(int(p) for p in padding)
    return (int(padding),) * (2 * n)


class _PadNd(Module):
    _n: int
    _mode: str

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _widths(padding, self._n)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    _mode = "constant"

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``."""

    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``."""

    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``."""

    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros."""

    _n = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last two dims with zeros."""

    _n = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dims with zeros."""

    _n = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection (the edge not repeated)."""

    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dims with their reflection (the edge not repeated)."""

    _n, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last three dims with their reflection (the edge not repeated)."""

    _n, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge value."""

    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dims by repeating their edge values."""

    _n, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last three dims by repeating their edge values."""

    _n, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """Pad the last dim periodically (wrapping around)."""

    _n, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    """Pad the last two dims periodically (wrapping around)."""

    _n, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    """Pad the last three dims periodically (wrapping around)."""

    _n, _mode = 3, "circular"
