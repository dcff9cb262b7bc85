"""Linear algebra ops."""

from __future__ import annotations

from typing import Any

from chainrule.ops._registry import apply_op, defop, ns

__all__ = ["matmul"]


@defop(name="matmul", saves=("a", "b"), promote="same")
def _matmul(xp: Any, a: Any, b: Any) -> Any:
    """a @ b with NumPy's batch broadcasting and 1-D promotion rules (as torch.matmul).
    VJP: g @ b^T and a^T @ g, with 1-D operands unsqueezed first and squeezed after."""
    return xp.matmul(a, b)


@_matmul.vjp
def _matmul_vjp(ctx: Any, g: Any) -> Any:
    a, b = ctx.a, ctx.b
    need_a, need_b = ctx.needs_input_grad
    if a.ndim == 1 and b.ndim == 1:
        return (g * b if need_a else None, g * a if need_b else None)
    a2 = ns.unsqueeze(a, dim=0) if a.ndim == 1 else a
    b2 = ns.unsqueeze(b, dim=b.ndim) if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = ns.unsqueeze(g2, dim=g2.ndim - 1)
    if b.ndim == 1:
        g2 = ns.unsqueeze(g2, dim=g2.ndim)
    ga = gb = None
    if need_a:
        ga = ns.matmul(g2, ns.transpose(b2, dim0=b2.ndim - 1, dim1=b2.ndim - 2))
        if a.ndim == 1:
            ga = ns.squeeze(ga, dim=(ga.ndim - 2,))
    if need_b:
        gb = ns.matmul(ns.transpose(a2, dim0=a2.ndim - 1, dim1=a2.ndim - 2), g2)
        if b.ndim == 1:
            gb = ns.squeeze(gb, dim=(gb.ndim - 1,))
    return ga, gb


def matmul(input: Any, other: Any) -> Any:
    """Matrix product with broadcasting over batch dims (``@``)."""
    for x, nm in ((input, "input"), (other, "other")):
        if not hasattr(x, "_data"):
            raise TypeError(f"matmul(): argument '{nm}' must be Tensor, not {type(x).__name__}")
        if x._data.ndim == 0:
            raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                               f"{input._data.ndim}D and {other._data.ndim}D")
    ka = input._data.shape[-1]
    kb = other._data.shape[-2] if other._data.ndim > 1 else other._data.shape[0]
    if ka != kb:
        if input._data.ndim == 1 and other._data.ndim == 1:
            raise RuntimeError(
                "inconsistent tensor size, expected tensor [%d] and src [%d] to have the same "
                "number of elements, but got %d and %d elements respectively" % (ka, kb, ka, kb))
        sa = "x".join(map(str, input._data.shape if input._data.ndim > 1 else (1, ka)))
        sb = "x".join(map(str, other._data.shape if other._data.ndim > 1 else (kb, 1)))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa} and {sb})")
    return apply_op(_matmul, (input, other))
