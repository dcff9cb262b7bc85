"""``chainrule.compiler`` and ``chainrule.compile``: PyTorch's compiler entry points.

``compile`` captures a function's array calls once and replays them (the machinery is in
``chainrule/_compile/``; docs/compile.md says what is captured and when a call runs eagerly).
"""

from __future__ import annotations

from typing import Any, Callable

from chainrule._compile.errors import Unsupported

__all__ = [
    "compile",
    "disable",
    "reset",
    "explain",
    "Unsupported",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "allow_in_graph",
    "assume_constant_result",
    "list_backends",
    "cudagraph_mark_step_begin",
    "set_stance",
]


def compile(
    model: Any = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,  # noqa: A001
    backend: Any = "inductor",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    disable: bool = False,
) -> Any:
    """Compile ``model`` (a function or module): usable as ``@compile`` or ``@compile(...)``.

    The first call with a new guard signature runs eagerly and records every array call it
    makes (forward, backward, optimizer updates); later calls whose guards hold replay them on
    the call's arrays and set what eager would have set, bit for bit. A call that reads tensor
    data into Python, or uses hooks or anomaly mode, runs eagerly (a graph break); with
    ``fullgraph=True`` it raises ``Unsupported`` naming the line. ``backend``, ``mode`` and
    ``options`` are accepted for compatibility; there is one replay backend. See
    docs/compile.md.

    Raises:
        RuntimeError: for ``mode`` and ``options`` together, or an unknown ``mode``, as PyTorch.
    """
    from chainrule._compile import compile_fn

    return compile_fn(
        model,
        fullgraph=fullgraph,
        dynamic=dynamic,
        backend=backend,
        mode=mode,
        options=options,
        disable=disable,
    )


def disable(
    fn: Callable[..., Any] | None = None, recursive: bool = True, *, reason: str | None = None
) -> Any:
    """Mark ``fn`` so that ``compile`` never captures it (it runs eagerly); a decorator."""
    from chainrule._compile import disable as _disable

    if fn is None:
        return _disable
    return _disable(fn)


def reset() -> None:
    """Forget every capture of every compiled function (they capture again on their next
    call)."""
    from chainrule._compile import reset as _reset

    _reset()


def explain(fn: Any = None) -> str:
    """A report of the captures, guards and graph breaks of ``fn`` (a compiled function) or
    of every compiled function: calls, captures, replays, eager runs and why, array calls per
    capture, capture time and the bytes of constants a capture holds."""
    from chainrule._compile import explain as _explain

    return _explain(fn)


def is_compiling() -> bool:
    """False: code never runs under a compiler's trace here."""
    return False


is_dynamo_compiling = is_compiling


def is_exporting() -> bool:
    """False: nothing is exported here."""
    return False


def allow_in_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Return ``fn`` unchanged."""
    return fn


def assume_constant_result(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Return ``fn`` unchanged."""
    return fn


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """The backend names ``compile`` accepts (all run eagerly here)."""
    return ["cudagraphs", "inductor"]


def cudagraph_mark_step_begin() -> None:
    """Nothing to mark: no CUDA graphs here."""


def set_stance(
    stance: str = "default", *, skip_guard_eval_unsafe: bool = False, force_backend: Any = None
) -> Any:
    """Accepted for compatibility; returns a no-op context manager."""
    import contextlib

    return contextlib.nullcontext()
