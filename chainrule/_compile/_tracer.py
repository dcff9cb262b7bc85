"""The tracing arrays: how a capture sees every array call of one eager run.

This file is over 600 lines because it holds the two tracing array types, NumPy's
(:class:`Tracer`) and CuPy's (:class:`CuTracer`), which share one recording protocol, and the
de-tracing of CuTracers after a graph break (Note [de-tracing after a break], at the end),
which rests on what a CuTracer is and is not.

Note [tracing arrays]
    While ``compile`` captures, the arrays of the tensors that the function reads (its
    arguments, the parameters and buffers of its modules, their gradients) are replaced by
    :class:`Tracer` views of the same memory. A Tracer is a NumPy array subclass: every
    ufunc (``__array_ufunc__``, which the operators reach), every dispatched NumPy function
    (``__array_function__``) and every ndarray method run on a Tracer come to the
    :class:`Recorder`, which runs the call on the plain arrays, keeps it as one instruction
    (the callable, its arguments with each array replaced by a numbered slot, the slots of its
    results), and hands back Tracers of the results. So the run is the eager run, call for
    call, through every layer (forwards, the engine's VJPs and accumulation, optimizer and
    in-place updates), and nothing in those layers knows about it: the Tracer's type is not
    ``np.ndarray``, so ``apply_op``'s fast paths step aside and the general path asks the
    array's backend (a NumPy backend whose ``xp`` records the conversion functions that
    NumPy does not dispatch, ``asarray`` and ``ascontiguousarray``).

    What is not an array call is a value read: ``bool``, ``float``, ``int``, ``.item()``,
    ``.tolist()``, printing, a NumPy function that returns a Python value computed from the
    data, and the calls whose result's shape depends on the data (``nonzero``, ``unique``,
    boolean masks...). Each is a graph break: the recorder stops recording, the run goes on
    eagerly (its results are the eager results), and the capture is not used.

    An array that is not a slot when a call reads it is a constant: a plain array made during
    the run by a factory (``np.zeros``) or held by the library (the cached 0-d scalars). A
    constant is copied when first seen; one that the program writes is re-made from that copy
    on each replay, and a writable one that it only reads is compared with the copy before each
    replay (a tensor the capture did not discover, changed since, fails that guard).
"""

from __future__ import annotations

import gc
import operator
import types
from typing import Any, Callable

import numpy as np

__all__ = ["Tracer", "CuTracer", "ACTIVE", "is_array", "is_tracer", "CUPY_TYPES", "detrace"]

_ndarray = np.ndarray
_plain_view = np.ndarray.view

# The recorder while a capture runs, else None (read by the Tracer's methods).
ACTIVE: list[Any] = [None]


_DATA_SHAPED = frozenset(
    {
        "nonzero",
        "argwhere",
        "flatnonzero",
        "unique",
        "unique_all",
        "unique_counts",
        "unique_inverse",
        "unique_values",
        "extract",
        "compress",
        "intersect1d",
        "setdiff1d",
        "setxor1d",
        "union1d",
        "trim_zeros",
        "bincount",
        "histogram",
        "histogram_bin_edges",
        "histogramdd",
        "histogram2d",
        "lstsq",
        "matrix_rank",
        "unravel_index",
    }
)
# NumPy functions that return Python values computed from metadata only.
_METADATA = frozenset(
    {
        "shape",
        "ndim",
        "size",
        "result_type",
        "can_cast",
        "min_scalar_type",
        "may_share_memory",
        "shares_memory",
        "iscomplexobj",
        "isrealobj",
        "isfortran",
        "broadcast_shapes",
        "iterable",
        "isscalar",
        "common_type",
        "ndim",
    }
)
# Functions that write their first argument in place.
_WRITES_FIRST = frozenset({"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"})
# ndarray methods that read values into Python, or whose result shape depends on the data.
_READ_METHODS = frozenset(
    {"item", "tolist", "tobytes", "tostring", "tofile", "dump", "dumps", "__dlpack__", "itemset"}
)
_DATA_SHAPED_METHODS = frozenset({"nonzero", "compress"})
# ndarray methods that write self in place.
_INPLACE_METHODS = frozenset(
    {"fill", "sort", "put", "partition", "resize", "setfield", "byteswap", "__setitem__"}
)


# The CuPy array type(s) of the backend in use (set by _xp.cuda_tracing_backend): what
# ``is_array`` counts as a device array, without importing CuPy here.
CUPY_TYPES: list[type] = []


