"""The recorder of a capture (Note [tracing arrays] in _tracer.py): slots, constants, the
program's instructions, graph breaks and checked reads."""

from __future__ import annotations

import sys
import weakref
from typing import Any, Callable

import numpy as np

from chainrule._compile._tracer import CuTracer, Tracer, _strip, detrace, is_array

__all__ = ["Recorder", "Ref", "Instr", "CheckFailed"]

_ndarray = np.ndarray
_plain_view = np.ndarray.view


class Ref:
    """A slot of the program, in an instruction's argument template."""

    __slots__ = ("slot",)

    def __init__(self, slot: int) -> None:
        self.slot = slot

    def __repr__(self) -> str:
        return f"s{self.slot}"


# NumPy functions whose results have shapes set by the data: they break the graph.


def _root(a: Any) -> Any:
    """The array at the root of ``a``'s view chain (the buffer's owner); a CuPy array is its
    own root here (Note [CUDA slots])."""
    while isinstance(getattr(a, "base", None), np.ndarray):
        a = a.base
    return a


def copy_array(a: Any) -> Any:
    """A copy of a NumPy or CuPy array, on the array's own device."""
    if isinstance(a, np.ndarray):
        return np.array(a, copy=True)
    with a.device:  # cupy.cuda.Device: ndarray.copy copies to the current device
        return a.copy()


# Note [CUDA slots]
#     CuPy arrays are slots as NumPy arrays are, with a CuTracer as their tracing array (Note
#     [CUDA tracing arrays] in _tracer.py). Their memory is not followed: a CuPy array counts as
#     its own root, and an unknown one is a constant (copied on its device) and never a view of
#     a slot. Instead each CuPy value slot keeps its origins: the input and constant CuPy slots
#     whose memory it may share, taken as every CuPy slot its call read (through their own
#     origins), or none for a call known to return new memory (a factory, a ufunc, an
#     arithmetic operator, a reduction, a copy). A write into a value slot with an input among
#     its origins counts as a write that may be seen outside the run (a side effect, after
#     which reads break rather than check), and one with a constant among them writes that
#     constant (re-made on each replay). So filling a new canvas (``xp.zeros`` then a slice
#     assignment, as the convolutions' padding does) keeps the checked reads after it.


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


