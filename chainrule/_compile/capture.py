"""One capture: run the function eagerly on Tracer arrays and keep what a replay needs.

The run is the call's eager run (its results are the call's results). Around it the capture
swaps each external tensor's array (and its gradient's) for a Tracer view, and afterwards puts
the plain arrays back and notes, for each external tensor, what the run changed: its array (a
slot), its ``.grad`` (None, the same tensor, or a new tensor over a slot) and how far its
version moved. The same note is taken at each optimizer step (a sync point: the replay calls
the optimizer's own ``step`` there, on the live state).

Why this file is over 600 lines: swapping the arrays in, the notes at each sync point and
putting the arrays back are one protocol over the same per-tensor records, for NumPy and for
CuPy arrays alike (Note [an unrecorded step on CUDA]).
"""

from __future__ import annotations

import gc
import time
from typing import Any

import numpy as np

from chainrule import _dispatch, backends
from chainrule._compile._recorder import Recorder
from chainrule._compile._tracer import ACTIVE, CuTracer, Tracer, is_array, is_tracer
from chainrule._compile._xp import RecordingRng, cuda_tracing_backend
from chainrule._compile.guards import Scope
from chainrule._tensor import Tensor
from chainrule.autograd.graph import Node, OpNode

__all__ = ["Capture", "capture"]


class StateNote:
    """What the eager run had changed in the external tensors at one point.

    ``data``: (tensor index, slot) for each tensor whose ``_data`` is now another array;
    ``grads``: (tensor index, None | ("data", slot) | (tag, slot)); ``versions``: (index,
    delta); ``training``: (module index, flag). Only changes (Note [changed entries]).

    Note [changed entries]
        A note holds an entry only where the state differs from what the replay has already
        set at that point: the call's start (whose gradients' presence and ``training`` flags
        the guards fix), the previous note, or the state after the optimizer step since (the
        replay runs that step, so what it changed needs no entry). A ``.grad`` set to None
        that was None, a gradient tensor that a sync point already set, or a ``training``
        flag that did not move cost a replay nothing. Versions are always moved by their
        delta.
    """

    __slots__ = ("data", "grads", "versions", "training")

    def __init__(self) -> None:
        self.data: list[tuple[int, int]] = []
        self.grads: list[tuple[int, Any]] = []
        self.versions: list[tuple[int, int]] = []
        self.training: list[tuple[int, bool]] = []

    def slots(self) -> list[int]:
        out = [s for _, s in self.data]
        out += [g[1] for _, g in self.grads if type(g) is tuple]
        return out


_UNTRACKED = object()
# The live CUDA backend while a capture that may meet CUDA arrays runs (else None).
_LIVE_CUDA: list[Any] = [None]


class Capture:
    """A recorded program and the notes to replay it (see replay.py)."""

    def __init__(self) -> None:
        self.rec: Recorder | None = None
        self.inputs: list[tuple[int, bool]] = []  # (tensor index, is_grad) per input slot
        self.input_slots: list[int] = []
        self.final: StateNote | None = None
        self.syncs: list[tuple[Any, StateNote]] = []  # (optimizer ref, note)
        self.outputs: Any = None
        self.unreplayable: str | None = None
        self.breaks: list[tuple[str, str]] = []
        self.seconds = 0.0
        self.consts: list[tuple[int, Any, Any, bool]] = []  # (slot, orig, copy, written)
        self.program: Any = None  # set by replay.build
        self.n_instr = 0
        self.bytes_held = 0
        self.bytes_buffers = 0  # the fused replay's buffers (Note [fused replay])
        self.guard: tuple[Any, ...] = ()
        self.lock: Any = None  # set by replay.build when the program has buffers
        self.bw: Any = None  # Note [backward outside]: a _Backward when fn returns a graph
        self.device0: int | None = None  # the current GPU at capture, with several GPUs


def _version(t: Tensor) -> int:
    vc = t._vc
    return 0 if vc is None else vc.value


