"""What the method mixins share, below ``Tensor``: its root base class and the operand test.

``TensorBase`` is the last base of ``Tensor`` and of nothing else, so code below ``_tensor.py``
(which cannot import it) tests ``isinstance(x, TensorBase)`` for "x is a Tensor".
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["Size", "TensorBase", "foreign", "type_name"]


class Size(tuple):
    """A tensor shape: a tuple that prints as ``chainrule.Size([2, 3])`` (defined here, below
    ``Tensor``, so that the method mixins can test for it; ``chainrule.Size`` is this class)."""

    def __repr__(self) -> str:
        return f"chainrule.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class TensorBase:
    """The root of ``Tensor``'s bases (see the module docstring)."""

    __slots__ = ()


def foreign(other: Any) -> bool:
    """Whether an operator's other operand is of a type no op takes (Note [foreign operands]
    in _tensor.py)."""
    return not (
        isinstance(other, (TensorBase, numbers.Number, np.ndarray, np.generic, list, tuple))
        or hasattr(other, "__array__")
        or hasattr(other, "__cuda_array_interface__")
    )


_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


def type_name(np_dtype: Any) -> str:
    """PyTorch's legacy type name of a dtype (``FloatTensor``), as ``Tensor.type()`` says it."""
    return _TYPE_NAMES.get(np.dtype(np_dtype).name, "Tensor")
