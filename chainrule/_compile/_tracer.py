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
import sys
import types
import weakref
from typing import Any, Callable

import numpy as np

from chainrule.backends.numpy_backend import NumpyBackend

__all__ = ["Tracer", "Recorder", "Ref", "ACTIVE", "TRACING_BACKEND", "CheckFailed"]

_ndarray = np.ndarray
_plain_view = np.ndarray.view

# The recorder while a capture runs, else None (read by the Tracer's methods).
ACTIVE: list[Any] = [None]


class Ref:
    """A slot of the program, in an instruction's argument template."""

    __slots__ = ("slot",)

    def __init__(self, slot: int) -> None:
        self.slot = slot

    def __repr__(self) -> str:
        return f"s{self.slot}"


# NumPy functions whose results have shapes set by the data: they break the graph.
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


def _root(a: Any) -> Any:
    """The array at the root of ``a``'s view chain (the buffer's owner)."""
    while isinstance(getattr(a, "base", None), np.ndarray):
        a = a.base
    return a


def _site() -> str:
    """The first frame outside chainrule: the user's line that made the call."""
    f = sys._getframe(1)
    root = __name__.rsplit(".", 2)[0]
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if mod != root and not mod.startswith(root + "."):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return "<unknown>"


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


class Instr:
    """One recorded call: ``outs = fn(*args, **kwargs)`` with slots in the templates.

    ``outs`` is None (no result kept), an int (one slot), or a tuple of slots. ``scalar``
    names the slots whose value is a NumPy scalar to make a 0-d array of on replay (the
    recorder hands out arrays for them). ``writes`` are the slots written in place; ``random``
    marks a draw from a generator (never dropped).
    """

    __slots__ = ("fn", "args", "kwargs", "outs", "scalar", "writes", "random", "sync")

    def __init__(self, fn: Any, args: Any, kwargs: Any, outs: Any, scalar: tuple[int, ...]) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.outs = outs
        self.scalar = scalar
        self.writes: tuple[int, ...] = ()
        self.random = False
        self.sync: Any = None