class _Session:
    """The capture's view of the scope while fn runs (the recorder's hooks call into it)."""

    def __init__(self, cap: Capture, rec: Recorder, scope: Scope) -> None:
        self.cap = cap
        self.rec = rec
        self.scope = scope
        self.orig: list[Any] = []  # per tensor: its plain array before the run
        self.grad0: list[Any] = []  # per tensor: its .grad before the run
        self.gorig: list[Any] = []  # per tensor: its .grad's plain array, or None
        self.base_versions: list[int] = []
        self.new_grads: dict[int, tuple[int, Tensor]] = {}  # id(grad) -> (tag, tensor)
        self.flags: list[tuple[bool, Any]] = []  # per tensor: requires_grad, grad_fn before

    def start(self) -> None:
        rec = self.rec
        for i, t in enumerate(self.scope.tensors):
            d = t._data
            self.orig.append(d)
            tr = rec.add_input(d)
            k = rec.slot_of[id(tr)]
            self.cap.inputs.append((i, False))
            self.cap.input_slots.append(k)
            t._data = tr
            g = t._grad
            self.grad0.append(g)
            if g is not None:
                gd = g._data
                self.gorig.append(gd)
                tg = rec.add_input(gd)
                self.cap.inputs.append((i, True))
                self.cap.input_slots.append(rec.slot_of[id(tg)])
                g._data = tg
            else:
                self.gorig.append(None)
            self.base_versions.append(_version(t))
            self.flags.append((t._requires_grad, t.grad_fn))
        self.known = [self._state(i, t) for i, t in enumerate(self.scope.tensors)]
        self.known_training = [m.training for m in self.scope.modules]

    def _slot_of_data(self, d: Any) -> int | None:
        if is_array(d):
            return self.rec.slot(d)
        return None

    def _state(self, i: int, t: Tensor) -> tuple[Any, Any]:
        """Tensor ``i``'s array slot and gradient state, as a replay would have set them
        (Note [changed entries]); an object() where no entry could describe it."""
        slot_of = self.rec.slot_of
        k = slot_of.get(id(t._data))
        data: Any = object() if k is None else k
        g = t._grad
        if g is None:
            return data, None
        gk = slot_of.get(id(g._data))
        if gk is None:
            return data, object()
        if g is self.grad0[i]:
            return data, ("same", gk)
        tag = self.new_grads.get(id(g))
        return data, object() if tag is None else (tag[0], gk)

    def _grad_state(self, i: int, t: Tensor) -> Any:
        """Tensor ``i``'s gradient state for a note (None, ("same", slot), (tag, slot)), or
        _UNTRACKED (the capture is then unreplayable)."""
        g = t._grad
        if g is None:
            return None
        if g is self.grad0[i]:
            gk = self._slot_of_data(g._data)
            if gk is None:
                self.cap.unreplayable = "a gradient's array was replaced by an untracked one"
                return _UNTRACKED
            return ("same", gk)
        tag = self.new_grads.get(id(g))
        if tag is None:
            tag = (len(self.new_grads), g)
            self.new_grads[id(g)] = tag
        gk = self._slot_of_data(g._data)
        if gk is None or type(g) is not Tensor or g._requires_grad:
            self.cap.unreplayable = "a gradient was made outside the recorded calls"
            return _UNTRACKED
        return (tag[0], gk)

    def note(self) -> StateNote:
        """The changes since the last note (the run's start, or the last optimizer step):
        only the entries that change something (Note [changed entries])."""
        note = StateNote()
        for i, t in enumerate(self.scope.tensors):
            kd, kg = self.known[i]
            k = self._slot_of_data(t._data)
            if k is None:
                self.cap.unreplayable = "a tensor's array was replaced by an untracked one"
            elif k != kd:
                note.data.append((i, k))
                kd = k
            state = self._grad_state(i, t)
            if state is _UNTRACKED:
                continue
            if state != kg:
                if state is None:
                    note.grads.append((i, None))
                elif state[0] == "same":
                    if type(kg) is not tuple or kg[0] != "same":
                        self.cap.unreplayable = "fn set a gradient back to an earlier tensor"
                    # the gradient tensor held since the start, over another array
                    note.grads.append((i, ("data", state[1])))
                else:
                    note.grads.append((i, state))
            self.known[i] = (kd, state)
            v = _version(t)
            if v != self.base_versions[i]:
                note.versions.append((i, v - self.base_versions[i]))
                self.base_versions[i] = v
        for i, t in enumerate(self.scope.tensors):
            if (t._requires_grad, t.grad_fn) != self.flags[i]:
                self.cap.unreplayable = "fn changed a tensor's requires_grad or history"
        for j, m in enumerate(self.scope.modules):
            if m.training is not self.known_training[j]:
                note.training.append((j, m.training))
                self.known_training[j] = m.training
        return note

    def optimizer_step(self, opt: Any, closure: Any, run: Any) -> Any:
        """The hook that an optimizer's ``step`` calls during a capture (Note [optimizer
        hooks] in optim/optimizer.py): the whole step, its hooks and a subclass's code around
        its update included, is replayed by calling ``step()`` (a sync point); ``run`` runs
        it here, unrecorded."""
        rec = self.rec
        if closure is not None:
            rec.graph_break("an optimizer step with a closure")
        if rec.recording:
            note = self.note()
            ref = (
                ("index", self.scope.optimizers.index(opt))
                if opt in self.scope.optimizers
                else None
            )
            if ref is None:
                rec.graph_break("an optimizer that the compiled function's scope does not name")
            else:
                self.cap.syncs.append((ref, note))
                rec.sync(len(self.cap.syncs) - 1)
        rec.paused += 1
        slot = _dispatch.recorder[0]
        _dispatch.recorder[0] = None
        swapped = self._untrace_cuda()
        try:
            return run()
        finally:
            _retrace(swapped)
            _dispatch.recorder[0] = slot
            rec.paused -= 1
            # The step's own version bumps, and whatever else it changed, happen again when
            # the replay calls it.
            for i, t in enumerate(self.scope.tensors):
                self.base_versions[i] = _version(t)
                self.known[i] = self._state(i, t)
            self.known_training = [m.training for m in self.scope.modules]

    def _untrace_cuda(self) -> list[tuple[Any, Any, Any]]:
        """Note [an unrecorded step on CUDA]: the scope's tensors and gradients whose arrays
        are CuTracers get their plain arrays for the step; returns (holder, tracer, plain)."""
        out: list[tuple[Any, Any, Any]] = []
        if not self.rec.cuda:
            return out
        for t in self.scope.tensors:
            for h in (t, t._grad):
                if h is not None and isinstance(h._data, CuTracer):
                    out.append((h, h._data, h._data._a))
                    h._data = h._data._a
        return out

    def python_state(self, what: str) -> None:
        """The hook of library code whose effect is plain Python state (an LR scheduler's
        step): a replay runs no Python, so the capture ends there (a graph break) and the
        signature runs eagerly."""
        self.rec.graph_break(f"{what} (it changes Python state, which a replay would not)")

    def rng(self, generator: Any) -> Any:
        """The hook that rng_of calls during a capture: draws are recorded."""
        return RecordingRng(self.rec, generator)

    def restore(self) -> None:
        """Put plain arrays back into every tensor the run touched."""
        rec = self.rec
        for i, t in enumerate(self.scope.tensors):
            t._data = _plain(rec, t._data, self.orig[i])
            g0 = self.grad0[i]
            if g0 is not None:
                g0._data = _plain(rec, g0._data, self.gorig[i])
            g = t._grad
            if g is not None and g is not g0:
                g._data = _plain(rec, g._data, None)
        for _, g in self.new_grads.values():
            g._data = _plain(rec, g._data, None)


