"""``functional_call``: run a module with some of its parameters and buffers replaced.

``functional_call(m, {"weight": w}, (x,))`` calls ``m(x)`` with ``m.weight`` read as ``w`` (the
entry of ``_parameters`` / ``_buffers`` swapped for the call and put back afterwards, also on
error), so gradients flow to ``w``. Tied tensors (one tensor under several names) are replaced
together unless ``tie_weights=False``.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping, Sequence

from chainrule._tensor import Tensor
from chainrule.nn.modules.module import Module

__all__ = ["functional_call"]

# Marks an attribute that did not exist before the call.
_MISSING = object()


def _tied_names(module: Module) -> dict[str, list[str]]:
    """name -> every name that holds the same tensor (only for tensors with several names)."""
    by_id: dict[int, list[str]] = {}
    for name, t in [
        *module.named_parameters(remove_duplicate=False),
        *module.named_buffers(remove_duplicate=False),
    ]:
        by_id.setdefault(id(t), []).append(name)
    return {n: names for names in by_id.values() if len(names) > 1 for n in names}


def _expand_tied(module: Module, given: dict[str, Any]) -> dict[str, Any]:
    tied = _tied_names(module)
    out = dict(given)
    for name, value in given.items():
        group = tied.get(name)
        if group is None:
            continue
        clash = [n for n in group if n in given and given[n] is not value]
        if clash:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted([name, *clash])}, which "
                "are tied. Consider using tie_weights=False"
            )
        for n in group:
            out[n] = value
    return out


def _swap(module: Module, name: str, value: Any) -> tuple[Module, str, str, Any]:
    """Put ``value`` in place of ``module.<name>``; returns what restores it."""
    path, _, attr = name.rpartition(".")
    owner = module.get_submodule(path)
    for store in ("_parameters", "_buffers"):
        d = owner.__dict__[store]
        if attr in d:
            old = d[attr]
            d[attr] = value
            return owner, store, attr, old
    old = owner.__dict__.get(attr, _MISSING)
    object.__setattr__(owner, attr, value)
    return owner, "__dict__", attr, old


def _merged(parameters_and_buffers: Any) -> dict[str, Any]:
    """One dict of the replacements: a mapping, or a sequence of mappings with no name in two."""
    if isinstance(parameters_and_buffers, Mapping):
        return dict(parameters_and_buffers)
    elif isinstance(parameters_and_buffers, Sequence):
        given = {}
        seen: set[str] = set()
        dup: list[str] = []
        for d in parameters_and_buffers:
            for k in d:
                if k in seen:
                    dup.append(k)
                seen.add(k)
            given.update(d)
        if dup:
            raise ValueError(
                f"{sorted(set(dup))} appeared in multiple dictionaries; behavior of functional "
                "call is ambiguous"
            )
        return given
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameters_and_buffers)}"
        )


def _check_strict(module: Module, given: dict[str, Any]) -> None:
    """With ``strict``: the names given are exactly the module's parameters and buffers."""
    names = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    names |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    unexpected = sorted(k for k in given if k not in names)
    missing = sorted(n for n in names if n not in given)
    errs = []
    if unexpected:
        errs.append("Unexpected key(s): {}.".format(", ".join(f"'{k}'" for k in unexpected)))
    if missing:
        errs.append("Missing key(s): {}.".format(", ".join(f"'{k}'" for k in missing)))
    if errs:
        raise RuntimeError(
            f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(errs)
        )


def _restore(undo: list[Any]) -> None:
    """Put back what :func:`_swap` replaced, last first."""
    for owner, store, attr, old in reversed(undo):
        if store == "__dict__":
            if old is _MISSING:
                owner.__dict__.pop(attr, None)
            else:
                owner.__dict__[attr] = old
        else:
            owner.__dict__[store][attr] = old


def _functional_call(
    module: Module,
    parameters_and_buffers: Any,
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    given = _merged(parameters_and_buffers)
    if tie_weights:
        given = _expand_tied(module, given)
    if strict:
        _check_strict(module, given)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    undo = []
    try:
        for name, value in given.items():
            undo.append(_swap(module, name, value))
        return module(*args, **(kwargs or {}))
    finally:
        _restore(undo)


def functional_call(
    module: Module,
    parameters_and_buffers: Mapping[str, Tensor],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with the named parameters / buffers replaced for the call
    (deprecated: use ``torch.func.functional_call``)."""
    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will "
        "be removed in a future version of PyTorch. Please use `torch.func.functional_call` "
        "instead which is a drop-in replacement.",
        FutureWarning,
        stacklevel=2,
    )
    return _functional_call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )
