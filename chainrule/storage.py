"""``torch.UntypedStorage``, ``torch.TypedStorage`` and the legacy typed storage classes
(``torch.FloatStorage`` ...), as views over NumPy memory.

A chainrule tensor holds one ndarray, which may be a view of another; the array at the root of
that chain (``ndarray.base`` followed to its end) owns the memory, and is the tensor's storage.
An :class:`UntypedStorage` is a 1-D ``uint8`` view of that root's bytes, so writes through a
storage, through the tensor, or through any tensor ``set_`` onto the storage are seen by all of
them, as in PyTorch. A :class:`TypedStorage` is an untyped storage plus a dtype: element ``i``
is bytes ``[i * itemsize, (i + 1) * itemsize)`` read as that dtype.

As in PyTorch, ``TypedStorage`` is deprecated: making one (``Tensor.storage()``, a typed or
legacy class's constructor) warns once per process with a ``UserWarning``. Storages live on the
CPU (NumPy) only; a new storage's bytes are zeros where PyTorch leaves them uninitialised.

Why this file is over 600 lines: ``UntypedStorage`` and ``TypedStorage`` carry PyTorch's whole
storage surface (copying, typed views, sharing, resizing, ``set_``'s storage views), and the
twelve legacy classes are made by one factory in the middle of it.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterator, Sequence

import numpy as np

from chainrule import _dtype as _dt
from chainrule._device import device as _device

__all__ = [
    "UntypedStorage",
    "TypedStorage",
    "Storage",
    "FloatStorage",
    "DoubleStorage",
    "HalfStorage",
    "BFloat16Storage",
    "LongStorage",
    "IntStorage",
    "ShortStorage",
    "CharStorage",
    "ByteStorage",
    "BoolStorage",
    "ComplexFloatStorage",
    "ComplexDoubleStorage",
]

_WARNED: list[bool] = []
_DEPRECATION = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
    "only storage class. This should only matter to you if you are using storages directly.  To "
    "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()"
)


def _warn_typed_storage_removal(stacklevel: int = 3) -> None:
    """PyTorch's deprecation warning for typed storages: a UserWarning, once per process."""
    if not _WARNED:
        _WARNED.append(True)
        warnings.warn(_DEPRECATION, UserWarning, stacklevel=stacklevel)


_CPP_NAMES = _dt.CPP_NAMES


def cpp_type_name(dt: Any) -> str:
    """The C++ name of a dtype's element type ("float" for float32), as PyTorch's errors."""
    return str(_CPP_NAMES.get(dt.name, dt.name))


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _bytes_of(root: np.ndarray) -> np.ndarray:
    """A 1-D uint8 view of the bytes ``root`` owns."""
    if root.flags.c_contiguous or root.flags.f_contiguous:
        return root.reshape(-1, order="A").view(np.uint8)
    raise NotImplementedError("a storage needs the tensor's memory to be one contiguous block")


