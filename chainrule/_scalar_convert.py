"""PyTorch's conversion of a Python complex Scalar to a tensor's dtype, shared by every op that
stores or scales by a number (``fill_``, ``full``, ``masked_fill``, ``x[i] = v``, a scalar
``value``/``alpha``/``weight``/``min``): a complex number with a nonzero imaginary part cannot
become a real or integer element, and PyTorch says so (c10::checked_convert's message) instead
of dropping the imaginary part as NumPy does. It sits in the lowest layer (it imports nothing
of chainrule) so that creation functions, ops and in-place ops all reach it without a cycle.
Callers test ``type(value) is complex`` first: a real scalar pays one type check.
"""

from __future__ import annotations

from typing import Any

__all__ = ["complex_scalar_value"]

# PyTorch's C++ names of the types a Scalar is converted to.
_CTYPE = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int8": "int8_t",
    "uint8": "uint8_t",
    "int16": "int16_t",
    "uint16": "uint16_t",
    "int32": "int",
    "uint32": "uint32_t",
    "int64": "int64_t",
    "uint64": "uint64_t",
    "float8_e4m3fn": "c10::Float8_e4m3fn",
    "float8_e5m2": "c10::Float8_e5m2",
    "float8_e4m3fnuz": "c10::Float8_e4m3fnuz",
    "float8_e5m2fnuz": "c10::Float8_e5m2fnuz",
}


def complex_scalar_value(value: complex, dtype: Any) -> Any:
    """The number that the Python complex ``value`` is stored as in an array of NumPy
    ``dtype``: ``value`` itself for a complex or bool dtype; its real part where its imaginary
    part is zero (truncated to an int for an integer dtype); otherwise PyTorch's RuntimeError
    ("value cannot be converted to type float without overflow"; a NaN imaginary part is
    nonzero, as is a NaN or infinite real part for an integer dtype). ``dtype`` may instead be
    a C++ type name, for ops that take their scalar as a ``double`` whatever the tensor's
    dtype (``clamp``'s bounds)."""
    # (dtype.kind is safe for these tests: ml_dtypes' formats report "V" or "f", never a
    # complex, bool or integer kind; this lowest-layer module does not import _kinds)
    if isinstance(dtype, str):
        ctype = dtype
    else:
        if dtype.kind in "cb":
            return value
        ctype = _CTYPE.get(dtype.name, dtype.name)
    if value.imag == 0:
        r = value.real
        if isinstance(dtype, str) or dtype.kind not in "iu":
            return r
        if r == r and abs(r) != float("inf"):
            return int(r)  # truncated, as PyTorch's conversion to an integer type
    raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
