"""dtypes: PyTorch-named wrappers over NumPy dtypes, the default dtype, and type promotion.

Promotion follows PyTorch, not NumPy: a Python scalar or a 0-dim tensor does not widen the
dtype of a dimensioned tensor of the same category (bool < integer < floating), and integer with
floating gives the floating type (NumPy would widen int64 + float32 to float64). Complex
(``complex64``, ``complex128``) is the fourth category: complex with floating keeps the wider
precision (complex64 with float64 gives complex128), and a complex Python scalar with a floating
tensor gives that tensor's complex type.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _kinds

__all__ = [
    "dtype",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "bool",
    "complex64",
    "complex128",
    "cfloat",
    "cdouble",
    "half",
    "float",
    "double",
    "short",
    "int",
    "long",
    "get_default_dtype",
    "set_default_dtype",
    "promote_types",
]

import builtins


class dtype:
    """A tensor element type, named as in PyTorch (``chainrule.float32``).

    Wraps a NumPy dtype; ``np`` is the NumPy dtype, ``is_floating_point`` and ``itemsize``
    mirror ``torch.dtype``.
    """

    __slots__ = (
        "name",
        "np",
        "is_floating_point",
        "is_signed",
        "itemsize",
        "_category",
    )

    def __init__(self, name: str, np_dtype: Any, category: builtins.int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self._category = category  # 0 bool, 1 integer, 2 floating, 3 complex
        self.is_floating_point = category == 2
        self.is_signed = self.np.kind in "ifc"
        self.itemsize = self.np.itemsize

    @builtins.property
    def is_complex(self) -> builtins.bool:
        return self._category == 3

    @builtins.property
    def abbr(self) -> str:
        """PyTorch's short name of the dtype (``f32``, ``i64``, ``bf16``, ``c64``, ``b8``)."""
        return _ABBR.get(self.name, self.name)

    def to_complex(self) -> dtype:
        """The complex dtype with parts of this precision (float32 -> complex64, float16 ->
        complex32, bfloat16 -> complex64); a complex dtype is its own.

        Raises:
            RuntimeError: for dtypes that are neither floating nor complex, as PyTorch.
        """
        if self._category == 3:
            return self
        if self.name == "float16":
            from chainrule._dispatch import upper

            return upper.complex32
        if self.name in ("float32", "float64", "bfloat16"):
            return complex128 if self.name == "float64" else complex64
        raise RuntimeError(f"Unknown Complex ScalarType for {c_name(self)}")

    def to_real(self) -> dtype:
        """The dtype of a complex dtype's parts (complex64 -> float32); others are their own."""
        return real_of(self)

    def __repr__(self) -> str:
        return "chainrule." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


class _ExtDtype(dtype):
    """A dtype whose NumPy type comes from the ``ml_dtypes`` package (bfloat16, float8_*).

    ``np`` is filled in on first use, which imports ml_dtypes, so that ``import chainrule``
    does not load it (an array of such a dtype can only exist once it is loaded).
    """

    __slots__ = ()

    def __init__(self, name: str, itemsize: builtins.int, signed: builtins.bool = True) -> None:
        self.name = name
        self._category = 2
        self.is_floating_point = True
        self.is_signed = signed
        self.itemsize = itemsize

    def __getattr__(self, attr: str) -> object:
        if attr != "np":
            raise AttributeError(attr)
        _load_extensions()
        return self.np


float16 = dtype("float16", np.float16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
uint16 = dtype("uint16", np.dtype(np.uint16), 1)
uint32 = dtype("uint32", np.dtype(np.uint32), 1)
uint64 = dtype("uint64", np.dtype(np.uint64), 1)
bfloat16 = _ExtDtype("bfloat16", 2)
float8_e4m3fn = _ExtDtype("float8_e4m3fn", 1)
float8_e5m2 = _ExtDtype("float8_e5m2", 1)
float8_e4m3fnuz = _ExtDtype("float8_e4m3fnuz", 1)
float8_e5m2fnuz = _ExtDtype("float8_e5m2fnuz", 1)
float8_e8m0fnu = _ExtDtype("float8_e8m0fnu", 1, signed=False)
bool = dtype("bool", np.bool_, 0)  # noqa: A001 - torch.bool is the public name
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)
cfloat, cdouble = complex64, complex128
half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001

