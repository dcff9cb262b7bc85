"""Small torch-level names: ``hash_tensor``, ``as_strided_scatter``, ``slice_inverse``,
``from_file``, ``get_device_module``, ``get_file_path``, ``classproperty``,
``prepare_multiprocessing_environment``, ``thread_safe_generator``, the eager
``sym_constrain_range``/``sym_constrain_range_for_size``/``sym_fresh_size``, the
``SymInt``/``SymFloat``/``SymBool`` wrappers, and the enums ``AggregationType`` (``SUM``,
``AVG``) and ``Tag``, and PyTorch's build constants (``USE_GLOBAL_DEPS`` ...).
"""

from __future__ import annotations

import builtins
import enum
import importlib
import math
import operator
import os
from typing import Any, Callable, Sequence

import numpy as np

from chainrule import _dtype, _kinds
from chainrule._device import device as _device
from chainrule._tensor import Tensor

__all__ = [
    "hash_tensor",
    "as_strided_scatter",
    "slice_inverse",
    "from_file",
    "get_device_module",
    "get_file_path",
    "classproperty",
    "prepare_multiprocessing_environment",
    "thread_safe_generator",
    "sym_constrain_range",
    "sym_constrain_range_for_size",
    "sym_fresh_size",
    "SymInt",
    "SymFloat",
    "SymBool",
    "AggregationType",
    "SUM",
    "AVG",
    "Tag",
    "FatalError",
    "PRIVATE_OPS",
    "USE_GLOBAL_DEPS",
    "USE_RTLD_GLOBAL_WITH_LIBTORCH",
    "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12",
]

_INT64_MAX = 9223372036854775807


# hash_tensor -------------------------------------------------------------------------------
def hash_tensor(
    input: Tensor, dim: int | Sequence[int] | None = None, *, keepdim: bool = False, mode: int = 0
) -> Tensor:
    """PyTorch's documented hash (mode 0): each element is widened to its 64-bit float or
    integer type (float64 for floating dtypes, int64 for integers and bool), its 64 bits are
    read as a ``uint64``, and the values are reduced by XOR over ``dim`` (all dims by default).
    The result is ``uint64``; an empty reduction gives 0."""
    if mode != 0:
        raise RuntimeError(f"hash_tensor only supports mode=0 (xor_reduction), got mode={mode}")
    a = np.asarray(input.detach().cpu().numpy())
    if a.size == 0 and dim is None:
        raise RuntimeError(
            "hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify "
            "the reduction dim with the 'dim' argument."
        )
    if _kinds.is_complex(a.dtype):
        raise RuntimeError("hash_tensor does not support complex tensors")
    wide = a.astype(np.float64 if _kinds.is_floating(a.dtype) else np.int64)
    bits = wide.view(np.uint64) if wide.ndim else wide.reshape(1).view(np.uint64).reshape(())
    if dim is None:
        axes: Any = None
    elif isinstance(dim, (int, np.integer)):
        axes = (int(dim),)
    else:
        axes = tuple(int(d) for d in dim)
    for d in axes or ():
        if a.shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    out = np.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim)
    return Tensor._wrap(np.asarray(out, dtype=np.uint64))


# Strided scatters --------------------------------------------------------------------------
def _strided_index(size: Sequence[int], stride: Sequence[int], offset: int) -> np.ndarray:
    idx = np.full(tuple(size), offset, dtype=np.int64)
    for i, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[i] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return idx