# Note [an unrecorded step on CUDA]
#     An optimizer step runs unrecorded (a sync point), and its update is raw array arithmetic
#     that mixes the arrays it makes (plain CuPy arrays: the recording functions hand out plain
#     results while paused) with the parameters' and gradients' arrays. A NumPy Tracer is an
#     ndarray, so ``scratch *= grad`` works on it; a CuTracer is no cupy.ndarray and a plain
#     array's in-place operator refuses it. So for the step each CUDA tensor and gradient of
#     the scope holds its plain array again (the same memory: a CuTracer wraps it), and its
#     CuTracer afterwards, unless the step put another array there.


def _retrace(swapped: list[tuple[Any, Any, Any]]) -> None:
    for h, tracer, plain in swapped:
        if h._data is plain:
            h._data = tracer


def _untraced(d: Any) -> Any:
    """The plain array a tracing array wraps or views."""
    return d._a if isinstance(d, CuTracer) else d.view(np.ndarray)


def _plain(rec: Recorder, d: Any, orig: Any) -> Any:
    if is_tracer(d):
        k = rec.slot_of.get(id(d))
        if k is not None and rec.kind[k] == "input" and orig is not None and rec.plain[k] is orig:
            return orig
        return _untraced(d) if k is None else rec.plain[k]
    return d


