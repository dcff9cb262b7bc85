"""What the method mixins share, below ``Tensor``: its root base class and the operand test.

``TensorBase`` is the last base of ``Tensor`` and of nothing else, so code below ``_tensor.py``
(which cannot import it) tests ``isinstance(x, TensorBase)`` for "x is a Tensor".
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from chainrule._tensor import Tensor

__all__ = ["Size", "TensorAttrs", "TensorBase", "foreign", "type_name"]


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


if TYPE_CHECKING:

    class TensorAttrs:
        """What the method mixins read of ``Tensor`` (which defines all of it), declared for the
        type checker only: at run time ``TensorAttrs`` is ``object``."""

        _data: Any
        _base: Tensor | None
        requires_grad: bool

        @property
        def shape(self) -> Size: ...
        @property
        def ndim(self) -> int: ...
        @property
        def dtype(self) -> Any: ...
        @property
        def device(self) -> Any: ...
        @property
        def _backend(self) -> Any: ...
        @staticmethod
        def _wrap(data: Any) -> Tensor: ...
        def _bump_version(self) -> None: ...
        def numel(self) -> int: ...
        def stride(self, dim: int | None = None) -> Any: ...
        def is_contiguous(self) -> bool: ...
        def to(self, *args: Any, **kwargs: Any) -> Tensor: ...
        def detach(self) -> Tensor: ...
        def reshape(self, *shape: Any) -> Tensor: ...
        def copy_(self, src: Any, non_blocking: bool = False) -> Tensor: ...
        def new_empty(self, *size: Any, **kwargs: Any) -> Tensor: ...
        def new_tensor(self, data: Any, **kwargs: Any) -> Tensor: ...

else:
    TensorAttrs = object


class TensorBase(TensorAttrs):
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
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
    "uint16": "UInt16Tensor",
    "uint32": "UInt32Tensor",
    "uint64": "UInt64Tensor",
    "float8_e4m3fn": "Float8_e4m3fnTensor",
    "float8_e5m2": "Float8_e5m2Tensor",
    "float8_e4m3fnuz": "Float8_e4m3fnuzTensor",
    "float8_e5m2fnuz": "Float8_e5m2fnuzTensor",
    "float8_e8m0fnu": "Float8_e8m0fnuTensor",
    "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


def type_name(np_dtype: Any) -> str:
    """PyTorch's legacy type name of a dtype (``FloatTensor``), as ``Tensor.type()`` says it."""
    return _TYPE_NAMES.get(np.dtype(np_dtype).name, "Tensor")
