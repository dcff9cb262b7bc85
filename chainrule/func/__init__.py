"""``torch.func``: function transforms. chainrule has ``functional_call`` (a module run with
given parameters and buffers); ``grad``, ``vmap`` and the other transforms are not provided."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from chainrule._tensor import Tensor
from chainrule.nn.modules.module import Module
from chainrule.nn.utils.stateless import _functional_call

__all__ = ["functional_call"]


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: Mapping[str, Tensor] | Sequence[Mapping[str, Tensor]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with the named parameters / buffers replaced for the call.

    Args:
        module: the module to call.
        parameter_and_buffer_dicts: ``{dotted_name: tensor}``, or a sequence of such dicts
            (a key in two of them is an error).
        args: positional arguments (a non-tuple is one argument).
        kwargs: keyword arguments.
        tie_weights: a tensor the module holds under several names is replaced under all of
            them when one is given.
        strict: every parameter and buffer must be given, and nothing else.

    Returns:
        What ``module`` returns; the module's own tensors are back in place afterwards.
    """
    return _functional_call(
        module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights, strict=strict
    )