def as_strided_scatter(
    input: Tensor,
    src: Tensor,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:
    """A copy of ``input`` with ``src`` written into the elements that
    ``input.as_strided(size, stride, storage_offset)`` views (positions counted in ``input``'s
    contiguous layout). Differentiable: the gradient for ``input`` is ``g`` with those
    positions zeroed, for ``src`` it is ``g`` read at them. (Differs from torch 2.13, whose
    input gradient is ``g`` at the written positions instead, and fails its own gradcheck.)"""
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    off = 0 if storage_offset is None else int(storage_offset)
    if tuple(src.shape) != size:
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(size)}"
        )
    n = input.numel()
    idx = _strided_index(size, stride, off)
    if idx.size and (idx.max() >= n or idx.min() < 0):
        need = int(idx.max()) + 1
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
            f"itemsize {input.element_size()} requiring a storage size of "
            f"{need * input.element_size()} are out of bounds for storage of size "
            f"{n * input.element_size()}"
        )
    flat = input.reshape(-1)
    pos = Tensor._wrap(idx.reshape(-1))
    out = flat.index_put((pos,), src.to(input.dtype).reshape(-1))
    return out.reshape(input.shape)


def slice_inverse(
    input: Tensor,
    src: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> Tensor:
    """The inverse of ``src.slice(dim, start, end, step)`` when ``input`` is that slice: a
    view of ``input``'s storage with ``src``'s sizes, strides and offset (so, ``src``'s
    elements)."""
    return input.as_strided(tuple(src.shape), src.stride(), src.storage_offset())


# Files and devices -------------------------------------------------------------------------
def from_file(
    filename: str,
    shared: bool | None = None,
    size: int = 0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """A 1-D tensor of ``size`` elements whose memory is the file ``filename``, mapped.

    ``shared=True``: writes go to the file (grown to the size needed); otherwise the mapping
    is private (copy on write): the tensor can be written, the file is unchanged."""
    dt = _dtype.get_default_dtype() if dtype is None else dtype
    nbytes = int(size) * dt.itemsize
    mode = "r+" if shared else "r"
    try:
        have = os.path.getsize(filename)
        fh = open(filename, "r+b" if shared else "rb")  # noqa: SIM115 - closed below
    except OSError as e:
        raise RuntimeError(
            f"unable to open file <{filename}> in {'read-write' if shared else 'read-only'} "
            f"mode: {e.strerror} ({e.errno})"
        ) from None
    with fh:
        if have < nbytes:
            if not shared:
                raise RuntimeError(
                    f"file <{filename}> size <{have}> is smaller than the required mapping size "
                    f"<{nbytes}>"
                )
            fh.truncate(nbytes)
    if size == 0:
        return Tensor._wrap(np.zeros(0, dt.np))
    arr = np.memmap(filename, dtype=dt.np, mode="r+" if mode == "r+" else "c", shape=(int(size),))
    return Tensor._wrap(arr)


def get_device_module(device: Any = None) -> Any:
    """The module of a device type (``chainrule.cpu`` for "cpu", ``chainrule.cuda`` for
    "cuda" ...): the default device's when ``device`` is None."""
    if device is None:
        from chainrule._device import get_default_device

        name = get_default_device().type
    elif isinstance(device, str):
        name = device.split(":")[0]
        _device(name)  # an unknown device type raises, as PyTorch's parser does
    else:
        name = _device(device).type
    try:
        return importlib.import_module(f"chainrule.{name}")
    except ModuleNotFoundError:
        raise RuntimeError(
            f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'."
        ) from None


_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def get_file_path(*path_components: str) -> str:
    """``os.path.join`` of the directory that holds the package and ``path_components``."""
    return os.path.join(_PACKAGE_PARENT, *path_components)


def prepare_multiprocessing_environment(path: str) -> None:
    """Set up a multiprocessing environment at ``path``: nothing to do (as PyTorch's)."""


def thread_safe_generator() -> Any:
    """The worker's own Generator inside a DataLoader thread worker, else None (the
    default generator)."""
    from chainrule.utils.data import get_worker_info

    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread":
        rng = getattr(info, "rng", None)
        if rng is not None:
            return rng.torch_generator
    return None


class _ClassPropertyDescriptor:
    def __init__(self, fget: Any, fset: Any = None) -> None:
        self.fget = fget

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if owner is None:
            owner = type(instance)
        return self.fget.__get__(instance, owner)()


def classproperty(func: Callable[..., Any]) -> Any:
    """A read-only property of the class (``C.name`` calls ``func(C)``)."""
    wrapped: Any = func
    if not isinstance(func, (classmethod, staticmethod)):
        wrapped = classmethod(func)
    return _ClassPropertyDescriptor(wrapped)


# Symbolic shapes, eager ----------------------------------------------------------------------
def _value(a: Any) -> Any:
    return a.node if isinstance(a, (SymInt, SymFloat, SymBool)) else a


def sym_constrain_range(size: Any, *, min: int | None = None, max: int | None = None) -> None:
    """Assert ``min <= size <= max`` (each bound optional), for a concrete ``size``."""
    lo = -_INT64_MAX - 1 if min is None else min
    hi = _INT64_MAX if max is None else max
    v = _value(size)
    if isinstance(v, (int, np.integer)) and not lo <= v <= hi:
        raise RuntimeError(f"Invalid value range for {v} between [{lo}, {hi}].")


def sym_constrain_range_for_size(
    size: Any, *, min: int | None = None, max: int | None = None
) -> None:
    """:func:`sym_constrain_range` for a size: ``min`` defaults to 0."""
    sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr: Any) -> Any:
    """A new unbacked size equal to ``expr``; with concrete values, ``expr`` itself."""
    return expr


def _wrap_num(v: Any) -> Any:
    if isinstance(v, builtins.bool):
        return SymBool(v)
    if isinstance(v, builtins.int):
        return SymInt(v)
    if isinstance(v, builtins.float):
        return SymFloat(v)
    return v


def _binop(op: Callable[[Any, Any], Any], reflected: bool = False) -> Any:
    def f(self: Any, other: Any) -> Any:
        a, b = self.node, _value(other)
        return _wrap_num(op(b, a) if reflected else op(a, b))

    return f


def _unop(op: Callable[[Any], Any]) -> Any:
    def f(self: Any) -> Any:
        return _wrap_num(op(self.node))

    return f


class _SymNumber:
    """A symbolic number holding one concrete value (``node``): with no tracing, every value
    is known, so arithmetic is the value's, and results are again symbolic numbers."""

    __slots__ = ("node",)
    _kind: type = builtins.object

    def __init__(self, node: Any) -> None:
        self.node = self._kind(_value(node))

    def __repr__(self) -> str:
        return repr(self.node)

    __str__ = __repr__

    def __hash__(self) -> int:
        return hash(self.node)

    def __bool__(self) -> builtins.bool:
        return builtins.bool(self.node)

    def __int__(self) -> int:
        return builtins.int(self.node)

    def __float__(self) -> float:
        return builtins.float(self.node)

    __eq__ = _binop(operator.eq)  # type: ignore[assignment]
    __ne__ = _binop(operator.ne)  # type: ignore[assignment]
    __lt__ = _binop(operator.lt)
    __le__ = _binop(operator.le)
    __gt__ = _binop(operator.gt)
    __ge__ = _binop(operator.ge)


class SymInt(_SymNumber):
    """An int that may be symbolic (here always concrete: ``node`` is the int)."""

    __slots__ = ()
    _kind = builtins.int

    def __index__(self) -> int:
        return self.node

    def __sym_float__(self) -> SymFloat:
        return SymFloat(builtins.float(self.node))

    def bit_length(self) -> int:
        return self.node.bit_length()

    def as_integer_ratio(self) -> tuple[int, int]:
        return (self.node, 1)

    def conjugate(self) -> SymInt:
        return self

    __add__, __radd__ = _binop(operator.add), _binop(operator.add, True)
    __sub__, __rsub__ = _binop(operator.sub), _binop(operator.sub, True)
    __mul__, __rmul__ = _binop(operator.mul), _binop(operator.mul, True)
    __floordiv__, __rfloordiv__ = _binop(operator.floordiv), _binop(operator.floordiv, True)
    __truediv__, __rtruediv__ = _binop(operator.truediv), _binop(operator.truediv, True)
    __mod__, __rmod__ = _binop(operator.mod), _binop(operator.mod, True)
    __pow__, __rpow__ = _binop(operator.pow), _binop(operator.pow, True)
    __and__, __rand__ = _binop(operator.and_), _binop(operator.and_, True)
    __or__, __ror__ = _binop(operator.or_), _binop(operator.or_, True)
    __lshift__, __rshift__ = _binop(operator.lshift), _binop(operator.rshift)
    __neg__, __abs__ = _unop(operator.neg), _unop(abs)


class SymFloat(_SymNumber):
    """A float that may be symbolic (here always concrete)."""

    __slots__ = ()
    _kind = builtins.float

    def is_integer(self) -> builtins.bool:
        return self.node.is_integer()

    def as_integer_ratio(self) -> tuple[int, int]:
        return self.node.as_integer_ratio()

    def conjugate(self) -> SymFloat:
        return self

    def __trunc__(self) -> int:
        return math.trunc(self.node)

    def __floor__(self) -> int:
        return math.floor(self.node)

    def __ceil__(self) -> int:
        return math.ceil(self.node)

    __add__, __radd__ = _binop(operator.add), _binop(operator.add, True)
    __sub__, __rsub__ = _binop(operator.sub), _binop(operator.sub, True)
    __mul__, __rmul__ = _binop(operator.mul), _binop(operator.mul, True)
    __truediv__, __rtruediv__ = _binop(operator.truediv), _binop(operator.truediv, True)
    __floordiv__, __rfloordiv__ = _binop(operator.floordiv), _binop(operator.floordiv, True)
    __pow__, __rpow__ = _binop(operator.pow), _binop(operator.pow, True)
    __neg__, __abs__ = _unop(operator.neg), _unop(abs)


class SymBool(_SymNumber):
    """A bool that may be symbolic (here always concrete)."""

    __slots__ = ()
    _kind = builtins.bool

    __and__, __rand__ = _binop(operator.and_), _binop(operator.and_, True)
    __or__, __ror__ = _binop(operator.or_), _binop(operator.or_, True)
    __xor__ = _binop(operator.xor)

    def __invert__(self) -> SymBool:
        return SymBool(not self.node)


# Enums -------------------------------------------------------------------------------------
class _IntValued(enum.Enum):
    """An enum member that converts to its int value (``int(torch.Tag.core)`` is 0) but does
    not compare equal to it, as PyTorch's pybind11 enums."""

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value


class AggregationType(_IntValued):
    """How a distributed statistic is aggregated (``torch.SUM``, ``torch.AVG``)."""

    SUM = 0
    AVG = 1


SUM = AggregationType.SUM
AVG = AggregationType.AVG

_TAGS = (
    "core cudagraph_unsafe data_dependent_output dynamic_output_shape flexible_layout generated "
    "inplace inplace_view maybe_aliasing_or_mutating needs_contiguous_strides "
    "needs_exact_strides needs_fixed_stride_order nondeterministic_bitwise "
    "nondeterministic_seeded out out_variant pointwise pt2_compliant_tag reduction view_copy"
).split()

Tag = _IntValued("Tag", [(n, i) for i, n in enumerate(_TAGS)], module=__name__)
Tag.__doc__ = "The tags of PyTorch's operator schemas (``torch.Tag.pointwise`` ...)."


# Build constants and small classes ---------------------------------------------------------
class FatalError(Exception):
    """An unrecoverable error of PyTorch's C++ core (raised by nothing in chainrule)."""


PRIVATE_OPS = ("unique_dim",)  # ops PyTorch keeps out of its public torch.* bindings
USE_GLOBAL_DEPS = True  # PyTorch's build flags: how its shared libraries are loaded
USE_RTLD_GLOBAL_WITH_LIBTORCH = False


def profiler_allow_cudagraph_cupti_lazy_reinit_cuda12() -> bool:
    """True, as PyTorch's (whether its profiler may re-initialise CUPTI under CUDA graphs)."""
    return True
