"""DistributedDataParallel's sink for ``static_graph``: the identity Function on a synced
forward's outputs whose backward queues the delayed all-reduce (Note [static graph sink])."""

from __future__ import annotations

import weakref
from typing import Any

from chainrule._tensor import Tensor
from chainrule.autograd._callbacks import queue_callback
from chainrule.autograd.function import Function

__all__ = ["through_sink"]


# Note [static graph sink] (torch's _DDPSink)
#     With static_graph, until the delayed all-reduce has been queued once, the outputs of a
#     synced forward pass through an identity Function. Its backward runs when backward
#     reaches the outputs, before any parameter's gradient hook, and queues
#     _delay_all_reduce as an engine final callback, once for the life of the DDP object
#     (``_static_graph_delay_allreduce_enqueued``): the first iteration's all-reduces all
#     start at the end of its backward, even one in which no parameter got a gradient (then
#     every parameter is unused from there on). Later iterations launch buckets from the
#     hooks, by the hook counts the first one recorded.
class _DDPSink(Function):
    @staticmethod
    def forward(ctx: Any, ddp_ref: Any, *inputs: Tensor) -> Any:
        ctx.ddp_ref = ddp_ref
        ctx.set_materialize_grads(False)
        return tuple(t.clone() for t in inputs)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        ddp = ctx.ddp_ref()
        if ddp is not None and ddp.static_graph and not ddp._static_graph_delay_allreduce_enqueued:
            queue_callback(ddp._delay_all_reduce)
            object.__setattr__(ddp, "_static_graph_delay_allreduce_enqueued", True)
        return (None, *grads)


def through_sink(ddp: Any, out: Any) -> Any:
    """``out`` with its tensors that have a history passed through ``_DDPSink`` (the same
    structure: a tensor, or lists, tuples and dicts of them)."""
    found: list[Tensor] = []

    def collect(o: Any) -> None:
        if isinstance(o, Tensor):
            if o.grad_fn is not None or o.requires_grad:
                found.append(o)
        elif isinstance(o, (list, tuple)):
            for v in o:
                collect(v)
        elif isinstance(o, dict):
            for v in o.values():
                collect(v)

    collect(out)
    if not found:
        return out
    res = _DDPSink.apply(weakref.ref(ddp), *found)
    res = res if isinstance(res, tuple) else (res,)
    swap = {id(t): r for t, r in zip(found, res)}

    def rebuild(o: Any) -> Any:
        if isinstance(o, Tensor):
            return swap.get(id(o), o)
        if isinstance(o, (list, tuple)):
            vals = [rebuild(v) for v in o]
            return type(o)(*vals) if hasattr(o, "_fields") else type(o)(vals)
        if isinstance(o, dict):
            return type(o)((k, rebuild(v)) for k, v in o.items())
        return o

    return rebuild(out)