class Recorder:
    """The state of one capture: slots, constants, the program and the breaks."""

    def __init__(self, fullgraph: bool = False) -> None:
        self.fullgraph = fullgraph
        self.slot_of: dict[int, int] = {}  # id(array) -> slot, for plain arrays and Tracers
        self.plain: list[Any] = []  # slot -> the plain array it held at capture
        self.tracer: list[Any] = []  # slot -> the Tracer handed out for it
        self.kind: list[str] = []  # slot -> "input", "const", "value"
        self.consts: dict[int, Any] = {}  # slot -> the copy taken when first seen
        self.written: set[int] = set()
        self.program: list[Instr] = []
        self.breaks: list[tuple[str, str]] = []
        self.paused = 0
        self.side_effects = False  # a write to a read-in array, a draw or a sync so far
        self.inputs: list[Any] = []  # the read-in arrays
        self.input_roots: set[int] = set()  # ids of the buffers at their view chains' roots
        self.const_roots: dict[int, list[int]] = {}  # root buffer id -> constant slots
        self.alive: list[Any] = []  # weak references to the Tracers handed out
        self.keep: list[Any] = []  # every array the capture saw, so that ids stay unique

    # --- slots -----------------------------------------------------------------------------
    def _new_slot(self, plain: Any, kind: str) -> int:
        k = len(self.plain)
        self.plain.append(plain)
        t = _plain_view(plain, Tracer)
        self.tracer.append(t)
        self.kind.append(kind)
        self.slot_of[id(plain)] = k
        self.slot_of[id(t)] = k
        self.keep.append(plain)
        self.keep.append(t)
        self.alive.append(weakref.ref(t))
        return k

    def add_input(self, array: Any) -> Any:
        """A slot for an array that the replay reads from a live tensor; returns its Tracer."""
        k = self.slot_of.get(id(array))
        if k is None:
            k = self._new_slot(array, "input")
            self.inputs.append(array)
            self.input_roots.add(id(_root(array)))
        return self.tracer[k]

    def slot(self, x: Any) -> int | None:
        """The slot of array ``x``, making a constant of an unknown plain array; None (after a
        break) for an untracked view of a slot."""
        k = self.slot_of.get(id(x))
        if k is not None:
            return k
        # A view of a slot's array that NumPy made without us (np.asarray of a Tracer).
        b = x.base
        while b is not None:
            kb = self.slot_of.get(id(b))
            if kb is not None:
                p = self.plain[kb]
                if (
                    x.shape == p.shape
                    and x.strides == p.strides
                    and x.dtype == p.dtype
                    and x.__array_interface__["data"][0] == p.__array_interface__["data"][0]
                ):
                    self.slot_of[id(x)] = kb
                    self.keep.append(x)
                    return kb
                if self.kind[kb] == "const":  # a view of a constant is a constant
                    break
                self.graph_break("an array view made outside the recorded calls")
                return None
            b = getattr(b, "base", None)
        if isinstance(x, Tracer):
            self.graph_break("an array made outside the recorded calls")
            return None
        k = self._new_slot(x, "const")
        self.consts[k] = np.array(x, copy=True)
        self.const_roots.setdefault(id(_root(x)), []).append(k)
        return k

    # --- breaks ----------------------------------------------------------------------------
    def graph_break(self, reason: str) -> None:
        site = _site()
        if self.fullgraph:
            from chainrule._compile.errors import Unsupported

            self.paused += 1
            raise Unsupported(f"{reason} at {site} (fullgraph=True forbids graph breaks)")
        if not self.breaks:
            self.breaks.append((reason, site))
        self.paused += 1  # never un-paused: the rest of the run is plain eager

    @property
    def recording(self) -> bool:
        return not self.paused

    # --- templates -------------------------------------------------------------------------
    def template(self, obj: Any) -> tuple[Any, Any, bool]:
        """(plain value, template, ok) for an argument structure."""
        if isinstance(obj, _ndarray):
            k = self.slot(obj)
            if k is None:
                return obj, None, False
            return self.plain[k], Ref(k), True
        t = type(obj)
        if t is tuple or t is list:
            vals, tmps = [], []
            ok = True
            for o in obj:
                v, tm, good = self.template(o)
                ok = ok and good
                vals.append(v)
                tmps.append(tm)
            return t(vals), t(tmps), ok
        if t is dict:
            vd, td = {}, {}
            ok = True
            for key, o in obj.items():
                v, tm, good = self.template(o)
                ok = ok and good
                vd[key] = v
                td[key] = tm
            return vd, td, ok
        if isinstance(obj, np.generic) or obj is None or t in (int, float, bool, complex, str):
            return obj, obj, True
        if t is slice or obj is Ellipsis or isinstance(obj, (np.dtype, type)):
            return obj, obj, True
        if isinstance(obj, (Tracer,)):
            return obj, None, False
        return obj, obj, True

    def _external(self, k: int) -> bool:
        """Whether slot ``k``'s memory may be a read-in array's (a write there is seen
        outside the run)."""
        kind = self.kind[k]
        if kind == "input":
            return True
        if kind == "const":
            return False
        return id(_root(self.plain[k])) in self.input_roots

    def _mark_writes(self, slots: list[int]) -> None:
        for k in slots:
            self.written.add(k)
        # A write through a view of a constant writes the constant.
        if self.const_roots:
            for k in slots:
                for c in self.const_roots.get(id(_root(self.plain[k])), ()):
                    self.written.add(c)

    def wrap(self, res: Any, scalar: list[int], outs: list[Any]) -> Any:
        """Tracers for a call's results (new slots), or None for an unsupported result."""
        if isinstance(res, _ndarray):
            k = self.slot_of.get(id(res))
            if k is not None:  # an out= argument handed back, or the input itself
                outs.append(k)
                return self.tracer[k]
            k = self._new_slot(res, "value")
            outs.append(k)
            return self.tracer[k]
        if isinstance(res, np.generic):
            k = self._new_slot(np.asarray(res), "value")
            scalar.append(k)
            outs.append(k)
            return self.tracer[k]
        t = type(res)
        if isinstance(res, (tuple, list)) and all(
            isinstance(r, (_ndarray, np.generic)) for r in res
        ):
            items = [self.wrap(r, scalar, outs) for r in res]
            if hasattr(t, "_fields"):  # a named tuple (np.linalg's SVDResult...)
                return t(*items)
            return t(items)
        return None

    def call(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        name: str,
        writes_first: bool = False,
        random: bool = False,
    ) -> Any:
        """Run ``fn`` on the plain arrays and record it; returns Tracers of the results."""
        pargs, targs, ok1 = self.template(args)
        pkw, tkw, ok2 = self.template(kwargs) if kwargs else ({}, {}, True)
        if not (ok1 and ok2) or not self.recording:
            return fn(*_strip(pargs), **_strip(pkw))
        res = fn(*pargs, **pkw)
        if res is None:
            outs_t: Any = None
            scalar: list[int] = []
            wrapped = None
        else:
            scalar = []
            outs: list[Any] = []
            wrapped = self.wrap(res, scalar, outs)
            if wrapped is None:
                self.graph_break(f"{name} returned a Python value computed from the data")
                return res
            outs_t = outs[0] if isinstance(wrapped, _ndarray) else tuple(outs)
        ins = Instr(fn, targs, tkw, outs_t, tuple(scalar))
        ins.random = random
        if random:
            self.side_effects = True
        writes = []
        o = tkw.get("out") if tkw else None
        if o is not None:
            writes.extend(r.slot for r in (o if type(o) is tuple else (o,)) if isinstance(r, Ref))
        if writes_first and targs and isinstance(targs[0], Ref):
            writes.append(targs[0].slot)
        if writes:
            # An out= result is its argument: nothing new to store.
            if isinstance(outs_t, int) and outs_t in writes:
                ins.outs = None
            elif type(outs_t) is tuple and all(s in writes for s in outs_t):
                ins.outs = None
            ins.writes = tuple(writes)
            self._mark_writes(writes)
            if not self.side_effects and any(self._external(w) for w in writes):
                self.side_effects = True
        self.program.append(ins)
        return wrapped

    def sync(self, payload: Any) -> None:
        """A point where the replay hands control to eager code (an optimizer step)."""
        ins = Instr(None, (), {}, None, ())
        ins.sync = payload
        self.program.append(ins)
        self.side_effects = True

    def shaped_call(
        self, fn: Callable[..., Any], args: Any, kwargs: Any, name: str, reason: str
    ) -> Any:
        """A call whose result's shape depends on the data: recorded with a check of that
        shape (Note [checked reads]) before any side effect, else a graph break."""
        if self.side_effects:
            self.graph_break(reason)
            return fn(*_strip(args), **_strip(kwargs))
        n = len(self.program)
        res = self.call(fn, args, kwargs, name)
        if not self.recording or len(self.program) == n:
            return res
        for k in _outs_of(self.program[-1]):
            ins = Instr(_check_shape, (Ref(k), self.plain[k].shape), {}, None, ())
            ins.random = True  # never dropped
            self.program.append(ins)
        return res

    def check(self, x: Any, value: bool) -> bool:
        """Note [checked reads]: ``bool(x)`` read before any side effect becomes a check of
        the program; returns False (a graph break) when it cannot be one."""
        if self.side_effects:
            return False
        k = self.slot(x)
        if k is None:
            return False
        ins = Instr(_check_bool, (Ref(k), value), {}, None, ())
        ins.writes = ()
        ins.random = False
        ins.sync = None
        self.program.append(ins)
        ins.random = True  # never dropped
        return True


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


