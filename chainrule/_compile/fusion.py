"""Tier two of the replay program: elementwise chains written into reused buffers, and dead
intermediates dropped at their last use (Note [fused replay]).

Note [fused replay]
    The plain replay allocates a new array for every ufunc call and keeps every local alive
    until the program returns. The fused replay changes only where results are stored:

    - **donation**: an elementwise ufunc call (``signature`` None, one output, no keywords)
      whose argument ``sA`` dies on that line, and whose memory nothing else reads later, writes
      its result into ``sA`` (``sB = add(sA, x, out=sA)``) when ``sA`` has the result's shape,
      dtype and strides. A chain ``exp(sub(a, b))`` then runs in one buffer.
    - **capture buffers**: the call that starts such a chain (an elementwise ufunc or a
      ``matmul`` whose result is a fresh array and donated nowhere) writes into a buffer
      allocated once per capture and reused by every replay, when no array over that memory
      (the chain's results and their views) leaves the program: none is returned, set as a
      tensor's ``_data`` or ``.grad``, handed to an optimizer step or to a backward program.
      Memory that leaves is fresh on every replay.
    - **early release**: a local is deleted after the last line that reads it, so NumPy's and
      the allocator's free lists hand the memory to the next call while it is still in cache.

    Memory is followed by bytes: slots whose capture-time arrays overlap (views of one array,
    however made) share memory (``memory_groups``), and a donation joins the result's group to
    the donor's. A ufunc writing
    into an array with the same layout as the one it would allocate selects the same loop and
    computes the same bits (exact overlap of an input and ``out`` is no overlap to NumPy's
    loops), so the fused replay stays bit-identical to eager. Buffers make one capture unsafe to
    run from two threads at once: a replay holds the capture's lock, and a call that finds it
    held runs eagerly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import byte_bounds

from chainrule._compile._recorder import Instr, Recorder, Ref

__all__ = ["Plan", "plan", "FUSE", "select", "selects", "strided", "strides_view"]

# Whether build() writes the fused program (False: the plain replay, for measuring).
FUSE = [True]


class Plan:
    """Where the fused program stores results: ``out`` (instruction index -> the ``out=``
    expression), ``dels`` (line index -> slots to delete after it), ``buffers`` (name ->
    the capture's buffer)."""

    __slots__ = ("out", "dels", "buffers")

    def __init__(self) -> None:
        self.out: dict[int, str] = {}
        self.dels: dict[int, list[int]] = {}
        self.buffers: dict[str, Any] = {}


def used_slots(tm: Any, out: set[int]) -> None:
    """Add the slots that an argument template reads to ``out``."""
    if isinstance(tm, Ref):
        out.add(tm.slot)
    elif type(tm) in (tuple, list):
        for o in tm:
            used_slots(o, out)
    elif type(tm) is dict:
        for o in tm.values():
            used_slots(o, out)


def out_slots(ins: Instr) -> tuple[int, ...]:
    """The slots an instruction assigns."""
    o = ins.outs
    if o is None:
        return ()
    return (o,) if isinstance(o, int) else o


def reads_of(cap: Any, ins: Instr) -> set[int]:
    """The slots one line of the program reads (a sync point reads the slots it sets)."""
    used: set[int] = set()
    if ins.sync is not None and cap is not None:
        used.update(cap.syncs[ins.sync][1].slots())
    else:
        used_slots(ins.args, used)
        used_slots(ins.kwargs, used)
        used.update(ins.writes)
    return used


def memory_groups(rec: Recorder, slots: Any) -> dict[int, int]:
    """Slot -> a group id, equal for slots whose capture-time arrays share bytes.

    Byte ranges, not ``.base`` chains: a view made through another object (``as_strided``'s
    interface holder, a buffer) has no ndarray base but shares the memory. The capture keeps
    every array alive, so distinct allocations never overlap.
    """
    spans = []
    for k in slots:
        a = rec.plain[k]
        if isinstance(a, np.ndarray) and a.size:
            lo, hi = byte_bounds(a)
            spans.append((lo, hi, k))
        else:
            spans.append((-1 - k, -1 - k, k))  # no memory: its own group
    spans.sort()
    out: dict[int, int] = {}
    g, end = -1, None
    for lo, hi, k in spans:
        if end is None or lo >= end or lo < 0:
            g += 1
            end = hi
        else:
            end = max(end, hi)
        out[k] = g
    return out


class _Memory:
    """Union-find over the capture's memory groups (``memory_groups``)."""

    def __init__(self, groups: dict[int, int]) -> None:
        self.groups = groups
        self.parent: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.external: set[int] = set()
        self.escapes: set[int] = set()

    def root(self, k: int) -> int:
        r = self.groups[k]
        p = self.parent.setdefault(r, r)
        while p != r:
            gp = self.parent[p]
            self.parent[r] = gp
            r, p = p, gp
        return r

    def join(self, a: int, b: int) -> None:
        """Join the memory of slot ``a`` to that of slot ``b``."""
        ra, rb = self.root(a), self.root(b)
        if ra == rb:
            return
        self.parent[ra] = rb
        self.last[rb] = max(self.last.get(ra, -1), self.last.get(rb, -1))
        if ra in self.external:
            self.external.add(rb)
        if ra in self.escapes:
            self.escapes.add(rb)


def _fresh_result(ins: Instr, rec: Recorder) -> bool:
    """Whether ``ins`` is a ufunc call (an elementwise one, or ``matmul``) whose one result is
    an array it allocated, which an ``out=`` argument could hold instead."""
    fn = ins.fn
    if not isinstance(fn, np.ufunc) or fn.nout != 1:
        return False
    if fn.signature is not None and fn is not np.matmul:
        return False
    o = ins.outs
    if ins.kwargs or ins.writes or not isinstance(o, int) or o in ins.scalar:
        return False
    if rec.kind[o] != "value":
        return False
    a = rec.plain[o]
    return type(a) is np.ndarray and a.base is None and a.ndim >= 1 and a.size > 0


def _donor(ins: Instr, i: int, rec: Recorder, mem: _Memory) -> int | None:
    res = rec.plain[ins.outs]
    for a in ins.args:
        if not isinstance(a, Ref):
            continue
        d = a.slot
        p = rec.plain[d]
        if rec.kind[d] != "value" or type(p) is not np.ndarray:
            continue
        if p.shape != res.shape or p.dtype != res.dtype or p.strides != res.strides:
            continue
        if not p.flags.writeable:
            continue
        g = mem.root(d)
        if g in mem.external or g in mem.escapes or mem.last.get(g, -1) > i:
            continue
        return d
    return None


def _lifetimes(
    cap: Any, rec: Recorder, keep: list[bool], alias: dict[int, int], final: list[int]
) -> tuple[dict[int, int], _Memory]:
    """The last line that reads or assigns each slot, and the memory groups with theirs."""
    prog = rec.program
    n = len(prog)
    last: dict[int, int] = {}
    for i, ins in enumerate(prog):
        if not keep[i]:
            continue
        for k in reads_of(cap, ins):
            last[k] = i
        for k in out_slots(ins):
            last[k] = i
    escaping = set(final)
    for _, note in cap.syncs:
        escaping.update(note.slots())
    for k in escaping:
        last[k] = n
    outside = [k for k in range(len(rec.plain)) if rec.kind[k] != "value"]
    mem = _Memory(memory_groups(rec, set(last) | set(outside)))
    for k in outside:
        mem.external.add(mem.root(k))
    for k, i in last.items():
        r = mem.root(k)
        mem.last[r] = max(mem.last.get(r, -1), i)
        if k in escaping:
            mem.escapes.add(r)
    for out, src in alias.items():  # an elided copy is its source
        mem.join(out, src)
    return last, mem


def plan(
    cap: Any,
    rec: Recorder,
    keep: list[bool],
    alias: dict[int, int],
    final: list[int],
    external: set[int],
) -> Plan:
    """Note [fused replay]: the out= buffers and deletions of the program being written.

    ``alias`` maps the result slot of each elided copy to its source (Note [elided copies]);
    ``external`` are slots whose memory the program must neither write nor reuse (a backward
    program's residuals, which a second backward reads again).
    """
    p = Plan()
    if not FUSE[0]:
        return p
    last, mem = _lifetimes(cap, rec, keep, alias, final)
    for k in external:
        mem.external.add(mem.root(k))
    heads: list[int] = []
    for i, ins in enumerate(rec.program):
        if not keep[i] or ins.sync is not None or not _fresh_result(ins, rec):
            continue
        if ins.outs in alias:
            continue
        # A matmul result starts a chain; it is never written over an argument (that
        # overlap makes NumPy copy the argument first).
        d = _donor(ins, i, rec, mem) if ins.fn.signature is None else None
        if d is None:
            heads.append(i)
        else:
            p.out[i] = f"s{d}"
            mem.join(ins.outs, d)
    for i in heads:
        o = rec.program[i].outs
        g = mem.root(o)
        if g in mem.escapes or g in mem.external:
            continue
        res = rec.plain[o]
        buf = np.empty_like(res)
        if buf.strides != res.strides:
            continue
        name = f"B{len(p.buffers)}"
        p.buffers[name] = buf
        p.out[i] = name
    n = len(rec.program)
    for k, i in last.items():
        if i < n and rec.kind[k] == "value" and k not in external:
            p.dels.setdefault(i, []).append(k)
    return p


# Note [branch-free select]
#     NumPy's ``where(c, a, b)`` branches on each element; on an activation's random signs it
#     mispredicts half of them (about 1.2 ns an element here, against 0.3 for a pass of
#     integer ops). Eager sidesteps it for ReLU's gradient (``_zero_where`` in
#     ops/unary/elementwise.py) only on plain arrays, so a capture records ``where`` itself;
#     PReLU's forward and others call ``where`` in eager too. The program writes a ``where``
#     of a boolean mask and two arrays of one float dtype (each of the mask's shape or 0-d,
#     C-contiguous, at least ``SELECT_MIN`` elements) as ``select``: ``a ^ ((a ^ b) & m)`` on
#     the integer views, ``m`` all ones where ``c`` is False, which picks each element's bits
#     (NaN payloads and signed zeros included), into a new C-contiguous array as ``where``
#     returns. A zero ``a`` (``where(c, 0, b)``) takes two passes, ``b & m``.

SELECT_MIN = 4096
_INT_OF = {
    np.dtype(np.float16): np.dtype(np.int16),
    np.dtype(np.float32): np.dtype(np.int32),
    np.dtype(np.float64): np.dtype(np.int64),
}
_BOOL = np.dtype(bool)
_INT8 = np.dtype(np.int8)
_ndarray = np.ndarray


def _selectable(c: Any, a: Any, b: Any) -> Any:
    """The integer dtype to select ``a`` and ``b`` by ``c`` in, or None (Note [branch-free
    select])."""
    if type(c) is not _ndarray or type(a) is not _ndarray or type(b) is not _ndarray:
        return None
    it = _INT_OF.get(a.dtype)
    if it is None or b.dtype != a.dtype or c.dtype != _BOOL or not c.flags.c_contiguous:
        return None
    shape = c.shape
    for v in (a, b):
        if v.ndim and (v.shape != shape or not v.flags.c_contiguous):
            return None
    if not (a.ndim or b.ndim):
        return None
    return it


def select(c: Any, a: Any, b: Any) -> Any:
    """``where(c, a, b)`` bit for bit, branch-free (Note [branch-free select]); falls back to
    ``where`` when the arrays of this call are not of the kind the rewrite was made for."""
    it = _selectable(c, a, b)
    if it is None:
        return np.where(c, a, b)
    m = np.empty(c.shape, dtype=it)
    np.subtract(c.view(_INT8), 1, out=m, casting="unsafe")  # 0 where c, all ones where not
    av = a.view(it)
    if not a.ndim and not av:  # +0: a's bits are all zero
        np.bitwise_and(b.view(it), m, out=m)
        return m.view(a.dtype)
    t = np.bitwise_xor(av, b.view(it))
    np.bitwise_and(t, m, out=t)
    np.bitwise_xor(av, t, out=t)
    return t.view(a.dtype)


def selects(ins: Instr, rec: Recorder) -> bool:
    """Whether the program writes ``ins`` as ``select`` (Note [branch-free select])."""
    if ins.fn is not np.where or ins.kwargs or len(ins.args) != 3:
        return False
    vals = []
    for v in ins.args:
        if isinstance(v, Ref):
            v = rec.plain[v.slot]
        vals.append(v)
    c = vals[0]
    return (
        _selectable(*vals) is not None
        and c.size >= SELECT_MIN
        and isinstance(ins.outs, int)
        and not ins.scalar
    )


# Note [strided views]
#     ``np.lib.stride_tricks.as_strided`` builds its view in Python, through an object with an
#     ``__array_interface__`` (about 7 µs a call; the SRGAN step's convolutions make 94). On a
#     C-contiguous ndarray the program makes the same view of the same bytes with the ndarray
#     constructor (``buffer=x``, offset 0: x's first byte), read-only where x is or where
#     ``writeable=False`` asks; other arrays, and views that the constructor refuses (reaching
#     out of x's bytes: a zero-size x, negative strides), take ``as_strided``.

_as_strided = np.lib.stride_tricks.as_strided


def strided(x: Any, shape: Any, strides: Any, writeable: bool = True) -> Any:
    """``as_strided(x, shape, strides, writeable=writeable)`` (Note [strided views])."""
    if type(x) is not _ndarray or not x.flags.c_contiguous:
        return _as_strided(x, shape=shape, strides=strides, writeable=writeable)
    try:
        v = _ndarray(shape, x.dtype, x, 0, strides)
    except (ValueError, TypeError):  # out of x's bytes, or a dtype with no buffer (object)
        return _as_strided(x, shape=shape, strides=strides, writeable=writeable)
    if not writeable:
        v.flags.writeable = False
    return v


def strides_view(ins: Instr, rec: Recorder) -> bool:
    """Whether the program writes ``ins`` as ``strided`` (Note [strided views])."""
    if ins.fn is not _as_strided or len(ins.args) != 1 or not isinstance(ins.args[0], Ref):
        return False
    kw = ins.kwargs
    if set(kw) - {"shape", "strides", "writeable"} or "shape" not in kw or "strides" not in kw:
        return False
    x = rec.plain[ins.args[0].slot]
    return type(x) is _ndarray and bool(x.flags.c_contiguous) and isinstance(ins.outs, int)
