"""``chainrule.compile``'s machinery: capture (``_tracer.py``, ``capture.py``), guards
(``guards.py``) and replay (``replay.py``); the public face is ``chainrule/compiler.py``.

Modules: ``_tracer.py`` (the tracing array), ``_recorder.py`` (slots, instructions, breaks),
``_xp.py`` (the ``xp`` and backend of tracing arrays), ``capture.py``, ``guards.py``,
``replay.py``, ``api.py`` (the compiled function and its cache).

A compiled function's first call with a new guard signature runs eagerly on tracing arrays
and records every array call it makes; later calls with the same signature replay those
calls on the live arrays, without Tensors, nodes, dispatch or the engine. See docs/compile.md.
"""

from __future__ import annotations

from chainrule._compile import _tracer, _xp
from chainrule._compile.api import CompiledFunction, compile_fn, disable, explain, reset
from chainrule._compile.errors import Unsupported
from chainrule.backends import register_array_type

register_array_type(_tracer.Tracer, _xp.TRACING_BACKEND)

__all__ = ["CompiledFunction", "compile_fn", "disable", "explain", "reset", "Unsupported"]
