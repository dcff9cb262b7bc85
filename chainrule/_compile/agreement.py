"""Note [second capture] (api.py): whether two captures of one guard signature recorded the
same program."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule._compile._recorder import Ref
from chainrule._compile._xp import LiveRng
from chainrule._compile.capture import Capture

__all__ = ["same_program"]


def _same_template(a: Any, b: Any) -> bool:
    if isinstance(a, Ref) or isinstance(b, Ref):
        return isinstance(a, Ref) and isinstance(b, Ref) and a.slot == b.slot
    ta = type(a)
    if ta is not type(b):
        return False
    if ta in (tuple, list):
        return len(a) == len(b) and all(_same_template(x, y) for x, y in zip(a, b))
    if ta is dict:
        return a.keys() == b.keys() and all(_same_template(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    try:
        return bool(a == b) or a is b
    except Exception:  # noqa: BLE001 - an object without a usable ==
        return a is b


def same_program(a: Capture, b: Capture) -> str | None:
    """None when two captures of one signature recorded the same program (Note [second
    capture] in api.py), else why not."""
    why = (
        "the program differs between two calls with the same guards (a value is computed "
        "outside the recorded calls)"
    )
    pa = getattr(a, "_program_instrs", None)
    pb = getattr(b, "_program_instrs", None)
    if pa is None or pb is None or len(pa) != len(pb):
        return why
    for x, y in zip(pa, pb):
        fx, fy = x.fn, y.fn
        if isinstance(fx, LiveRng) and isinstance(fy, LiveRng):
            if fx.name != fy.name or fx.generator is not fy.generator:
                return why
        elif (fx is not fy and fx != fy) or x.outs != y.outs or x.sync != y.sync:
            return why
        if not (_same_template(x.args, y.args) and _same_template(x.kwargs, y.kwargs)):
            return why
    if len(a.consts) != len(b.consts):
        return why
    for (ka, _, sa, wa), (kb, _, sb, wb) in zip(a.consts, b.consts):
        if ka != kb or wa != wb or sa.shape != sb.shape or sa.dtype != sb.dtype:
            return why
        if not np.array_equal(sa, sb, equal_nan=sa.dtype.kind in "fc"):
            return why
    return None
