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

__all__ = [
    "complex_scalar_value",
    "checked_scalar",
    "check_scalar_int",
    "int_fits",
    "int_operand",
    "pow_exponent",
    "nan_to_num_args",
]

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
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
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


# Note [checked scalar conversion]
# PyTorch converts a Python int or float Scalar to the dtype it is stored in or scaled by
# (fill_, full, masked_fill, x[i] = v, clamp's bounds, alpha, addcmul's value) with
# c10::checked_convert, which refuses a value outside the dtype's range: "value cannot be
# converted to type float without overflow". inf and NaN pass into a floating dtype (not
# into an integer one); a float into an integer dtype must lie within [min, max] and is then
# truncated; a negative int into an unsigned dtype wraps if its magnitude fits (uint8 takes
# -255..255: -1 is 255); a bool dtype takes anything. Before that, the Python int must fit a
# 64-bit Scalar at all: above 2**64 - 1 "int too big to convert", below -2**63 "can't
# convert negative int to unsigned" (the OverflowErrors of PyTorch's argument parser). The
# common case costs one dict lookup and a chained comparison (``_FAST`` holds each dtype's
# range, narrowed to what an int Scalar can hold); NaN, inf and values out of range take the
# slow path.

_INT_LO, _INT_HI = -(2**63), 2**64 - 1
_FLOAT_MAX = {
    "float32": 3.4028234663852886e38,
    "complex64": 3.4028234663852886e38,
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float64": float("inf"),
    "complex128": float("inf"),
}
_FAST: dict[Any, tuple[Any, Any]] = {}  # NumPy dtype -> its fast-path range


def _range(dtype: Any) -> tuple[Any, Any, bool]:
    """``dtype``'s (lowest, largest, is_integer); a bool or unknown dtype: no limit."""
    name = dtype.name
    if name in _FLOAT_MAX:
        m = _FLOAT_MAX[name]
        return -m, m, False
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        if dtype.kind == "u":
            return 0, 2**bits - 1, True
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1, True
    if dtype.kind == "b":  # (any number; the fast path leaves the int64 range to the slow one)
        return -(2**63), 2**63 - 1, False
    inf = float("inf")
    return -inf, inf, False


def checked_scalar(value: Any, dtype: Any) -> Any:
    """The Python int or float ``value`` (not a bool) as PyTorch converts it to NumPy
    ``dtype`` (Note [checked scalar conversion]): ``value`` itself when in range, a wrapped
    int for a negative value into an unsigned dtype, else PyTorch's RuntimeError (or, for an
    int no 64-bit Scalar holds, its OverflowError)."""
    try:
        lo, hi = _FAST[dtype]
    except KeyError:
        lo, hi, _ = _range(dtype)
        lo, hi = _FAST[dtype] = (max(lo, _INT_LO), min(hi, _INT_HI))
    if lo <= value <= hi:
        return value
    return _checked_slow(value, dtype)


def check_scalar_int(value: int) -> None:
    """PyTorch's OverflowError for a Python int that no 64-bit Scalar holds."""
    if value > _INT_HI:
        raise OverflowError("int too big to convert")
    if value < _INT_LO:
        raise OverflowError("can't convert negative int to unsigned")


def _checked_slow(value: Any, dtype: Any) -> Any:
    if type(value) is int:
        check_scalar_int(value)
    lo, hi, is_int = _range(dtype)
    if dtype.kind == "b":
        return value != 0  # (NaN is True, as a C++ cast to bool)
    if type(value) is int:
        if lo <= value <= hi:
            return value
        if lo == 0 and value < 0 and -value <= hi:
            return value + hi + 1  # two's complement wrap into the unsigned dtype
    elif value != value:  # NaN
        if not is_int:
            return value
    elif abs(value) == float("inf"):
        if not is_int:
            return value
    elif lo <= value <= hi:
        return int(value) if is_int else value
    ctype = _CTYPE.get(dtype.name, dtype.name)
    raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")


# Note [int operands of binary ops]
# A Python int operand of a binary op (``x + 300``, ``x < 2**63``, ``torch.mul(x, n)``) becomes
# a wrapped-number Scalar in PyTorch: int64, or uint64 for 2**63 ... 2**64 - 1 (the parser's
# OverflowError outside that, check_scalar_int), then a 0-dim tensor that takes the op's
# computation dtype by a plain C++ cast, with no range check: into an integer dtype it wraps
# modulo 2**bits (int8: 300 is 44, -129 is 127; uint8: -1 is 255, so ``x < -1`` is x < 255),
# into a floating one it rounds (float16: 2**63 is inf). NumPy instead refuses an int out of an
# integer dtype's range (OverflowError) and compares mathematically, so such an operand is
# converted here first. A bool tensor with a uint64 Scalar fails PyTorch's promotion. The
# fast paths of ops/_apply.py pass ints in 0..127 untested; others ask ``int_fits`` (one dict
# lookup) and, outside the dtype's range, go to the general path, which calls int_operand
# with the dtype the op computes in. pow's scalar exponent is checked instead
# (``pow_exponent``).