def _outputs(cap: Capture, rec: Recorder, scope: Scope, obj: Any) -> Any:
    """The spec of fn's result: how a replay rebuilds it from slots."""
    if isinstance(obj, Tensor):
        for i, t in enumerate(scope.tensors):
            if t is obj:
                return ("ext", i)
        if type(obj) is not Tensor:
            cap.unreplayable = f"fn returned a {type(obj).__name__}"
            return None
        d = obj._data
        k = rec.slot(d) if is_array(d) else None
        if k is None:
            cap.unreplayable = "fn returned a tensor made outside the recorded calls"
            return None
        obj._data = rec.plain[k]
        _plain_bases(rec, obj)
        gk = None
        g = obj._grad
        if g is not None:
            gd = g._data
            gk = rec.slot(gd) if is_array(gd) else None
            if gk is None or type(g) is not Tensor or g._requires_grad:
                cap.unreplayable = "fn returned a tensor whose .grad a replay cannot rebuild"
                return None
            g._data = rec.plain[gk]
        gf = obj.grad_fn
        if cap.bw is not None and obj is cap.bw.tensor:
            return ("new", k, "bw", gk)
        if gf is not None:
            # A graph that a backward inside fn ran through (retain_graph=True keeps it): the
            # replayed tensor gets a node that refuses a backward (docs/compile.md).
            final = cap.final
            ran = cap.syncs or (final is not None and any(type(g) is tuple for _, g in final.grads))
            if not (isinstance(gf, OpNode) and gf._released) and not _released(gf) and not ran:
                cap.unreplayable = (
                    "fn returned a tensor that requires grad with a live graph (call backward() "
                    "inside the compiled function, or return a detached tensor)"
                )
                return None
            return ("new", k, "graph", gk)
        return ("new", k, bool(obj._requires_grad), gk)
    t = type(obj)
    if t is tuple or t is list:
        return (t, [_outputs(cap, rec, scope, o) for o in obj])
    if t is dict:
        return (dict, {k: _outputs(cap, rec, scope, v) for k, v in obj.items()})
    if obj is None or t in (int, float, bool, str, complex):
        return ("lit", obj)
    cap.unreplayable = f"fn returned a {t.__name__}"
    return None


def _plain_bases(rec: Recorder, t: Tensor) -> None:
    """A returned view's base tensors hold plain arrays again (a Tracer kept there would
    outlive the capture; the replay returns the view as a new tensor with no base)."""
    b = t._base
    while b is not None:
        d = b._data
        if is_tracer(d):
            k = rec.slot_of.get(id(d))
            b._data = _untraced(d) if k is None else rec.plain[k]
        b = b._base


class CompiledBackward(Node):
    """The ``grad_fn`` of a tensor that a replay returns in place of one with a graph: the
    graph stayed inside the compiled function, so a backward through it raises."""

    __slots__ = ()

    def apply(self, grads: list[Any], create_graph: bool) -> tuple[Any, ...]:
        raise RuntimeError(
            "chainrule.compile: this tensor was returned by a replay of a compiled function and "
            "its graph stayed inside the function; backward through it is not supported. Call "
            "backward() inside the compiled function, or return a detached tensor."
        )


