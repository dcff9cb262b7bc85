"""PReLU as one op: y = x where x > 0, else a x, with a slope ``a`` shared or per channel.

Composed as ``where(x > 0, x, a x)``, PReLU records three nodes, its forward makes a mask, a
product and a select, and its backward two selects, two products, a sum and an accumulation
of two gradients for x. Here the forward is PyTorch's select, bit for bit, computed as
``x * f`` with f = 1 where x > 0 and the slope elsewhere (``ops/unary/elementwise.py``'s
``_slope_select``: four branch-free passes on large arrays, NumPy's ``where`` on small ones or
a slope for which ``f`` would not be exact, such as an infinite one). So the signs of zeros
are PyTorch's (x = -0 gives a (-0); x = +0 with a negative slope gives -0), and so are NaNs
and infinities (a NaN x gives NaN; -inf times a slope of 0 is NaN; an infinite slope leaves a
positive x as it is). (The earlier ``max(x, 0) + a min(x, 0)`` added a +0 to a -0 product,
giving +0, and multiplied a positive x's 0 by an infinite slope, giving NaN.) The VJP is a
mask and ``g * f`` for x and one product ``g min(x, 0)`` for the slope (the engine sums it
back to the slope's shape). Under ``create_graph`` the VJP recomputes with Tensor ops, so it
is differentiable again.
"""

from __future__ import annotations

from typing import Any

from chainrule.backends import backend_of
from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.unary.elementwise import _slope_select

__all__ = ["prelu_kernel"]


@defop(name="prelu_kernel", saves=("x", "a"), node_name="PreluKernelBackward0")
def _prelu_kernel(xp: Any, x: Any, a: Any) -> Any:
    """y = x where x > 0, else a x, ``a`` broadcasting against x (PyTorch's select, bit for bit).
    VJP: gx = g where x > 0, else a g; ga = g min(x, 0) (summed to a's shape)."""
    return _slope_select(xp, x > 0, x, a)


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
    neg = ns.minimum(x, 0 * x) if hasattr(x, "grad_fn") else backend_of(x).xp.minimum(x, 0)
    return gx, g * neg


@refuses_complex("prelu")
def prelu_kernel(x: Any, a: Any) -> Any:
    """PReLU with the slope ``a`` already shaped to broadcast against ``x``; see
    ``_prelu_kernel``."""
    return apply_op(_prelu_kernel, (x, a))