def is_tracer(obj: Any) -> bool:
    """Whether ``obj`` is a tracing array (NumPy's or CuPy's)."""
    return isinstance(obj, (Tracer, CuTracer))


def is_array(obj: Any) -> bool:
    """Whether ``obj`` is an array a capture tracks: a NumPy or CuPy array, or a Tracer."""
    if isinstance(obj, (_ndarray, CuTracer)):
        return True
    t = type(obj)
    return any(t is c or issubclass(t, c) for c in CUPY_TYPES)


def _strip(obj: Any) -> Any:
    """``obj`` with every Tracer inside it replaced by the plain array it views."""
    if isinstance(obj, Tracer):
        return _plain_view(obj, _ndarray)
    if isinstance(obj, CuTracer):
        return obj._a
    t = type(obj)
    if t is tuple or t is list:
        return t(_strip(o) for o in obj)
    if t is dict:
        return {k: _strip(v) for k, v in obj.items()}
    return obj


def _has_tracer(obj: Any) -> bool:
    if isinstance(obj, (Tracer, CuTracer)):
        return True
    t = type(obj)
    if t is tuple or t is list:
        return any(_has_tracer(o) for o in obj)
    if t is dict:
        return any(_has_tracer(o) for o in obj.values())
    return False


def _plain_call(fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    return fn(*_strip(args), **_strip(kwargs))


def _ufunc_call(ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    fn = ufunc if method == "__call__" else getattr(ufunc, method)
    rec = ACTIVE[0]
    if rec is None or rec.paused:
        return _plain_call(fn, inputs, kwargs)
    return rec.call(fn, inputs, kwargs, ufunc.__name__, writes_first=method == "at")


def _function_call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    rec = ACTIVE[0]
    if rec is None or rec.paused:
        return _plain_call(func, args, kwargs)
    name = func.__name__
    if name in _METADATA:
        return _plain_call(func, args, kwargs)
    if name in _DATA_SHAPED or (name == "where" and len(args) + len(kwargs) == 1):
        why = f"np.{name} (its result's shape depends on the data)"
        return rec.shaped_call(func, args, kwargs, f"np.{name}", why)
    if name == "repeat" and _has_tracer(args[1:]) or _has_tracer(kwargs.get("repeats")):
        rec.graph_break("np.repeat with repeats from the data")
        return _plain_call(func, args, kwargs)
    return rec.call(func, args, kwargs, f"np.{name}", writes_first=name in _WRITES_FIRST)


def _bool_index(key: Any) -> bool:
    if isinstance(key, (_ndarray, CuTracer)):
        return key.dtype == np.bool_ and isinstance(key, (Tracer, CuTracer))
    if type(key) is tuple:
        return any(_bool_index(k) for k in key)
    return False


def _method(name: str) -> Callable[..., Any]:
    base = getattr(_ndarray, name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        rec = ACTIVE[0]
        if rec is None or rec.paused:
            return base(_plain_view(self, _ndarray), *_strip(args), **_strip(kwargs))
        if name in _READ_METHODS:
            if name == "item" and self.dtype == np.bool_ and not args and self.size == 1:
                value = base(_plain_view(self, _ndarray))
                if rec.check(self, value):  # Note [checked reads]
                    return value
            rec.graph_break(f"Tensor data read into Python (ndarray.{name})")
            return base(_plain_view(self, _ndarray), *_strip(args), **_strip(kwargs))
        if name in _DATA_SHAPED_METHODS or (name == "repeat" and _has_tracer(args)):
            why = f"ndarray.{name} (its result's shape depends on the data)"
            return rec.shaped_call(base, (self,) + args, kwargs, f"ndarray.{name}", why)
        if name == "__getitem__" and _bool_index(args[0]):
            why = "boolean mask indexing (its result's shape depends on the data)"
            return rec.shaped_call(base, (self,) + args, kwargs, "ndarray.__getitem__", why)
        return rec.call(
            base, (self,) + args, kwargs, f"ndarray.{name}", writes_first=name in _INPLACE_METHODS
        )

    method.__name__ = name
    return method


def _reader(name: str) -> Callable[..., Any]:
    base = getattr(_ndarray, name)

    def read(self: Any, *args: Any) -> Any:
        plain = _plain_view(self, _ndarray)
        rec = ACTIVE[0]
        if rec is not None and not rec.paused:
            if name == "__bool__":
                value = base(plain)
                if rec.check(self, value):
                    return value
            rec.graph_break(f"Tensor data read into Python ({name})")
        return base(plain, *args)

    read.__name__ = name
    return read


def _attr(name: str) -> property:
    get = operator.attrgetter(name)

    def fget(self: Any) -> Any:
        rec = ACTIVE[0]
        if rec is None or rec.paused:
            return get(_plain_view(self, _ndarray))
        return rec.call(get, (self,), {}, f"ndarray.{name}")

    return property(fget)


class Tracer(np.ndarray):
    """A NumPy array whose calls a capture records (Note [tracing arrays])."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _ufunc_call(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _function_call(func, args, kwargs)

    def __iter__(self) -> Any:
        for i in range(len(self)):
            yield self[i]

    @property
    def shape(self) -> Any:  # type: ignore[override]
        return _plain_view(self, _ndarray).shape

    @shape.setter
    def shape(self, value: Any) -> None:
        rec = ACTIVE[0]
        if rec is not None and not rec.paused:
            rec.graph_break("assignment to an array's shape")
        _ndarray.shape.__set__(self, value)  # type: ignore[attr-defined]


_SKIP = frozenset(
    {
        "__array_ufunc__",
        "__array_function__",
        "__getattribute__",
        "__setattr__",
        "__delattr__",
        "__init__",
        "__new__",
        "__class__",
        "__array_finalize__",
        "__array_wrap__",
        "__array_prepare__",
        "__array_priority__",
        "__array_interface__",
        "__array_struct__",
        "__doc__",
        "__hash__",
        "__sizeof__",
        "__subclasshook__",
        "__init_subclass__",
        "__dir__",
        "__class_getitem__",
        "__setstate__",
        "__getstate__",
        "__len__",
        "__iter__",
        "__reduce__",
        "__reduce_ex__",
        "__array__",
        "__buffer__",
        "__release_buffer__",
        "__array_namespace__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
    }
)
_READERS = (
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__complex__",
    "__repr__",
    "__str__",
    "__format__",
    "__contains__",
)


def _install() -> None:
    ns = Tracer.__dict__
    for name in dir(_ndarray):
        if name in _SKIP or name in ns or name in _READERS:
            continue
        obj = getattr(_ndarray, name)
        if not callable(obj):
            continue
        # Operators reach __array_ufunc__ on their own (ndarray.__add__ calls np.add).
        if (
            name.startswith("__")
            and name.endswith("__")
            and name
            not in (
                "__getitem__",
                "__setitem__",
                "__copy__",
                "__deepcopy__",
                "__round__",
            )
        ):
            continue
        setattr(Tracer, name, _method(name))
    for name in _READERS:
        setattr(Tracer, name, _reader(name))
    for name in ("T", "mT", "real", "imag", "flat"):
        setattr(Tracer, name, _attr(name))


_install()


# Note [CUDA tracing arrays]
#     A CuPy array cannot be a NumPy Tracer, so a capture hands out, for each CuPy array it
#     tracks, a :class:`CuTracer`: a wrapper holding the plain ``cupy.ndarray`` (``_a``) that
#     speaks the same protocol as ``Tracer``. Its metadata (``shape``, ``dtype``, ``strides``,
#     ``device``, ``flags``...) is read from the plain array; every method, operator,
#     indexing and array attribute (``T``, ``real``) is a recorded call of the plain array's
#     own, and the functions that forwards call come from the recording ``cupy`` module of the
#     tracing CUDA backend (_xp.py). It is no ``cupy.ndarray`` (CuPy's kernels would read its
#     memory without asking the recorder), so CuPy refuses one that escapes the recording
#     paths, as it refuses any foreign object: a loud error, never an unrecorded call. Its
#     ``__array_ufunc__`` is None, which makes a plain CuPy array's operator return
#     NotImplemented to it (CuPy's ``_should_use_rop``, NEP 13) so that ``plain + tracer``
#     comes to the CuTracer's reflected operator. What reads data into Python (``bool``,
#     ``float``, ``.item()``, ``.tolist()``, printing, a raw pointer) is a graph break, as for
#     NumPy Tracers.

_CU_READ_METHODS = frozenset({"item", "tolist", "tobytes", "tofile", "dump", "dumps", "__dlpack__"})
_CU_INPLACE_METHODS = frozenset({"fill", "sort", "put", "partition", "set", "scatter_add"})
_CU_METADATA = frozenset(
    {"shape", "dtype", "ndim", "size", "itemsize", "nbytes", "strides", "flags", "device"}
)
# cupy.ndarray methods whose array result is new memory (Note [CUDA slots] in _recorder.py).
_CU_FRESH_METHODS = frozenset(
    {"copy", "sum", "prod", "mean", "max", "min", "argmax", "argmin", "dot", "cumsum", "clip"}
)
_CU_METHODS: dict[str, Callable[..., Any]] = {}
_CU_ATTRS: dict[str, Any] = {}


def _cu_method_fn(name: str) -> Callable[..., Any]:
    """``a.name(*args, **kwargs)`` as one callable (the same object for every call of that
    method, so that two captures' programs compare equal)."""
    fn = _CU_METHODS.get(name)
    if fn is None:

        def call(a: Any, *args: Any, **kwargs: Any) -> Any:
            return getattr(a, name)(*args, **kwargs)

        call.__name__ = f"ndarray_{name}"
        call.__qualname__ = call.__name__
        fn = _CU_METHODS[name] = call
    return fn


def _cu_call(self: CuTracer, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    fn = _cu_method_fn(name)
    rec = ACTIVE[0]
    if rec is None or rec.paused:
        return fn(self._a, *_strip(args), **_strip(kwargs))
    if name in _CU_READ_METHODS:
        if name == "item" and self.dtype == np.bool_ and not args and self.size == 1:
            value = self._a.item()
            if rec.check(self, value):  # Note [checked reads]
                return value
        rec.graph_break(f"Tensor data read into Python (cupy.ndarray.{name})")
        return fn(self._a, *_strip(args), **_strip(kwargs))
    if name in _DATA_SHAPED_METHODS or (name == "repeat" and _has_tracer(args)):
        why = f"cupy.ndarray.{name} (its result's shape depends on the data)"
        return rec.shaped_call(fn, (self,) + args, kwargs, f"cupy.ndarray.{name}", why)
    return rec.call(
        fn,
        (self,) + args,
        kwargs,
        f"cupy.ndarray.{name}",
        writes_first=name in _CU_INPLACE_METHODS,
        fresh=name in _CU_FRESH_METHODS,
    )


def _cu_op(op: Callable[..., Any], reflected: bool = False, inplace: bool = False) -> Any:
    name = op.__name__

    def method(self: CuTracer, *other: Any) -> Any:
        args = (other[0], self) if reflected else (self,) + other
        rec = ACTIVE[0]
        if rec is None or rec.paused:
            res = op(*_strip(args))
            return self if inplace else res
        if inplace:
            rec.call(op, args, {}, f"operator.{name}", writes_first=True)
            return self
        return rec.call(op, args, {}, f"operator.{name}", fresh=True)  # a new array

    return method


def _cu_reader(name: str) -> Callable[..., Any]:
    def read(self: CuTracer, *args: Any) -> Any:
        plain = self._a
        rec = ACTIVE[0]
        if rec is not None and not rec.paused:
            if name == "__bool__":
                value = bool(plain)
                if rec.check(self, value):
                    return value
            rec.graph_break(f"Tensor data read into Python ({name})")
        return getattr(plain, name)(*args)

    read.__name__ = name
    return read


class _ReadOnUse(dict):  # type: ignore[type-arg]
    """A CuTracer's ``__cuda_array_interface__``: a graph break when a consumer reads it (its
    pointer gives the memory to code the capture does not see)."""

    def _read(self) -> None:
        rec = ACTIVE[0]
        if rec is not None and not rec.paused:
            rec.graph_break("a raw device pointer read (__cuda_array_interface__)")

    def __getitem__(self, key: Any) -> Any:
        self._read()
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._read()
        return dict.get(self, key, default)

    def __iter__(self) -> Any:
        self._read()
        return dict.__iter__(self)

    def items(self) -> Any:
        self._read()
        return dict.items(self)


class CuTracer:
    """A CuPy array whose calls a capture records (Note [CUDA tracing arrays])."""

    __slots__ = ("_a", "__weakref__")
    __array_priority__ = 200
    __array_ufunc__ = None  # CuPy's and NumPy's operators defer to the reflected operator

    def __init__(self, a: Any) -> None:
        self._a = a

    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    device = property(lambda self: self._a.device)

    def _get_shape(self) -> Any:
        return self._a.shape

    def _set_shape(self, value: Any) -> None:
        rec = ACTIVE[0]
        if rec is not None and not rec.paused:
            rec.graph_break("assignment to an array's shape")
        self._a.shape = value

    shape = property(_get_shape, _set_shape)

    def _raw(self, what: str) -> Any:
        rec = ACTIVE[0]
        if rec is not None and not rec.paused:
            rec.graph_break(f"a raw device pointer read ({what})")
        return getattr(self._a, what)

    data = property(lambda self: self._raw("data"))

    @property
    def __cuda_array_interface__(self) -> Any:
        # Present, so that a probe (``hasattr``) sees a GPU array; reading it is the break.
        return _ReadOnUse(self._a.__cuda_array_interface__)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(len(self._a)):
            yield self[i]

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        return self._a.__array__(*args, **kwargs)  # CuPy's refusal of implicit conversion

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _function_call(func, args, kwargs)

    def __getitem__(self, key: Any) -> Any:
        rec = ACTIVE[0]
        if rec is None or rec.paused:
            return self._a[_strip(key)]
        if _bool_index(key):
            why = "boolean mask indexing (its result's shape depends on the data)"
            return rec.shaped_call(operator.getitem, (self, key), {}, "cupy.ndarray[]", why)
        return rec.call(operator.getitem, (self, key), {}, "cupy.ndarray[]")

    def __setitem__(self, key: Any, value: Any) -> None:
        rec = ACTIVE[0]
        if rec is None or rec.paused:
            self._a[_strip(key)] = _strip(value)
            return
        rec.call(operator.setitem, (self, key, value), {}, "cupy.ndarray[]=", writes_first=True)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._a, name)
        if callable(value):
            return lambda *args, **kwargs: _cu_call(self, name, args, kwargs)
        if is_array(value):  # T, mT, real, imag, base
            rec = ACTIVE[0]
            if rec is None or rec.paused:
                return value
            get = _CU_ATTRS.get(name)
            if get is None:
                get = _CU_ATTRS[name] = operator.attrgetter(name)  # one object per name
            return rec.call(get, (self,), {}, f"cupy.ndarray.{name}")
        return value

    def __repr__(self) -> str:
        rec = ACTIVE[0]
        if rec is not None and not rec.paused:
            rec.graph_break("Tensor data read into Python (__repr__)")
        return repr(self._a)

    __str__ = __repr__


for _op in (
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.matmul,
    operator.and_,
    operator.or_,
    operator.xor,
    operator.lshift,
    operator.rshift,
):
    _n = _op.__name__.strip("_")
    setattr(CuTracer, f"__{_n}__", _cu_op(_op))
    setattr(CuTracer, f"__r{_n}__", _cu_op(_op, reflected=True))
    setattr(CuTracer, f"__i{_n}__", _cu_op(getattr(operator, f"i{_n}"), inplace=True))
for _op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
    setattr(CuTracer, f"__{_op.__name__}__", _cu_op(_op))
for _op in (operator.neg, operator.pos, operator.abs, operator.invert):
    setattr(CuTracer, f"__{_op.__name__.strip('_')}__", _cu_op(_op))
setattr(CuTracer, "__divmod__", _cu_op(divmod))
setattr(CuTracer, "__rdivmod__", _cu_op(divmod, reflected=True))
CuTracer.__hash__ = None  # type: ignore[assignment]  # as cupy.ndarray's
for _n in ("__bool__", "__float__", "__int__", "__index__", "__complex__", "__format__"):
    setattr(CuTracer, _n, _cu_reader(_n))


# Note [de-tracing after a break]
#     After a graph break the run goes on eagerly (Note [tracing arrays]). On CPU nothing more
#     is needed: a NumPy Tracer is an ndarray, so every use of one (a plain array's
#     ``__setitem__`` or in-place operator given a Tracer, NumPy's own functions) is a plain
#     use of the same memory. A CuTracer is no ``cupy.ndarray``: while paused its own methods
#     and the tracing backend's ``xp`` run on its plain array, but a plain CuPy array's method
#     given one refuses it (``canvas[...] = x`` in the convolutions' padding: the stand-in's
#     TypeError; real CuPy's basic-slice assignment would take a non-ndarray for a scalar and
#     ``fill`` with it) and, once the capture ends, the live backend's ``xp`` (real CuPy
#     functions) gets it raw. The arrays that the eager continuation makes are plain (the
#     recording paths hand out plain results while paused), so the CuTracers it would meet
#     are the ones handed out before the break: held by the run's tensors (activations, the
#     loss, gradients), the saved values of the graph's nodes, optimizer state, module
#     attributes, any Python container. So at the first break of a capture that tracks CuPy
#     arrays, :func:`detrace` puts each live CuTracer's plain array (the same memory: no copy,
#     the same values) where the CuTracer was, in every object that the garbage collector sees
#     holding one (``gc.get_referrers``): list items, dict values, ``__slots__`` (a tensor's
#     ``_data``, a node's saved values), closure cells, and tuples, which are rebuilt (a named
#     tuple as its own type) and put in place in their own holders. The recorder's own lists
#     keep theirs (the capture is not used after a break). After that every array that the
#     rest of the call, its result and its graph reach is a plain CuPy array, and the capture's
#     end puts the scope tensors' arrays back as always (``restore``).
#
#     What the collector cannot reach is a CuTracer held only in a local variable of a frame
#     running at the break: a library frame between two array calls (the user's frames hold
#     tensors, which are reached). That frame's own code goes on using it inside the capture,
#     where its own methods and the tracing ``xp`` run on its plain array; one that it stores
#     in a scope tensor (the engine's gradient of a parameter) is stripped by ``restore``, one
#     that it stores elsewhere would outlive the call (none does in the breaks that
#     tests/cuda/test_compile_breaks_on_cuda.py makes, a hook inside the backward included:
#     no CuTracer is alive after those calls).
#
#     The plain arrays after the break are also why the tracing backend's ``ndarray`` is the
#     plain CuPy type while paused and its per-node device switch looks at both types
#     (``TracingCupyBackend`` in _xp.py): a backward or an optimizer step on another GPU than
#     the current one finds its GPU by them. The pass walks the collector's
#     objects once per level of tuples (about 55 ms with 190,000 objects), once per capture
#     that breaks: a signature that broke runs eagerly afterwards, without capturing.


def _slot_names(t: type) -> list[str]:
    """The ``__slots__`` names of ``t`` and its bases, mangled as Python stores them."""
    out = []
    for c in t.__mro__:
        slots = c.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{c.__name__.lstrip('_')}{name}"
            out.append(name)
    return out


_NONE = object()


def _holders(tracers: list[Any], held: dict[int, Any], skip_ids: set[int]) -> list[Any]:
    """The objects holding one of ``tracers``, directly or through tuples; the tuples among
    them are added to ``held`` (one walk of the collector's objects per level of tuples)."""
    out: list[Any] = []
    skip_ids.add(id(out))
    level = tracers
    while level:
        found: list[Any] = []
        skip_ids.add(id(found))
        for r in gc.get_referrers(*level):
            k = id(r)
            if k in skip_ids or k in held:
                continue
            if isinstance(r, tuple):
                held[k] = r
                found.append(r)
            else:
                out.append(r)
        level = found
    return out


def _rebind(r: Any, replaced: Callable[[Any], Any]) -> int:
    """Put ``replaced(v)`` in place of each entry ``v`` of the mutable holder ``r``."""
    changed = 0
    t = type(r)
    if t is list:
        for i, v in enumerate(r):
            w = replaced(v)
            if w is not v:
                r[i] = w
                changed += 1
    elif t is dict:
        for k, v in list(r.items()):
            w = replaced(v)
            if w is not v:
                r[k] = w
                changed += 1
    elif t is types.CellType:
        v = r.cell_contents
        w = replaced(v)
        if w is not v:
            r.cell_contents = w
            changed += 1
    elif not isinstance(r, (tuple, types.FrameType, type, types.ModuleType)):
        for name in _slot_names(t):
            v = getattr(r, name, None)
            w = replaced(v)
            if w is not v:
                object.__setattr__(r, name, w)
                changed += 1
    return changed


def detrace(tracers: list[CuTracer], skip: tuple[Any, ...]) -> int:
    """Note [de-tracing after a break]: in every holder of one of ``tracers`` (but the
    containers in ``skip``), the plain array in its place; returns how many entries changed."""
    held: dict[int, Any] = {id(t): t for t in tracers}  # tracers and the tuples holding them
    new: dict[int, Any] = {}
    skip_ids = {id(o) for o in skip} | {id(held), id(new), id(tracers)}
    holders = _holders(tracers, held, skip_ids)

    def replaced(v: Any) -> Any:
        k = id(v)
        if held.get(k, _NONE) is not v:
            return v
        r = new.get(k)
        if r is None:
            if isinstance(v, CuTracer):
                r = v._a
            else:  # a tuple holding one: rebuilt (a named tuple as its own type)
                items = [replaced(o) for o in v]
                r = type(v)._make(items) if hasattr(type(v), "_make") else type(v)(items)
            new[k] = r
        return r

    changed = 0
    for r in holders:
        changed += _rebind(r, replaced)
    return changed
