"""Legacy typed-tensor constructors: ``FloatTensor``, ``DoubleTensor``, ``LongTensor``,
``IntTensor``, ``BoolTensor`` (and ``HalfTensor``, ``ShortTensor``, ``CharTensor``, ``ByteTensor``).

``FloatTensor([1, 2])`` gives float32 data and ``LongTensor(2, 3)`` an uninitialised (zeroed) 2x3
int64 tensor, as in PyTorch; ``isinstance(x, FloatTensor)`` holds for float32 tensors only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _dtype
from chainrule._tensor import Size, Tensor, _new_tensor

__all__ = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
]


class _TypedTensorMeta(type):
    dtype: _dtype.dtype

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj._data.dtype == cls.dtype.np

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:  # type: ignore[override]
        from chainrule._creation import _to_array

        if kwargs.pop("device", None) not in (None, "cpu"):
            from chainrule.backends import get_backend

            get_backend("cuda")
        if kwargs:
            raise TypeError(f"{cls.__name__}() got unexpected keyword arguments {sorted(kwargs)}")
        dt = cls.dtype.np
        if len(args) == 0:
            return _new_tensor(np.empty((0,), dt))
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return _new_tensor(np.zeros(tuple(int(a) for a in args), dt))
        if len(args) == 1 and isinstance(args[0], Size):
            return _new_tensor(np.zeros(tuple(args[0]), dt))
        if len(args) == 1:
            src = args[0]
            if isinstance(src, Tensor):
                if src._data.dtype != dt:
                    raise TypeError(
                        f"expected {cls.__name__.replace('Tensor', '')} (got "
                        f"{_dtype.from_np(src._data.dtype).name})"
                    )
                return src.detach()
            return _new_tensor(np.array(_to_array(src), dtype=dt))
        raise TypeError(f"{cls.__name__}(): invalid arguments {args!r}")

    def __repr__(cls) -> str:
        return f"<class 'chainrule.{cls.__name__}'>"


def _make(name: str, dt: _dtype.dtype) -> Any:
    return _TypedTensorMeta(name, (), {"dtype": dt, "__doc__": f"Legacy constructor for {dt}."})


FloatTensor = _make("FloatTensor", _dtype.float32)
DoubleTensor = _make("DoubleTensor", _dtype.float64)
HalfTensor = _make("HalfTensor", _dtype.float16)
BFloat16Tensor = _make("BFloat16Tensor", _dtype.bfloat16)
LongTensor = _make("LongTensor", _dtype.int64)
IntTensor = _make("IntTensor", _dtype.int32)
ShortTensor = _make("ShortTensor", _dtype.int16)
CharTensor = _make("CharTensor", _dtype.int8)
ByteTensor = _make("ByteTensor", _dtype.uint8)
BoolTensor = _make("BoolTensor", _dtype.bool)
