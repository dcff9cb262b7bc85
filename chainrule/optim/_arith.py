"""Array helpers that reproduce PyTorch's CPU kernels' rounding (lerp, addcmul, addcdiv)."""

from __future__ import annotations

from typing import Any

__all__ = ["lerp_", "addcmul", "addcdiv"]


def lerp_(start: Any, end: Any, weight: float) -> None:
    """start += weight * (end - start) in place, computed as PyTorch's lerp kernel does:
    from ``start`` when weight < 0.5 and from ``end`` otherwise."""
    if abs(weight) < 0.5:
        start[...] = start + weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


def addcmul(x: Any, t1: Any, t2: Any, value: float = 1.0) -> Any:
    """x + value * t1 * t2 (multiplied left to right, as PyTorch)."""
    return x + value * t1 * t2


def addcdiv(x: Any, t1: Any, t2: Any, value: float = 1.0) -> Any:
    """x + value * t1 / t2 (left to right, as PyTorch)."""
    return x + value * t1 / t2