def _ptr(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _host(t: Any) -> np.ndarray:
    d = t._data
    if not isinstance(d, np.ndarray):
        raise NotImplementedError("storages are supported for CPU (NumPy) tensors only")
    return d


class UntypedStorage:
    """A flat run of bytes (``uint8``), shared by every tensor viewing it.

    ``UntypedStorage()`` is empty, ``UntypedStorage(n)`` has ``n`` zero bytes and
    ``UntypedStorage(seq)`` holds the integers of ``seq`` modulo 256.
    """

    __slots__ = ("_bytes",)
    is_sparse = False
    is_sparse_csr = False

    def __init__(self, *args: Any, device: Any = None) -> None:
        _check_cpu(device)
        if len(args) > 1:
            raise TypeError(
                "UntypedStorage(): expected no arguments, a size (int) or a sequence, got "
                f"{len(args)} positional arguments"
            )
        if not args:
            self._bytes = np.zeros(0, np.uint8)
        elif isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool):
            self._bytes = np.zeros(int(args[0]), np.uint8)
        elif isinstance(args[0], Sequence):
            self._bytes = np.asarray([int(v) for v in args[0]], dtype=np.int64).astype(np.uint8)
        else:
            raise TypeError(
                f"UntypedStorage(): argument must be an int or a sequence, not "
                f"{type(args[0]).__name__}"
            )

    @classmethod
    def _wrap(cls, byte_array: np.ndarray) -> UntypedStorage:
        s = cls.__new__(cls)
        s._bytes = byte_array
        return s

    @classmethod
    def from_buffer(cls, buffer: Any, byte_order: str = "native", **kwargs: Any) -> Any:
        """A storage holding a copy of the bytes of ``buffer`` (an object with the buffer
        protocol); with ``dtype=`` a :class:`TypedStorage` of that dtype."""
        dt = kwargs.pop("dtype", None)
        raw = np.frombuffer(bytes(buffer), dtype=np.uint8).copy()
        if dt is None or dt is _dt.uint8:
            return cls._wrap(raw)
        return TypedStorage(wrap_storage=cls._wrap(raw), dtype=dt, _internal=True)

    # Queries -------------------------------------------------------------------------------
    def size(self) -> int:
        """Number of bytes."""
        return int(self._bytes.size)

    def __len__(self) -> int:
        return int(self._bytes.size)

    def nbytes(self) -> int:
        """Number of bytes."""
        return int(self._bytes.size)

    def element_size(self) -> int:
        """1: an untyped storage's elements are bytes."""
        return 1

    def data_ptr(self) -> int:
        """Address of the first byte."""
        return _ptr(self._bytes)

    @property
    def device(self) -> Any:
        return _device("cpu")

    @property
    def is_cuda(self) -> bool:
        return False

    def is_shared(self) -> bool:
        import mmap

        owner = _root(self._bytes).base
        if isinstance(owner, memoryview):
            owner = owner.obj
        return isinstance(owner, mmap.mmap)

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def resizable(self) -> bool:
        """False: NumPy memory cannot grow in place (PyTorch's own allocations can)."""
        return False

    def type(self) -> str:
        return "torch.storage.UntypedStorage"

    def untyped(self) -> UntypedStorage:
        return self

    def cpu(self) -> UntypedStorage:
        return self

    def tolist(self) -> list[int]:
        """The bytes as Python ints."""
        return self._bytes.tolist()

    def __iter__(self) -> Iterator[int]:
        return iter(self.tolist())

    # Element access --------------------------------------------------------------------------
    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self.size())
            if step != 1:
                raise RuntimeError(
                    f"Trying to slice with a step of {step}, but only a step of 1 is supported"
                )
            return UntypedStorage._wrap(self._bytes[start : max(stop, start)])
        if not isinstance(idx, (int, np.integer)) or isinstance(idx, bool):
            raise TypeError(f"can't index a torch.UntypedStorage with {type(idx).__name__}")
        n = self.size()
        i = int(idx)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"index {j} out of range for storage of size {n}")
        return int(self._bytes[j])

    def __setitem__(self, idx: Any, value: Any) -> None:
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self.size())
            self._bytes[start:stop:step] = _as_bytes(value)
            return
        if not isinstance(idx, (int, np.integer)) or isinstance(idx, bool):
            raise TypeError(f"can't index a torch.UntypedStorage with {type(idx).__name__}")
        n = self.size()
        j = int(idx) + n if int(idx) < 0 else int(idx)
        if not 0 <= j < n:
            raise RuntimeError("out of bounds")
        self._bytes[j] = _as_bytes(value)

    def fill_(self, value: Any) -> UntypedStorage:
        """Set every byte to ``value`` modulo 256."""
        self._bytes[...] = _as_bytes(value)
        return self

    def copy_(self, source: Any, non_blocking: bool | None = None) -> UntypedStorage:
        """Copy the bytes of ``source`` (a storage of the same number of bytes) into ``self``."""
        src = source.untyped()._bytes
        if src.size != self._bytes.size:
            raise RuntimeError(
                f"size does not match, self was {self.nbytes()} bytes but src was {src.size} bytes"
            )
        self._bytes[...] = src
        return self

    def clone(self) -> UntypedStorage:
        """A storage with a copy of the bytes."""
        return UntypedStorage._wrap(self._bytes.copy())

    def __copy__(self) -> UntypedStorage:
        return self.clone()

    def __deepcopy__(self, memo: Any) -> UntypedStorage:
        return self.clone()

    def __reduce__(self) -> Any:
        return (UntypedStorage._wrap, (self._bytes.copy(),))

    def __str__(self) -> str:
        info = f"[torch.storage.UntypedStorage(device=cpu) of size {len(self)}]"
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __repr__ = __str__