# Note [backward outside]
#     ``loss = compiled(x); loss.backward()``: fn returns one tensor with a live graph that no
#     backward inside fn used. While the capture still records, it runs that backward itself,
#     ``autograd.grad(out, leaves, grad_outputs=G, retain_graph=True)``, with ``G`` a new input
#     slot (ones) and ``leaves`` the scope's leaf tensors that require grad: the VJPs the
#     caller's backward will run are recorded after fn's own calls. The replay writes them as a
#     second program: the forward returns, besides fn's results, the values the backward reads
#     (its residuals), and the returned tensor's ``grad_fn`` is a ReplayBackward holding them
#     (replay.py). Its edges are the leaves' AccumulateGrad nodes, so the caller's backward
#     accumulates, steals and runs hooks as eager does; ``retain_graph``, a second backward
#     (PyTorch's message) and in-place changes to a saved input before the backward (PyTorch's
#     version error) behave as eager. The eager graph is only kept for the capturing calls.


class _Backward:
    """What Note [backward outside] recorded: the output, its gradient's input slot, the index
    in the program where the backward starts, and (tensor index, slot or None) per leaf."""

    __slots__ = ("tensor", "g_slot", "start", "leaves", "g_meta", "saved")

    def __init__(self, tensor: Tensor, g_slot: int, start: int) -> None:
        self.tensor: Any = tensor
        self.g_slot = g_slot
        self.start = start
        self.leaves: list[tuple[int, int | None]] = []
        self.g_meta: tuple[Any, Any] = ((), None)
        self.saved: list[int] = []  # the scope tensors that the eager graph saved


def _graph_outputs(obj: Any, out: list[Tensor]) -> None:
    if isinstance(obj, Tensor):
        if obj.grad_fn is not None and obj._requires_grad:
            out.append(obj)
    elif type(obj) in (tuple, list):
        for o in obj:
            _graph_outputs(o, out)
    elif type(obj) is dict:
        for o in obj.values():
            _graph_outputs(o, out)


def _saved_in_graph(root: Node, tensors: list[Tensor]) -> list[int]:
    """The indices of ``tensors`` whose version counter a node of ``root``'s graph saved (the
    replay checks their versions before its backward, as eager checks its saved tensors)."""
    vcs = {id(t._vc): i for i, t in enumerate(tensors) if t._vc is not None}
    ids = {id(t): i for i, t in enumerate(tensors)}
    out: set[int] = set()
    stack: list[Any] = [root]
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        for st in n._saved_tensors():
            i = vcs.get(id(getattr(st, "counter", None)))
            if i is not None:
                out.add(i)
            t = getattr(st, "tensor", None)
            while t is not None:  # a saved view of a scope tensor (``weight.t()``)
                i = ids.get(id(t))
                if i is not None:
                    out.add(i)
                t = t._base
        stack.extend(c for c, _ in n.next_functions)
    return sorted(out)


def _record_backward(cap: Capture, rec: Recorder, scope: Scope, result: Any) -> None:
    """Note [backward outside]: record the backward of fn's one output with a live graph."""
    from chainrule._tensor import _new_tensor
    from chainrule.autograd import grad as _grad

    outs: list[Tensor] = []
    _graph_outputs(result, outs)
    if len(outs) != 1 or cap.syncs:
        return
    out = outs[0]
    gf = out.grad_fn
    if gf is None or _released(gf) or type(out) is not Tensor or not is_tracer(out._data):
        return
    if any(t._grad is not None and t._grad._requires_grad for t in scope.tensors):
        return
    if any(t._requires_grad and t.grad_fn is not None for t in scope.tensors):
        return  # the caller's backward would go on into a graph made outside fn
    leaves = [i for i, t in enumerate(scope.tensors) if t._requires_grad and t.grad_fn is None]
    if not leaves:
        return
    d = out._data
    if isinstance(d, Tracer):
        g = rec.add_input(np.ones(d.shape, d.dtype))
    else:  # the seed gradient of a CUDA output, on its device
        with d.device:
            g = rec.add_input(_LIVE_CUDA[0]._cp.ones(d.shape, d.dtype))
    bw = _Backward(out, rec.slot_of[id(g)], len(rec.program))
    bw.g_meta = (d.shape, d.dtype)
    bw.saved = _saved_in_graph(gf, scope.tensors)
    ts = scope.tensors
    try:
        grads = _grad(
            [out], [ts[i] for i in leaves], [_new_tensor(g)], retain_graph=True, allow_unused=True
        )
    except Exception as e:  # noqa: BLE001 - the caller's backward would raise it: run eagerly
        cap.unreplayable = f"the backward of the returned tensor raised {type(e).__name__}"
        return
    if not rec.recording:
        return
    for i, gr in zip(leaves, grads):
        k = None
        if gr is not None:
            gd = gr._data
            k = rec.slot(gd) if is_array(gd) else None
            if k is None or type(gr) is not Tensor:
                cap.unreplayable = "a gradient was made outside the recorded calls"
                return
        bw.leaves.append((i, k))
    cap.bw = bw


