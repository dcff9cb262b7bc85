"""Tensor factories: ``tensor``, ``zeros``, ``randn`` and friends, with PyTorch's dtype
inference (Python floats give the default dtype, ints int64, bools bool).

Why this file is over 600 lines: it is torch's factory surface (about 40 public factories with
their dtype, device, layout and ``out=`` handling), one short function each."""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from chainrule import _dispatch, _dtype, _kinds
from chainrule._device import _DEFAULT as _DEFAULT_DEVICE
from chainrule._device import device as _device
from chainrule._grad_state import _state as _grad_state
from chainrule._scalar_convert import checked_scalar, complex_scalar_value
from chainrule._tensor import (
    REQUIRES_GRAD_DTYPE_MSG,
    Size,
    Tensor,
    _mark_inference,
    _new_tensor,
)
from chainrule.backends import backend_of, get_backend

if TYPE_CHECKING:
    from chainrule._random import Generator


def rng_of(generator: Any, device: Any = None) -> Any:
    """The NumPy generator behind ``generator`` (or the default one of ``device``, the
    default device when None: the CPU's, or a GPU's, Note [one generator per GPU] in
    _random.py). ``device`` may also be the Tensor (or array) the draws are for: its device.
    Every random draw of chainrule picks its generator here (and PyTorch's error for a
    generator of the other device kind is raised here). ``chainrule._random`` (and with it
    ``numpy.random``, a sixth of the import time) loads on first use."""
    from chainrule._random import rng_of as _rng_of

    return _rng_of(generator, _draw_index(device))


def _draw_index(where: Any) -> int | None:
    """The GPU index whose generator draws for ``where`` (a Tensor, an array, a device or
    None for the default device), or None for the CPU's."""
    if isinstance(where, Tensor):
        where = where._data
    if isinstance(where, np.ndarray):
        return None
    if hasattr(where, "__array_namespace__") or hasattr(where, "__cuda_array_interface__"):
        return backend_of(where).device_index(where)
    return cuda_index_of(where)


def cuda_index_of(device: Any) -> int | None:
    """The GPU index of ``device`` (None: the default device; ``'cuda'``: the current GPU),
    or None for the CPU."""
    if device is None:
        device = _DEFAULT_DEVICE[0]
        if device is None:
            return None
    d = _device(device)
    if d.type != "cuda":
        return None
    if d.index is not None:
        return d.index
    be: Any = get_backend("cuda")
    return be.current_device()


__all__ = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "full",
    "empty",
    "arange",
    "linspace",
    "eye",
    "rand",
    "randn",
    "randint",
    "randperm",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "scalar_tensor",
]


class _NotNumbers(Exception):
    """Raised inside _to_array's recursion; the caller turns it into PyTorch's error."""


def _to_array(data: Any) -> np.ndarray:
    """Nested sequences of numbers and tensors to a NumPy array (dtype as NumPy infers)."""
    try:
        return _to_array_rec(data)
    except _NotNumbers:
        raise _not_numbers(data) from None


def _to_array_rec(data: Any) -> np.ndarray:
    if isinstance(data, Tensor):
        return np.asarray(data._backend.to_host(data._data))
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, (list, tuple)):
        if any(isinstance(e, (Tensor, list, tuple)) for e in data):
            parts = [_to_array_rec(e) for e in data]
            if parts and any(p.shape != parts[0].shape for p in parts):
                odd = next(p for p in parts if p.shape != parts[0].shape)
                raise ValueError(
                    f"expected sequence of length {parts[0].shape[0] if parts[0].ndim else 0} at "
                    f"dim 1 (got {odd.shape[0] if odd.ndim else 0})"
                )
            return np.array(parts) if parts else np.zeros((0,))
    try:
        arr = np.asarray(data)
    except ValueError as e:
        raise ValueError(str(e)) from None
    if arr.dtype.kind in "OUS":
        raise _NotNumbers
    return arr


