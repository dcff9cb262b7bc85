"""Fused batch normalization in training mode: statistics, normalisation and the affine map in
one op, forward and backward.

Composed from mean, sub, mul, pow and the affine ops, a training BatchNorm records nine nodes
and makes about a dozen passes over its input forward and as many backward; PyTorch runs one
kernel each way. ``batch_norm_train`` computes the statistics in one pass each (the mean, then
the sum of squared deviations of the centred input, both as one dot product per sample and
channel with the samples' sums added in order, ``_row_dots``, with no squared temporary),
writes y = xc (invstd w) + b in two passes and keeps the centred input xc for the backward.
In an ordinary backward (arrays) the VJP is two reductions and four passes into one buffer,
with invstd folded into per-channel factors. On NumPy float32/float64 arrays both directions
work over parts of the channels, split across the intra-op pool from
``backends/_chunked.py``'s ``MIN_ELEMENTS`` (``_batch_norm_train_arrays``,
``_batch_norm_train_vjp_split``); each channel's figures are the same bits in any part and on
CuPy arrays or a compile replay, which run the same operations unsplit. Otherwise it is
written with
``ns`` ops, and under ``create_graph`` it recomputes the normalised input from the saved one
with Tensor ops, so that the backward is itself differentiable (BatchNorm inside a gradient
penalty).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule.backends import _chunked, backend_of
from chainrule.ops._registry import apply_op, defop, ns

__all__ = ["batch_norm_train", "batch_norm_eval", "layer_norm"]


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
    if type(x) is np.ndarray and x.dtype in _FAST and x.size and _params_ok(x, w, b):
        return _batch_norm_train_arrays(xp, x, w, b, eps)
    n, c = x.shape[:2]
    x3 = x.reshape(n, c, -1)
    m = x3.shape[0] * x3.shape[2]
    if x.dtype in _FAST:  # the NumPy kernel's operations, so that every array kind rounds alike
        mean = _row_dots(xp, x3, xp.ones((x3.shape[2], 1), x.dtype)) / m
        xc = x3 - mean[:, None]
        var = _row_dots(xp, xc, xc) / m
    else:
        mean = x3.mean(axis=(0, 2))
        xc = x3 - mean[:, None]
        var = xp.einsum("ncl,ncl->c", xc, xc) / m
    var = var.astype(x.dtype, copy=False)
    invstd = 1 / xp.sqrt(var + eps)
    # y = xc (invstd w) + b: two passes over the centred input, which is kept (not xhat), so
    # that no pass is spent normalising it; the backward folds invstd into per-channel factors.
    scale = invstd if w is None else invstd * w
    y = xc * scale[:, None]
    if b is not None:
        y += b[:, None]
    return (y.reshape(x.shape), mean, var), {"xc": xc, "invstd": invstd}


@_batch_norm_train.vjp
def _batch_norm_train_vjp(ctx: Any, grads: Any) -> Any:
    gy, gmean, gvar = grads
    x, w = ctx.x, ctx.w
    if not hasattr(x, "grad_fn"):  # arrays (NumPy, CuPy, a compile Tracer): no Tensor ops
        if (
            gmean is None
            and gvar is None
            and type(gy) is np.ndarray
            and type(ctx.xc) is np.ndarray
            and gy.dtype == ctx.xc.dtype
            and ctx.xc.dtype in _FAST
            and ctx.xc.size
        ):
            return _batch_norm_train_vjp_split(ctx, gy)
        return _batch_norm_train_vjp_arrays(ctx, gy, gmean, gvar)
    nx, nw, nb = ctx.needs_input_grad
    nd = x.ndim
    dims = _dims(nd)
    m = 1
    for d in dims:
        m *= x.shape[d]
    # create_graph: xhat as a differentiable function of x
    mean = ns.mean(x, dim=dims, keepdim=True)
    xc = x - mean
    invstd = (ns.mean(xc * xc, dim=dims, keepdim=True) + ctx.eps) ** -0.5
    xhat = xc * invstd
    invstd = ns.reshape(invstd, shape=(x.shape[1],))
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


_FAST = (np.dtype(np.float32), np.dtype(np.float64))


def _params_ok(x: Any, *params: Any) -> bool:
    return all(p is None or (type(p) is np.ndarray and p.dtype == x.dtype) for p in params)


def _row_dots(xp: Any, a: Any, b: Any) -> Any:
    """sum over the samples n and the last dim l of a * b, for (n, cb, l) arrays (b may be a
    (l, 1) column): one dot product of length l per (channel, sample), each its own matrix
    product, then each channel's n sums added in order (an accumulate, whose order is fixed:
    NumPy's ``sum`` of a (cb, n) array changes its order with cb), so that a channel's sum is
    the same bits whichever channels it is computed with. 2-3x faster than
    ``sum(axis=(0, 2))`` or einsum on the SRGAN step's (8, 32, 256) and (8, 64, 64) inputs."""
    at = a.transpose(1, 0, 2)[:, :, None, :]
    rows = xp.matmul(at, b if b.ndim == 2 else b.transpose(1, 0, 2)[:, :, :, None])
    return rows.reshape(a.shape[1], a.shape[0]).cumsum(axis=1)[:, -1]


