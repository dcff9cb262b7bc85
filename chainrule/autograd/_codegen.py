"""Compiling the per-op code that autograd generates (Notes [generated record] in
ops/_record_gen.py and [generated apply] in autograd/_node_apply.py).

Each source gets a pseudo-filename of its own, ``<chainrule generated record of exp>``, placed
in the package's directory (so that ``user_site`` skips its frames as it skips the package's),
and is registered with ``linecache``: a traceback through generated code shows its lines as it
shows those of any file.
"""

from __future__ import annotations

import linecache
import os
import threading
from typing import Any

__all__ = ["compile_generated"]

_PKG_DIR = os.path.dirname(os.path.dirname(__file__))  # as autograd/_sites.py's
_lock = threading.Lock()
_used: dict[str, int] = {}


def compile_generated(src: str, what: str, env: dict[str, Any]) -> dict[str, Any]:
    """Run ``src`` in ``env`` under the pseudo-file ``<chainrule generated {what}>`` (numbered
    from the second source of one name on, e.g. when an op's code is written again) and
    return ``env``."""
    with _lock:
        n = _used.get(what, 0) + 1
        _used[what] = n
    label = f"<chainrule generated {what}>" if n == 1 else f"<chainrule generated {what} #{n}>"
    filename = os.path.join(_PKG_DIR, label)
    # mtime None: linecache.checkcache keeps the entry (there is no file to compare with).
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), env)
    return env