def _released(node: Node) -> bool:
    return bool(getattr(node, "_released", False))


def capture(
    fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], scope: Scope, fullgraph: bool
) -> tuple[Capture, Any]:
    """Run ``fn(*args, **kwargs)`` once, eagerly, recording it; returns (capture, result)."""
    t0 = time.perf_counter()
    cap = Capture()
    rec = Recorder(fullgraph)
    cap.rec = rec
    sess = _Session(cap, rec, scope)
    for t in scope.tensors[: scope.n_args]:
        if t.grad_fn is not None and t._requires_grad:
            cap.unreplayable = "an argument has autograd history from outside the function"
    live = backends.loaded_cuda_backend(load=True)
    if live is not None:  # Note [CUDA tracing backend] in _xp.py
        tracing = cuda_tracing_backend(live)
        if live.multi_gpu:
            rec.runtime = live._cp.cuda.runtime
            cap.device0 = rec.runtime.getDevice()
    sess.start()
    ACTIVE[0] = rec
    _dispatch.recorder[0] = sess
    if live is not None:
        _LIVE_CUDA[0] = live
        backends.swap_cuda_backend(tracing)

    def _end() -> None:
        ACTIVE[0] = None
        _dispatch.recorder[0] = None
        if live is not None:
            backends.swap_cuda_backend(live)
            _LIVE_CUDA[0] = None

    try:
        result = fn(*args, **kwargs)
    except BaseException:
        _end()
        sess.restore()
        raise
    if rec.recording and cap.unreplayable is None:
        try:
            _record_backward(cap, rec, scope, result)
        except BaseException:
            _end()
            sess.restore()
            raise
    _end()
    if rec.recording:
        cap.final = sess.note()
        cap.outputs = _outputs(cap, rec, scope, result)
        if cap.bw is not None:
            cap.bw.tensor = None  # the eager graph is the caller's, not the capture's
    sess.restore()
    cap.breaks = list(rec.breaks)
    cap.n_instr = len(rec.program)
    # Constants (Note [tracing arrays]): the copy, and whether the program writes them.
    for k, snap in rec.consts.items():
        cap.consts.append((k, rec.plain[k], snap, k in rec.written))
    cap.bytes_held = sum(int(c[2].nbytes) for c in cap.consts)
    cap.seconds = time.perf_counter() - t0
    return cap, result


def check_escapes(cap: Capture) -> None:
    """Drop the capture-time arrays; a Tracer still alive then was kept by fn somewhere the
    capture cannot replay (a side effect): the capture is not used."""
    rec = cap.rec
    if rec is None:
        return
    alive = rec.alive
    rec.keep = []
    rec.plain = []
    rec.tracer = []
    rec.slot_of = {}
    if any(r() is not None for r in alive):
        gc.collect()
    graph_out = _has_graph_output(cap.outputs)
    if (
        any(r() is not None for r in alive)
        and not graph_out
        and cap.unreplayable is None
        and not cap.breaks
    ):
        cap.unreplayable = (
            "an array made in fn outlived the call (kept where a replay cannot set it)"
        )
    cap.rec = None
    cap._program_instrs = rec.program  # type: ignore[attr-defined]


def _has_graph_output(spec: Any) -> bool:
    """Whether fn returned a tensor whose (retained) graph holds the run's arrays."""
    if not spec:
        return False
    if spec[0] == "new":
        return spec[2] in ("graph", "bw")
    if spec[0] in (tuple, list):
        return any(_has_graph_output(s) for s in spec[1])
    if spec[0] is dict:
        return any(_has_graph_output(s) for s in spec[1].values())
    return False
