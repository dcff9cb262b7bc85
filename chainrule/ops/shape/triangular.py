"""Triangles and diagonals of matrices: tril/triu (and in place), diagonal (a view) and diag."""

from __future__ import annotations

from typing import Any

from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import OpDef, apply_op, defop, ns

__all__ = ["tril", "triu", "tril_", "triu_", "diagonal", "diag"]


def _tri(name: str, fn: str) -> Any:
    def fwd(xp: Any, x: Any, *, diagonal: int) -> Any:
        return getattr(xp, fn)(x, diagonal)

    fwd.__doc__ = f"x with elements {'above' if fn == 'tril' else 'below'} the diagonal zeroed."
    op = OpDef(name, fwd, ("x",), promote=None)
    op.vjp(lambda ctx, g: (getattr(ns, name)(g, diagonal=ctx.diagonal),))
    return op


_tril = _tri("tril", "tril")
_triu = _tri("triu", "triu")


def tril(input: Any, diagonal: int = 0) -> Any:
    """Lower triangle of the last two dims (elements j - i <= diagonal). VJP: tril(g)."""
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply_op(_tril, (input,), {"diagonal": int(diagonal)})


def triu(input: Any, diagonal: int = 0) -> Any:
    """Upper triangle of the last two dims (elements j - i >= diagonal). VJP: triu(g)."""
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply_op(_triu, (input,), {"diagonal": int(diagonal)})


def tril_(input: Any, diagonal: int = 0) -> Any:
    """In-place :func:`tril`."""
    from chainrule.ops.views import apply_inplace

    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply_inplace(_tril, input, (), {"diagonal": int(diagonal)})


def triu_(input: Any, diagonal: int = 0) -> Any:
    """In-place :func:`triu`."""
    from chainrule.ops.views import apply_inplace

    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply_inplace(_triu, input, (), {"diagonal": int(diagonal)})


def _diag_view(xp: Any, x: Any, offset: int, dim1: int, dim2: int) -> Any:
    """A writable strided view of the diagonal (NumPy's own ``diagonal`` is read-only)."""
    n1, n2 = x.shape[dim1], x.shape[dim2]
    r0, c0 = max(0, -offset), max(0, offset)
    length = max(0, min(n1 - r0, n2 - c0))
    idx = [slice(None)] * x.ndim
    idx[dim1] = slice(min(r0, n1), None)
    idx[dim2] = slice(min(c0, n2), None)
    sub = x[tuple(idx)]
    others = [i for i in range(x.ndim) if i not in (dim1, dim2)]
    shape = tuple(x.shape[i] for i in others) + (length,)
    strides = tuple(sub.strides[i] for i in others) + (sub.strides[dim1] + sub.strides[dim2],)
    return xp.lib.stride_tricks.as_strided(sub, shape, strides)


@defop(name="diagonal", view=True, promote=None)
def _diagonal(xp: Any, x: Any, *, offset: int, dim1: int, dim2: int) -> Any:
    """The diagonal of x over (dim1, dim2), as a last dim (a view).
    VJP: g written on the diagonal of zeros (``diagonal_backward``)."""
    return _diag_view(xp, x, offset, dim1, dim2)


@_diagonal.vjp
def _diagonal_vjp(ctx: Any, g: Any) -> Any:
    return (
        ns.diagonal_backward(
            g, shape=tuple(ctx.input_shapes[0]), offset=ctx.offset, dim1=ctx.dim1, dim2=ctx.dim2
        ),
    )


@defop(name="diagonal_backward", node_name="DiagonalBackwardBackward0", promote=None)
def _diagonal_backward(
    xp: Any, g: Any, *, shape: tuple[int, ...], offset: int, dim1: int, dim2: int
) -> Any:
    """Zeros of ``shape`` with g on the diagonal. VJP: the diagonal of g."""
    z = xp.zeros(shape, dtype=g.dtype)
    _diag_view(xp, z, offset, dim1, dim2)[...] = g
    return z


@_diagonal_backward.vjp
def _diagonal_backward_vjp(ctx: Any, g: Any) -> Any:
    return (ns.diagonal(g, offset=ctx.offset, dim1=ctx.dim1, dim2=ctx.dim2),)


def diagonal(input: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    """Diagonal ``offset`` of the (dim1, dim2) planes, appended as the last dim (a view)."""
    nd = input._data.ndim
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply_op(_diagonal, (input,), {"offset": int(offset), "dim1": d1, "dim2": d2})


@defop(
    name="diag",
    promote=None,
    name_fn=lambda p: "DiagEmbedBackward0" if p["embed"] else "DiagonalBackward0_copy",
)
def _diag(xp: Any, x: Any, *, diagonal: int, embed: bool) -> Any:
    """1-D x: a square matrix with x on diagonal ``diagonal``; 2-D x: that diagonal (a copy).
    VJP: the diagonal of g, or g placed on the diagonal of zeros."""
    return xp.diag(x, diagonal) if embed else _diag_view(xp, x, diagonal, 0, 1).copy()


@_diag.vjp
def _diag_vjp(ctx: Any, g: Any) -> Any:
    if ctx.embed:
        return (ns.diagonal(g, offset=ctx.diagonal, dim1=0, dim2=1),)
    return (
        ns.diagonal_backward(
            g, shape=tuple(ctx.input_shapes[0]), offset=ctx.diagonal, dim1=0, dim2=1
        ),
    )


def diag(input: Any, diagonal: int = 0) -> Any:
    """Vector -> matrix with it on diagonal ``diagonal``; matrix -> that diagonal (a copy)."""
    nd = input._data.ndim
    if nd not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    return apply_op(_diag, (input,), {"diagonal": int(diagonal), "embed": nd == 1})
