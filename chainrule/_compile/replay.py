"""Replay: a capture's program written out as one straight-line Python function, and the code
that runs it on a call's live arrays and then sets what the eager run would have set.

Why this file is over 600 lines: writing the program and running it share the slot and
sync-point conventions of Note [replay program] (the forward and the backward program, the
constant checks and the state a replay sets read one layout), so they stay together.

Note [replay program]
    Each kept instruction becomes one line, ``s12 = F3(s4, L0, axis=1)``: the recorded
    callable (a ufunc, a NumPy function, an ndarray method, a generator's draw) on the slots of
    this run. Slots are locals; the program's first lines read the arrays that the capture
    read from tensors straight from the live tensors (``s3 = I[0]._data``, ``I`` the scope's
    tensors), only those that some line reads; constants come from the function's globals (a written
    one as a fresh copy). An instruction whose results no later line, sync point or visible
    result reads, and which writes nothing and draws no random numbers, is dropped. A sync
    point is a call ``SYNC(j, (slots...))``: it sets the tensors' state as the eager run had
    it there and runs the optimizer's own step. The same NumPy calls on the same arrays in the
    same order give the eager run's results, bit for bit.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from chainrule._compile import fusion
from chainrule._compile._recorder import CheckFailed, Instr, Recorder, Ref, copy_array
from chainrule._compile.capture import Capture, CompiledBackward, StateNote
from chainrule._compile.guards import Scope
from chainrule._tensor import Tensor, _new_tensor
from chainrule.autograd._codegen import compile_generated
from chainrule.autograd._saved import _set_last, _set_value
from chainrule.autograd._sites import FIXED_SITE, user_site
from chainrule.autograd.graph import Node, freed_message
from chainrule.backends import backend_of
from chainrule.optim.optimizer import _global_optimizer_post_hooks, _global_optimizer_pre_hooks

__all__ = ["build", "run"]

_SIMPLE = (int, bool, str, type(None))


class _Writer:
    def __init__(self) -> None:
        self.env: dict[str, Any] = {"asarray": np.asarray}
        self.ids: dict[int, str] = {}

    def name(self, obj: Any, prefix: str) -> str:
        n = self.ids.get(id(obj))
        if n is None:
            n = f"{prefix}{len(self.env)}"
            self.env[n] = obj
            self.ids[id(obj)] = n
        return n

    def expr(self, tm: Any) -> str:
        if isinstance(tm, Ref):
            return f"s{tm.slot}"
        t = type(tm)
        if t is tuple:
            inner = ", ".join(self.expr(o) for o in tm)
            return f"({inner},)" if tm else "()"
        if t is list:
            return "[" + ", ".join(self.expr(o) for o in tm) + "]"
        if t is dict:
            return "{" + ", ".join(f"{k!r}: {self.expr(v)}" for k, v in tm.items()) + "}"
        if t in _SIMPLE or (t is float and tm == tm and abs(tm) != float("inf")):
            return repr(tm)
        return self.name(tm, "L")


_used = fusion.used_slots
_outs = fusion.out_slots


def _output_slots(spec: Any, out: set[int]) -> None:
    if spec is None:
        return
    tag = spec[0]
    if tag == "new":
        out.add(spec[1])
        if spec[3] is not None:
            out.add(spec[3])
    elif tag in (tuple, list):
        for s in spec[1]:
            _output_slots(s, out)
    elif tag is dict:
        for s in spec[1].values():
            _output_slots(s, out)


# Note [replay scalars]
#     A ufunc given a float array and a Python number types the number by NEP 50's weak rule
#     (cast to the array's dtype), on NumPy's slow path; given a 0-d array of that dtype
#     holding the same cast value it takes the fast path and computes the same bits (Note
#     [scalar operands] in ops/_apply.py makes the same trade in eager). The program is written
#     with such 0-d constants in place of finite numbers beside a float slot.


def _scalar_args(ins: Instr, rec: Recorder) -> Any:
    args = ins.args
    if not isinstance(ins.fn, np.ufunc) or ins.kwargs or len(args) != 2:
        return args
    a, b = args
    for num, arr in ((a, b), (b, a)):
        if type(num) in (float, int) and isinstance(arr, Ref):
            if not isinstance(rec.plain[arr.slot], np.ndarray):
                return args
            dt = rec.plain[arr.slot].dtype
            if dt.kind != "f" or not abs(num) < float(np.finfo(dt).max):
                return args
            c = np.array(num, dtype=dt)
            c.flags.writeable = False
            return (c, b) if num is a else (a, c)
    return args


# Note [elided copies]
#     AccumulateGrad keeps an incoming gradient as ``.grad`` without a copy when nothing else
#     holds its array (_stealable in autograd/_nodes.py); on a Tracer it always copies. The
#     replay drops such a copy (``ndarray.copy`` of a C-contiguous, writable temporary whose
#     memory no later line, sync point or result reads) and keeps the array itself: the same
#     values, as eager's stolen gradient is.


def _elided_copies(
    cap: Capture, rec: Recorder, keep: list[bool], final: list[int], external: set[int]
) -> set[int]:
    """The copy instructions to write as aliases (Note [elided copies]), by ``id``."""
    prog = rec.program
    last: dict[int, int] = {}  # slot -> index of the last kept line that reads it
    for i, ins in enumerate(prog):
        if not keep[i]:
            continue
        used: set[int] = set()
        if ins.sync is not None:
            used.update(cap.syncs[ins.sync][1].slots())
        else:
            _used(ins.args, used)
            _used(ins.kwargs, used)
        for k in used:
            last[k] = i
    for k in final:
        last[k] = len(prog)
    # Slots by memory (fusion.memory_groups): only slots over the same bytes share memory.
    inputs = [k for k in range(len(rec.plain)) if rec.kind[k] == "input"]
    groups = fusion.memory_groups(rec, set(last) | set(inputs))
    by_group: dict[int, list[int]] = {}
    for j in last:
        by_group.setdefault(groups[j], []).append(j)
    input_groups = {groups[k] for k in inputs}
    out: set[int] = set()
    copy = np.ndarray.copy
    for i, ins in enumerate(prog):
        if not keep[i] or ins.fn is not copy or ins.kwargs or len(ins.args) != 1:
            continue
        src = ins.args[0]
        if not isinstance(src, Ref) or not isinstance(ins.outs, int):
            continue
        k = src.slot
        if k in external:
            continue
        a = rec.plain[k]
        if rec.kind[k] != "value" or last.get(k) != i:
            continue
        if not (a.flags.c_contiguous and a.flags.writeable):
            continue
        r = groups[k]
        if r in input_groups or any(j != k and last[j] > i for j in by_group.get(r, ())):
            continue
        out.add(id(ins))
    return out


def _kept(
    cap: Capture, rec: Recorder, ret: list[int], lo: int = 0, hi: int | None = None
) -> tuple[list[bool], set[int]]:
    """Which instructions of ``rec.program[lo:hi]`` the program keeps (a mask over the whole
    program), and the slots it needs (Note [replay program])."""
    prog = rec.program
    hi = len(prog) if hi is None else hi
    needed = set(ret)
    keep = [False] * len(prog)
    for i in range(hi - 1, lo - 1, -1):
        ins = prog[i]
        k = (
            ins.sync is not None
            or ins.random
            or bool(ins.writes)
            or any(s in needed for s in _outs(ins))
        )
        keep[i] = k
        if k:
            if ins.sync is not None:
                needed.update(cap.syncs[ins.sync][1].slots())
            else:
                _used(ins.args, needed)
                _used(ins.kwargs, needed)
    return keep, needed


def _const_lines(cap: Capture, needed: set[int], w: _Writer) -> list[str]:
    lines = []
    for k, orig, snap, written in cap.consts:
        if k not in needed:
            continue
        if written and not isinstance(snap, np.ndarray):  # a CuPy constant, on its device
            lines.append(f"    s{k} = {w.name(copy_array, 'F')}({w.name(snap, 'K')})")
        elif written:
            lines.append(f"    s{k} = {w.name(snap, 'K')}.copy()")
        else:
            lines.append(f"    s{k} = {w.name(orig, 'K')}")
    return lines


# Note [method calls]: the reductions whose NumPy wrapper (``np.sum`` through
# ``_wrapreduction``, ``ndarray.sum`` through ``_methods._sum``) ends, for an ndarray, in
# ``ufunc.reduce(a, axis, dtype, out, keepdims)``: the ufunc, the names of the positional
# parameters after ``a``, and the dtype the wrapper passes (None: the caller's).
_REDUCTIONS: dict[Any, tuple[Any, tuple[str, ...], Any]] = {
    np.sum: (np.add, ("axis", "dtype"), None),
    np.ndarray.sum: (np.add, ("axis", "dtype"), None),
    np.max: (np.maximum, ("axis",), None),
    np.ndarray.max: (np.maximum, ("axis",), None),
    np.min: (np.minimum, ("axis",), None),
    np.ndarray.min: (np.minimum, ("axis",), None),
    np.ndarray.any: (np.logical_or, ("axis",), np.dtype(bool)),
    np.ndarray.all: (np.logical_and, ("axis",), np.dtype(bool)),
}


def _as_reduce(ins: Instr, w: _Writer) -> str | None:
    """``np.sum(a, axis=1, keepdims=True)`` as ``add.reduce(a, 1, None, None, True)`` (the
    call NumPy's wrapper makes), or None."""
    fn, names, dtype = _REDUCTIONS[ins.fn]
    args = ins.args
    if len(args) - 1 > len(names):
        return None
    given = dict(zip(names, args[1:]))
    for key, v in ins.kwargs.items():
        if key in given or (key not in names and key != "keepdims"):
            return None
        given[key] = v
    if dtype is None:
        dtype = given.get("dtype")
    elif given.get("dtype") is not None:
        return None
    keep = given.get("keepdims", False)
    if type(keep) is not bool:
        return None
    call = f"{w.name(fn.reduce, 'F')}(s{args[0].slot}, {w.expr(given.get('axis'))}"
    return call + f", {w.expr(dtype)}, None, {keep})"


def _as_method(ins: Instr, rec: Recorder, w: _Writer) -> str | None:
    """Note [method calls]: ``np.swapaxes(a, i, j)`` as ``a.swapaxes(i, j)``,
    ``np.moveaxis(a, src, dst)`` as ``a.transpose(order)`` and a reduction as its
    ``ufunc.reduce`` call, on an ndarray slot, or None."""
    fn = ins.fn
    try:
        reduction = fn in _REDUCTIONS
    except TypeError:  # an unhashable callable
        reduction = False
    if reduction:
        args = ins.args
        if (
            not args
            or not isinstance(args[0], Ref)
            or type(rec.plain[args[0].slot]) is not np.ndarray
        ):
            return None
        return _as_reduce(ins, w)
    if fn is _GETITEM or fn is _SETITEM:
        return _as_subscript(ins, rec, w)
    if fn is np.stack:
        return _as_concatenate(ins, rec, w)
    if fn is not np.swapaxes and fn is not np.moveaxis:
        return None
    args = ins.args
    if ins.kwargs or not args or not isinstance(args[0], Ref):
        return None
    a = rec.plain[args[0].slot]
    rest = args[1:]
    if type(a) is not np.ndarray or not all(type(x) in (int, tuple, list) for x in rest):
        return None
    if fn is np.swapaxes:
        return f"s{args[0].slot}.swapaxes(" + ", ".join(w.expr(x) for x in rest) + ")"
    if len(rest) != 2:
        return None
    return f"s{args[0].slot}.transpose({move_perm(a.ndim, rest[0], rest[1])!r})"


_GETITEM = np.ndarray.__getitem__
_SETITEM = np.ndarray.__setitem__


def _as_subscript(ins: Instr, rec: Recorder, w: _Writer) -> str | None:
    """Note [method calls]: ``ndarray.__getitem__(a, key)`` as ``a[K]`` and
    ``ndarray.__setitem__(a, key, v)`` as ``a[K] = v`` on an ndarray slot, ``K`` the key as
    one constant when it holds no slot."""
    args = ins.args
    n = 2 if ins.fn is _GETITEM else 3
    if ins.kwargs or len(args) != n or not isinstance(args[0], Ref):
        return None
    if type(rec.plain[args[0].slot]) is not np.ndarray:
        return None
    key = args[1]
    used: set[int] = set()
    _used(key, used)
    if used or type(key) is not tuple:
        k = w.expr(key)
    else:
        k = w.name(key, "L")
    sub = f"s{args[0].slot}[{k}]"
    return sub if n == 2 else f"{sub} = {w.expr(args[2])}"


def _as_concatenate(ins: Instr, rec: Recorder, w: _Writer) -> str | None:
    """Note [method calls]: ``np.stack(arrays, axis)`` as the ``concatenate`` of the arrays'
    ``a[:, ..., None]`` views that it makes, or None."""
    args, kw = ins.args, ins.kwargs
    if not args or len(args) > 2 or (kw and set(kw) != {"axis"}) or (len(args) == 2 and kw):
        return None
    arrays = args[0]
    axis = args[1] if len(args) == 2 else kw.get("axis", 0)
    if type(arrays) not in (tuple, list) or not arrays or type(axis) is not int:
        return None
    if not all(isinstance(a, Ref) and type(rec.plain[a.slot]) is np.ndarray for a in arrays):
        return None
    shapes = {rec.plain[a.slot].shape for a in arrays}
    if len(shapes) != 1:
        return None
    ndim = len(next(iter(shapes))) + 1
    if not -ndim <= axis < ndim:
        return None
    axis %= ndim
    sl = w.name((slice(None),) * axis + (None,), "L")
    items = "".join(f"s{a.slot}[{sl}], " for a in arrays)
    return f"{w.name(_CONCATENATE, 'F')}(({items}), axis={axis})"


# NumPy's functions that dispatch through ``__array_function__`` keep the function itself as
# ``_implementation``; the types of literal arguments with which calling it skips no override.
_CONCATENATE = np.concatenate._implementation  # type: ignore[attr-defined]
_PLAIN_LITERALS = (int, float, bool, complex, str, type(None), slice, type(Ellipsis), np.dtype)


def _plain(tm: Any, rec: Recorder) -> bool:
    """Whether an argument template holds only plain ndarrays and literals that no
    ``__array_function__`` override could claim."""
    t = type(tm)
    if t is Ref:
        return type(rec.plain[tm.slot]) is np.ndarray
    if t in (tuple, list):
        return all(_plain(o, rec) for o in tm)
    if t is dict:
        return all(_plain(o, rec) for o in tm.values())
    return t is np.ndarray or t in _PLAIN_LITERALS or isinstance(tm, type)


def _undispatched(ins: Instr, rec: Recorder) -> Any:
    """Note [method calls]: a dispatched NumPy function's ``_implementation`` when every
    argument is a plain ndarray or a literal (dispatch would call it), else the function."""
    fn = ins.fn
    impl = getattr(fn, "_implementation", None)
    if impl is None or rec.cuda or isinstance(fn, np.ufunc):
        return fn
    if not (_plain(ins.args, rec) and _plain(ins.kwargs, rec)):
        return fn
    return impl


def move_perm(ndim: int, source: Any, destination: Any) -> tuple[int, ...]:
    """The permutation ``np.moveaxis(a, source, destination)`` passes to ``a.transpose``."""
    src = np.lib.array_utils.normalize_axis_tuple(source, ndim, "source")
    dst = np.lib.array_utils.normalize_axis_tuple(destination, ndim, "destination")
    perm = [n for n in range(ndim) if n not in src]
    for d, sx in sorted(zip(dst, src)):
        perm.insert(d, sx)
    return tuple(perm)


# Note [method calls]
#     NumPy's ``swapaxes`` is a Python function that hands its call to the array's method
#     (``_wrapfunc``), and ``moveaxis`` works out a permutation from the array's number of
#     dimensions and calls ``a.transpose`` with it: three to five Python frames per call. The
#     program's shapes are fixed, so it calls the method itself, with the permutation worked
#     out once when the program is written (the same view, the same bits). The LSTM step makes
#     64 such calls. A reduction (``np.sum``, ``np.max``, ``np.min``, and the ndarray methods
#     ``sum``, ``max``, ``min``, ``any``, ``all``) on an ndarray is written as the
#     ``ufunc.reduce(a, axis, dtype, None, keepdims)`` call its wrapper ends in, with the
#     wrapper's defaults spelt out (``axis=None``, ``any``'s boolean dtype): the same C call,
#     the same bits, without two Python frames and a keyword dict per call. An
#     ``ndarray.__getitem__`` or ``__setitem__`` call on an ndarray slot is written as a
#     subscript, ``s4[L7]`` and ``s4[L7] = s5``, its key one constant when no slot is in it:
#     the same ``mp_subscript`` call without the method wrapper's call and the key's tuple built
#     on each replay (the SRGAN step makes about 3000 of them, the LSTM step 120). ``np.stack``
#     (a Python function: three comprehensions) is written as the ``concatenate`` of the
#     ``a[:, None]`` views it builds. A NumPy function that dispatches through
#     ``__array_function__`` (``concatenate``, ``zeros_like``, ``einsum``...) is called as its
#     ``_implementation`` when every argument is a plain ndarray or a literal, the call the
#     dispatch would make.


def _call_lines(ins: Instr, rec: Recorder, w: _Writer, out: str | None) -> list[str]:
    """The line(s) of one recorded call; ``out``: the fused program's ``out=`` target."""
    meth = _as_method(ins, rec, w) if out is None else None
    if meth is not None:
        outs = _outs(ins)
        if isinstance(ins.outs, int):
            if ins.outs in ins.scalar:
                return [f"    s{ins.outs} = asarray({meth})"]
            return [f"    s{ins.outs} = {meth}"]
        if not outs:
            return [f"    {meth}"]
    if out is None and fusion.selects(ins, rec):
        fn = fusion.select
    elif fusion.strides_view(ins, rec):
        fn = fusion.strided
    else:
        fn = _undispatched(ins, rec)
    call = w.name(fn, "F") + "(" + ", ".join(w.expr(a) for a in _scalar_args(ins, rec))
    kw = [f"{key}={w.expr(v)}" for key, v in ins.kwargs.items()] if ins.kwargs else []
    if out is not None:
        kw.append(f"out={out}")
    if kw:
        call += (", " if ins.args else "") + ", ".join(kw)
    call += ")"
    outs = _outs(ins)
    if not outs:
        return [f"    {call}"]
    if isinstance(ins.outs, int):
        if ins.outs in ins.scalar:
            call = f"asarray({call})"
        return [f"    s{ins.outs} = {call}"]
    lines = ["    " + ", ".join(f"s{s}" for s in outs) + f", = {call}"]
    lines += [f"    s{s} = asarray(s{s})" for s in outs if s in ins.scalar]
    return lines


def _line(
    cap: Capture, ins: Instr, rec: Recorder, w: _Writer, alias: dict[int, int], out: Any
) -> list[str]:
    if ins.sync is not None:
        vals = "".join(f"s{s}, " for s in cap.syncs[ins.sync][1].slots())
        return [f"    SYNC({ins.sync}, ({vals}))"]
    if isinstance(ins.outs, int) and ins.outs in alias:
        return [f"    s{ins.outs} = s{alias[ins.outs]}"]
    return _call_lines(ins, rec, w, out)


def _body(
    cap: Capture,
    rec: Recorder,
    keep: list[bool],
    ret: list[int],
    w: _Writer,
    external: set[int],
) -> tuple[list[str], int, fusion.Plan]:
    """The lines of the kept instructions, fused (Note [fused replay]); and their count."""
    alias_ids = _elided_copies(cap, rec, keep, ret, external)
    alias = {ins.outs: ins.args[0].slot for ins in rec.program if id(ins) in alias_ids}
    fused = fusion.plan(cap, rec, keep, alias, ret, external)
    w.env.update(fused.buffers)
    lines: list[str] = []
    n = 0
    cur = None
    for i, (ins, k) in enumerate(zip(rec.program, keep)):
        if not k:
            continue
        n += 1
        if ins.device is not None and ins.device != cur:  # Note [replay devices]
            cur = ins.device
            w.env.setdefault("DEVSET", rec.runtime.setDevice)
            lines.append(f"    DEVSET({cur})")
        lines += _line(cap, ins, rec, w, alias, fused.out.get(i))
        dead = fused.dels.get(i)
        if dead:
            lines.append("    del " + ", ".join(f"s{s}" for s in sorted(dead)))
    return lines, n, fused


def _residuals(rec: Recorder, keep: list[bool], start: int, g_slot: int) -> list[int]:
    """The slots that the backward program (``keep``, from ``start`` on) reads before
    assigning: the forward hands them over (a constant the forward writes, too)."""
    assigned: set[int] = {g_slot}
    out: set[int] = set()
    for i in range(start, len(rec.program)):
        if not keep[i]:
            continue
        ins = rec.program[i]
        for k in fusion.reads_of(None, ins) - assigned:
            if rec.kind[k] != "const" or k in rec.written:
                out.add(k)
        assigned.update(_outs(ins))
    return sorted(out)


def _build_backward(cap: Capture, rec: Recorder) -> list[int]:
    """Note [backward outside]: write ``cap.bw_program``; returns its residual slots."""
    bw = cap.bw
    grads = sorted({k for _, k in bw.leaves if k is not None})
    keep, needed = _kept(cap, rec, grads, lo=bw.start)
    res = _residuals(rec, keep, bw.start, bw.g_slot)
    w = _Writer()
    lines = ["def backward(R, G):"]
    if res:
        lines.append("    " + ", ".join(f"s{k}" for k in res) + ", = R")
    lines.append(f"    s{bw.g_slot} = G")
    lines += _const_lines(cap, needed - set(res), w)
    body, n, fused = _body(cap, rec, keep, grads, w, set(res))
    lines += body
    vals = "".join("None, " if k is None else f"s{k}, " for _, k in bw.leaves)
    lines.append(f"    return ({vals})")
    src = "\n".join(_restoring(rec, lines, w)) + "\n"
    cap.bw_program = compile_generated(src, "compiled backward", w.env)["backward"]  # type: ignore[attr-defined]
    cap.bw_source = src  # type: ignore[attr-defined]
    cap.bw_residuals = res  # type: ignore[attr-defined]
    cap.bw_versions = bw.saved  # type: ignore[attr-defined]
    cap.bw_bytes_buffers = sum(int(b.nbytes) for b in fused.buffers.values())  # type: ignore[attr-defined]
    cap.bw_lock = threading.Lock() if fused.buffers else None  # type: ignore[attr-defined]
    cap.n_instr += n
    return res


# Note [replay devices]
#     With more than one GPU, each instruction recorded the device that was current when it
#     ran (the eager ops make their inputs' device current, the backward engine each node's).
#     The program sets it again where it changes (``D3(1)``: ``cupy.cuda.runtime.setDevice``),
#     and puts the caller's device back when it returns or raises. Factories and draws of
#     ``device='cuda'`` follow the device current when they run, so a replay runs only when the
#     caller's current device is the one the capture started on (``run``; otherwise the call
#     runs eagerly).


def _restoring(rec: Recorder, lines: list[str], w: _Writer) -> list[str]:
    """``lines`` (a program: its ``def`` line, then its body) with the caller's current device
    put back at the end, when the body sets devices (Note [replay devices])."""
    rt = rec.runtime
    if rt is None or "DEVSET" not in w.env:
        return lines
    w.env["DEVGET"] = rt.getDevice
    body = ["    " + ln for ln in lines[1:]]
    return [
        lines[0],
        "    _d0 = DEVGET()",
        "    try:",
        *body,
        "    finally:",
        "        DEVSET(_d0)",
    ]


def build(cap: Capture, rec: Recorder) -> None:
    """Write ``cap.program`` (Note [replay program], Note [fused replay]) and, for a graph
    returned to the caller, ``cap.bw_program`` (Note [backward outside] in capture.py)."""
    final_slots: set[int] = set(cap.final.slots()) if cap.final else set()
    _output_slots(cap.outputs, final_slots)
    cap.n_instr = 0
    hi = None
    if cap.bw is not None:
        final_slots.update(_build_backward(cap, rec))
        hi = cap.bw.start
    ret = sorted(final_slots)
    keep, needed = _kept(cap, rec, ret, hi=hi)
    w = _Writer()
    lines = ["def program(I, SYNC):"]
    # The arrays of the tensors read in, straight from the live tensors (``I``: the scope's).
    for (i, is_grad), k in zip(cap.inputs, cap.input_slots):
        if k in needed:
            lines.append(
                f"    s{k} = I[{i}]._grad._data" if is_grad else f"    s{k} = I[{i}]._data"
            )
    lines += _const_lines(cap, needed, w)
    body, n, fused = _body(cap, rec, keep, ret, w, set())
    lines += body
    lines.append("    return (" + "".join(f"s{s}, " for s in ret) + ")")
    src = "\n".join(_restoring(rec, lines, w)) + "\n"
    cap.program = compile_generated(src, "compiled program", w.env)["program"]
    cap.source = src  # type: ignore[attr-defined]
    cap.ret_slots = ret  # type: ignore[attr-defined]
    cap.n_instr += n
    cap.read_consts = [  # type: ignore[attr-defined]
        (orig, snap)
        for k, orig, snap, written in cap.consts
        if k in needed and not written and getattr(orig.flags, "writeable", True)
    ]
    cap.bytes_held = sum(int(c[2].nbytes) for c in cap.consts if c[0] in needed)
    cap.bytes_buffers = sum(int(b.nbytes) for b in fused.buffers.values())
    if cap.bw is not None:
        cap.bytes_buffers += cap.bw_bytes_buffers  # type: ignore[attr-defined]
    cap.n_fused = len(fused.out)  # type: ignore[attr-defined]
    cap.setters = [_Setter(note, note.slots()) for _, note in cap.syncs]  # type: ignore[attr-defined]
    assert cap.final is not None
    cap.final_setter = _Setter(cap.final, ret)  # type: ignore[attr-defined]
    # A sync point's optimizer step and a version moved by a note need the caller's site.
    cap.needs_site = bool(cap.syncs or cap.final.versions)  # type: ignore[attr-defined]
    cap.lock = threading.Lock() if fused.buffers else None
    cap.runtime = rec.runtime  # type: ignore[attr-defined]


def consts_hold(cap: Capture) -> bool:
    """Whether the constants the program only reads still hold their captured values."""
    for orig, snap in cap.read_consts:  # type: ignore[attr-defined]
        if not np.array_equal(orig, snap):  # a CuPy pair: cupy.array_equal, through dispatch
            return False
    return True


class _Setter:
    """A note (capture.StateNote) as a replay applies it: each entry's value by its position
    in the values the program hands over (a sync point's arguments, or the program's result).
    """

    __slots__ = ("data", "none", "regrad", "new", "versions", "training")

    def __init__(self, note: StateNote, order: list[int]) -> None:
        pos = {k: n for n, k in enumerate(order)}
        self.data = [(i, pos[k]) for i, k in note.data]
        self.none = [i for i, g in note.grads if g is None]
        self.regrad = [(i, pos[g[1]]) for i, g in note.grads if type(g) is tuple and g[0] == "data"]
        self.new = [
            (i, g[0], pos[g[1]]) for i, g in note.grads if type(g) is tuple and g[0] != "data"
        ]
        self.versions = note.versions
        self.training = note.training


def _apply(st: _Setter, scope: Scope, vals: Any, made: dict[int, Tensor], site: Any) -> None:
    """Set what the eager run had set at one point (Note [changed entries] in capture.py);
    ``site``: the caller's frame, the write site of every version moved here."""
    ts = scope.tensors
    for i, n in st.data:
        ts[i]._data = vals[n]
    for i in st.none:
        ts[i]._grad = None
    for i, n in st.regrad:
        grad: Any = ts[i]._grad
        grad._data = vals[n]
    for i, tag, n in st.new:
        gt = made.get(tag)
        if gt is None:
            gt = made[tag] = _new_tensor(vals[n])
        elif gt._data is not vals[n]:
            gt._data = vals[n]
        ts[i]._grad = gt
    # What ``vc.value += d`` does (VersionCounter.__setattr__), with the user's site found once
    # for the whole replay rather than by one stack walk per counter.
    for i, d in st.versions:
        vc = ts[i]._get_vc()
        _set_value(vc, vc.value + d)
        _set_last(vc, site)
    if st.training:
        mods = scope.modules
        for j, tr in st.training:
            mods[j].training = tr


def _hookless(opt: Any) -> bool:
    """Whether ``opt.step()`` runs no step hooks (user code, whose writes have sites of their
    own: Note [fixed site] is set only around a step without them)."""
    d = opt.__dict__
    return not (
        d.get("_optimizer_step_pre_hooks")
        or d.get("_optimizer_step_post_hooks")
        or _global_optimizer_pre_hooks
        or _global_optimizer_post_hooks
    )


class CompiledFunctionBackward(Node):
    """The ``grad_fn`` of the tensor a replay returns for a graph that the caller
    backpropagates (Note [backward outside] in capture.py): runs the capture's backward
    program on the residuals of its forward and hands each leaf's gradient to the leaf's
    AccumulateGrad, as the eager graph would."""

    __slots__ = ("_cap", "_res", "_versions")

    def __init__(self, cap: Capture, scope: Scope, vals: dict[int, Any]) -> None:
        Node.__init__(self)
        ts = scope.tensors
        bw = cap.bw
        self._cap = cap
        self._res = [vals[k] for k in cap.bw_residuals]  # type: ignore[attr-defined]
        self._versions = [(ts[i], ts[i]._version) for i in cap.bw_versions]  # type: ignore[attr-defined]
        leaves = [ts[i] for i, _ in bw.leaves]
        self.next_functions = tuple(
            (None, 0) if k is None else (t._get_accumulator(), 0)
            for t, (_, k) in zip(leaves, bw.leaves)
        )
        self._input_meta = tuple((t._data.shape, t._data.dtype) for t in leaves)

    def apply(self, grads: list[Any], create_graph: bool) -> tuple[Any, ...]:
        if create_graph:
            raise RuntimeError(
                "chainrule.compile: a replayed graph cannot be differentiated twice "
                "(create_graph=True); call the function without compiling it for higher-order "
                "gradients."
            )
        res = self._res
        if res is None:
            raise RuntimeError(freed_message(self))
        for t, v in self._versions:
            if t._version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [torch.{t.type().split('.')[-1]} "
                    f"{list(t.shape)}] is at version {t._version}; expected version {v} "
                    "instead. Hint: the backward of CompiledFunctionBackward needs this value "
                    "as it was when the forward ran."
                )
        g = grads[0]
        cap = self._cap
        n = len(self.next_functions)
        if g is None:
            return (None,) * n
        if isinstance(g, Tensor):
            g = g._data
        shape, dtype = cap.bw.g_meta
        if g.shape != shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[0] has a shape of {tuple(g.shape)} and "
                f"output[0] has a shape of {tuple(shape)}."
            )
        if g.dtype != dtype or not g.flags.c_contiguous:
            xp = np if isinstance(g, np.ndarray) else backend_of(g).xp
            g = xp.ascontiguousarray(g, dtype=dtype)
        lock = cap.bw_lock  # type: ignore[attr-defined]
        if lock is None:
            return cap.bw_program(res, g)  # type: ignore[attr-defined]
        with lock:
            return cap.bw_program(res, g)  # type: ignore[attr-defined]

    def release(self) -> None:
        self._released = True
        self._res = None


