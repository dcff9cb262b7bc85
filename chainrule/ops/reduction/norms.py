"""Norms: norm (p-norms, 'fro', 'nuc' through linalg) and ``vector_norm_impl``, the vector
norm that torch.linalg.vector_norm uses."""

from __future__ import annotations

import builtins
import math
from typing import Any

from chainrule.ops._broadcast import restore_reduced
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


@_vector_norm.vjp
def _vector_norm_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    x, p = ctx.x, ctx.ord
    ge = restore_reduced(g, shape, ctx.dim, ctx.keepdim)
    if p == 0:
        return (ge * 0.0 * x,)
    if p == 1:
        return (ge * ns.sign(x),)
    out = _keep(ctx.out, shape, ctx.dim, ctx.keepdim)
    if p in (math.inf, -math.inf):
        mask = ns.eq(ns.abs(x), out)
        count = ns.sum(mask, dim=ctx.dim, keepdim=True)
        return (ns.sign(x) * ns.where(mask, ge, 0.0) / count,)
    zero = ns.eq(out, 0.0)
    scale = ns.where(zero, 0.0, ge) / ns.where(zero, 1.0, out)
    if p == 2:
        return (x * scale,)
    scale = ns.where(zero, 0.0, ge) / ns.pow(ns.where(zero, 1.0, out), p - 1)
    if p < 1:
        xz = ns.eq(x, 0.0)
        return (
            ns.where(xz, 0.0, ns.sign(x) * ns.pow(ns.where(xz, 1.0, ns.abs(x)), p - 1)) * scale,
        )
    return (ns.sign(x) * ns.pow(ns.abs(x), p - 1) * scale,)


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
    if x._data.dtype.kind not in "fc":
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


def norm(
    input: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Any:
    """``torch.norm``: the vector p-norm over ``dim`` (all elements by default). ``'fro'`` is
    the 2-norm; ``'nuc'`` the nuclear norm of matrices over ``dim`` (the last two by default)."""
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        from chainrule.linalg import matrix_norm

        if dim is None:
            dim = (-2, -1)
        return matrix_norm(input, "nuc", dim, keepdim, dtype=dtype)
    if isinstance(p, str):
        raise RuntimeError(f"linalg.vector_norm: ord={p!r} is not supported")
    return vector_norm_impl(input, p, dim, keepdim, dtype, name="linalg.vector_norm")
