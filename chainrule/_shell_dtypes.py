"""PyTorch's "shell" dtypes: ``uint1`` ... ``uint7``, ``int1`` ... ``int7``, the bit-packed
``bits1x8``, ``bits2x4``, ``bits4x2``, ``bits8``, ``bits16``, ``float4_e2m1fn_x2`` and ``bit``
(an alias of ``uint1``); and ``complex32`` (``chalf``), PyTorch's ComplexHalf.

PyTorch defines them so that libraries can tag packed data; its own CPU kernels do almost
nothing with them (``torch.empty`` and ``view`` work, while ``fill_``, ``copy_``, arithmetic,
printing and ``tolist`` raise ``NotImplementedError``/``RuntimeError``). chainrule has the
dtype objects with PyTorch's attributes (``itemsize``, ``is_floating_point``, ``is_complex``,
``is_signed``, which raises ``RuntimeError: Bits types are undefined`` for the ``bits*`` types
as PyTorch's does, ``to_real``); it has no NumPy type to hold tensors of them, so making a tensor
of one raises ``TypeError`` (differs from torch, whose ``empty`` gives an uninitialised one).

``complex32`` is the same kind of object: PyTorch 2.13's CPU kernels do a little with it
(creation, copies and casts, add/mul, abs, neg/conj, indexing, cat, ``view_as_real`` as
float16), but NumPy has no complex type with float16 parts, so chainrule has the dtype
(``is_complex``, ``itemsize`` 4, ``to_real()`` float16, promotion, ``finfo``) and no tensors of
it: ``Tensor.chalf()`` and ``dtype=torch.chalf`` raise ``TypeError`` (docs/complex.md).
"""

from __future__ import annotations

import builtins
from typing import Any

from chainrule._dtype import NO_COMPLEX32, dtype

__all__ = [
    "uint1",
    "uint2",
    "uint3",
    "uint4",
    "uint5",
    "uint6",
    "uint7",
    "int1",
    "int2",
    "int3",
    "int4",
    "int5",
    "int6",
    "int7",
    "bits1x8",
    "bits2x4",
    "bits4x2",
    "bits8",
    "bits16",
    "float4_e2m1fn_x2",
    "bit",
    "complex32",
    "chalf",
]

# PyTorch's C++ scalar-type names (its errors print them).
_C_NAMES = {
    **{f"uint{i}": f"UInt{i}" for i in range(1, 8)},
    **{f"int{i}": f"Int{i}" for i in range(1, 8)},
    "bits1x8": "Bits1x8",
    "bits2x4": "Bits2x4",
    "bits4x2": "Bits4x2",
    "bits8": "Bits8",
    "bits16": "Bits16",
    "float4_e2m1fn_x2": "Float4_e2m1fn_x2",
}


class ShellDtype(dtype):
    """A dtype with a name and a size but no element type chainrule can compute with."""

    __slots__ = ("_bits",)

    def __init__(self, name: str, itemsize: builtins.int, category: builtins.int, signed: Any):
        self.name = name
        self._category = category
        self.is_floating_point = category == 2
        self._bits = signed is None
        self.is_signed = builtins.bool(signed)
        self.itemsize = itemsize

    def __getattribute__(self, attr: str) -> Any:
        if attr == "is_signed" and object.__getattribute__(self, "_bits"):
            raise RuntimeError("Bits types are undefined")
        return object.__getattribute__(self, attr)

    def __getattr__(self, attr: str) -> Any:
        if attr != "np":
            raise AttributeError(attr)
        raise TypeError(
            f"chainrule cannot make tensors of dtype torch.{self.name}: NumPy has no such type"
        )

    def to_real(self) -> ShellDtype:
        """The dtype itself (it is not complex)."""
        return self

    def to_complex(self) -> Any:
        raise RuntimeError(f"Unknown Complex ScalarType for {_C_NAMES[self.name]}")


uint1 = ShellDtype("uint1", 1, 1, False)
uint2 = ShellDtype("uint2", 1, 1, False)
uint3 = ShellDtype("uint3", 1, 1, False)
uint4 = ShellDtype("uint4", 1, 1, False)
uint5 = ShellDtype("uint5", 1, 1, False)
uint6 = ShellDtype("uint6", 1, 1, False)
uint7 = ShellDtype("uint7", 1, 1, False)
int1 = ShellDtype("int1", 1, 1, True)
int2 = ShellDtype("int2", 1, 1, True)
int3 = ShellDtype("int3", 1, 1, True)
int4 = ShellDtype("int4", 1, 1, True)
int5 = ShellDtype("int5", 1, 1, True)
int6 = ShellDtype("int6", 1, 1, True)
int7 = ShellDtype("int7", 1, 1, True)
bits1x8 = ShellDtype("bits1x8", 1, 1, None)
bits2x4 = ShellDtype("bits2x4", 1, 1, None)
bits4x2 = ShellDtype("bits4x2", 1, 1, None)
bits8 = ShellDtype("bits8", 1, 1, None)
bits16 = ShellDtype("bits16", 2, 1, None)
float4_e2m1fn_x2 = ShellDtype("float4_e2m1fn_x2", 1, 2, True)
bit = uint1


class ComplexHalfDtype(ShellDtype):
    """``complex32``: a complex dtype with float16 parts, which NumPy cannot hold."""

    __slots__ = ()

    def __getattr__(self, attr: str) -> Any:
        if attr != "np":
            raise AttributeError(attr)
        raise TypeError(NO_COMPLEX32)

    def to_real(self) -> Any:
        """float16, the dtype of the parts."""
        from chainrule._dtype import float16

        return float16

    def to_complex(self) -> ComplexHalfDtype:
        """The dtype itself."""
        return self


complex32 = ComplexHalfDtype("complex32", 4, 3, True)
chalf = complex32
