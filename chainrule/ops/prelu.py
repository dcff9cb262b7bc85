"""PReLU as one op: y = max(x, 0) + a min(x, 0), with a slope ``a`` shared or per channel.

Composed as ``where(x > 0, x, a x)``, PReLU records three nodes, its forward makes a mask, a
product and a select, and its backward two selects, two products, a sum and an accumulation
of two gradients for x. Here the forward is four branch-free passes (PyTorch's NaN and
infinity results: max and min propagate a NaN, and a -inf times a slope of 0 is NaN as in
``a * x``), it keeps min(x, 0) for the backward, and the VJP is a mask and ``g * f`` (f = 1 or
the slope, ``ops/unary/elementwise.py``'s ``_slope_select``: no select) for x and one product
for the slope (the engine sums it back to the slope's shape). Under
``create_graph`` the VJP recomputes min(x, 0) from the saved input with Tensor ops, so it is
differentiable again.
"""

from __future__ import annotations

from typing import Any

from chainrule.backends import backend_of
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.unary.elementwise import _slope_select

__all__ = ["prelu_kernel"]


@defop(name="prelu_kernel", aux=True, saves=("x", "a"), node_name="PreluKernelBackward0")
def _prelu_kernel(xp: Any, x: Any, a: Any) -> Any:
    """y = max(x, 0) + a min(x, 0), ``a`` broadcasting against x.
    VJP: gx = g where x > 0, else a g; ga = g min(x, 0) (summed to a's shape)."""
    neg = xp.minimum(x, 0)
    y = neg * a
    y += xp.maximum(x, 0)
    return y, {"neg": neg}


@_prelu_kernel.vjp
def _prelu_kernel_vjp(ctx: Any, g: Any) -> Any:
    x, a = ctx.x, ctx.a
    nx, na = ctx.needs_input_grad
    if not nx:
        gx = None
    elif hasattr(g, "grad_fn") or hasattr(x, "grad_fn"):  # create_graph: Tensor ops
        gx = ns.where(x > 0, g, g * a)
    else:  # arrays: g * f with f = 1 or a, no select (ops/unary/elementwise.py)
        gx = _slope_select(backend_of(g).xp, x > 0, g, a)
    if not na:
        return gx, None
    neg = ns.minimum(x, 0 * x) if hasattr(x, "grad_fn") else ctx.neg
    return gx, g * neg


def prelu_kernel(x: Any, a: Any) -> Any:
    """PReLU with the slope ``a`` already shaped to broadcast against ``x``; see
    ``_prelu_kernel``."""
    return apply_op(_prelu_kernel, (x, a))
