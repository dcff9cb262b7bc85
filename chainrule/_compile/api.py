"""``compile``'s machinery behind ``chainrule.compiler``: the compiled function, its cache of
captures by guard signature, ``reset``, ``disable`` and ``explain``."""

from __future__ import annotations

import functools
import time
import weakref
from typing import Any

from chainrule._compile import capture as _capture
from chainrule._compile import replay as _replay
from chainrule._compile._recorder import CheckFailed
from chainrule._compile.agreement import same_program
from chainrule._compile.errors import Unsupported
from chainrule._compile.guards import GuardState, guard, structure
from chainrule._tensor import Tensor

__all__ = [
    "CompiledFunction",
    "compile_fn",
    "compile_module",
    "reset",
    "disable",
    "explain",
    "CACHE_SIZE",
]

CACHE_SIZE = 8

# Every compiled function, for reset() and explain().
_ALL: weakref.WeakSet[CompiledFunction] = weakref.WeakSet()
# Functions marked with disable(): never captured.
_DISABLED: weakref.WeakSet[Any] = weakref.WeakSet()


def _by_id(x: Any) -> bool:
    """Whether the signature keeps the argument leaf ``x`` by its id (guards.guard)."""
    if isinstance(x, Tensor) or x is None:
        return False
    return type(x) not in (int, float, bool, str, complex, tuple)