def _batch_norm_train_arrays(xp: Any, x: Any, w: Any, b: Any, eps: float) -> Any:
    """``_batch_norm_train`` on NumPy float32/float64 arrays, over parts of the channels split
    across the intra-op pool (``backends/_chunked.py``) from ``_chunked.MIN_ELEMENTS``
    elements: per part, the mean and the sum of squared deviations as row dot products
    (``_row_dots``), xc = x - mean, y = xc (invstd w) + b. Each channel's numbers are the same
    bits whichever part computes it."""
    n, c = x.shape[:2]
    x3 = x.reshape(n, c, -1)
    m = x3.shape[0] * x3.shape[2]
    dt = x.dtype
    mean, var, invstd = xp.empty(c, dt), xp.empty(c, dt), xp.empty(c, dt)
    xc, y = xp.empty(x3.shape, dt), xp.empty(x3.shape, dt)
    ones = xp.ones((x3.shape[2], 1), dt)

    def part(r: tuple[int, int]) -> None:
        c0, c1 = r
        xs, xcs, ys = x3[:, c0:c1], xc[:, c0:c1], y[:, c0:c1]
        mu = _row_dots(xp, xs, ones) / m
        xp.subtract(xs, mu[:, None], out=xcs)
        v = _row_dots(xp, xcs, xcs) / m
        inv = 1 / xp.sqrt(v + eps)
        xp.multiply(xcs, (inv if w is None else inv * w[c0:c1])[:, None], out=ys)
        if b is not None:
            ys += b[c0:c1, None]
        mean[c0:c1], var[c0:c1], invstd[c0:c1] = mu, v, inv

    _chunked.run(part, _chunked.ranges(c, x.size))
    return (y.reshape(x.shape), mean, var), {"xc": xc, "invstd": invstd}


