"""Argument helpers shared by the layers."""

from __future__ import annotations

from typing import Any

__all__ = ["_single", "_pair", "_ntuple"]


def _ntuple(n: int, name: str = "parse") -> Any:
    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return (x,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
