"""``chainrule.compiler`` and ``chainrule.compile``: PyTorch's compiler entry points.

chainrule has no compiler yet (issue 20 makes ``compile`` capture and replay): ``compile``
returns the function or module unchanged, as ``torch.compile(..., disable=True)`` does, so
programs that compile their model run eagerly with the same results.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = [
    "compile",
    "disable",
    "reset",
    "is_compiling",
    "is_dynamo_compiling",
    "is_exporting",
    "allow_in_graph",
    "assume_constant_result",
    "list_backends",
    "cudagraph_mark_step_begin",
    "set_stance",
]

_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")


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
    """Return ``model`` unchanged (it runs eagerly); usable as ``@compile`` or ``@compile(...)``.

    Raises:
        RuntimeError: for ``mode`` and ``options`` together, or an unknown ``mode``, as PyTorch.
    """
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode not in (
        None,
        "default",
        "reduce-overhead",
        "max-autotune",
        "max-autotune-no-cudagraphs",
    ):
        raise RuntimeError(
            f"Unrecognized mode={mode}, should be one of: default, "
            "reduce-overhead, max-autotune, max-autotune-no-cudagraphs"
        )
    if model is None:
        return lambda m: m
    if not callable(model):
        raise RuntimeError(f"torch.compile() expected a callable, got {type(model).__name__}")
    return model


def disable(
    fn: Callable[..., Any] | None = None, recursive: bool = True, *, reason: str | None = None
) -> Any:
    """Decorator that leaves ``fn`` as it is (nothing is compiled here)."""
    if fn is None:
        return lambda f: f
    return fn


def reset() -> None:
    """Forget compiled code: there is none to forget."""


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
