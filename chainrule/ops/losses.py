"""Losses recorded as one op each, so that their node is the one PyTorch records
(``NllLossBackward0``, ``MseLossBackward0``) and a graph walk prints the same thing. The public
functions (``F.nll_loss``, ``F.mse_loss``) check their arguments and call these; the forward
computes the reduced loss in one go and the VJP is written with differentiable ops, so double
backward works as before.
"""

from __future__ import annotations

from typing import Any

from chainrule.ops._registry import OpDef, apply_op, defop, ns

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


# PyTorch's kernel for a 4-d input (N, C, H, W) is nll_loss2d, named apart: the same op here.
_nll_loss2d = OpDef(
    "nll_loss2d", _nll_loss.forward, ("x",), promote=None, node_name="NllLoss2DBackward0"
)
_nll_loss2d.vjp(_nll_loss_vjp)


def nll_loss(
    input: Any, dim: int, index: Any, weight: Any, reduction: str, total: Any = None
) -> Any:
    """The reduced negative log likelihood of ``input`` (internal helper of ``F.nll_loss``,
    which has checked and prepared the arguments); a 4-d input records NllLoss2DBackward0."""
    params = {
        "dim": dim,
        "index": index,
        "weight": weight,
        "reduction": reduction,
        "total": total,
    }
    return apply_op(_nll_loss2d if input.ndim == 4 else _nll_loss, (input,), params)


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


# Shared by the elementwise losses below -------------------------------------------------------


def _reduce_fwd(loss: Any, reduction: str) -> Any:
    """``none``, ``sum`` or ``mean`` (NaN for no elements) of an elementwise loss array."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.mean() if loss.size else loss.sum() * float("nan")


def _scaled(ctx: Any, g: Any, shape: Any) -> Any:
    """g scaled for the reduction: divided by the element count of ``shape`` for ``mean``."""
    if ctx.reduction != "mean":
        return g
    n = 1
    for s in shape:
        n *= s
    return g / n if n else g * float("nan")


def _shape(ctx: Any) -> Any:
    return next(s for s in ctx.input_shapes if s is not None)


# smooth_l1_loss and huber_loss ------------------------------------------------------------


@defop(name="smooth_l1_loss", saves=("x", "t"), promote="same")
def _smooth_l1_loss(xp: Any, x: Any, t: Any, *, reduction: str, beta: float) -> Any:
    """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (|d| for beta == 0), d = x - t,
    reduced. VJP: d / beta where |d| < beta, else sign(d), for x; its negation for t."""
    d = x - t
    ad = xp.abs(d)
    loss = ad if beta == 0 else xp.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
    return _reduce_fwd(loss.astype(x.dtype, copy=False), reduction)


@_smooth_l1_loss.vjp
def _smooth_l1_loss_vjp(ctx: Any, g: Any) -> Any:
    need_x, need_t = ctx.needs_input_grad
    d = ctx.x - ctx.t
    beta = ctx.beta
    if beta == 0:
        dl = ns.sign(d)
    else:
        dl = ns.where(ns.abs(d) < beta, d * (1.0 / beta), ns.sign(d))
    gx = dl * _scaled(ctx, g, _shape(ctx))
    return (gx if need_x else None, -gx if need_t else None)


@defop(name="huber_loss", saves=("x", "t"), promote="same")
def _huber_loss(xp: Any, x: Any, t: Any, *, reduction: str, delta: float) -> Any:
    """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta), d = x - t, reduced.
    VJP: d where |d| < delta, else delta sign(d), for x; its negation for t."""
    d = x - t
    ad = xp.abs(d)
    loss = xp.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    return _reduce_fwd(loss.astype(x.dtype, copy=False), reduction)


@_huber_loss.vjp
def _huber_loss_vjp(ctx: Any, g: Any) -> Any:
    need_x, need_t = ctx.needs_input_grad
    d = ctx.x - ctx.t
    delta = ctx.delta
    dl = ns.where(ns.abs(d) < delta, d, ns.sign(d) * delta)
    gx = dl * _scaled(ctx, g, _shape(ctx))
    return (gx if need_x else None, -gx if need_t else None)


def smooth_l1_loss(input: Any, target: Any, reduction: str, beta: float) -> Any:
    """Internal helper of ``F.smooth_l1_loss`` (same shapes and dtypes, checked)."""
    return apply_op(_smooth_l1_loss, (input, target), {"reduction": reduction, "beta": beta})


def huber_loss(input: Any, target: Any, reduction: str, delta: float) -> Any:
    """Internal helper of ``F.huber_loss`` (same shapes and dtypes, checked)."""
    return apply_op(_huber_loss, (input, target), {"reduction": reduction, "delta": delta})


# binary_cross_entropy_with_logits -----------------------------------------------------------


@defop(name="binary_cross_entropy_with_logits", saves=("x", "t"), promote="same")
def _bce_with_logits(
    xp: Any, x: Any, t: Any, *, reduction: str, weight: Any, pos_weight: Any
) -> Any:
    """(1 - t) x + (1 + (pw - 1) t) softplus(-x), times w (constants, optional), reduced.
    VJP: w ((1 - t) + (1 + (pw - 1) t) (sigmoid(x) - 1)) for x, w ((pw - 1) softplus(-x) - x)
    for t."""
    sp = (xp.maximum(-x, 0) + xp.log1p(xp.exp(-xp.abs(x)))).astype(x.dtype, copy=False)
    if pos_weight is not None:
        loss = (1 - t) * x + ((pos_weight - 1) * t + 1) * sp
    else:
        loss = (1 - t) * x + sp
    if weight is not None:
        loss = loss * weight
    return _reduce_fwd(loss, reduction)


@_bce_with_logits.vjp
def _bce_with_logits_vjp(ctx: Any, g: Any) -> Any:
    need_x, need_t = ctx.needs_input_grad
    x, t, pw, w = ctx.x, ctx.t, ctx.pos_weight, ctx.weight
    g = _scaled(ctx, g, _shape(ctx))
    if w is not None:
        g = g * w
    gx = gt = None
    if need_x:
        k = 1 if pw is None else (pw - 1) * t + 1
        gx = g * ((1 - t) + k * (ns.sigmoid(x) - 1))
    if need_t:
        gt = g * ((0 if pw is None else (pw - 1) * ns.neg_log_sigmoid(x)) - x)
    return gx, gt


def binary_cross_entropy_with_logits(
    input: Any, target: Any, reduction: str, weight: Any, pos_weight: Any
) -> Any:
    """Internal helper of ``F.binary_cross_entropy_with_logits``: same shapes and dtypes,
    ``weight`` and ``pos_weight`` arrays of that dtype that broadcast to the input's shape."""
    params = {"reduction": reduction, "weight": weight, "pos_weight": pos_weight}
    return apply_op(_bce_with_logits, (input, target), params)


