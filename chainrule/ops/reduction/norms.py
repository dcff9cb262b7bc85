"""Norms: norm (p-norms, 'fro', 'nuc' through linalg) and ``vector_norm_impl``, the vector
norm that torch.linalg.vector_norm uses."""

from __future__ import annotations

import builtins
import math
from typing import Any

from chainrule import _kinds
from chainrule.ops._broadcast import restore_reduced, wrap_dim
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.reduction._common import _dims, _dtype_name, _errstate, _keep

__all__ = ["norm"]


# norm ----------------------------------------------------------------------------------------


@defop(name="vector_norm", saves=("x", "out"), promote=None, node_name="LinalgVectorNormBackward0")
def _vector_norm(
    xp: Any, x: Any, *, ord: float = 2.0, dim: Any = None, keepdim: bool = False
) -> Any:
    """||x||_p over ``dim``: (sum |x|^p)^(1/p); max|x| (p=inf), min|x| (p=-inf), count of
    non-zeros (p=0).

    VJP: g sign(x) |x|^(p-1) / out^(p-1) (0 where out == 0); p=1: g sign(x); p=2: g x / out;
    p=+-inf: g sign(x) split evenly among the tied extremes; p=0: 0.
    """
    a = xp.abs(x)
    if ord == 2:
        return xp.sqrt(xp.sum(a * a, axis=dim, keepdims=keepdim))
    if ord == 1:
        return xp.sum(a, axis=dim, keepdims=keepdim)
    if ord == math.inf:
        return xp.max(a, axis=dim, keepdims=keepdim)
    if ord == -math.inf:
        return xp.min(a, axis=dim, keepdims=keepdim)
    if ord == 0:
        return xp.sum(a != 0, axis=dim, keepdims=keepdim).astype(x.dtype)
    with _errstate(xp):
        return xp.sum(a**ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)


def _sign(x: Any) -> Any:
    """sign(x), or for complex x sgn(x) = x / |x| (0 at 0): d|x| = Re(conj(sgn x) dx)."""
    if getattr(x, "_data", x).dtype.kind != "c":
        return ns.sign(x)
    a = ns.abs(x)
    z = ns.eq(a, 0.0)
    return ns.where(z, 0.0, x / ns.where(z, 1.0, a))


@_vector_norm.vjp
def _vector_norm_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    x, p = ctx.x, ctx.ord
    ge = restore_reduced(g, shape, ctx.dim, ctx.keepdim)
    if p == 0:
        return (ge * 0.0 * x,)
    if p == 1:
        return (ge * _sign(x),)
    out = _keep(ctx.out, shape, ctx.dim, ctx.keepdim)
    if p in (math.inf, -math.inf):
        mask = ns.eq(ns.abs(x), out)
        count = ns.sum(mask, dim=ctx.dim, keepdim=True)
        return (_sign(x) * ns.where(mask, ge, 0.0) / count,)
    zero = ns.eq(out, 0.0)
    scale = ns.where(zero, 0.0, ge) / ns.where(zero, 1.0, out)
    if p == 2:
        return (x * scale,)
    scale = ns.where(zero, 0.0, ge) / ns.pow(ns.where(zero, 1.0, out), p - 1)
    if p < 1:
        xz = ns.eq(x, 0.0)
        return (ns.where(xz, 0.0, _sign(x) * ns.pow(ns.where(xz, 1.0, ns.abs(x)), p - 1)) * scale,)
    return (_sign(x) * ns.pow(ns.abs(x), p - 1) * scale,)


def vector_norm_impl(
    x: Any,
    ord: Any = 2,
    dim: Any = None,
    keepdim: bool = False,
    dtype: Any = None,
    name: str = "linalg.vector_norm",
) -> Any:
    """Shared body of ``torch.norm``, ``linalg.vector_norm`` and ``linalg.norm``."""
    if dtype is not None:
        x = x.to(dtype)
    if not _kinds.is_inexact(x._data):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {_dtype_name(x)}"
        )
    p = builtins.float(ord)
    dims = _dims(dim, x.ndim)
    if p < 0 and x._data.size == 0:
        raise RuntimeError(
            f"{name} cannot compute the {ord} norm on an empty tensor because "
            "the operation does not have an identity"
        )
    return apply_op(_vector_norm, (x,), {"ord": p, "dim": dims, "keepdim": keepdim})


# torch.linalg.matrix_norm (chainrule/linalg.py re-exports it), here since torch.norm needs it.
def matrix_norm(
    A: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None
) -> Any:
    """Matrix norm over the two dims ``dim``: 'fro', or the max/min absolute row sum (inf/-inf)
    or column sum (1/-1), or of the singular values: their sum ('nuc'), the largest (2) or the
    smallest (-2)."""
    if dtype is not None:
        A = A.to(dtype)
    if A._data.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    d0, d1 = (wrap_dim(int(d), A.ndim) for d in dim)
    if ord == "fro":
        return vector_norm_impl(A, 2, (d0, d1), keepdim, None, name="linalg.matrix_norm")
    if ord in (math.inf, -math.inf, 1, -1):
        from chainrule.ops.reduction.extrema import amax, amin
        from chainrule.ops.reduction.sums import sum as _sum

        # inf: max over rows of the sum over columns; 1: max over columns of the row sums.
        inner, outer = (d1, d0) if abs(ord) == math.inf else (d0, d1)
        s = _sum(A.abs(), inner, keepdim=True)
        r = (amax if ord > 0 else amin)(s, outer, keepdim=True)
        if not keepdim:
            r = r.squeeze((d0, d1)) if hasattr(r, "squeeze") else r
        return r
    if ord in ("nuc", 2, -2):
        # Functions of the singular values: their sum (nuclear) or the largest / smallest.
        nd = A.ndim
        rest = [i for i in range(nd) if i not in (d0, d1)]
        from chainrule.ops.linalg import linalg_svdvals
        from chainrule.ops.reduction.extrema import amax as _amax
        from chainrule.ops.reduction.extrema import amin as _amin

        sv = linalg_svdvals(A.permute(*rest, d0, d1))
        r = sv.sum(-1) if ord == "nuc" else (_amax if ord == 2 else _amin)(sv, -1)
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return r
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(
    input: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Any:
    """``torch.norm``: the vector p-norm over ``dim`` (all elements by default). ``'fro'`` is
    the 2-norm; ``'nuc'`` the nuclear norm of matrices over ``dim`` (the last two by default)."""
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        if dim is None:
            dim = (-2, -1)
        return matrix_norm(input, "nuc", dim, keepdim, dtype=dtype)
    if isinstance(p, str):
        raise RuntimeError(f"linalg.vector_norm: ord={p!r} is not supported")
    return vector_norm_impl(input, p, dim, keepdim, dtype, name="linalg.vector_norm")