def _not_numbers(data: Any) -> Exception:
    """PyTorch's error for data holding something other than numbers: a string where a
    sequence's first element is expected reads as one more dimension; any other string, None
    or object is named by its type."""
    first = data
    while isinstance(first, (list, tuple)) and len(first):
        first = first[0]
    if first is not data and isinstance(first, (str, bytes)):
        return ValueError(f"too many dimensions '{type(first).__name__}'")
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, (list, tuple)):
            stack.extend(reversed(d))
        elif not isinstance(d, (numbers.Number, np.generic, Tensor)):
            if isinstance(d, (str, bytes)):
                return TypeError(f"new(): invalid data type '{type(d).__name__}'")
            return RuntimeError(f"Could not infer dtype of {type(d).__name__}")
    return RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def _infer(arr: np.ndarray, from_python: bool) -> np.dtype:
    if from_python or arr.dtype not in _dtype._BY_NP:
        if _kinds.is_floating(arr) and not _kinds.is_extension(arr):
            return _dtype.get_default_dtype().np
        if _kinds.is_integral(arr):
            return np.dtype(np.int64)
        if _kinds.is_bool(arr):
            return np.dtype(np.bool_)
        if _kinds.is_complex(arr) and from_python:
            return _dtype.complex_of(_dtype.get_default_dtype()).np
    _dtype.from_np(arr.dtype)
    return arr.dtype


def _finish(data: np.ndarray, device: Any, requires_grad: bool) -> Tensor:
    if device is None:
        device = _DEFAULT_DEVICE[0]
    if device is not None and _device(device).type != "cpu":
        be = get_backend(device)
        data = be.asarray(data, device=_device(device).index)
    t = _new_tensor(data)
    if requires_grad:
        if not _kinds.is_inexact(data):
            raise RuntimeError(REQUIRES_GRAD_DTYPE_MSG)
        t._requires_grad = True
    if _grad_state.inference:
        _mark_inference(t)
    return t


def tensor(
    data: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested sequence, array or tensor).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1, 2], [3, 4]])
        tensor([[1, 2],
                [3, 4]])
        >>> torch.tensor([1.5, 2.0], requires_grad=True)
        tensor([1.5000, 2.0000], requires_grad=True)
    """
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.clone()."
            "detach() or sourceTensor.clone().detach().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    from_python = not isinstance(data, (np.ndarray, Tensor))
    arr = _to_array(data)
    dt = _dtype.to_dtype(dtype).np if dtype is not None else _infer(arr, from_python)
    if from_python and _kinds.is_floating(arr) and _kinds.is_integral(dt):
        arr = np.trunc(arr)
    if dt.num >= 256:  # bfloat16, float8_*: PyTorch's conversions (_kinds.astype)
        return _finish(_kinds.astype(np.asarray(arr, dtype=np.float64), dt), device, requires_grad)
    return _finish(np.array(arr, dtype=dt, copy=True), device, requires_grad)


def scalar_tensor(
    s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A 0-dim tensor holding ``s`` (default dtype unless ``dtype``)."""
    dt = _dtype.to_dtype(dtype).np if dtype is not None else _dtype.get_default_dtype().np
    return _finish(np.array(s, dtype=dt), device, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array or tensor when no conversion is
    needed."""
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray):
        dt = _dtype.to_dtype(dtype).np if dtype is not None else data.dtype
        _dtype.from_np(dt)
        return _finish(data if data.dtype == dt else data.astype(dt), device, False)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (writes through either are seen by both)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_np(ndarray.dtype)
    return _new_tensor(ndarray)


def _size(size: Sequence[Any]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (list, tuple, Size)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(
                f"zeros(): argument 'size' must be tuple of ints, but found element of type "
                f"{type(s).__name__} at pos {len(out)}"
            )
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _size_kw(name: str, size: tuple[Any, ...], kw: Any) -> tuple[Any, ...]:
    """The shape of ``name(*size)`` or of ``name(size=kw)`` (PyTorch takes either form)."""
    if kw is None:
        return size
    if size:
        if name in ("rand", "randn"):
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got "
                f"({', '.join(type(s).__name__ for s in size)}, size={type(kw).__name__})"
            )
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    if not isinstance(kw, (list, tuple, Size)):
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not {type(kw).__name__}")
    return (kw,)


def _only_size(name: str, kw: dict[str, Any]) -> Any:
    """The ``size=`` keyword, refusing any other unknown keyword as Python would."""
    size = kw.pop("size", None)
    if kw:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
    return size


def _dt(dtype: Any) -> np.dtype:
    return (_dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()).np


def zeros(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    out: Any = None,
    **kw: Any,
) -> Tensor:
    """A tensor of zeros of shape ``size`` (default dtype float32)."""
    size = _size_kw("zeros", size, _only_size("zeros", kw))
    return _finish(np.zeros(_size(size), _dt(dtype)), device, requires_grad)


def ones(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    out: Any = None,
    **kw: Any,
) -> Tensor:
    """A tensor of ones of shape ``size``."""
    size = _size_kw("ones", size, _only_size("ones", kw))
    return _finish(np.ones(_size(size), _dt(dtype)), device, requires_grad)


def empty(
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    out: Any = None,
    **kw: Any,
) -> Tensor:
    """An uninitialised tensor of shape ``size``. Differs from torch: the memory is zeroed."""
    size = _size_kw("empty", size, _only_size("empty", kw))
    return _finish(np.zeros(_size(size), _dt(dtype)), device, requires_grad)


def full(
    size: Sequence[int],
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``; the dtype follows the value
    (bool, int64, or the default float) unless given."""
    if dtype is None:
        if isinstance(fill_value, Tensor):
            fill_value = fill_value.item()
        dt = _dtype._scalar_dtype(fill_value).np
    else:
        dt = _dt(dtype)
        if type(fill_value) is complex:  # PyTorch's error for a nonzero imaginary part
            fill_value = complex_scalar_value(fill_value, dt)
    tv = type(fill_value)
    if tv is float or tv is int:  # PyTorch's range check (Note [checked scalar conversion])
        fill_value = checked_scalar(fill_value, dt)
    return _finish(np.full(_size((size,)), fill_value, dt), device, requires_grad)


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 if all are integers."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dt = (
            np.dtype(np.int64)
            if all(isinstance(v, (int, np.integer)) for v in vals)
            else _dtype.get_default_dtype().np
        )
    else:
        dt = _dt(dtype)
    s, e, st = vals
    n = int(np.ceil((e - s) / st))
    return _finish(
        (s + np.arange(max(n, 0), dtype=np.float64) * st).astype(dt)
        if _kinds.is_floating(dt)
        else np.arange(s, e, st, dtype=dt),
        device,
        requires_grad,
    )


def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Computed as PyTorch's CPU kernel does, so the values agree to the bit: ``step = (end - start)
    / (steps - 1)`` in the output dtype (in double for integer dtypes), ``start + i * step`` for
    the first half and ``end - (steps - 1 - i) * step`` for the rest, each a fused multiply-add
    (emulated in a wider type), so both ends are exact.
    """
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool):
        raise TypeError(
            f"linspace() received an invalid combination of arguments - got steps of type "
            f"{type(steps).__name__}, but expected int steps"
        )
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _finish(_linspace_values(start, end, int(steps), _dt(dtype)), device, requires_grad)


def _linspace_values(start: Any, end: Any, steps: int, dt: Any) -> np.ndarray:
    if steps <= 1:
        return np.full(steps, start).astype(dt)
    dt = np.dtype(dt)
    if _kinds.is_floating(dt) and dt.itemsize < 4:
        # Half precision: plain arithmetic in the dtype, index included, as torch's kernel.
        h = dt.type
        s, e, step = h(start), h(end), h((h(end) - h(start)) / h(steps - 1))
        i = np.arange(steps).astype(dt)
        j = (steps - 1 - np.arange(steps)).astype(dt)
        return np.where(np.arange(steps) < steps // 2, s + i * step, e - j * step).astype(dt)
    floating = _kinds.is_floating(dt)
    # The ends are cast to the output dtype first; the step is in that dtype (double for ints).
    sdt = dt.type if floating else np.float64
    s = sdt(start) if floating else sdt(int(start))
    e = sdt(end) if floating else sdt(int(end))
    step = sdt((e - s) / sdt(steps - 1))
    # A product of two floats of the step's width is exact in the next wider type, which makes
    # `a + i * step` there rounded once, as an FMA is (long double for float64).
    wide = np.longdouble if sdt is np.float64 else np.float64
    i = np.arange(steps, dtype=wide)
    w_step = wide(step)
    lo = wide(s) + i * w_step
    hi = wide(e) - (steps - 1 - i) * w_step
    out = np.where(i < steps // 2, lo, hi).astype(np.float64)
    if floating:
        return out.astype(dt)
    return np.trunc(out).astype(np.int64).astype(dt)


def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The ``n`` x ``m`` identity matrix."""
    return _finish(np.eye(n, m, dtype=_dt(dtype)), device, requires_grad)