def _as_bytes(value: Any) -> Any:
    if not isinstance(value, (int, np.integer)):
        c = type(value)
        name = f"{c.__module__.replace('chainrule', 'torch', 1)}.{c.__qualname__}"
        raise RuntimeError(f"can only set storage content with a int types, but got {name} instead")
    return np.asarray(value, dtype=np.int64).astype(np.uint8)


def _check_cpu(device: Any) -> None:
    if device is not None and _device(device).type != "cpu":
        raise RuntimeError(
            f"storages on {_device(device).type} are not supported: chainrule's memory is NumPy's"
        )


class _ClassDtype:
    """``FloatStorage.dtype``: the class's dtype, read on the class or on an instance."""

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is not None and obj.__dict__.get("_dtype") is not None:
            return obj.__dict__["_dtype"]
        owner: Any = cls or type(obj)
        return owner._class_dtype


class TypedStorage:
    """An :class:`UntypedStorage` read as elements of one dtype (deprecated in PyTorch).

    ``TypedStorage(n, dtype=)``, ``TypedStorage(seq, dtype=)`` or
    ``TypedStorage(wrap_storage=untyped, dtype=)``; the legacy classes (``FloatStorage`` ...)
    take the same arguments and fix the dtype.
    """

    _class_dtype: Any = None
    dtype = _ClassDtype()
    is_sparse = False

    def __init__(
        self,
        *args: Any,
        device: Any = None,
        dtype: Any = None,
        wrap_storage: Any = None,
        _internal: bool = False,
        _legacy: Any = None,
    ) -> None:
        if not _internal:
            _warn_typed_storage_removal()
        fixed = None if _legacy is None else _legacy._class_dtype
        if fixed is not None and dtype is not None and dtype is not fixed:
            raise RuntimeError(
                f"{getattr(_legacy, '__name__', '')}.__new__ received an invalid keyword "
                "argument 'dtype'"
            )
        dt = fixed or dtype or _dt.get_default_dtype()
        self.__dict__["_dtype"] = dt
        _check_cpu(device)
        if wrap_storage is not None:
            if args:
                raise RuntimeError(
                    "TypedStorage.__new__ received an invalid combination of arguments: "
                    "positional arguments with 'wrap_storage'"
                )
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(
                    "expected a torch.UntypedStorage for argument 'wrap_storage', but got "
                    f"{type(wrap_storage).__name__}"
                )
            self._untyped = wrap_storage
            return
        if len(args) > 1:
            raise RuntimeError(
                f"{_ctor_name(self, _legacy)}.__new__ received an invalid combination of "
                "arguments. Expected one of:\n * no arguments\n * (int size)\n * (Sequence data)\n"
                " * (*, UntypedStorage wrap_storage)\nToo many positional arguments"
            )
        if not args:
            arr = np.zeros(0, dt.np)
        elif isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool):
            arr = np.zeros(int(args[0]), dt.np)
        elif isinstance(args[0], Sequence):
            arr = np.asarray(list(args[0])).astype(dt.np)
        else:
            raise TypeError(
                f"{_ctor_name(self, _legacy)}(): argument must be an int or a sequence, not "
                f"{type(args[0]).__name__}"
            )
        self._untyped = UntypedStorage._wrap(arr.reshape(-1).view(np.uint8))

    def _array(self) -> np.ndarray:
        b = self._untyped._bytes
        isz = self.dtype.itemsize
        return b[: (b.size // isz) * isz].view(self.dtype.np)

    # Queries -------------------------------------------------------------------------------
    def size(self) -> int:
        """Number of elements."""
        return self._untyped.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def element_size(self) -> int:
        return int(self.dtype.itemsize)

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def untyped(self) -> UntypedStorage:
        """The underlying bytes (shared, not copied)."""
        return self._untyped

    @property
    def device(self) -> Any:
        return _device("cpu")

    @property
    def is_cuda(self) -> bool:
        return False

    def is_shared(self) -> bool:
        return self._untyped.is_shared()

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def resizable(self) -> bool:
        return False

    def type(self) -> str:
        """The legacy class's name ('torch.FloatStorage')."""
        return "torch." + _LEGACY_NAME[self.dtype.name]

    def pickle_storage_type(self) -> str:
        return _LEGACY_NAME[self.dtype.name]

    def cpu(self) -> TypedStorage:
        return self

    def tolist(self) -> list[Any]:
        return self._array().tolist()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.tolist())

    # Element access --------------------------------------------------------------------------
    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, (int, np.integer)) or isinstance(idx, bool):
            raise RuntimeError(f"can't index a {self.type()} with {type(idx).__name__}")
        n = self.size()
        j = int(idx) + n if int(idx) < 0 else int(idx)
        if not 0 <= j < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return self._array()[j].item()

    def __setitem__(self, idx: Any, value: Any) -> None:
        a = self._array()
        if isinstance(idx, slice):
            a[idx] = _values(value, self.dtype)
            return
        if not isinstance(idx, (int, np.integer)) or isinstance(idx, bool):
            raise RuntimeError(f"can't index a {self.type()} with {type(idx).__name__}")
        n = a.size
        j = int(idx) + n if int(idx) < 0 else int(idx)
        if not 0 <= j < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        a[j] = _values(value, self.dtype)

    def fill_(self, value: Any) -> TypedStorage:
        self._array()[...] = value
        return self

    def copy_(self, source: Any, non_blocking: bool | None = None) -> TypedStorage:
        """Copy the bytes of ``source`` (a storage of as many bytes) into ``self``."""
        self._untyped.copy_(source.untyped())
        return self

    def clone(self) -> TypedStorage:
        return _typed(self._untyped.clone(), self.dtype)

    def __copy__(self) -> TypedStorage:
        return self.clone()

    def __deepcopy__(self, memo: Any) -> TypedStorage:
        return self.clone()

    def _to(self, dt: Any) -> TypedStorage:
        if dt is self.dtype:
            return self
        arr = self._array().astype(dt.np)
        return _typed(UntypedStorage._wrap(arr.view(np.uint8)), dt)

    def float(self) -> TypedStorage:
        return self._to(_dt.float32)

    def double(self) -> TypedStorage:
        return self._to(_dt.float64)

    def half(self) -> TypedStorage:
        return self._to(_dt.float16)

    def bfloat16(self) -> TypedStorage:
        return self._to(_dt.bfloat16)

    def long(self) -> TypedStorage:
        return self._to(_dt.int64)

    def int(self) -> TypedStorage:
        return self._to(_dt.int32)

    def short(self) -> TypedStorage:
        return self._to(_dt.int16)

    def char(self) -> TypedStorage:
        return self._to(_dt.int8)

    def byte(self) -> TypedStorage:
        return self._to(_dt.uint8)

    def bool(self) -> TypedStorage:
        return self._to(_dt.bool)

    def cfloat(self) -> TypedStorage:
        return self._to(_dt.complex64)

    def cdouble(self) -> TypedStorage:
        return self._to(_dt.complex128)

    def __str__(self) -> str:
        info = (
            f"[torch.storage.TypedStorage(dtype=torch.{self.dtype.name}, device=cpu) of size "
            f"{len(self)}]"
        )
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __repr__ = __str__


