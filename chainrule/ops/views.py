"""In-place ops on views: rewriting the base's history (PyTorch's CopySlices).

A view remembers its root ``_base`` and the chain of view ops that produced it from the root.
An in-place op on a view whose base is in a graph:
  1. computes the op on the view's current value and history, writes the result into the shared
     memory and increments the shared version counter;
  2. gives the base a ``CopySlices`` node: base_new = base_old with the view's region replaced by
     the result. Its VJP sends g with that region zeroed to the old base, and the region of g
     to the result;
  3. gives the view a fresh history by replaying its chain of view ops on the base's new history.
"""

from __future__ import annotations

from typing import Any

from chainrule._tensor import Tensor, _new_tensor
from chainrule.ops._registry import (
    OpDef,
    _record,
    _write_into,
    apply_op,
    ns,
    rebase_history,
)

__all__ = ["inplace_on_view", "apply_chain"]


def _region(xp: Any, a: Any, chain: tuple[Any, ...]) -> Any:
    """The view of array ``a`` that ``chain`` selects (shares memory with ``a``)."""
    for op, params in chain:
        a = op.forward(xp, a, **(params or {}))
    return a


def apply_chain(g: Any, chain: tuple[Any, ...]) -> Any:
    """Apply a chain of view ops to ``g`` (array or Tensor) through ``ns``."""
    for op, params in chain:
        g = getattr(ns, op.name)(g, **(params or {}))
    return g


def _copy_slices_fwd(xp: Any, base: Any, src: Any, *, chain: tuple[Any, ...]) -> Any:
    out = base.copy()
    xp.copyto(_region(xp, out, chain), src)
    return out


def _zero_view_fwd(xp: Any, g: Any, *, chain: tuple[Any, ...]) -> Any:
    out = g.copy()
    _region(xp, out, chain)[...] = 0
    return out


_zero_view = OpDef("zero_view", _zero_view_fwd, ("g",), node_name="ZeroViewBackward0")
_zero_view.vjp(lambda ctx, g: (ns.zero_view(g, chain=ctx.chain),))

copy_slices = OpDef("copy_slices", _copy_slices_fwd, ("base", "src"), node_name="CopySlices")


@copy_slices.vjp
def _copy_slices_vjp(ctx: Any, g: Any) -> Any:
    need_base, need_src = ctx.needs_input_grad
    return (
        ns.zero_view(g, chain=ctx.chain) if need_base else None,
        apply_chain(g, ctx.chain) if need_src else None,
    )


def _history_alias(t: Tensor, copy: bool) -> Tensor:
    """A Tensor standing for ``t``'s current value and history (a copy of the value if asked)."""
    a = _new_tensor(t._data.copy() if copy else t._data)
    a._requires_grad = t._requires_grad
    a.grad_fn = t.grad_fn
    if t._output_nr:
        a._output_nr = t._output_nr
    if t._requires_grad and t.grad_fn is None:
        a._accum = t._accum
    return a


def inplace_on_view(
    op: OpDef, view: Tensor, others: tuple[Any, ...], params: dict[str, Any] | None
) -> Tensor:
    """Apply in-place ``op`` to ``view`` and rewrite the history of its base; see module doc."""
    base = view._base
    assert base is not None
    chain = view._view_chain
    saves_self = any(kind == 0 and idx == 0 for kind, idx in op.save_spec)
    result = apply_op(op, (_history_alias(view, saves_self),) + others, params)
    _write_into(view, result._data, op)
    view._bump_version()
    base_out = _record(copy_slices, (_history_alias(base, False), result), base._data,
                       {"chain": chain}, None)
    rebase_history(base, base_out)
    replay = base
    for vop, vparams in chain:
        replay = apply_op(vop, (replay,), vparams)
    view.grad_fn = replay.grad_fn
    view._requires_grad = True
    return view