def rand(
    *size: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **kw: Any,
) -> Tensor:
    """Uniform samples in [0, 1) (both parts, for a complex dtype). Differs from torch:
    NumPy's generator, so other values."""
    size = _size_kw("rand", size, _only_size("rand", kw))
    dt = _dt(dtype)
    g = rng_of(generator, device)
    a = g.random(_size(size), dtype=np.float64)
    if dt.kind == "c":
        a = a + 1j * g.random(_size(size), dtype=np.float64)
    return _finish(a.astype(dt), device, requires_grad)


def randn(
    *size: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **kw: Any,
) -> Tensor:
    """Standard normal samples; for a complex dtype, real and imaginary parts each of variance
    1/2 (E|z|**2 = 1, as PyTorch). Differs from torch: NumPy's generator, so other values."""
    size = _size_kw("randn", size, _only_size("randn", kw))
    dt = _dt(dtype)
    g = rng_of(generator, device)
    a = g.standard_normal(_size(size))
    if dt.kind == "c":
        a = (a + 1j * g.standard_normal(_size(size))) * np.sqrt(0.5)
    return _finish(a.astype(dt), device, requires_grad)


def randint(
    low: int = 0,
    high: int | None = None,
    size: Sequence[int] = (),
    *args: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Integers uniform in [low, high); ``randint(high, size)`` is accepted too."""
    if args:
        raise TypeError("randint() takes (low, high, size) or (high, size)")
    if high is None or isinstance(high, (tuple, list, Size)):
        if isinstance(high, (tuple, list, Size)):
            size = high
        low, high = 0, low
    dt = _dtype.to_dtype(dtype).np if dtype is not None else np.dtype(np.int64)
    return _finish(
        rng_of(generator, device).integers(low, high, _size((size,))).astype(dt),
        device,
        requires_grad,
    )


def randperm(
    n: int, *, generator: Generator | None = None, dtype: Any = None, device: Any = None
) -> Tensor:
    """A random permutation of ``0..n-1`` (int64)."""
    dt = _dtype.to_dtype(dtype).np if dtype is not None else np.dtype(np.int64)
    return _finish(rng_of(generator, device).permutation(n).astype(dt), device, False)


def _like(
    fn: Any, t: Tensor, dtype: Any, device: Any, requires_grad: bool, *a: Any, **kw: Any
) -> Tensor:
    dt = dtype if dtype is not None else t.dtype
    return fn(*a, t.shape, dtype=dt, device=device or t.device, requires_grad=requires_grad, **kw)


def zeros_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """Zeros with ``input``'s shape, dtype and device."""
    return _like(zeros, input, dtype, device, requires_grad)


def ones_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """Ones with ``input``'s shape, dtype and device."""
    return _like(ones, input, dtype, device, requires_grad)


def empty_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """An uninitialised (zeroed) tensor with ``input``'s shape, dtype and device."""
    return _like(empty, input, dtype, device, requires_grad)


def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """``fill_value`` with ``input``'s shape, dtype and device."""
    dt = dtype if dtype is not None else input.dtype
    return full(
        input.shape,
        fill_value,
        dtype=dt,
        device=device or input.device,
        requires_grad=requires_grad,
    )


def rand_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    generator: Generator | None = None,
) -> Tensor:
    """Uniform samples with ``input``'s shape and dtype."""
    return _like(rand, input, dtype, device, requires_grad, generator=generator)


def randn_like(
    input: Tensor,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    generator: Generator | None = None,
) -> Tensor:
    """Normal samples with ``input``'s shape and dtype."""
    return _like(randn, input, dtype, device, requires_grad, generator=generator)


def randint_like(
    input: Tensor,
    low: int = 0,
    high: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Random integers with ``input``'s shape."""
    if high is None:
        low, high = 0, low
    dt = dtype if dtype is not None else input.dtype
    return randint(
        low, high, input.shape, dtype=dt, device=device or input.device, requires_grad=requires_grad
    )


# Tensor methods (new_tensor, new_zeros ...) and the legacy constructor reach these through
# chainrule/_dispatch.py: this module sits above _tensor.py.
_dispatch.register(
    _dispatch.creation, {**{n: globals()[n] for n in __all__}, "_to_array": _to_array}
)
