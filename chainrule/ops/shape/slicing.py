"""Slices along one dimension, as views through basic indexing: narrow and select."""

from __future__ import annotations

from typing import Any

from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import apply_op
from chainrule.ops.shape._common import _slice_index

__all__ = ["narrow", "select"]


def narrow(input: Any, dim: int, start: Any, length: int) -> Any:
    """Elements ``start .. start+length-1`` along ``dim`` (a view). VJP: g placed in zeros."""
    from chainrule._dispatch import defs  # getitem's OpDef: ops/indexing.py imports this module

    _getitem = defs.getitem
    shp = input._data.shape
    if len(shp) == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shp))
    start, length = int(start), int(length)
    n = shp[dim]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -n <= start <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start})"
        )
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return apply_op(_getitem, (input,), {"index": _slice_index(dim, slice(start, start + length))})


def select(input: Any, dim: int, index: Any) -> Any:
    """The slice at ``index`` along ``dim``, with that dim removed (a view)."""
    from chainrule._dispatch import defs  # getitem's OpDef: ops/indexing.py imports this module

    _getitem = defs.getitem
    shp = input._data.shape
    if len(shp) == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shp))
    index = int(index)
    n = shp[dim]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(shp)} at dimension "
            f"{dim}"
        )
    if index < 0:
        index += n
    return apply_op(_getitem, (input,), {"index": _slice_index(dim, index)})