class Instr:
    """One recorded call: ``outs = fn(*args, **kwargs)`` with slots in the templates.

    ``outs`` is None (no result kept), an int (one slot), or a tuple of slots. ``scalar``
    names the slots whose value is a NumPy scalar to make a 0-d array of on replay (the
    recorder hands out arrays for them). ``writes`` are the slots written in place; ``random``
    marks a draw from a generator (never dropped).
    """

    __slots__ = ("fn", "args", "kwargs", "outs", "scalar", "writes", "random", "sync", "device")

    def __init__(self, fn: Any, args: Any, kwargs: Any, outs: Any, scalar: tuple[int, ...]) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.outs = outs
        self.scalar = scalar
        self.writes: tuple[int, ...] = ()
        self.random = False
        self.sync: Any = None
        self.device: int | None = None  # the current GPU when it ran (Note [replay devices])


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
        # With more than one GPU: the runtime whose current device each instruction records.
        self.runtime: Any = None
        self.cuda = False  # whether a CuPy array is a slot
        self.origins: dict[int, frozenset[int]] = {}  # CuPy value slot -> Note [CUDA slots]

    # --- slots -----------------------------------------------------------------------------
    def _new_slot(self, plain: Any, kind: str) -> int:
        k = len(self.plain)
        self.plain.append(plain)
        if isinstance(plain, _ndarray):
            t = _plain_view(plain, Tracer)
        else:
            t = CuTracer(plain)
            self.cuda = True
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
        if isinstance(x, CuTracer):
            self.graph_break("an array made outside the recorded calls")
            return None
        if not isinstance(x, _ndarray):  # a CuPy array (Note [CUDA slots])
            k = self._new_slot(x, "const")
            self.consts[k] = copy_array(x)
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
            if self.cuda:  # Note [de-tracing after a break] in _tracer.py
                live = [t for t in (r() for r in self.alive) if isinstance(t, CuTracer)]
                detrace(live, (self.tracer, self.keep, live))
        self.paused += 1  # never un-paused: the rest of the run is plain eager

    @property
    def recording(self) -> bool:
        return not self.paused

    # --- templates -------------------------------------------------------------------------
    def template(self, obj: Any) -> tuple[Any, Any, bool]:
        """(plain value, template, ok) for an argument structure."""
        if isinstance(obj, _ndarray) or is_array(obj):
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
        p = self.plain[k]
        if not isinstance(p, _ndarray):  # Note [CUDA slots]
            kinds = self.kind
            return any(kinds[o] == "input" for o in self.origins.get(k, ()))
        return id(_root(p)) in self.input_roots

    def _mark_writes(self, slots: list[int]) -> None:
        for k in slots:
            self.written.add(k)
            for o in self.origins.get(k, ()):  # Note [CUDA slots]
                if self.kind[o] == "const":
                    self.written.add(o)
        # A write through a view of a constant writes the constant.
        if self.const_roots:
            for k in slots:
                for c in self.const_roots.get(id(_root(self.plain[k])), ()):
                    self.written.add(c)

    def wrap(self, res: Any, scalar: list[int], outs: list[Any]) -> Any:
        """Tracers for a call's results (new slots), or None for an unsupported result."""
        if isinstance(res, _ndarray) or is_array(res):
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
            isinstance(r, (_ndarray, np.generic)) or is_array(r) for r in res
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
        value_ok: bool = False,
        fresh: bool = False,
    ) -> Any:
        """Run ``fn`` on the plain arrays and record it; returns Tracers of the results.
        ``value_ok``: a result that is no array is handed back unrecorded (a call that read no
        traced array), not a graph break. ``fresh``: a new CuPy result is new memory (Note
        [CUDA slots])."""
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
            n_slots = len(self.plain)
            wrapped = self.wrap(res, scalar, outs)
            if self.cuda and not fresh and len(self.plain) > n_slots:
                self._set_origins(n_slots, (targs, tkw))
            if wrapped is None:
                if value_ok:
                    return res
                self.graph_break(f"{name} returned a Python value computed from the data")
                return res
            outs_t = outs[0] if isinstance(wrapped, (_ndarray, CuTracer)) else tuple(outs)
        ins = Instr(fn, targs, tkw, outs_t, tuple(scalar))
        ins.random = random
        if self.runtime is not None:
            ins.device = self.runtime.getDevice()
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

    def _set_origins(self, first: int, templates: Any) -> None:
        """The origins (Note [CUDA slots]) of the new CuPy slots from ``first`` on: the CuPy
        slots that the call's argument templates name, through their own origins."""
        found: set[int] = set()
        _collect_origins(self, templates, found)
        if not found:
            return
        origins = frozenset(found)
        for k in range(first, len(self.plain)):
            if not isinstance(self.plain[k], _ndarray):
                self.origins[k] = origins

    def sync(self, payload: Any) -> None:
        """A point where the replay hands control to eager code (an optimizer step)."""
        ins = Instr(None, (), {}, None, ())
        ins.sync = payload
        if self.runtime is not None:
            ins.device = self.runtime.getDevice()
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


def _collect_origins(rec: Recorder, tm: Any, found: set[int]) -> None:
    if isinstance(tm, Ref):
        k = tm.slot
        if isinstance(rec.plain[k], _ndarray):
            return
        if rec.kind[k] == "value":
            found.update(rec.origins.get(k, ()))
        else:
            found.add(k)
        return
    t = type(tm)
    if t is tuple or t is list:
        for o in tm:
            _collect_origins(rec, o, found)
    elif t is dict:
        for o in tm.values():
            _collect_origins(rec, o, found)


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