class CheckFailed(Exception):
    """A checked read (Note [checked reads]) gave another value on replay."""


def _outs_of(ins: Instr) -> tuple[int, ...]:
    o = ins.outs
    if o is None:
        return ()
    return (o,) if isinstance(o, int) else o


def _check_shape(x: Any, shape: tuple[int, ...]) -> None:
    if x.shape != shape:
        raise CheckFailed


def _check_bool(x: Any, value: bool) -> None:
    if bool(x) is not value:
        raise CheckFailed


# Note [checked reads]
#     Validity checks read a boolean from the data (``if (target < 0).any(): raise``). Such a
#     read, made before the run has changed anything outside it (no write to an array it read
#     in, no random draw, no optimizer step), is kept as a check instruction instead of a
#     graph break: the replay computes the same boolean and, if it differs, stops before any
#     side effect and the call runs eagerly (so a check that would raise raises as in eager).


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


class _RecordingNumpy:
    """NumPy as a forward on Tracers sees it (``xp``): every function it hands out is recorded
    while a capture runs, so that the conversions NumPy does not dispatch to a Tracer
    (``asarray``, ``ascontiguousarray``) and the arrays that factories make (``xp.zeros``,
    then written with values from the data) are slots of the program, not constants."""

    def __init__(self, module: Any = np) -> None:
        self._module = module

    @staticmethod
    def _recorded(f: Callable[..., Any], name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            rec = ACTIVE[0]
            if rec is None or rec.paused:
                return f(*_strip(args), **_strip(kwargs))
            if name in _DATA_SHAPED or name in _METADATA or name == "where" and len(args) == 1:
                if _has_tracer(args) or _has_tracer(kwargs):
                    return _function_call(f, args, kwargs)
                return f(*args, **kwargs)
            return rec.call(f, args, kwargs, f"np.{name}")

        call.__name__ = name
        return call

    def __getattr__(self, name: str) -> Any:
        if name == "asnumpy":  # CuPy's name: code that tests ``xp is np`` takes it for CuPy
            v: Any = np.asanyarray
        else:
            v = getattr(self._module, name)
        if isinstance(v, np.ufunc):  # a ufunc given a Tracer dispatches by itself
            return v
        if isinstance(v, types.ModuleType):  # xp.lib.stride_tricks, xp.linalg
            w = _RecordingNumpy(v)
            self.__dict__[name] = w
            return w
        if callable(v) and not isinstance(v, type) and not name.startswith("_"):
            w = self._recorded(v, name)
            self.__dict__[name] = w
            return w
        return v


class _TracingBackend(NumpyBackend):
    """NumPy's backend, for Tracer arrays: its ``xp`` records conversions."""

    xp = _RecordingNumpy()  # type: ignore[assignment]

    def ensure_array(self, value: Any) -> np.ndarray:
        return value if isinstance(value, np.ndarray) else np.asarray(value)

    def asarray(self, obj: Any, dtype: Any = None, device: Any = None) -> np.ndarray:
        return self.xp.asarray(obj, dtype=dtype)

    def from_host(self, array: Any, device: Any = None) -> np.ndarray:
        return self.xp.asarray(array)

    def to_host(self, array: Any) -> np.ndarray:
        """The array itself (NumPy's host is its device): a Python read of it comes later,
        at ``.item()`` or ``.tolist()``, and breaks there."""
        return array if isinstance(array, Tracer) else np.asarray(array)

    def scatter_add(self, target: np.ndarray, index: Any, values: Any) -> None:
        np.add.at(target, index, values)

    def check_index_bounds(self, index: Any, size: int, dim: int = 0) -> None:
        """NumPy's check, as one boolean read of the data (a checked read, Note [checked
        reads], when the index is a Tracer), then NumPy's own message."""
        if isinstance(index, Tracer) and index.size:
            if not bool(((index < -size) | (index >= size)).any()):
                return
        NumpyBackend.check_index_bounds(self, _strip(index), size, dim)


TRACING_BACKEND = _TracingBackend()
