"""Shape helpers shared by VJPs, written with ``ns`` so they run on arrays and Tensors alike."""

from __future__ import annotations

from typing import Any

from chainrule.ops._registry import ns

__all__ = ["restore_reduced", "normalize_dims", "reduced_count", "wrap_dim"]


def wrap_dim(dim: int, ndim: int) -> int:
    """Map a possibly negative ``dim`` into ``[0, ndim)``, with PyTorch's error text."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """``None`` (all dims) or a sorted tuple of non-negative dims; rejects repeats."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        dims = tuple(wrap_dim(int(d), ndim) for d in dim)
    else:
        dims = (wrap_dim(int(dim), ndim),)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return tuple(sorted(dims))


def reduced_count(shape: tuple[int, ...], dims: tuple[int, ...] | None) -> int:
    """Number of elements folded into each output of a reduction over ``dims``."""
    n = 1
    for i, s in enumerate(shape):
        if dims is None or i in dims:
            n *= s
    return n


def restore_reduced(
    g: Any, shape: tuple[int, ...], dims: tuple[int, ...] | None, keepdim: bool
) -> Any:
    """Spread the gradient of a reduction over ``dims`` back to the input ``shape``."""
    if not keepdim and len(shape) > 0:
        kept = tuple(1 if (dims is None or i in dims) else s for i, s in enumerate(shape))
        g = ns.reshape(g, shape=kept)
    return ns.expand(g, shape=tuple(shape))
