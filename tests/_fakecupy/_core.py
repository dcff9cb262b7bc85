"""The stand-in's array type and function wrapping.

``ndarray`` holds a NumPy array (``_a``) and the index of the fake device it lives on. Every
``cupy.*`` function is the NumPy function of the same name, wrapped: device arrays in, device
arrays out, host (NumPy) arrays refused, NumPy scalar results turned into 0-d device arrays.
What CuPy refuses, this refuses, with CuPy's error type and text (tests/backends/
test_fakecupy.py cites CuPy's documentation for each).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a "
    "NumPy array explicitly."
)

# Bytes held by live arrays that own their buffer, per fake device; the memory pool reads this.
USED: dict[int, int] = {}
# The current fake device (cupy.cuda.Device / runtime.setDevice change it).
CURRENT = [0]
# The allocator hook (cupy.cuda.set_allocator): called with the byte count of each new buffer.
ALLOCATOR: list[Any] = [None]


def _release(dev: int, n: int) -> None:
    USED[dev] = USED.get(dev, 0) - n


class _Buffer:
    """Stands for a device allocation (cupy.cuda.MemoryPointer): counted while alive."""

    __slots__ = ("__weakref__",)

    def __init__(self, dev: int, n: int) -> None:
        USED[dev] = USED.get(dev, 0) + n
        weakref.finalize(self, _release, dev, n)


def check_current(*args: Any) -> None:
    """CuPy's check before a kernel launch (``_kernel.pyx``'s ``_check_peer_access``): every
    device array it reads or writes must be on the current device. The fake devices have no
    peer access, so an array on another one is CuPy's ``ValueError`` (a kernel runs on the
    current device; CuPy does not switch to its operands' device)."""
    cur = CURRENT[0]
    for a in args:
        if type(a) is ndarray:
            if a._dev != cur:
                raise ValueError(
                    f"The device where the array resides ({a._dev}) is different from the "
                    f"current device ({cur}). Peer access is unavailable between these devices."
                )
        elif isinstance(a, (list, tuple)):
            check_current(*a)
        elif isinstance(a, dict):
            check_current(*a.values())


def _fresh(r: Any) -> bool:
    """Whether a NumPy result is new memory (a kernel made it) rather than a view."""
    if isinstance(r, np.ndarray):
        return r.base is None
    if isinstance(r, (tuple, list)):
        return any(_fresh(v) for v in r)
    return isinstance(r, np.generic)


def _unsupported(x: Any) -> TypeError:
    return TypeError(f"Unsupported type {type(x)}")


def unwrap(x: Any, where: str = "") -> Any:
    """A device array's NumPy data; host arrays refused; containers unwrapped elementwise."""
    if type(x) is ndarray:
        return x._a
    if isinstance(x, np.ndarray):
        raise _unsupported(x)
    if isinstance(x, (list, tuple)):
        return type(x)(unwrap(v) for v in x)
    return x


def wrap(r: Any, dev: int | None = None, base: Any = None) -> Any:
    """NumPy results as device arrays (NumPy scalars as 0-d arrays, as CuPy returns them)."""
    if isinstance(r, np.ndarray):
        return ndarray._new(r, CURRENT[0] if dev is None else dev, base)
    if isinstance(r, np.generic):
        return ndarray._new(np.asarray(r), CURRENT[0] if dev is None else dev, None)
    if isinstance(r, tuple):
        return tuple(wrap(v, dev, base) for v in r)
    if isinstance(r, list):
        return [wrap(v, dev, base) for v in r]
    return r


def _dev_of(args: Any) -> int | None:
    for a in args:
        if type(a) is ndarray:
            return a._dev
        if isinstance(a, (list, tuple)):
            d = _dev_of(a)
            if d is not None:
                return d
    return None


