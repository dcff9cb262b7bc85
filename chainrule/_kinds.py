"""Element-kind tests on arrays and dtypes: the one place that says what counts as floating,
complex, integral or boolean.

NumPy's ``dtype.kind`` is not enough: the extension dtypes of the ``ml_dtypes`` package
(bfloat16 and the float8 formats) report kind ``"V"`` (void), or ``"f"`` for some, and are
told apart by their dtype number, which NumPy gives user-defined dtypes from 256 on
(``NPY_USERDEF``). Every check of an element kind in chainrule goes through these functions
(Note [element kinds]), so that a dtype that NumPy does not know natively is treated as
PyTorch treats it.

Note [element kinds]
    ``category(x)`` is 0 for bool, 1 for integers, 2 for floating types (NumPy's and
    ml_dtypes'), 3 for complex, and -1 for anything else (object, strings, structured or
    date types). ``x`` may be an array (NumPy or CuPy), a Tensor, a NumPy dtype or scalar
    type, or a chainrule dtype. ``is_extension(x)`` is true for the ml_dtypes formats, whose
    arithmetic chainrule runs in float32 (see ops/_ext_dtypes.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "category",
    "is_floating",
    "is_complex",
    "is_inexact",
    "is_integral",
    "is_bool",
    "is_extension",
    "CATEGORY_BY_NUM",
    "INEXACT_NUMS",
    "astype",
]

_KIND_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}

# Category by dtype number, for the hot paths (ops/_apply.py): NumPy's own dtypes are filled
# here; an extension dtype is added, as -1, by ``_register_extension`` the first time it is seen,
# and uint16/32/64 are -1 too (the fast paths send category -1 to the general path, which
# computes the extension dtypes in float32 and runs only PyTorch's ops on the big uints).
CATEGORY_BY_NUM: dict[int, int] = {}
for _c in np.typecodes["All"]:
    try:
        _d = np.dtype(_c)
    except TypeError:
        continue
    CATEGORY_BY_NUM[_d.num] = _KIND_CATEGORY.get(_d.kind, -1)
CATEGORY_BY_NUM[np.dtype(np.bool_).num] = 0
_CAT_NUM: dict[int, int] = dict(CATEGORY_BY_NUM)  # true categories, extension dtypes included
for _u in (np.uint16, np.uint32, np.uint64):  # Note [big unsigned integers] (ops/_ext_dtypes.py)
    CATEGORY_BY_NUM[np.dtype(_u).num] = -1
# The dtype numbers of the floating and complex types (those whose results require grad), for
# the node-building hot path (ops/_record.py): `out.dtype.num in INEXACT_NUMS`.
INEXACT_NUMS: set[int] = {n for n, c in CATEGORY_BY_NUM.items() if c >= 2}

_EXT: dict[np.dtype, int] = {}  # extension dtype -> its category (2 floating, 1 integer)


def _register_extension(d: np.dtype) -> int:
    """The category of a user-defined dtype (dtype number >= 256), remembered."""
    c = _EXT.get(d)
    if c is not None:
        return c
    name = d.name
    ml = getattr(d.type, "__module__", "") == "ml_dtypes"
    if ml and (name.startswith("float") or name.startswith("bfloat")):
        c = 2
    elif ml and "int" in name:
        c = 1
    else:
        c = -1
    _EXT[d] = c
    _CAT_NUM[d.num] = c
    if c == 2:
        INEXACT_NUMS.add(d.num)
    CATEGORY_BY_NUM[d.num] = -1
    return c


def _slow(x: Any, d: Any) -> int:
    if isinstance(x, type):  # a scalar type such as np.float32 (its .dtype is a descriptor)
        d = x
    cat = getattr(d, "_category", None)  # a chainrule dtype (Tensor.dtype gives one)
    if cat is not None:
        return cat
    if not isinstance(d, np.dtype):
        d = np.dtype(d)
    if d.num >= 256:
        return _register_extension(d)
    return _KIND_CATEGORY.get(d.kind, -1)


def category(x: Any) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex, -1 other (Note [element kinds])."""
    d = getattr(x, "dtype", x)
    try:
        return _CAT_NUM[d.num]
    except (AttributeError, KeyError):
        return _slow(x, d)


def is_floating(x: Any) -> bool:
    """True for a real floating type: float16/32/64, bfloat16 and the float8 formats."""
    d = getattr(x, "dtype", x)
    try:
        return _CAT_NUM[d.num] == 2
    except (AttributeError, KeyError):
        return _slow(x, d) == 2


def is_complex(x: Any) -> bool:
    """True for a complex type."""
    d = getattr(x, "dtype", x)
    try:
        return _CAT_NUM[d.num] == 3
    except (AttributeError, KeyError):
        return _slow(x, d) == 3


def is_inexact(x: Any) -> bool:
    """True for a floating or complex type (the types that can require grad)."""
    d = getattr(x, "dtype", x)
    try:
        return _CAT_NUM[d.num] >= 2
    except (AttributeError, KeyError):
        return _slow(x, d) >= 2


def is_integral(x: Any, include_bool: bool = False) -> bool:
    """True for a signed or unsigned integer type (and for bool when ``include_bool``)."""
    d = getattr(x, "dtype", x)
    try:
        c = _CAT_NUM[d.num]
    except (AttributeError, KeyError):
        c = _slow(x, d)
    return c == 1 or (include_bool and c == 0)


def is_bool(x: Any) -> bool:
    """True for the boolean type."""
    d = getattr(x, "dtype", x)
    try:
        return _CAT_NUM[d.num] == 0
    except (AttributeError, KeyError):
        return _slow(x, d) == 0


def is_extension(x: Any) -> bool:
    """True for a user-defined NumPy dtype (the ml_dtypes formats: bfloat16, float8_*)."""
    d = x if isinstance(x, type) else getattr(x, "dtype", x)
    num = getattr(d, "num", None)
    if num is None:
        num = np.dtype(getattr(d, "np", d)).num
    return num >= 256


_E4M3FN_MAX = 448.0
_E8M0_MIN = np.float32(2.0**-127)  # the smallest float8_e8m0fnu value, a float32 subnormal


def astype(a: Any, dtype: Any) -> Any:
    """``a.astype(dtype)``, converting to the float8 formats as PyTorch does where ml_dtypes
    differs: float8_e4m3fn saturates out-of-range values and infinities to +-448 (ml_dtypes
    gives NaN), and float8_e8m0fnu (a power of two, no sign) takes the magnitude and maps zero
    and subnormals to its smallest value 2**-127 (ml_dtypes gives NaN)."""
    d = np.dtype(dtype)
    if d.num >= 256 and category(a) == 2:
        name = d.name
        if name == "float8_e4m3fn":
            a = np.clip(a.astype(np.float32), -_E4M3FN_MAX, _E4M3FN_MAX)
        elif name == "float8_e8m0fnu":
            m = np.abs(a.astype(np.float32))
            a = np.where(m < np.finfo(np.float32).tiny, _E8M0_MIN, m)
    return a.astype(d)