def _ctor_name(s: TypedStorage, legacy: Any = None) -> str:
    return f"<class 'torch.{legacy.__name__}'>" if legacy is not None else "TypedStorage"


def _values(value: Any, dt: Any) -> Any:
    if isinstance(value, (UntypedStorage, TypedStorage)):
        return value.untyped()._bytes.view(dt.np)
    return np.asarray(value).astype(dt.np)


def _typed(untyped: UntypedStorage, dt: Any) -> TypedStorage:
    s = TypedStorage.__new__(TypedStorage)
    s.__dict__["_dtype"] = dt
    s._untyped = untyped
    return s


class _LegacyStorageMeta(type):
    """``isinstance(s, FloatStorage)`` is True for any float32 ``TypedStorage``: as in
    PyTorch, the legacy classes make plain ``TypedStorage`` objects."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if type(instance) is TypedStorage:
            return instance.dtype is getattr(cls, "_class_dtype", None)
        return type.__instancecheck__(cls, instance)


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """Base of ``FloatStorage`` and the other legacy classes (a fixed dtype)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        s = TypedStorage.__new__(TypedStorage)
        TypedStorage.__init__(s, *args, _legacy=cls, **kwargs)
        return s


def _legacy(name: str, dt: Any) -> type[TypedStorage]:
    return _LegacyStorageMeta(
        name, (_LegacyStorage,), {"_class_dtype": dt, "__module__": "chainrule"}
    )