_FITS: dict[Any, tuple[int, int]] = {}  # NumPy dtype -> the ints that pass unconverted


def int_fits(value: int, dtype: Any) -> bool:
    """Whether the Python int ``value`` is an operand NumPy computes with as PyTorch does, for
    a tensor of NumPy ``dtype`` (Note [int operands of binary ops])."""
    try:
        lo, hi = _FITS[dtype]
    except KeyError:
        if dtype.kind in "iu":
            lo, hi, _ = _range(dtype)
        elif dtype.kind == "b":  # (computed in int64)
            lo, hi = _INT_LO, 2**63 - 1
        else:
            lo, hi = _INT_LO, _INT_HI
        _FITS[dtype] = (lo, hi)
    return lo <= value <= hi


_BOOL_UINT64 = (
    "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote Bool "
    "and UInt64"
)


def int_operand(value: int, dtype: Any, tensor_kind: str) -> int:
    """The Python int ``value`` as PyTorch takes it as the operand of a binary op computed in
    NumPy ``dtype`` with tensors of kind ``tensor_kind`` (``dtype.kind`` before promotion):
    wrapped into an integer ``dtype``, unchanged otherwise; PyTorch's errors for an int no
    64-bit Scalar holds and for a uint64 one with bool tensors (Note [int operands of binary
    ops])."""
    check_scalar_int(value)
    if tensor_kind == "b" and value > 2**63 - 1:
        raise RuntimeError(_BOOL_UINT64)
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        v = value & ((1 << bits) - 1)
        if dtype.kind == "i" and v >> (bits - 1):
            v -= 1 << bits
        return v
    return value


def pow_exponent(value: Any, dtype: Any) -> Any:
    """pow's Python-number exponent for a result of NumPy ``dtype``, as PyTorch checks it (it
    converts the exponent with c10::checked_convert for an integer, float16 or bfloat16
    result, not by a plain cast): an int above the int64 range is refused for an integer or
    bool result, a negative int for an integer one ("Integers to negative integer powers are
    not allowed."), any number outside the dtype's range (float16: 70000) with the conversion
    error."""
    if type(value) is int:
        check_scalar_int(value)
        if dtype.kind in "iub":
            if value > 2**63 - 1:
                raise RuntimeError("value cannot be converted to type int64_t without overflow")
            if value < 0 and dtype.kind != "b":
                raise RuntimeError("Integers to negative integer powers are not allowed.")
    if dtype.kind == "b" or (dtype.kind in "fc" and dtype.itemsize >= 4):
        return value  # (float32, float64 and complex exponents are not range-checked)
    return checked_scalar(value, dtype)


_NTN_NAMES = ("nan", "posinf", "neginf")


def nan_to_num_args(
    fname: str, before: int, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Any, Any]:
    """``nan``, ``posinf`` and ``neginf`` from a call's positional ``args`` (``before``
    positional arguments came first: 1 for ``torch.nan_to_num(input, ...)``, 0 for the
    methods) and ``kwargs``, with the errors of PyTorch's argument parser for ``fname``. A
    number (int, bool, float) or None costs one type test each."""
    if kwargs or len(args) > 3:
        vals = _ntn_bind(fname, before, args, kwargs)
    else:
        vals = args + (0.0, None, None)[len(args) :]
    nan, posinf, neginf = vals
    for i, v in enumerate(vals):
        t = type(v)
        if t is not float and v is not None and t is not int and t is not bool:
            pos = before + 1 + i if i < len(args) else None
            v = _ntn_value(fname, _NTN_NAMES[i], pos, v)
            if i == 0:
                nan = v
            elif i == 1:
                posinf = v
            else:
                neginf = v
    return (0.0 if nan is None else nan), posinf, neginf


def _ntn_bind(
    fname: str, before: int, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, Any, Any]:
    if len(args) > 3:
        raise TypeError(
            f"{fname}() takes from {before} to {before + 3} positional arguments but "
            f"{before + len(args)} were given"
        )
    vals = list(args + (0.0, None, None)[len(args) :])
    for k, v in kwargs.items():
        if k not in _NTN_NAMES:
            raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")
        i = _NTN_NAMES.index(k)
        if i < len(args):
            raise TypeError(f"{fname}() got multiple values for argument '{k}'")
        vals[i] = v
    return vals[0], vals[1], vals[2]


def _ntn_value(fname: str, name: str, pos: int | None, v: Any) -> Any:
    """A value that is not a Python number: a 0-dim tensor or a NumPy real scalar is read as
    a double (a complex 0-dim tensor with PyTorch's conversion error); anything else raises
    the parser's TypeError, "(position N)" when it was given positionally."""
    import numbers

    data = getattr(v, "_data", None)
    if data is not None and getattr(data, "ndim", 1) == 0:
        if data.dtype.kind == "c":
            return complex_scalar_value(complex(data.item()), "double")
        return float(data.item())
    if isinstance(v, numbers.Real):
        return float(v)
    where = f" (position {pos})" if pos is not None else ""
    tname = "Tensor" if data is not None else type(v).__name__
    raise TypeError(f"{fname}(): argument '{name}'{where} must be float, not {tname}")
