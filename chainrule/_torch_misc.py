"""Smaller parts of the torch namespace: the math constants, signal windows
(``hann_window`` ...), ``logspace`` and the deprecated inclusive ``range``, ``asarray`` and
``frombuffer``, the random state as a ByteTensor (``get_rng_state``/``set_rng_state``),
global switches (anomaly mode, warn-always, the default tensor type, flush-denormal) and the
build queries (``has_lapack`` ...), answered for chainrule's NumPy build.

Why this file is over 600 lines: it is a list of small, unrelated torch-level names, each a
few lines; it should be split by topic (constants and switches, windows, random state,
builders) — noted on issue 13.
"""

from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import numpy as np

__all__ = [
    "pi",
    "e",
    "inf",
    "nan",
    "newaxis",
    "hann_window",
    "hamming_window",
    "blackman_window",
    "bartlett_window",
    "kaiser_window",
    "logspace",
    "range",
    "asarray",
    "frombuffer",
    "get_rng_state",
    "set_rng_state",
    "is_storage",
    "typename",
    "set_default_tensor_type",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "set_anomaly_enabled",
    "is_warn_always_enabled",
    "set_warn_always",
    "set_flush_denormal",
    "is_vulkan_available",
    "compiled_with_cxx11_abi",
    "has_lapack",
    "has_mkl",
    "has_openmp",
    "has_spectral",
    "is_distributed",
    "OutOfMemoryError",
    "AcceleratorError",
    "init_num_threads",
    "to_dlpack",
    "binomial",
    "cond",
    "while_loop",
    "vmap",
]

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None

# chainrule computes with NumPy (its LAPACK, its FFT); it has no MKL or OpenMP of its own.
has_lapack = True
has_spectral = True
has_mkl = False
has_openmp = False

# Windows ---------------------------------------------------------------------------------


def _window(
    name: str,
    window_length: int,
    periodic: bool,
    dtype: Any,
    device: Any,
    requires_grad: bool,
    f: Any,
) -> Any:
    from chainrule._creation import tensor
    from chainrule._dtype import get_default_dtype

    n = int(window_length)
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    dt = dtype if dtype is not None else get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if n == 0:
        w = np.zeros(0)
    elif n == 1:
        w = np.ones(1)
    else:
        m = n + 1 if periodic else n
        w = f(np.arange(m, dtype=np.float64), m)[:n]
    out = tensor(w, dtype=dt, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def hann_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Hann window 0.5 - 0.5 cos(2 pi n / (N - 1)); ``periodic``: of length N + 1 with
    the last value dropped (for spectral analysis)."""
    return _window(
        "hann_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda n, m: 0.5 - 0.5 * np.cos(2 * np.pi * n / (m - 1)),
    )


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Hamming window alpha - beta cos(2 pi n / (N - 1)) (``periodic`` as in
    :func:`hann_window`)."""
    return _window(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda n, m: alpha - beta * np.cos(2 * np.pi * n / (m - 1)),
    )


def blackman_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Blackman window 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window(
        "blackman_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda n, m: (
            0.42 - 0.5 * np.cos(2 * np.pi * n / (m - 1)) + 0.08 * np.cos(4 * np.pi * n / (m - 1))
        ),
    )


def bartlett_window(
    window_length: int,
    periodic: bool = True,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The triangular Bartlett window 1 - |2 n / (N - 1) - 1|."""
    return _window(
        "bartlett_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda n, m: 1 - np.abs(2 * n / (m - 1) - 1),
    )


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Any:
    """The Kaiser window I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)."""
    return _window(
        "kaiser_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        lambda n, m: (
            np.i0(beta * np.sqrt(np.clip(1 - (2 * n / (m - 1) - 1) ** 2, 0, None))) / np.i0(beta)
        ),
    )


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


# Random state ----------------------------------------------------------------------------


def get_rng_state() -> Any:
    """The default generator's state as a uint8 tensor (for :func:`set_rng_state`)."""
    import json

    from chainrule._creation import tensor
    from chainrule._random import default_generator

    blob = json.dumps(
        {"seed": default_generator.initial_seed(), "state": default_generator.get_state()}
    ).encode()
    return tensor(np.frombuffer(blob, dtype=np.uint8).copy())


def set_rng_state(new_state: Any) -> None:
    """Restore the default generator from a state of :func:`get_rng_state`."""
    import json

    from chainrule._random import default_generator
    from chainrule._tensor import Tensor

    if not isinstance(new_state, Tensor):
        raise TypeError("expected a torch.ByteTensor, but got " + type(new_state).__name__)
    if new_state._data.dtype != np.uint8:
        raise TypeError("expected a torch.ByteTensor, but got " + new_state.type())
    try:
        obj = json.loads(bytes(new_state._data.tobytes()).decode())
        default_generator.set_state(obj["state"])
        default_generator._seed = int(obj["seed"])
    except (ValueError, KeyError, TypeError) as err:
        raise RuntimeError("Invalid RNG state: not a state made by get_rng_state") from err


