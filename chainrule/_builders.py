"""Tensor builders of the torch namespace that ``_creation`` does not hold: ``logspace``, the
deprecated inclusive ``range``, and the memory-sharing conversions ``asarray`` and
``frombuffer``."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

__all__ = [
    "logspace",
    "range",
    "asarray",
    "frombuffer",
]

# Ranges ----------------------------------------------------------------------------------


def logspace(
    start: Any,
    end: Any,
    steps: int,
    base: float = 10.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """``steps`` values base**x for x evenly spaced from ``start`` to ``end``."""
    from chainrule._creation import tensor
    from chainrule._dtype import get_default_dtype

    steps = int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start = start.item() if hasattr(start, "_data") else start
    end = end.item() if hasattr(end, "_data") else end
    dt = dtype if dtype is not None else get_default_dtype()
    x = np.linspace(float(start), float(end), steps)
    vals = np.power(float(base), x)
    if not dt.is_floating_point:
        vals = np.floor(vals + 0.0)  # PyTorch truncates integer results
    out = tensor(vals, dtype=dt, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def range(
    start: Any = 0,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """Deprecated: values from ``start`` to ``end`` *inclusive* in steps of ``step``, in the
    default float dtype (warns; use ``arange``)."""
    from chainrule._creation import tensor
    from chainrule._dtype import get_default_dtype

    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
        "which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if hasattr(v, "_data") else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    vals = start + step * np.arange(n, dtype=np.float64)
    out = tensor(vals, dtype=dtype if dtype is not None else get_default_dtype(), device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


# Conversions -----------------------------------------------------------------------------


def asarray(
    obj: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
    requires_grad: bool = False,
) -> Any:
    """``obj`` as a tensor, sharing memory when it can: a tensor is returned itself (or
    converted), a NumPy array or buffer is wrapped without a copy unless ``copy=True`` or a
    dtype change needs one; ``copy=False`` raises when a copy would be needed."""
    from chainrule._creation import as_tensor, tensor
    from chainrule._tensor import Tensor

    if isinstance(obj, Tensor):
        out = obj if dtype is None else obj.to(dtype)
        if device is not None:
            out = out.to(device)
        if copy:
            out = out.clone() if out is obj else out
        elif copy is False and out is not obj:
            raise ValueError("can't alias tensor to the given dtype or device without a copy")
    elif (
        isinstance(obj, np.ndarray)
        or hasattr(obj, "__array_interface__")
        or (isinstance(obj, (bytes, bytearray, memoryview)))
    ):
        arr = np.asarray(memoryview(obj) if isinstance(obj, (bytes, bytearray)) else obj)
        if copy:
            out = tensor(arr, dtype=dtype, device=device)
        else:
            out = as_tensor(arr, dtype=dtype, device=device)
            if copy is False and not np.may_share_memory(out._data, arr):
                raise ValueError(
                    "can't alias NumPy arrays with the given dtype or device without a copy"
                )
    else:
        if copy is False:
            raise ValueError("can't alias a Python sequence without a copy")
        out = tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def frombuffer(
    buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False
) -> Any:
    """A 1-D tensor over the bytes of ``buffer`` (sharing its memory): ``count`` elements of
    ``dtype`` (-1: all) from byte ``offset``."""
    from chainrule._tensor import _new_tensor

    mv = memoryview(buffer)
    nbytes = mv.nbytes
    item = dtype.itemsize if hasattr(dtype, "itemsize") else np.dtype(dtype.np).itemsize
    if offset < 0 or offset >= nbytes and nbytes:
        raise ValueError(
            f"both buffer length ({nbytes}) and offset ({offset}) must be "
            "positive and offset must be less than buffer length"
        )
    avail = nbytes - offset
    if count <= 0 and count != -1:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if count == -1:
        if avail % item:
            raise ValueError(
                f"buffer length ({avail} bytes) after offset ({offset} bytes) must "
                f"be a multiple of element size ({item})"
            )
        count = avail // item
    if count * item > avail:
        raise ValueError(
            f"requested buffer length ({count} * {item} bytes) after offset "
            f"({offset} bytes) must not be greater than actual buffer length "
            f"({nbytes} bytes)"
        )
    if mv.readonly:
        warnings.warn(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.",
            UserWarning,
            stacklevel=2,
        )
    arr = np.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)
    out = _new_tensor(arr)
    if requires_grad:
        out.requires_grad_(True)
    return out
