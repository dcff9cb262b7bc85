"""Source sites: where in the user's program a node was made, freed or written (Note [sites]),
and the messages that name them (a second backward, a modified saved value).

Part of the backward graph (``autograd/graph.py`` re-exports it); imports nothing of it.
"""

from __future__ import annotations

import os as _os
import sys as _sys
import threading as _threading
from typing import Any

__all__ = [
    "FREED_MSG",
    "user_site",
    "site_line",
    "format_site",
    "set_record_sites",
    "is_record_sites_enabled",
    "freed_message",
    "FIXED_SITE",
]

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


# Note [sites]
#     Error messages and chainrule.viz name places in the user's program: the line whose forward
#     op created a node (``node._site``, set by ``ops._registry._record`` while
#     ``_record_sites[0]`` is on), the line of the backward call that freed a node's saved
#     values (``node._freed_at``, set by ``run_backward``) and the line of the last in-place
#     write to a tensor (``VersionCounter.last_write``, always on: every in-place path bumps
#     the counter, optimizer steps included). A site is ``(code object, f_lasti)`` of the
#     innermost frame outside the chainrule package (``format_site`` turns it into
#     ``file:line in func: source``); frames themselves are never kept (they would keep their
#     locals alive). The slots are left unset where nothing was recorded, so readers use
#     ``getattr(node, "_site", None)``. Walking the stack costs about 0.5 us, which is why
#     forward sites are opt-in while the backward and in-place ones, rare events, are not.


_PKG_DIR = _os.path.dirname(_os.path.dirname(__file__)) + _os.sep
_getframe = _sys._getframe
# Whether _record notes the forward site of each node (see Note [sites]). Off by default: the
# frame walk costs about 8% of a small op; anomaly mode records sites regardless.
_record_sites = [False]
# co_filename -> whether it lies in the chainrule package (a dict read is cheaper than the test).
_in_pkg: dict[str, bool] = {}


class _FixedSite(_threading.local):
    site: tuple[Any, int] | None = None


# Note [fixed site]
#     While ``FIXED_SITE.site`` is set (in this thread), ``user_site`` returns it without
#     walking the stack. A ``chainrule.compile`` replay sets it, around an optimizer step it runs
#     on behalf of its caller, to the caller's site: every parameter's version bump there would
#     otherwise walk out of the package through the step's and the replay's frames, and all of
#     them would find that same frame. Unset (None) everywhere else.
FIXED_SITE = _FixedSite()


def _file_in_pkg(filename: str) -> bool:
    inside = _in_pkg[filename] = filename.startswith(_PKG_DIR)
    return inside


def user_site(depth: int = 1) -> tuple[Any, int] | None:
    """``(code, f_lasti)`` of the innermost frame outside chainrule, starting ``depth`` frames
    above the caller (Note [sites]; Note [fixed site])."""
    fixed = FIXED_SITE.site
    if fixed is not None:
        return fixed
    try:
        f: Any = _getframe(depth + 1)
    except ValueError:
        return None
    while f is not None:
        c = f.f_code
        inside = _in_pkg.get(c.co_filename)
        if inside is None:
            inside = _file_in_pkg(c.co_filename)
        if not inside:
            return (c, f.f_lasti)
        f = f.f_back
    return None


def site_line(site: tuple[Any, int]) -> int | None:
    """The line number of a site (its code's line at instruction offset ``f_lasti``)."""
    code, lasti = site
    line = None
    for start, end, ln in code.co_lines():
        if start <= lasti < end:
            return ln
        if start <= lasti:
            line = ln if ln is not None else line
    return line if line is not None else code.co_firstlineno


def format_site(site: tuple[Any, int] | None, text: bool = True) -> str:
    """``"file.py:12 in fn: <source line>"`` (the path relative to the working directory when
    it lies below it; without the source line unless ``text``). An offset of -1 stands for the
    code's first line."""
    if site is None:
        return "an unknown place"
    import linecache

    code = site[0]
    line = site_line(site)
    fn = code.co_filename
    shown = fn
    if _os.path.isabs(fn):
        try:
            rel = _os.path.relpath(fn)
            if not rel.startswith(".."):
                shown = rel
        except ValueError:  # another drive on Windows
            pass
    if not text:
        return f"{shown}:{line}"
    src = linecache.getline(fn, line).strip() if line else ""
    return f"{shown}:{line} in {code.co_name}" + (f": {src}" if src else "")


class set_record_sites:
    """Record the user's source line of every forward op (``node._site``; Note [sites]), which
    the messages of a second backward or of a modified saved tensor and ``chainrule.viz``
    then show. Off by default (it costs about 8% per op); anomaly mode records them too.

    Used as a function it sets the mode; as a context manager it restores the old one on exit.
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _record_sites[0]
        _record_sites[0] = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _record_sites[0] = self.prev


def is_record_sites_enabled() -> bool:
    """Whether forward sites are recorded (see ``set_record_sites``)."""
    return _record_sites[0]


_SITES_HINT = (
    "\n  (chainrule.autograd.graph.set_record_sites(True) or anomaly mode would also name the "
    "forward line that created the node.)"
)


def _created_at(node: Any) -> str:
    site = getattr(node, "_site", None)
    return "" if site is None else f" (created by the forward at {format_site(site)})"


def _sites_of_modified(node: Any, counter: Any) -> str:
    """The lines that say where a value was saved and where it was then changed in place."""
    lines = []
    if node is not None and getattr(node, "_site", None) is not None:
        lines.append(f"\n  saved for {node.name()} by the forward at {format_site(node._site)}")
    elif node is not None:
        lines.append(_SITES_HINT)
    last = getattr(counter, "last_write", None)
    if last is not None:
        lines.append(f"\n  modified in place at {format_site(last)}")
    return "".join(lines)


def freed_message(node: Any) -> str:
    """PyTorch's message for a second backward, plus which node's values were freed and which
    backward call freed them (Note [sites])."""
    if node is None:
        return FREED_MSG
    freed_at = getattr(node, "_freed_at", None)
    if freed_at is None:
        by, call = "", "the backward call that freed them"
    else:
        by, call = f" by the backward call at {format_site(freed_at)}", "that call"
    created = _created_at(node)
    return (
        f"{FREED_MSG}\n  The saved values of {node.name()}{created} were freed{by}. "
        f"Pass retain_graph=True to {call} if this graph is to be backpropagated again, or "
        "run the forward again to build a fresh graph for this backward."
        + ("" if created else _SITES_HINT)
    )


def _origin(node: Any) -> str:
    """Where ``node`` came from, for error messages: the forward line that made it (when
    recorded, Note [sites]) and, for a custom Function, where its backward is."""
    parts = []
    site = getattr(node, "_site", None)
    if site is not None:
        parts.append(f"created by the forward at {format_site(site)}")
    cls = getattr(node, "_forward_cls", None)
    code = getattr(getattr(cls, "backward", None), "__code__", None)
    if cls is not None and code is not None:
        parts.append(f"its backward is {cls.__name__}.backward at {format_site((code, -1), False)}")
    return f" ({'; '.join(parts)})" if parts else ""