_ALL = (
    float16,
    float32,
    float64,
    uint8,
    int8,
    int16,
    int32,
    int64,
    bool,
    uint16,
    uint32,
    uint64,
    complex64,
    complex128,
)
_EXTS = (bfloat16, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
_FLOAT8 = _EXTS[1:]
_BIG_UINTS = (uint16, uint32, uint64)
_BY_NP: dict[np.dtype, dtype] = {d.np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL + _EXTS}
_TORCH_C_NAMES = {
    "uint16": "UInt16",
    "uint32": "UInt32",
    "uint64": "UInt64",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "bool": "Bool",
    "bfloat16": "BFloat16",
    "float8_e4m3fn": "Float8_e4m3fn",
    "float8_e5m2": "Float8_e5m2",
    "float8_e4m3fnuz": "Float8_e4m3fnuz",
    "float8_e5m2fnuz": "Float8_e5m2fnuz",
    "float8_e8m0fnu": "Float8_e8m0fnu",
}


_ABBR = {
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "bfloat16": "bf16",
    "complex64": "c64",
    "complex128": "c128",
    "complex32": "c32",
    "bool": "b8",
    **{f"int{n}": f"i{n}" for n in (8, 16, 32, 64)},
    **{f"uint{n}": f"u{n}" for n in (8, 16, 32, 64)},
    **{
        n: n.replace("float8_", "f8").replace("float4_", "f4").replace("_x2", "x2")
        for n in (
            "float8_e4m3fn",
            "float8_e5m2",
            "float8_e4m3fnuz",
            "float8_e5m2fnuz",
            "float8_e8m0fnu",
            "float4_e2m1fn_x2",
        )
    },
    "bits16": "b16x1",
    "bits8": "b8x1",
    "bits1x8": "b1x8",
    "bits2x4": "b2x4",
    "bits4x2": "b4x2",
}


# The C++ element types of NumPy dtype names, as PyTorch's kernel messages print them
# ("Found dtype Float but expected double", "'long int' to a ...").
CPP_NAMES = {
    "float64": "double",
    "float32": "float",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def c_name(d: dtype) -> str:
    """PyTorch's C++ name of a dtype's scalar type (``Float``, ``Long``, ``UInt1``), as its
    messages print it."""
    n = d.name
    if n in _TORCH_C_NAMES:
        return _TORCH_C_NAMES[n]
    if n.startswith("uint"):
        return "UInt" + n[4:]
    return n[0].upper() + n[1:]


_LOADED: list[builtins.bool] = []


def _load_extensions() -> None:
    """Import ml_dtypes (a runtime dependency, loaded on first use) and register its dtypes."""
    if _LOADED:
        return
    import ml_dtypes

    for d in _EXTS:
        npd = np.dtype(getattr(ml_dtypes, d.name))
        object.__setattr__(d, "np", npd)
        _BY_NP[npd] = d
        _kinds.category(npd)  # registers its dtype number for the fast paths
    _LOADED.append(True)


def _dtype_by_name(name: str) -> dtype:
    return _BY_NAME[name]


_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of floating tensors built from Python floats (float32 unless changed)."""
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype; only float32 and float64 are accepted, as in PyTorch."""
    d = to_dtype(d)
    if d in _FLOAT8:
        raise TypeError(f"couldn't find storage object {_TORCH_C_NAMES[d.name]}Storage")
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def from_np(np_dtype: np.dtype) -> dtype:
    """The chainrule dtype for a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        d = np.dtype(np_dtype)
        if d in _BY_NP:
            return _BY_NP[d]
        if d.num >= 256 and getattr(d.type, "__module__", "") == "ml_dtypes":
            _load_extensions()
            if d in _BY_NP:
                return _BY_NP[d]
        raise TypeError(
            f"can't convert np.ndarray of type {d}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, "
            "and bool."
        ) from None


def to_dtype(d: object) -> dtype:
    """Accept a chainrule dtype, a NumPy dtype, a Python type or a dtype name."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return get_default_dtype()
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    if isinstance(d, type) and getattr(d, "__module__", "") == "ml_dtypes":
        return from_np(np.dtype(d))
    try:
        return from_np(np.dtype(d))  # type: ignore[arg-type]
    except TypeError:
        msg = f"expected a chainrule dtype such as chainrule.float32, got {d!r}"
        raise TypeError(msg) from None


# The error where a tensor of complex32 would be made (chainrule/_shell_dtypes.py).
NO_COMPLEX32 = (
    "chainrule cannot make tensors of dtype torch.complex32 (chalf): NumPy has no 32-bit "
    "complex type; use complex64"
)


def promote_types(a: dtype, b: dtype) -> dtype:
    """PyTorch's promote_types: the higher category wins; within one, NumPy's rule."""
    if a is b:
        return a
    if a in _FLOAT8 or b in _FLOAT8:
        raise RuntimeError(
            "Promotion for Float8 Types is not supported, attempted to promote "
            f"{_TORCH_C_NAMES[a.name]} and {_TORCH_C_NAMES[b.name]}"
        )
    if a in _BIG_UINTS or b in _BIG_UINTS:
        if not (a.is_floating_point or b.is_floating_point):
            raise RuntimeError(
                "Promotion for uint16, uint32, uint64 types is not supported, attempted to "
                f"promote {_TORCH_C_NAMES[a.name]} and {_TORCH_C_NAMES[b.name]}"
            )
    if a._category == b._category == 3:  # complex32 has no NumPy type: the wider wins
        return a if a.itemsize >= b.itemsize else b
    if a._category != b._category:
        hi, lo = (a, b) if a._category > b._category else (b, a)
        if hi._category == 3 and lo._category == 2:
            return complex_of(lo) if lo.itemsize * 2 > hi.itemsize else hi
        return hi
    return _BY_NP[np.promote_types(a.np, b.np)]


def complex_of(d: dtype) -> dtype:
    """The complex dtype holding ``d``'s precision: float64 -> complex128, other floats (and
    complex64) -> complex64; complex128 stays."""
    return complex128 if d is float64 or d is complex128 else complex64


def real_of(d: dtype) -> dtype:
    """The real dtype of a complex one's parts (complex64 -> float32); other dtypes stay."""
    if d is complex64:
        return float32
    if d is complex128:
        return float64
    return d


def _scalar_dtype(v: object) -> dtype:
    if isinstance(v, builtins.bool):
        return bool
    if isinstance(v, builtins.int):
        return int64
    if isinstance(v, builtins.complex):
        return complex_of(get_default_dtype())
    return get_default_dtype()


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # Mirrors PyTorch's combine_categories: a lower-priority operand only matters when its
    # category is higher than the higher-priority one's.
    if higher is None:
        return lower
    if lower is None or higher._category >= lower._category:
        if higher is bool and lower is not None:
            return promote_types(higher, lower)
        return higher
    if higher.is_floating_point:  # a complex lower tier: the complex type of that precision
        return complex_of(higher)
    return promote_types(higher, lower)


def result_type(*operands: object) -> dtype:
    """Result dtype of an op over tensors and Python scalars, by PyTorch's three-tier rule.

    Dimensioned tensors outrank 0-dim tensors, which outrank Python scalars; a lower tier
    changes the result only when its category (bool < int < float) is higher.
    """
    dim_r = zero_r = wrap_r = None
    for o in operands:
        data = getattr(o, "_data", None)
        if data is not None:
            d = _BY_NP[data.dtype]
            if data.ndim:
                dim_r = d if dim_r is None else promote_types(dim_r, d)
            else:
                zero_r = d if zero_r is None else promote_types(zero_r, d)
        elif o is not None:
            d = _scalar_dtype(o)
            wrap_r = d if wrap_r is None else promote_types(wrap_r, d)
    r = _combine(dim_r, _combine(zero_r, wrap_r))
    assert r is not None
    return r


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """PyTorch's can_cast: a cast is allowed unless it lowers the category (float -> integer,
    integer or float -> bool)."""
    return to_dtype(from_)._category <= to_dtype(to)._category