# Queries and switches --------------------------------------------------------------------


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage object (chainrule has no storage objects: False)."""
    return False


def typename(obj: Any) -> str:
    """The type name of ``obj``: 'torch.FloatTensor' for a float32 tensor, else the class's
    qualified name."""
    from chainrule._tensor import Tensor

    if isinstance(obj, Tensor):
        return "torch." + obj.type().split(".")[-1]
    module = getattr(obj, "__module__", "") or ""
    qual = getattr(obj, "__qualname__", None)
    if qual is None:
        qual = type(obj).__qualname__
        module = type(obj).__module__
    if module in ("", "builtins"):
        return qual
    return f"{module.replace('chainrule', 'torch', 1)}.{qual}"


_TENSOR_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16"}


def set_default_tensor_type(t: Any) -> None:
    """Deprecated (warns): set the default float dtype from a legacy type (``torch.
    DoubleTensor`` or ``'torch.DoubleTensor'``)."""
    from chainrule import _dtype

    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    short = name.split(".")[-1]
    if isinstance(t, str) and "." in t and not t.startswith(("torch.", "chainrule.")):
        raise ModuleNotFoundError(f"No module named '{t.rsplit('.', 1)[0]}'")
    if short not in _TENSOR_TYPES:
        if isinstance(t, str) and "." not in t:
            raise ValueError(f"invalid type: '{t}'")
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(getattr(_dtype, _TENSOR_TYPES[short]))


def is_anomaly_enabled() -> bool:
    """Whether autograd's anomaly detection is on."""
    from chainrule.autograd import is_anomaly_enabled as f

    return f()


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks the backward's outputs for nan."""
    from chainrule.autograd import is_anomaly_check_nan_enabled as f

    return f()


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``autograd.set_detect_anomaly``)."""
    from chainrule.autograd import set_detect_anomaly

    set_detect_anomaly(enabled, check_nan)


_warn_always = [False]


def is_warn_always_enabled() -> bool:
    """Whether warnings PyTorch gives once are given every time (the flag is kept; chainrule
    leaves repetition to Python's warning filters)."""
    return _warn_always[0]


def set_warn_always(b: bool) -> None:
    """Set the flag of :func:`is_warn_always_enabled`."""
    _warn_always[0] = bool(b)


def set_flush_denormal(mode: bool) -> bool:
    """Whether denormal floats can be flushed to zero: NumPy gives no control over the CPU's
    flag, so this returns False, as PyTorch does on CPUs without the feature."""
    return False


def is_vulkan_available() -> bool:
    """Whether the Vulkan backend is available (never)."""
    return False


def compiled_with_cxx11_abi() -> bool:
    """Whether PyTorch's C++ parts use the C++11 ABI (chainrule has none; True, as current
    PyTorch builds answer)."""
    return True


def is_distributed(input: Any) -> bool:
    """Whether ``input`` is a distributed tensor (never)."""
    return False


class OutOfMemoryError(RuntimeError):
    """Raised when a device runs out of memory (``torch.OutOfMemoryError``)."""


class AcceleratorError(RuntimeError):
    """Raised for errors of an accelerator's runtime (``torch.AcceleratorError``)."""


def init_num_threads() -> None:
    """Initialise the intra-op thread pool of the calling thread (NumPy's BLAS needs none)."""


def to_dlpack(tensor: Any) -> Any:
    """A DLPack capsule sharing ``tensor``'s memory (``tensor.__dlpack__()``)."""
    return tensor.__dlpack__()


# Sampling and control flow -----------------------------------------------------------------


def binomial(count: Any, prob: Any, generator: Any = None) -> Any:
    """Samples of Binomial(count, prob), elementwise (broadcast), in ``count``'s float dtype.
    Not differentiable (PyTorch defines no derivative)."""
    from chainrule._creation import tensor
    from chainrule._random import rng_of

    if not count.is_floating_point():
        names = {
            "int64": "Long",
            "int32": "Int",
            "int16": "Short",
            "int8": "Char",
            "uint8": "Byte",
            "bool": "Bool",
        }
        raise ValueError(
            "binomial only supports floating-point dtypes for count, got: "
            + names.get(str(count.dtype).split(".")[-1], str(count.dtype))
        )
    c = count._backend.to_host(count._data)
    p = prob._backend.to_host(prob._data)
    draws = rng_of(generator).binomial(c.astype(np.int64), np.clip(p, 0, 1))
    return tensor(draws.astype(c.dtype), device=count.device)


def cond(pred: Any, true_fn: Any, false_fn: Any, operands: Any = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` (a bool or a one-element tensor) holds, else
    ``false_fn(*operands)`` (PyTorch's control-flow operator, run eagerly)."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(
            f"Expect operands to be a tuple of possibly nested dict/list/tuple "
            f"that only consists of tensor leaves, but got {operands}."
        )
    take = bool(pred.item()) if hasattr(pred, "_data") else bool(pred)
    return (true_fn if take else false_fn)(*operands)


def while_loop(cond_fn: Any, body_fn: Any, carried_inputs: Any) -> Any:
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds; the final
    carried values as a tuple (PyTorch's control-flow operator, run eagerly)."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while True:
        c = cond_fn(*carried)
        if not (bool(c.item()) if hasattr(c, "_data") else bool(c)):
            return carried
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _flatten(tree: Any) -> tuple[list[Any], Any]:
    if isinstance(tree, (list, tuple)):
        leaves, specs = [], []
        for t in tree:
            lv, sp = _flatten(t)
            leaves += lv
            specs.append((len(lv), sp))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for k in tree:
            lv, sp = _flatten(tree[k])
            leaves += lv
            specs.append((k, len(lv), sp))
        return leaves, (dict, specs)
    return [tree], None


def _unflatten(leaves: list[Any], spec: Any) -> Any:
    if spec is None:
        return leaves[0]
    kind, parts = spec
    if kind is dict:
        out, i = {}, 0
        for k, n, sp in parts:
            out[k] = _unflatten(leaves[i : i + n], sp)
            i += n
        return out
    items, i = [], 0
    for n, sp in parts:
        items.append(_unflatten(leaves[i : i + n], sp))
        i += n
    return kind(items) if kind in (list, tuple) else kind(*items)


def vmap(
    func: Any,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Any:
    """``func`` mapped over a dim of its inputs: ``vmap(f)(x)[i] == f(x[i])``.

    ``in_dims``: the mapped dim of every input (an int), or one entry per argument (an int or
    None for an unmapped argument; nested like the argument for containers); ``out_dims``
    the dim the results are stacked along. Differs from torch: ``func`` runs once per batch
    element and the results are stacked (the same values and gradients, not vectorised)."""
    from chainrule import ops
    from chainrule._tensor import Tensor

    name = getattr(func, "__name__", repr(func))

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_dims, int):
            dims_per_arg: Any = tuple(in_dims for _ in args)
        elif isinstance(in_dims, (tuple, list)) and len(in_dims) == len(args):
            dims_per_arg = tuple(in_dims)
        else:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int "
                "or a (potentially nested) tuple matching the structure of inputs, got: "
                f"{type(in_dims)}."
            )
        flat_args, spec = _flatten(list(args))
        flat_dims: list[Any] = []
        for a, d in zip(args, dims_per_arg):
            n = len(_flatten(a)[0])
            flat_dims += _flatten(d)[0] if isinstance(d, (tuple, list, dict)) else [d] * n
        sizes = [
            t.shape[dd]
            for t, dd in zip(flat_args, flat_dims)
            if dd is not None and isinstance(t, Tensor)
        ]
        if not sizes:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one "
                "input must be mapped over (got no tensor with a mapped dim)"
            )
        if len(set(sizes)) != 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped "
                f"dimension, got sizes {sizes} for the mapped dimension"
            )
        results = []
        for i in builtins.range(sizes[0]):
            leaves = [
                t.select(dd, i) if dd is not None and isinstance(t, Tensor) else t
                for t, dd in zip(flat_args, flat_dims)
            ]
            results.append(func(*_unflatten(leaves, spec), **kwargs))
        outs = [_flatten(r)[0] for r in results]
        out_spec = _flatten(results[0])[1]
        stacked = []
        for k in builtins.range(len(outs[0])):
            col = [o[k] for o in outs]
            if not all(isinstance(c, Tensor) for c in col):
                bad = next(c for c in col if not isinstance(c, Tensor))
                raise ValueError(
                    f"vmap({name}, ...): `{name}` must only return Tensors, got "
                    f"type {type(bad)}. Did you mean to set out_dims= to None for "
                    "output?"
                )
            od = out_dims if isinstance(out_dims, int) else _flatten(out_dims)[0][k]
            stacked.append(ops.stack(col, od))
        return _unflatten(stacked, out_spec)

    return wrapped