class CompiledFunction:
    """``fn`` compiled: each call replays a capture whose guards hold, or captures (Note
    [tracing arrays] in _tracer.py, Note [compile scope] in guards.py)."""

    def __init__(self, fn: Any, fullgraph: bool = False, dynamic: Any = None) -> None:
        self._fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.cache: dict[Any, _capture.Capture] = {}
        self.eager: dict[Any, str] = {}  # signature -> why it runs eagerly
        self.pending: dict[Any, _capture.Capture] = {}  # signature -> first capture
        self.shape_of: dict[Any, Any] = {}  # dynamic=True: structure -> its signature now
        self.shapes: dict[Any, set[Any]] = {}  # structure -> the signatures it captured
        self.stats = {"calls": 0, "replays": 0, "captures": 0, "eager": 0, "limited": 0}
        self.guards = GuardState(fn)  # Note [scope plan] in guards.py
        self.log: list[str] = []
        functools.update_wrapper(self, fn, updated=())  # type: ignore[arg-type]
        _ALL.add(self)

    @property
    def _orig_mod(self) -> Any:
        """The compiled module or function, as ``torch.compile``'s ``OptimizedModule``."""
        return self._fn

    def __getattr__(self, name: str) -> Any:
        # A compiled module still answers ``parameters()``, ``state_dict()``, ``train()``...
        if name.startswith("__") or name == "_fn":
            raise AttributeError(name)
        return getattr(self.__dict__["_fn"], name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    def _eager(self, why: str, args: Any, kwargs: Any) -> Any:
        self.stats["eager"] += 1
        if self.fullgraph:
            raise Unsupported(f"{why} (fullgraph=True forbids graph breaks)")
        return self._fn(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.stats["calls"] += 1
        fn = self._fn
        if fn in _DISABLED or getattr(fn, "__func__", None) in _DISABLED:
            return fn(*args, **kwargs)
        scope, sig, why, dev = guard(self.guards, args, kwargs)
        if why is not None:  # kept for explain() while it holds, under a key no signature equals
            if self.eager.get(("hooks",)) != why:
                self.log.append(f"eager: {why}")
            self.eager[("hooks",)] = why
            return self._eager(why, args, kwargs)
        if self.eager and ("hooks",) in self.eager:
            del self.eager[("hooks",)]
        if dev is not None:  # kept for explain(), under a key no signature equals
            if ("device",) not in self.eager:
                self.log.append(f"eager: {dev}")
            self.eager[("device",)] = dev
            return self._eager(dev, args, kwargs)
        cap = self.cache.get(sig)
        if cap is not None and _replay.consts_hold(cap):
            try:
                out = _replay.run(cap, scope)
            except CheckFailed:  # Note [checked reads]: nothing was changed yet
                self.stats["eager"] += 1
                return self._fn(*args, **kwargs)
            self.stats["replays"] += 1
            return out
        why = self.eager.get(sig)
        if why is not None:
            return self._eager(why, args, kwargs)
        if self._over_limit(sig):
            return self._eager(f"recompile limit ({CACHE_SIZE} shapes) reached", args, kwargs)
        return self._capture(sig, scope, args, kwargs)

    def _capture(self, sig: Any, scope: Any, args: Any, kwargs: Any) -> Any:
        """Run the call eagerly while capturing it; keep the capture as Note [second
        capture] says, or note why ``sig`` runs eagerly."""
        fn = self._fn
        t0 = time.perf_counter()
        cap, result = _capture.capture(fn, args, kwargs, scope, self.fullgraph)
        self.stats["captures"] += 1
        # The objects whose ids the signature holds stay alive with the capture, so that no
        # new object can take one of those ids and match it (Note [scope plan] in guards.py).
        cap.guard_refs = (scope.plan, [x for x in scope.leaves if _by_id(x)])  # type: ignore[attr-defined]
        rec = cap.rec
        # A signature's first capture is only compared with its second (Note [second
        # capture]): it is not written out, and holds no program and no fused buffers.
        second = sig in self.pending
        if second and not cap.breaks and cap.unreplayable is None and rec is not None:
            _replay.build(cap, rec)
        cap.seconds = time.perf_counter() - t0  # the eager run on Tracers and the writing
        _capture.check_escapes(cap)
        if cap.breaks or cap.unreplayable is not None:
            why = cap.unreplayable or "graph break: {} at {}".format(*cap.breaks[0])
            if self.fullgraph:
                raise Unsupported(f"{why} (fullgraph=True forbids graph breaks)")
            self.log.append(f"eager: {why}")
            if len(self.eager) >= CACHE_SIZE:
                self.eager.pop(next(iter(self.eager)))
            self.eager[sig] = why
            return result
        if self.dynamic is True:
            self._one_shape(sig)
        # See Note [second capture].
        first = self.pending.pop(sig, None)
        if first is None:
            if len(self.pending) >= CACHE_SIZE:
                self.pending.pop(next(iter(self.pending)))
            self.pending[sig] = cap
            return result
        why = same_program(first, cap)
        if why is not None:
            self.log.append(f"eager: {why}")
            self.eager[sig] = why
            return result
        if len(self.cache) >= CACHE_SIZE:
            self.cache.pop(next(iter(self.cache)))
        cap.guard = sig
        self.cache[sig] = cap
        self.log.append(
            f"captured: {cap.n_instr} array calls, {len(cap.inputs)} input arrays, "
            f"{len(cap.syncs)} optimizer steps, {cap.seconds * 1e3:.1f} ms, "
            f"{cap.bytes_held} bytes of constants, {cap.bytes_buffers} bytes of buffers"
        )
        return result

    def _over_limit(self, sig: Any) -> bool:
        """Note [dynamic shapes]: whether ``sig`` is a new shape of a structure that has
        already captured CACHE_SIZE shapes (it runs eagerly, as torch._dynamo's recompile
        limit makes a frame run eagerly)."""
        key = structure(sig)
        seen = self.shapes.get(key)
        if seen is None:
            if len(self.shapes) >= 8 * CACHE_SIZE:  # bounded, as the caches are
                self.shapes.pop(next(iter(self.shapes)))
            seen = self.shapes[key] = set()
        if sig in seen:
            return False
        if len(seen) >= CACHE_SIZE:
            if not self.stats["limited"]:
                self.log.append(f"eager: recompile limit ({CACHE_SIZE} shapes) reached")
            self.stats["limited"] += 1
            return True
        seen.add(sig)
        return False

    def _one_shape(self, sig: Any) -> None:
        """Note [dynamic shapes]: a new shape of a structure replaces the captures of its
        previous shape."""
        key = structure(sig)
        old = self.shape_of.get(key)
        if old is not None and old != sig:
            self.cache.pop(old, None)
            self.pending.pop(old, None)
            self.log.append("dynamic: a new shape replaces the previous shape's capture")
        self.shape_of[key] = sig

    def explain(self) -> str:
        """A report of the captures, their guards and the graph breaks."""
        s = self.stats
        out = [
            f"compiled {getattr(self._fn, '__qualname__', self._fn)!s}: {s['calls']} calls, "
            f"{s['captures']} captures, {s['replays']} replays, {s['eager']} eager"
        ]
        for i, cap in enumerate(self.cache.values()):
            g = cap.guard
            out.append(
                f"  capture {i}: {cap.n_instr} array calls, {len(cap.inputs)} input arrays, "
                f"{len(cap.syncs)} optimizer steps, capture {cap.seconds * 1e3:.1f} ms, "
                f"{cap.bytes_held} bytes of constants and {cap.bytes_buffers} bytes of fused "
                f"buffers held{', a backward program' if cap.bw is not None else ''}"
            )
            out.append(
                f"    guards: grad_enabled={g[0]}, {len(g[2])} argument leaves {g[2]!r:.200}, "
                f"{len(g[3][0])} external tensors, training={g[4]}"
            )
        for why in self.eager.values():
            out.append(f"  runs eagerly: {why}")
        if s["limited"]:
            out.append(
                f"  runs eagerly: {s['limited']} calls with new shapes past the recompile "
                f"limit ({CACHE_SIZE} shapes)"
            )
        return "\n".join(out)


_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile_fn(
    model: Any = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: Any = "inductor",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    disable: bool = False,
) -> Any:
    """``torch.compile``'s checks, then the compiled form of a function or module (the same
    object for ``disable=True``; a decorator when ``model`` is None).

    Raises:
        RuntimeError: for ``mode`` and ``options`` together, an unknown ``mode``, or a
            ``model`` that is not callable, with PyTorch's messages.
    """
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode not in _MODES:
        raise RuntimeError(
            f"Unrecognized mode={mode}, should be one of: default, "
            "reduce-overhead, max-autotune, max-autotune-no-cudagraphs"
        )
    if model is None:
        return functools.partial(
            compile_fn,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    if not callable(model):
        raise RuntimeError(f"torch.compile() expected a callable, got {type(model).__name__}")
    if disable:
        return model
    return CompiledFunction(model, fullgraph, dynamic)


# Note [second capture]
#     A NumPy call that a library makes on a plain view of a Tracer (``np.asarray(x)`` hands
#     one out, and NumPy does not tell the subclass) escapes the recorder: its result looks
#     like a constant of the program. So a signature's first capture is not used: the next
#     call with that signature captures again, and the two must agree, instruction for
#     instruction, literal for literal and constant for constant. A constant made from the
#     data differs between the calls (new inputs, updated parameters) and sends that signature
#     to eager for good. The third call is the first replay. Only the second capture is
#     written out as a program (replay.build): the first holds its instructions and constants
#     until the second call, not a program nor the fused replay's buffers.


# Note [dynamic shapes]
#     A capture's program has its shapes baked in (reshape targets, index arrays, buffers), so
#     a new input shape needs a capture of its own; there are no symbolic sizes. With
#     ``dynamic=False`` each shape is a signature of its own, up to CACHE_SIZE of them (a train
#     batch and a smaller last batch both replay). ``dynamic=True`` says shapes vary: the
#     captures of one *structure* (the signature with argument shapes reduced to their number
#     of dimensions) hold one shape at a time, and a new shape re-captures and replaces it, so
#     varying shapes never fill the cache nor hold a program and buffers per shape.
#     ``dynamic=None`` (PyTorch's default, which marks a dimension dynamic once it sees a second
#     shape) is static here: without symbolic sizes, marking would only make alternating shapes
#     re-capture on every change. In every mode a structure captures at most CACHE_SIZE shapes;
#     further new shapes run eagerly without capturing (each capture costs two or three eager
#     runs, and a stream of new shapes would pay it on every call), as torch._dynamo's
#     recompile limit sends a frame to eager.


def compile_module(module: Any, *args: Any, **kwargs: Any) -> None:
    """``Module.compile()``: the module's ``forward`` becomes compiled, in place."""
    fwd = type(module).forward.__get__(module)
    module.__dict__["forward"] = compile_fn(fwd, *args, **kwargs)


def reset() -> None:
    """Forget every capture of every compiled function."""
    for f in list(_ALL):
        f.cache.clear()
        f.eager.clear()
        f.pending.clear()
        f.shape_of.clear()
        f.shapes.clear()
        f.guards.plan = None


def disable(fn: Any) -> Any:
    """Mark ``fn`` never to be captured (a compiled function calling it still captures through
    it: the mark applies to compiling ``fn`` itself)."""
    try:
        _DISABLED.add(fn)
    except TypeError:
        pass
    return fn


def explain(fn: Any = None, *args: Any, **kwargs: Any) -> str:
    """The report of one compiled function, or of all of them."""
    if isinstance(fn, CompiledFunction):
        return fn.explain()
    return "\n".join(f.explain() for f in list(_ALL))