FloatStorage = _legacy("FloatStorage", _dt.float32)
DoubleStorage = _legacy("DoubleStorage", _dt.float64)
HalfStorage = _legacy("HalfStorage", _dt.float16)
BFloat16Storage = _legacy("BFloat16Storage", _dt.bfloat16)
LongStorage = _legacy("LongStorage", _dt.int64)
IntStorage = _legacy("IntStorage", _dt.int32)
ShortStorage = _legacy("ShortStorage", _dt.int16)
CharStorage = _legacy("CharStorage", _dt.int8)
ByteStorage = _legacy("ByteStorage", _dt.uint8)
BoolStorage = _legacy("BoolStorage", _dt.bool)
ComplexFloatStorage = _legacy("ComplexFloatStorage", _dt.complex64)
ComplexDoubleStorage = _legacy("ComplexDoubleStorage", _dt.complex128)
Storage = FloatStorage  # torch.Storage is torch.FloatStorage

_LEGACY: dict[str, type[TypedStorage]] = {
    c._class_dtype.name: c
    for c in (
        FloatStorage,
        DoubleStorage,
        HalfStorage,
        BFloat16Storage,
        LongStorage,
        IntStorage,
        ShortStorage,
        CharStorage,
        ByteStorage,
        BoolStorage,
        ComplexFloatStorage,
        ComplexDoubleStorage,
    )
}
_LEGACY_NAME: dict[str, str] = {k: c.__name__ for k, c in _LEGACY.items()}


# What the Tensor methods call (through chainrule._dispatch.upper) ------------------------------
def storage_of(t: Any) -> UntypedStorage:
    """``Tensor.untyped_storage()``: the bytes of the memory the tensor views."""
    return UntypedStorage._wrap(_bytes_of(_root(_host(t))))


def typed_storage_of(t: Any) -> TypedStorage:
    """``Tensor.storage()``: the tensor's storage read as its dtype (warns: deprecated)."""
    _warn_typed_storage_removal(stacklevel=4)
    return _typed(storage_of(t), t.dtype)


def storage_type_of(t: Any) -> type[TypedStorage]:
    """``Tensor.storage_type()``: the legacy storage class of the tensor's dtype."""
    cls = _LEGACY.get(t.dtype.name)
    if cls is None:
        raise RuntimeError(f"no legacy storage class for torch.{t.dtype.name}")
    return cls


def array_on(
    t: Any, source: Any, storage_offset: int, size: Sequence[int] | None, stride: Any
) -> np.ndarray:
    """The array ``t.set_(source, storage_offset, size, stride)`` gives ``t``: a view of
    ``source``'s bytes read as ``t``'s dtype, with PyTorch's checks and messages."""
    dt = t.dtype
    if isinstance(source, TypedStorage):
        sdt: Any = source.dtype
        if sdt is not dt:
            legacy = str(_LEGACY_NAME.get(sdt.name, sdt.name))
            raise RuntimeError(
                f"Expected a Storage of type {cpp_type_name(dt)} or an UntypedStorage, but got "
                f"type {legacy.removesuffix('Storage')} for argument 1 'storage'"
            )
        source = source.untyped()
    if not isinstance(source, UntypedStorage):
        raise TypeError(
            f"set_(): argument 'source' must be Storage or Tensor, not {type(source).__name__}"
        )
    isz = dt.itemsize
    n_storage = source.nbytes()
    off = int(storage_offset)
    if size is None:
        size = (n_storage // isz - off,)
    size = tuple(int(s) for s in size)
    if stride is None:
        st, acc = [], 1
        for s in reversed(size):
            st.append(acc)
            acc *= max(s, 1)
        stride = tuple(reversed(st))
    stride = tuple(int(s) for s in stride)
    if len(stride) != len(size):
        raise RuntimeError("mismatch in length of strides and shape")
    need = 0 if 0 in size else off + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need * isz > n_storage:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
            f"itemsize {isz} requiring a storage size of {need * isz} are out of bounds for "
            f"storage of size {n_storage}"
        )
    if 0 in size:
        return np.zeros(size, dt.np)
    return np.ndarray(
        size, dt.np, buffer=source._bytes, offset=off * isz, strides=tuple(s * isz for s in stride)
    )