def _batch_norm_train_vjp_split(ctx: Any, gy: Any) -> Any:
    """The VJP of ``_batch_norm_train_arrays`` (no gradient for the batch statistics), over
    the same parts of the channels: gb = sum gy, gw = invstd sum gy xc (``_row_dots``), then
    gx = k (gy - gb / m - xc invstd gw / m), k = invstd w, as four passes into gx's part."""
    nx, nw, nb = ctx.needs_input_grad
    xc, invstd, w = ctx.xc, ctx.invstd, ctx.w
    n, c, l = xc.shape
    m = n * l
    xp = backend_of(xc).xp
    gy3 = gy.reshape(n, c, l)
    gx = xp.empty(xc.shape, xc.dtype) if nx else None
    gw, gb = xp.empty(c, xc.dtype), xp.empty(c, xc.dtype)
    ones = xp.ones((l, 1), xc.dtype)

    def part(r: tuple[int, int]) -> None:
        c0, c1 = r
        gys, xcs, inv = gy3[:, c0:c1], xc[:, c0:c1], invstd[c0:c1]
        sb = _row_dots(xp, gys, ones)
        sw = _row_dots(xp, gys, xcs) * inv
        gb[c0:c1], gw[c0:c1] = sb, sw
        if gx is not None:
            o = gx[:, c0:c1]
            xp.multiply(xcs, (inv * sw / m)[:, None], out=o)
            o += (sb / m)[:, None]
            xp.subtract(gys, o, out=o)
            o *= (inv if w is None else inv * w[c0:c1])[:, None]

    _chunked.run(part, _chunked.ranges(c, xc.size))
    if gx is not None:
        gx = gx.reshape(ctx.x.shape)
    return gx, (gw if nw else None), (gb if nb else None)


def _batch_norm_train_vjp_arrays(ctx: Any, gy: Any, gmean: Any, gvar: Any) -> Any:
    """The VJP on arrays (an ordinary backward), from the centred input xc kept by the
    forward: gb = sum gy and gw = invstd sum gy xc (two reductions), then
    gx = k (gy - gb / m - xc invstd gw / m) with k = invstd w as four passes into one buffer,
    where the Tensor form makes six passes and five temporaries. The same operations on every
    array kind, so that CPU, CUDA and a compiled replay round alike."""
    nx, nw, nb = ctx.needs_input_grad
    xc, invstd, w = ctx.xc, ctx.invstd, ctx.w
    xp = np if isinstance(xc, np.ndarray) else backend_of(xc).xp
    n, c, l = xc.shape
    m = n * l
    gx = gw = gb = None
    if gy is not None:
        gy3 = gy.reshape(n, c, l)
        if xc.dtype in _FAST and gy3.dtype == xc.dtype:  # as _batch_norm_train_vjp_split
            gb = _row_dots(xp, gy3, xp.ones((l, 1), xc.dtype))
            gw = _row_dots(xp, gy3, xc) * invstd
        else:
            gb = gy3.sum(axis=(0, 2))
            gw = xp.einsum("ncl,ncl->c", gy3, xc) * invstd
        if nx:
            gx = xc * (invstd * gw / m)[:, None]
            gx += (gb / m)[:, None]
            xp.subtract(gy3, gx, out=gx)
            gx *= (invstd if w is None else invstd * w)[:, None]
    if nx and gmean is not None:
        part = (gmean / m).astype(xc.dtype, copy=False)[:, None]
        gx = xp.broadcast_to(part, xc.shape).copy() if gx is None else gx + part
    if nx and gvar is not None:
        part = xc * (gvar * (2 / m)).astype(xc.dtype, copy=False)[:, None]
        gx = part if gx is None else gx + part
    if gx is not None:
        gx = gx.reshape(ctx.x.shape)
    return gx, (gw if nw else None), (gb if nb else None)


def batch_norm_train(x: Any, weight: Any, bias: Any, eps: float) -> tuple[Any, Any, Any]:
    """``(y, batch_mean, batch_var)`` of a training BatchNorm over dim 1 (biased variance); see
    ``_batch_norm_train``."""
    y, mean, var = apply_op(_batch_norm_train, (x, weight, bias), {"eps": float(eps)})
    return y, mean, var


# Evaluation-mode batch normalization ----------------------------------------------------------


@defop(name="batch_norm_eval", saves={"x": "w", "w": "x"}, node_name="NativeBatchNormBackward0")
def _batch_norm_eval(xp: Any, x: Any, w: Any, b: Any, *, mean: Any, invstd: Any) -> Any:
    """y = (x - mean_c) invstd_c w_c + b_c over the channels c of x (N, C, *), with the running
    statistics as constants (``mean`` and ``invstd`` = 1 / sqrt(running_var + eps), shaped to
    broadcast). VJP: gx = gy invstd w, gw = sum gy xhat, gb = sum gy over all dims but 1."""
    y = (x - mean) * invstd
    if w is not None:
        y = y * _per_channel(w, x.ndim)
    if b is not None:
        y = y + _per_channel(b, x.ndim)
    return y


