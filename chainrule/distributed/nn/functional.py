"""Differentiable collectives (``torch.distributed.nn.functional``).

``all_reduce`` with SUM: out = sum_r x_r on every rank. The total loss is L = sum_r L_r, so
dL/dx_r = sum_s dL_s/d out_s: the VJP is an all-reduce SUM of the incoming gradients, in
backward, run by every rank in the same order because every rank runs the same graph.
"""

from __future__ import annotations

from typing import Any

from chainrule._tensor import Tensor
from chainrule.autograd import Function
from chainrule.distributed import _collectives
from chainrule.distributed._mpi import ReduceOp

__all__ = ["all_reduce"]


class _AllReduceSum(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, group: Any) -> Tensor:
        ctx.group = group
        out = x.detach().clone()
        _collectives.all_reduce(out, ReduceOp.SUM, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple[Tensor, None]:
        # A Function call again, so that double backward goes through the collective too.
        return _AllReduceSum.apply(g.contiguous(), ctx.group), None


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None) -> Tensor:
    """The sum of ``tensor`` over the group's ranks, as a new tensor that autograd
    differentiates through (VJP: the all-reduced sum of the incoming gradients).

    Only ``ReduceOp.SUM`` is differentiable here."""
    if op is not ReduceOp.SUM:
        raise ValueError(
            f"chainrule.distributed.nn.functional.all_reduce supports ReduceOp.SUM only, got {op!r}"
        )
    return _AllReduceSum.apply(tensor, group)