def call(fn: Any, args: tuple, kwargs: dict) -> Any:
    """``fn`` (a NumPy function) on unwrapped arguments; the result wrapped. A result in new
    memory (or written to ``out=``) is a kernel's: its operands must be on the current device
    (``check_current``), and it lives there; a view keeps its operand's device."""
    uargs = tuple(unwrap(a) for a in args)
    ukw = {k: unwrap(v) for k, v in kwargs.items()}
    dev = _dev_of(args) if _dev_of(args) is not None else _dev_of(tuple(kwargs.values()))
    out = kwargs.get("out")
    with np.errstate(all="ignore"):  # GPU arithmetic never warns
        r = fn(*uargs, **ukw)
    if out is not None and type(out) is ndarray:
        check_current(args, kwargs)
        return out
    if _fresh(r):
        if not getattr(fn, "__name__", "").endswith("_like"):  # *_like reads no operand
            check_current(args, kwargs)
        dev = None  # the current device (cupy.empty_like allocates there, whatever a's)
    return wrap(r, dev)


class ufunc:
    """A CuPy ufunc: callable, ``outer``, ``reduce`` for add/multiply, ``at`` only where CuPy
    has it (``cupy.ufunc.at``: add, subtract, maximum, minimum, bitwise and/or/xor)."""

    _AT = {"add", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor"}
    _REDUCE = {"add", "multiply"}

    def __init__(self, np_ufunc: np.ufunc) -> None:
        self._uf = np_ufunc
        self.__name__ = np_ufunc.__name__
        self.name = "cupy_" + np_ufunc.__name__
        self.nin, self.nout, self.nargs = np_ufunc.nin, np_ufunc.nout, np_ufunc.nargs

    def __repr__(self) -> str:
        return f"<ufunc '{self.name}'>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call(self._uf, args, kwargs)

    def outer(self, a: Any, b: Any, **kwargs: Any) -> Any:
        return call(self._uf.outer, (a, b), kwargs)

    def at(self, a: Any, indices: Any, b: Any = None) -> None:
        if self.__name__ not in self._AT:
            raise NotImplementedError(f"`{self.name}.at` is not supported yet")
        if type(a) is not ndarray:
            raise _unsupported(a)
        check_current(a, indices, b)
        idx = _index(indices)
        with np.errstate(all="ignore"):
            if b is None:
                self._uf.at(a._a, idx)
            else:
                self._uf.at(a._a, idx, unwrap(b))

    def reduce(
        self, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None, keepdims: bool = False
    ) -> Any:
        if self.__name__ not in self._REDUCE:
            raise NotImplementedError(f"`{self.name}.reduce` is not supported yet")
        return call(
            self._uf.reduce,
            (array,),
            {"axis": axis, "dtype": dtype, "out": out, "keepdims": keepdims},
        )


def _index(key: Any, shape: tuple[int, ...] | None = None) -> Any:
    """A key for the NumPy array. Device arrays, lists and host arrays may index (CuPy
    converts the latter two). With ``shape``, integer-array entries wrap around modulo their
    dimension, as CuPy's do (NumPy would raise IndexError)."""
    if type(key) is ndarray:
        key = key._a
    elif isinstance(key, tuple):
        key = tuple(k._a if type(k) is ndarray else k for k in key)
    if shape is None:
        return key
    keys = list(key) if isinstance(key, tuple) else [key]
    if any(k is Ellipsis for k in keys):
        i = next(j for j, k in enumerate(keys) if k is Ellipsis)
        used = sum(_axes_used(k) for k in keys if k is not Ellipsis)
        keys[i : i + 1] = [slice(None)] * (len(shape) - used)
    axis = 0
    for j, k in enumerate(keys):
        if isinstance(k, list):
            k = keys[j] = np.asarray(k)
        if isinstance(k, np.ndarray) and k.dtype.kind in "iu" and axis < len(shape):
            keys[j] = k % shape[axis] if shape[axis] else k
        axis += _axes_used(k)
    return tuple(keys) if isinstance(key, tuple) else keys[0]


def _axes_used(k: Any) -> int:
    if k is None:
        return 0
    if isinstance(k, np.ndarray) and k.dtype == bool:
        return k.ndim
    return 1


class _Flags:
    """``ndarray.flags``: CuPy has c_contiguous, f_contiguous and owndata, no writeable."""

    def __init__(self, a: np.ndarray, owns: bool) -> None:
        self.c_contiguous = bool(a.flags.c_contiguous)
        self.f_contiguous = bool(a.flags.f_contiguous)
        self.owndata = owns

    def __getitem__(self, key: str) -> bool:
        return {
            "C_CONTIGUOUS": self.c_contiguous,
            "F_CONTIGUOUS": self.f_contiguous,
            "OWNDATA": self.owndata,
        }[key]


class MemoryPointer:
    """``cupy.cuda.MemoryPointer``: an address and the device it is on."""

    __slots__ = ("ptr", "device_id")

    def __init__(self, ptr: int, device_id: int) -> None:
        self.ptr = ptr
        self.device_id = device_id


class ndarray:
    """A device array of the stand-in (holds a NumPy array; refuses implicit host use)."""

    __slots__ = ("_a", "_dev", "_buf", "__weakref__")
    __array_priority__ = 100

    def __init__(
        self,
        shape: Any,
        dtype: Any = float,
        memptr: Any = None,
        strides: Any = None,
        order: str = "C",
    ) -> None:
        self._a = np.empty(shape, dtype=dtype, order=order)
        self._dev = CURRENT[0]
        self._buf = _alloc(self._dev, self._a.nbytes)

    @classmethod
    def _new(cls, a: np.ndarray, dev: int, base: Any) -> ndarray:
        x = object.__new__(cls)
        x._a = a
        x._dev = dev
        # A result that owns its buffer counts as an allocation; a view holds its base's.
        x._buf = _alloc(dev, a.nbytes) if a.base is None else getattr(base, "_buf", None)
        return x

    # Metadata ------------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: _Flags(self._a, self._a.base is None))

    @property
    def device(self) -> Any:
        from tests._fakecupy.cuda import Device

        return Device(self._dev)

    @property
    def data(self) -> MemoryPointer:
        """``cupy.cuda.MemoryPointer`` of the first element: ``ptr`` (here a host address:
        only the stand-in's own cuBLAS may dereference it) and ``device_id``."""
        return MemoryPointer(self._a.ctypes.data, self._dev)

    @property
    def T(self) -> ndarray:
        return wrap(self._a.T, self._dev, self)

    @property
    def real(self) -> ndarray:
        return wrap(self._a.real, self._dev, self)

    @property
    def imag(self) -> ndarray:
        return wrap(self._a.imag, self._dev, self)

    @property
    def base(self) -> Any:
        return None if self._a.base is None else self

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        # Present so that code probing for a GPU array (hasattr) sees one; the pointer is a
        # host address: the stand-in must never be handed to a real CUDA consumer.
        a = self._a
        return {
            "shape": a.shape,
            "typestr": a.dtype.str,
            "data": (a.ctypes.data, False),
            "strides": None if a.flags.c_contiguous else a.strides,
            "version": 3,
        }

    # Explicit conversion (allowed) ----------------------------------------------------------
    def get(self, stream: Any = None, order: str = "C", out: Any = None) -> np.ndarray:
        """A host copy (``cupy.ndarray.get``)."""
        r = np.array(self._a, order=order)
        if out is not None:
            out[...] = r
            return out
        return r

    def set(self, arr: np.ndarray, stream: Any = None) -> None:
        """Copy a host array into this one (``cupy.ndarray.set``)."""
        self._a[...] = arr

    def item(self) -> Any:
        return self._a.item()

    def tolist(self) -> Any:
        return self._a.tolist()

    # Implicit conversion (refused, as CuPy refuses it) ------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(IMPLICIT)

    def __array_ufunc__(self, uf: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from tests._fakecupy import _UFUNCS

        mine = _UFUNCS.get(uf.__name__)
        if mine is None:
            return NotImplemented
        if method == "__call__":
            return mine(*inputs, **kwargs)
        if method in ("at", "reduce", "outer"):
            return getattr(mine, method)(*inputs, **kwargs)
        return NotImplemented

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        import functools

        import tests._fakecupy as cp

        # As CuPy's: numpy.linalg.cholesky resolves to cupy.linalg.cholesky, and so on.
        try:
            module = functools.reduce(getattr, func.__module__.split(".")[1:], cp)
            mine = getattr(module, func.__name__)
        except AttributeError:
            return NotImplemented
        return mine(*args, **kwargs)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __complex__(self) -> complex:
        return complex(self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Any:
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __repr__(self) -> str:
        return repr(self._a)

    def __str__(self) -> str:
        return str(self._a)

    def __format__(self, spec: str) -> str:
        return format(self._a, spec)

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'cupy.ndarray'")

    # Indexing ------------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> ndarray:
        r = self._a[_index(key, self._a.shape)]
        if _fresh(r):  # advanced indexing: a gather kernel
            check_current(self, key)
            return wrap(r)
        return wrap(r, self._dev, self)

    def __setitem__(self, key: Any, value: Any) -> None:
        check_current(self, key, value)  # a scatter or fill kernel
        if type(value) is ndarray:
            value = value._a
        self._a[_index(key, self._a.shape)] = value

    # Methods -------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name in _NO_METHOD:
            raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")
        attr = getattr(self._a, name)
        if not callable(attr):
            return wrap(attr, self._dev)
        dev, me = self._dev, self

        def method(*args: Any, **kwargs: Any) -> Any:
            with np.errstate(all="ignore"):
                r = attr(*(unwrap(a) for a in args), **{k: unwrap(v) for k, v in kwargs.items()})
            if _fresh(r):  # a kernel's result (sum, cumsum, a copying reshape, ...)
                check_current(me, args, kwargs)
                return wrap(r)
            return wrap(r, dev, me)

        return method

    def copy(self, order: str = "C") -> ndarray:
        # CuPy's copy is made on the current device, from any device (a peer copy).
        return wrap(self._a.copy(order=order))

    def astype(
        self,
        dtype: Any,
        order: str = "K",
        casting: Any = None,
        subok: Any = None,
        copy: bool = True,
    ) -> ndarray:
        with np.errstate(all="ignore"):
            r = self._a.astype(dtype, order=order, copy=copy)
        if r is self._a:
            return self
        check_current(self)  # an elementwise copy kernel
        return wrap(r)


# NumPy methods CuPy's ndarray lacks (the host-only ones); reaching them is an AttributeError.
_NO_METHOD = {
    "tofile",
    "dump",
    "dumps",
    "setflags",
    "byteswap",
    "getfield",
    "setfield",
    "ctypes",
    "__array_interface__",
    "__array_struct__",
}


def _alloc(dev: int, n: int) -> Any:
    hook = ALLOCATOR[0]
    return hook(n) if hook is not None else _Buffer(dev, n)


def _binop(name: str) -> Any:
    def op(self: ndarray, other: Any) -> Any:
        if isinstance(other, np.ndarray):
            raise _unsupported(other)
        check_current(self, other)
        o = other._a if type(other) is ndarray else other
        with np.errstate(all="ignore"):
            r = getattr(self._a, name)(o)
        if r is NotImplemented:
            return NotImplemented
        return wrap(r, self._dev)

    op.__name__ = name
    return op


def _iop(name: str) -> Any:
    def op(self: ndarray, other: Any) -> Any:
        if isinstance(other, np.ndarray):
            raise _unsupported(other)
        check_current(self, other)
        with np.errstate(all="ignore"):
            getattr(self._a, name)(other._a if type(other) is ndarray else other)
        return self

    op.__name__ = name
    return op


def _unop(name: str) -> Any:
    def op(self: ndarray) -> Any:
        check_current(self)
        with np.errstate(all="ignore"):
            return wrap(getattr(self._a, name)(), self._dev)

    op.__name__ = name
    return op


for _n in (
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
    "divmod",
):
    setattr(ndarray, f"__{_n}__", _binop(f"__{_n}__"))
    setattr(ndarray, f"__r{_n}__", _binop(f"__r{_n}__"))
    if _n != "divmod":
        setattr(ndarray, f"__i{_n}__", _iop(f"__i{_n}__"))
for _n in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(ndarray, f"__{_n}__", _binop(f"__{_n}__"))
for _n in ("neg", "pos", "abs", "invert"):
    setattr(ndarray, f"__{_n}__", _unop(f"__{_n}__"))