def _rebuild(spec: Any, scope: Scope, vals: dict[int, Any], cap: Capture) -> Any:
    tag = spec[0]
    if tag == "new":
        if spec[2] == "bw":
            t = Tensor._from_node(vals[spec[1]], CompiledFunctionBackward(cap, scope, vals), 0)
        elif spec[2] == "graph":
            t = Tensor._from_node(vals[spec[1]], CompiledBackward(), 0)
        else:
            t = _new_tensor(vals[spec[1]])
        if spec[2] is True:
            t._requires_grad = True
        if spec[3] is not None:
            t._grad = _new_tensor(vals[spec[3]])
        return t
    if tag == "ext":
        return scope.tensors[spec[1]]
    if tag == "lit":
        return spec[1]
    if tag is tuple:
        return tuple(_rebuild(s, scope, vals, cap) for s in spec[1])
    if tag is list:
        return [_rebuild(s, scope, vals, cap) for s in spec[1]]
    return {k: _rebuild(s, scope, vals, cap) for k, s in spec[1].items()}


def run(cap: Capture, scope: Scope) -> Any:
    """Replay ``cap`` on the live arrays of ``scope``; returns what fn would have returned.

    Raises:
        CheckFailed: before any side effect, when a checked read differs (Note [checked
            reads]) or another thread is replaying this capture's buffers (Note [fused replay]).
    """
    d0 = cap.device0
    if d0 is not None and cap.runtime.getDevice() != d0:  # type: ignore[attr-defined]
        raise CheckFailed  # Note [replay devices]: another device is current
    lock = cap.lock
    if lock is None:
        return _run(cap, scope)
    if not lock.acquire(False):
        raise CheckFailed
    try:
        return _run(cap, scope)
    finally:
        lock.release()


def _run(cap: Capture, scope: Scope) -> Any:
    made: dict[int, Tensor] = {}
    site = user_site(1) if cap.needs_site else None  # type: ignore[attr-defined]

    def sync(j: int, values: tuple[Any, ...]) -> None:
        _apply(cap.setters[j], scope, values, made, site)  # type: ignore[attr-defined]
        opt = scope.optimizers[cap.syncs[j][0][1]]
        if not _hookless(opt):
            opt.step()
            return
        fixed = FIXED_SITE
        prev = fixed.site
        fixed.site = site
        try:
            opt.step()
        finally:
            fixed.site = prev

    res = cap.program(scope.tensors, sync)
    _apply(cap.final_setter, scope, res, made, site)  # type: ignore[attr-defined]
    spec = cap.outputs
    vals = {} if spec[0] in ("ext", "lit") else dict(zip(cap.ret_slots, res))  # type: ignore[attr-defined]
    return _rebuild(spec, scope, vals, cap)
