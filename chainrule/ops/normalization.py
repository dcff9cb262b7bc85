"""Fused batch normalization in training mode: statistics, normalisation and the affine map in
one op, forward and backward.

Composed from mean, sub, mul, pow and the affine ops, a training BatchNorm records nine nodes
and makes about a dozen passes over its input forward and as many backward; PyTorch runs one
kernel each way. ``batch_norm_train`` computes the statistics in one pass each (the mean, then
the sum of squared deviations as a contraction, with no squared temporary), normalises in place
and keeps the normalised values for the backward, whose three reductions and one elementwise
pass give the gradients of the input, the weight and the bias. Its VJP is written with ``ns``
ops: in an ordinary backward it runs on the arrays kept from the forward; under
``create_graph`` it recomputes the normalised input from the saved one with Tensor ops, so that
the backward is itself differentiable (BatchNorm inside a gradient penalty).
"""

from __future__ import annotations

from typing import Any

from chainrule.ops._registry import apply_op, defop, ns

__all__ = ["batch_norm_train"]


def _dims(ndim: int) -> tuple[int, ...]:
    return (0,) + tuple(range(2, ndim))


def _per_channel(v: Any, ndim: int) -> Any:
    """A (C,) array or Tensor shaped to broadcast against (N, C, *)."""
    return ns.reshape(v, shape=(1, v.shape[0]) + (1,) * (ndim - 2))


@defop(
    name="batch_norm_train",
    num_outputs=3,
    aux=True,
    saves=("x", "w"),
    materialize_grads=False,
    node_name="NativeBatchNormBackward0",
)
def _batch_norm_train(xp: Any, x: Any, w: Any, b: Any, *, eps: float) -> Any:
    """Over the channels c of x (N, C, *), with mean_c and the biased variance var_c over the
    other dims: xhat = (x - mean_c) / sqrt(var_c + eps) and y = xhat w_c + b_c (w, b optional).
    Outputs (y, mean, var), the last two of shape (C,).

    VJP, with m the count per channel and invstd = 1 / sqrt(var + eps): gb = sum gy,
    gw = sum gy xhat, gx = w invstd (gy - gb / m - xhat gw / m) + gmean / m
    + 2 gvar (x - mean) / m."""
    n, c = x.shape[:2]
    x3 = x.reshape(n, c, -1)
    m = x3.shape[0] * x3.shape[2]
    mean = x3.mean(axis=(0, 2))
    xhat = x3 - mean[:, None]
    var = xp.einsum("ncl,ncl->c", xhat, xhat) / m
    var = var.astype(x.dtype, copy=False)
    invstd = 1 / xp.sqrt(var + eps)
    xhat *= invstd[:, None]
    if w is not None:
        y = xhat * w[:, None]
        if b is not None:
            y += b[:, None]
    elif b is not None:
        y = xhat + b[:, None]
    else:
        y = xhat.copy()
    shape = x.shape
    return (y.reshape(shape), mean, var), {"xhat": xhat.reshape(shape), "invstd": invstd}


@_batch_norm_train.vjp
def _batch_norm_train_vjp(ctx: Any, grads: Any) -> Any:
    gy, gmean, gvar = grads
    x, w = ctx.x, ctx.w
    nx, nw, nb = ctx.needs_input_grad
    nd = x.ndim
    dims = _dims(nd)
    m = 1
    for d in dims:
        m *= x.shape[d]
    if hasattr(x, "grad_fn"):  # create_graph: xhat as a differentiable function of x
        mean = ns.mean(x, dim=dims, keepdim=True)
        xc = x - mean
        invstd = (ns.mean(xc * xc, dim=dims, keepdim=True) + ctx.eps) ** -0.5
        xhat = xc * invstd
        invstd = ns.reshape(invstd, shape=(x.shape[1],))
    else:
        xhat, invstd = ctx.xhat, ctx.invstd
    gx = gw = gb = None
    if gy is not None:
        gb = ns.sum(gy, dim=dims, keepdim=False)
        gw = ns.sum(gy * xhat, dim=dims, keepdim=False)
        if nx:
            k = invstd if w is None else invstd * w
            gx = (gy - _per_channel(gb / m, nd) - xhat * _per_channel(gw / m, nd)) * _per_channel(
                k, nd
            )
    if nx and gmean is not None:
        part = _per_channel(gmean / m, nd) + 0 * x
        gx = part if gx is None else gx + part
    if nx and gvar is not None:
        part = xhat * _per_channel(gvar * (2 / m) / invstd, nd)
        gx = part if gx is None else gx + part
    return gx, (gw if nw else None), (gb if nb else None)


def batch_norm_train(x: Any, weight: Any, bias: Any, eps: float) -> tuple[Any, Any, Any]:
    """``(y, batch_mean, batch_var)`` of a training BatchNorm over dim 1 (biased variance); see
    ``_batch_norm_train``."""
    y, mean, var = apply_op(_batch_norm_train, (x, weight, bias), {"eps": float(eps)})
    return y, mean, var