# binary_cross_entropy -----------------------------------------------------------------------


@defop(name="binary_cross_entropy", saves=("x", "t"), promote="same")
def _bce(xp: Any, x: Any, t: Any, *, reduction: str, weight: Any) -> Any:
    """-w (t log x + (1 - t) log(1 - x)), each log clamped to >= -100 as PyTorch, reduced.
    VJP (PyTorch's): w (x - t) / max(x (1 - x), 1e-12) for x, w (log(1 - x) - log x) (the
    clamped logs) for t."""
    lx = xp.maximum(xp.log(x), -100)  # log(0) = -inf silently: NumPy's warnings are off
    l1x = xp.maximum(xp.log1p(-x), -100)
    loss = -(t * lx + (1 - t) * l1x)
    if weight is not None:
        loss = loss * weight
    return _reduce_fwd(loss.astype(x.dtype, copy=False), reduction)


@_bce.vjp
def _bce_vjp(ctx: Any, g: Any) -> Any:
    need_x, need_t = ctx.needs_input_grad
    x, t, w = ctx.x, ctx.t, ctx.weight
    g = _scaled(ctx, g, _shape(ctx))
    if w is not None:
        g = g * w
    gx = gt = None
    if need_x:
        gx = g * (x - t) / ns.clamp_min(x * (1 - x), min=1e-12)
    if need_t:
        lx = ns.clamp_min(ns.log(x), min=-100.0)
        l1x = ns.clamp_min(ns.log1p(-x), min=-100.0)
        gt = g * (l1x - lx)
    return gx, gt


def binary_cross_entropy(input: Any, target: Any, reduction: str, weight: Any) -> Any:
    """Internal helper of ``F.binary_cross_entropy`` (checked as for the with-logits one)."""
    return apply_op(_bce, (input, target), {"reduction": reduction, "weight": weight})