@_batch_norm_eval.vjp
def _batch_norm_eval_vjp(ctx: Any, gy: Any) -> Any:
    nx, nw, nb = ctx.needs_input_grad
    nd = gy.ndim
    dims = _dims(nd)
    gx = gw = gb = None
    if nx:
        k = ctx.invstd if ctx.w is None else ctx.invstd * _per_channel(ctx.w, nd)
        gx = gy * k
    if nw:
        gw = ns.sum(gy * ((ctx.x - ctx.mean) * ctx.invstd), dim=dims, keepdim=False)
    if nb:
        gb = ns.sum(gy, dim=dims, keepdim=False)
    return gx, gw, gb


def batch_norm_eval(x: Any, weight: Any, bias: Any, mean: Any, invstd: Any) -> Any:
    """An evaluation BatchNorm over dim 1 with constant statistics; see ``_batch_norm_eval``."""
    return apply_op(_batch_norm_eval, (x, weight, bias), {"mean": mean, "invstd": invstd})


# Layer normalization --------------------------------------------------------------------------


@defop(name="layer_norm", saves=("x", "w"), aux=True, node_name="NativeLayerNormBackward0")
def _layer_norm(xp: Any, x: Any, w: Any, b: Any, *, k: int, eps: float) -> Any:
    """Over the last ``k`` dims of x: xhat = (x - mean) / sqrt(var + eps) (biased variance),
    y = xhat w + b (w, b of those dims, optional).

    VJP, with n the count normalized over and gh = gy w: gb = sum gy, gw = sum gy xhat over
    the leading dims; gx = invstd (gh - mean gh - xhat mean(gh xhat)) over the last k dims."""
    dims = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=dims, keepdims=True)
    xc = x - mean
    var = (xc * xc).mean(axis=dims, keepdims=True)
    invstd = (1 / xp.sqrt(var + eps)).astype(x.dtype, copy=False)
    xhat = xc * invstd
    y = xhat
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y, {"xhat": xhat, "invstd": invstd}


@_layer_norm.vjp
def _layer_norm_vjp(ctx: Any, gy: Any) -> Any:
    nx, nw, nb = ctx.needs_input_grad
    x, w, k = ctx.x, ctx.w, ctx.k
    nd = gy.ndim
    dims = tuple(range(nd - k, nd))
    lead = tuple(range(nd - k))
    if x is not None and hasattr(x, "grad_fn"):  # create_graph: xhat as a function of x
        mean = ns.mean(x, dim=dims, keepdim=True)
        xc = x - mean
        invstd = (ns.mean(xc * xc, dim=dims, keepdim=True) + ctx.eps) ** -0.5
        xhat = xc * invstd
    else:
        xhat, invstd = ctx.xhat, ctx.invstd
    gx = gw = gb = None
    if nb:
        gb = ns.sum(gy, dim=lead, keepdim=False) if lead else gy
    if nw:
        gw = ns.sum(gy * xhat, dim=lead, keepdim=False) if lead else gy * xhat
    if nx:
        gh = gy if w is None else gy * w
        gx = (
            gh
            - ns.mean(gh, dim=dims, keepdim=True)
            - xhat * ns.mean(gh * xhat, dim=dims, keepdim=True)
        ) * invstd
    return gx, gw, gb


def layer_norm(x: Any, weight: Any, bias: Any, k: int, eps: float) -> Any:
    """LayerNorm over the last ``k`` dims; see ``_layer_norm``."""
    return apply_op(_layer_norm, (x, weight, bias), {"k": k, "eps": float(eps)})
