"""The tracing array and the recorder: how a capture sees every array call of one eager run.

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

import operator
from typing import Any, Callable

import numpy as np

__all__ = ["Tracer", "ACTIVE"]

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


def _strip(obj: Any) -> Any:
    """``obj`` with every Tracer inside it replaced by the plain array it views."""
    if isinstance(obj, Tracer):
        return _plain_view(obj, _ndarray)
    t = type(obj)
    if t is tuple or t is list:
        return t(_strip(o) for o in obj)
    if t is dict:
        return {k: _strip(v) for k, v in obj.items()}
    return obj


def _has_tracer(obj: Any) -> bool:
    if isinstance(obj, Tracer):
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
    if isinstance(key, _ndarray):
        return key.dtype == np.bool_ and isinstance(key, Tracer)
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
