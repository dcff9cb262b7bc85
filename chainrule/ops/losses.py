"""Losses recorded as one op each, so that their node is the one PyTorch records
(``NllLossBackward0``, ``MseLossBackward0``) and a graph walk prints the same thing. The public
functions (``F.nll_loss``, ``F.mse_loss``) check their arguments and call these; the forward
computes the reduced loss in one go and the VJP is written with differentiable ops, so double
backward works as before.
"""

from __future__ import annotations

from typing import Any

from chainrule.ops._registry import apply_op, defop, ns

__all__: list[str] = []


# nll_loss -------------------------------------------------------------------------------------


@defop(name="nll_loss", promote=None)
def _nll_loss(
    xp: Any, x: Any, *, dim: int, index: Any, weight: Any, reduction: str, total: Any
) -> Any:
    """loss_i = -w_i x[i, t_i] along the class dim ``dim``: ``index`` holds the targets with
    the class dim kept (size 1; ignored targets as 0), ``weight`` the weight of each target (0
    where ignored). Reduced: ``none``, ``sum``, or ``mean`` = sum / ``total`` (the summed
    weights; NaN when 0).

    VJP: ``scatter_along`` of -w g (g / total for ``mean``) into the class dim."""
    picked = xp.squeeze(xp.take_along_axis(x, index, axis=dim), axis=dim)
    loss = -(picked * weight)
    if reduction == "none":
        return loss
    s = loss.sum()
    if reduction == "sum":
        return s
    return s * float("nan") if total == 0 else s / total


@_nll_loss.vjp
def _nll_loss_vjp(ctx: Any, g: Any) -> Any:
    if ctx.reduction == "mean":
        g = g * float("nan") if ctx.total == 0 else g / ctx.total
    gw = -g * ctx.weight
    gw = ns.reshape(gw, shape=ctx.index.shape)
    size = ctx.input_shapes[0][ctx.dim]
    return (ns.scatter_along(gw, dim=ctx.dim, index=ctx.index, size=size),)


def nll_loss(
    input: Any, dim: int, index: Any, weight: Any, reduction: str, total: Any = None
) -> Any:
    """The reduced negative log likelihood of ``input`` (internal helper of ``F.nll_loss``,
    which has checked and prepared the arguments)."""
    params = {
        "dim": dim,
        "index": index,
        "weight": weight,
        "reduction": reduction,
        "total": total,
    }
    return apply_op(_nll_loss, (input,), params)


# mse_loss -------------------------------------------------------------------------------------


@defop(name="mse_loss", saves=("x", "t"), promote="same")
def _mse_loss(xp: Any, x: Any, t: Any, *, reduction: str) -> Any:
    """(x - t)**2, then ``none``, ``sum`` or ``mean``. VJP: 2 (x - t) g (divided by the count
    for ``mean``) for x, its negation for t."""
    d = x - t
    loss = d * d
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.mean() if loss.size else loss.sum() * float("nan")


@_mse_loss.vjp
def _mse_loss_vjp(ctx: Any, g: Any) -> Any:
    need_x, need_t = ctx.needs_input_grad
    d = ctx.x - ctx.t
    n = 1
    for s in ctx.input_shapes[0] if need_x else ctx.input_shapes[1]:
        n *= s
    scale = (2.0 / n if n else float("nan")) if ctx.reduction == "mean" else 2.0
    gx = d * (g * scale)
    return (gx if need_x else None, -gx if need_t else None)


def mse_loss(input: Any, target: Any, reduction: str) -> Any:
    """The reduced squared error of same-shaped ``input`` and ``target`` (internal helper of
    ``F.mse_loss``, which has checked the arguments)."""
    return apply_op(_mse_loss, (input, target), {"reduction": reduction})
