"""The autograd side of ``Tensor``: what ``chainrule.autograd`` registers into
``chainrule._dispatch.autograd`` (the ``AutogradHooks`` interface), so that ``_tensor.py``
reaches the graph and the engine without importing them."""

from __future__ import annotations

import weakref
from typing import Any

from chainrule.autograd.graph import (
    _GRAD_LOCK,
    INFERENCE_SAVE_MSG,
    AccumulateGrad,
    VersionCounter,
)

__all__ = ["INFERENCE_VC", "new_accumulator", "HOOKS"]

# Inference tensors share one counter: their versions are never checked (they cannot be saved
# for backward), and a counter that is never None lets the record test _is_inference only when
# it has a counter in hand, off its common path.
INFERENCE_VC = VersionCounter()


def new_accumulator(t: Any) -> AccumulateGrad:
    """The leaf ``t``'s AccumulateGrad node, made now (``Tensor._get_accumulator``'s slow path)
    and held weakly by ``t``."""
    if t._is_inference:
        raise RuntimeError(INFERENCE_SAVE_MSG)
    # Under a lock, so that forwards in two threads cannot make two nodes for one leaf, whose
    # accumulations would not exclude each other (Note [accumulation lock]).
    with _GRAD_LOCK:
        ref = t._accum
        acc = None if ref is None else ref()
        if acc is None:
            acc = AccumulateGrad(t)
            t._accum = weakref.ref(acc)
    return acc


# The AutogradHooks entries but ``backward`` (which autograd/__init__.py adds).
HOOKS: dict[str, Any] = {
    "VersionCounter": VersionCounter,
    "inference_vc": INFERENCE_VC,
    "grad_lock": _GRAD_LOCK,
    "new_accumulator": new_accumulator,
}
