"""``torch.sym_*``: PyTorch's symbolic-shape helpers, with their eager semantics on plain
Python numbers (chainrule has no symbolic shapes, so every value is concrete).

``sym_max``/``sym_min`` take ints and floats (NumPy's too) and return a float when either is
a float; ``sym_ite`` needs a bool condition and two branches of one type; ``sym_not`` is
``not``; ``sym_sqrt`` is ``math.sqrt``; ``sym_sum`` is ``sum``; ``sym_int`` truncates and
``sym_float`` converts, as ``int()`` and ``float()`` do.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Iterable

import numpy as np

__all__ = [
    "sym_int",
    "sym_float",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_sqrt",
    "sym_sum",
    "sym_ite",
]

_ALL_TYPES = (np.integer, np.floating, builtins.int, builtins.float)
_FLOAT_TYPES = (np.floating, builtins.float)


def sym_int(a: Any) -> int:
    """``int(a)``: a float is truncated toward zero."""
    return builtins.int(a)


def sym_float(a: Any) -> float:
    """``float(a)``."""
    return builtins.float(a)


def _check(a: Any) -> None:
    if not isinstance(a, _ALL_TYPES):
        raise AssertionError(f"expected {_ALL_TYPES}, got {type(a)}")


def sym_max(a: Any, b: Any) -> Any:
    """max(a, b), as a float when either is a float (unlike ``max``, which keeps the type of
    the argument it picks)."""
    _check(a)
    _check(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(builtins.max(a, b))
    return builtins.max(a, b)


def sym_min(a: Any, b: Any) -> Any:
    """min(a, b), as a float when either is a float."""
    _check(a)
    _check(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(builtins.min(a, b))
    return builtins.min(a, b)


def sym_not(a: Any) -> bool:
    """``not a``."""
    return not a


def sym_sqrt(a: Any) -> float:
    """``math.sqrt(a)`` (ValueError for a negative number, as there)."""
    return math.sqrt(a)


def sym_sum(args: Iterable[Any]) -> Any:
    """``sum(args)``."""
    return builtins.sum(args)


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """``t if b else f``; ``b`` must be a bool and ``t``, ``f`` of one type."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f
