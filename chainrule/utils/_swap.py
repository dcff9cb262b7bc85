"""``torch.utils.swap_tensors``: two Tensor objects trade their contents (class, attributes,
array and autograd state) while each keeps its identity, so references held elsewhere (an
optimizer's parameter list) see the other's contents."""

from __future__ import annotations

import copyreg
import weakref
from typing import Any

__all__ = ["swap_tensors"]

_POISONED = (
    "Trying to execute AccumulateGrad node that was poisoned by swap_tensors "
    "this can happen when you try to run backward on a tensor that was swapped. "
    "For a module m with `torch.__future__.set_swap_module_params_on_conversion(True)` "
    "you should not change the device or dtype of the module (e.g. `m.cpu()` or `m.half()`) "
    "between running forward and backward. To resolve this, please only change the "
    "device/dtype before running forward (or after both forward and backward)."
)


def _poison(grads: Any) -> Any:
    raise RuntimeError(_POISONED)


def swap_tensors(t1: Any, t2: Any) -> None:
    """Swap the contents of the Tensors ``t1`` and ``t2`` in place (PyTorch's checks: neither
    may be weakly referenced, and their classes must have the same slots). A graph recorded
    before the swap that ends in either one's AccumulateGrad node fails if run afterwards, as
    in PyTorch, since that node would write into the wrong tensor."""
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    slots = set(copyreg._slotnames(type(t1)))  # type: ignore[attr-defined]
    if slots != set(copyreg._slotnames(type(t2))):  # type: ignore[attr-defined]
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for t in (t1, t2):
        ref = t.__dict__.get("_accum")
        acc = None if ref is None else ref()
        if acc is not None:
            acc.register_prehook(_poison)
        t.__dict__.pop("_accum", None)
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    d1, d2 = t1.__dict__, t2.__dict__
    t1.__dict__, t2.__dict__ = d2, d1
    # The slots of Tensor and of its subclasses (copyreg leaves out __dict__ and __weakref__).
    for name in sorted(slots):
        missing = object()
        v1, v2 = getattr(t1, name, missing), getattr(t2, name, missing)
        for t, v in ((t1, v2), (t2, v1)):
            if v is missing:
                if hasattr(t, name):
                    delattr(t, name)
            else:
                setattr(t, name, v)
