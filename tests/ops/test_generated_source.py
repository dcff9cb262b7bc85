"""Generated per-op code is registered with linecache (chainrule/autograd/_codegen.py), so
tracebacks through it show its source lines."""

from __future__ import annotations

import linecache
import re
import traceback
import uuid

import pytest

import chainrule as cr
from chainrule.autograd._codegen import compile_generated
from chainrule.ops.binary import mul


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(exc.__traceback__))


def test_traceback_inside_a_generated_apply_shows_its_line() -> None:
    w = cr.ones(3, requires_grad=True)
    c = cr.ones(3, requires_grad=True)
    y = (w * c).sum()
    with cr.no_grad():
        c.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        y.backward()
    gen = [f for f in _frames(info.value) if "<chainrule generated apply of mul" in f.filename]
    assert gen, [f.filename for f in _frames(info.value)]
    assert gen[-1].name == "node_apply"
    assert re.fullmatch(r"v = s\d\.unpack\(node, False\)", gen[-1].line)
    text = "".join(traceback.format_exception(info.value))
    assert gen[-1].line in text


def test_traceback_inside_a_generated_record_shows_its_line() -> None:
    with cr.inference_mode():
        k = cr.ones(3)
    w = cr.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved") as info:
        w * k
    gen = [f for f in _frames(info.value) if "<chainrule generated record of mul" in f.filename]
    assert gen and gen[-1].line == "raise RuntimeError(INFERENCE_SAVE_MSG)"


def test_generated_sources_have_their_own_names() -> None:
    cr.ones(1, requires_grad=True) * cr.ones(1)  # mul's record is written on first use
    assert mul.op.record.__code__.co_filename.endswith("<chainrule generated record of mul>")
    what = f"test source {uuid.uuid4().hex}"
    env = compile_generated("def f():\n    return 1\n", what, {})
    again = compile_generated("def f():\n    return 2\n", what, {})
    a, b = env["f"].__code__.co_filename, again["f"].__code__.co_filename
    assert a.endswith(f"<chainrule generated {what}>")
    assert b.endswith(f"<chainrule generated {what} #2>")
    assert linecache.getline(a, 2).strip() == "return 1"
    assert linecache.getline(b, 2).strip() == "return 2"
    linecache.checkcache()  # no file behind the names: the entries must stay
    assert linecache.getline(b, 2).strip() == "return 2"
