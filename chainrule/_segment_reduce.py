"""``torch.segment_reduce``: reduce consecutive segments of a tensor along one axis.

Segment ``j`` of a row is ``data[..., o_j : o_j + l_j, ...]`` along ``axis``, with lengths
``l`` (or offsets ``o``, ``l_j = o_{j+1} - o_j``). ``lengths``/``offsets`` have
``axis + 1`` dims: their leading dims index the rows (``data.shape[:axis]``), the last one the
segments. The reductions are ``sum``, ``mean``, ``max``/``amax``, ``min``/``amin`` and
``prod``; ``initial`` joins every segment as one more operand (``mean`` is then
``(initial + sum) / length``); an empty segment gives ``initial``, or the reduction's identity
(0, 1, -inf, +inf; NaN for ``mean``). Built from chainrule's differentiable reductions, so it
has PyTorch's gradients (a max shared by equal elements splits its gradient evenly).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule._dtype import _TORCH_C_NAMES
from chainrule._tensor import Tensor
from chainrule.ops import maximum, minimum, stack

__all__ = ["segment_reduce"]

_REDUCES = {"sum": "sum", "mean": "mean", "max": "amax", "amax": "amax", "min": "amin"}
_REDUCES |= {"amin": "amin", "prod": "prod"}
_EMPTY = {"sum": 0.0, "prod": 1.0, "amax": -np.inf, "amin": np.inf, "mean": np.nan}


def _segments(lengths: Any, offsets: Any, axis: int, n: int, unsafe: bool) -> np.ndarray:
    """The lengths as an int64 array of ``axis + 1`` dims, checked as PyTorch checks them."""
    if lengths is not None:
        a = np.asarray(lengths.detach().cpu().numpy() if isinstance(lengths, Tensor) else lengths)
        which = "lengths"
    elif offsets is not None:
        a = np.asarray(offsets.detach().cpu().numpy() if isinstance(offsets, Tensor) else offsets)
        which = "offsets"
    else:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if a.dtype.kind not in "iu":
        name = _TORCH_C_NAMES.get(a.dtype.name, a.dtype.name)
        raise NotImplementedError(
            f"\"_segment_reduce_{which}_cpu_kernel1\" not implemented for '{name}'"
        )
    if a.ndim - 1 != axis:
        raise RuntimeError(
            f"segment_reduce(): Expected axis to be the last dimension of {which} but got {axis}."
        )
    a = a.astype(np.int64)
    if which == "offsets":
        a = np.diff(a, axis=-1)
    if not unsafe:
        if (a < 0).any():
            raise RuntimeError("lengths contains negative value!")
        if (a.sum(axis=-1) != n).any():
            raise RuntimeError(
                "segment_reduce(): Expected all rows of lengths along axis to sum to "
                "data.size(lengths.dim()-1) when !unsafe."
            )
    return a


def _reduce(seg: Tensor, how: str, initial: Any, like: Tensor) -> Tensor:
    if seg.shape[0] == 0:
        fill = _EMPTY[how] if initial is None else float(initial)
        return like.new_full(tuple(like.shape[1:]), fill)
    if how == "mean" and initial is not None:
        return (seg.sum(0) + initial) / seg.shape[0]
    r = getattr(seg, how)(0)
    if initial is None:
        return r
    if how == "sum":
        return r + initial
    if how == "prod":
        return r * initial
    lim = like.new_full(tuple(like.shape[1:]), float(initial))
    return maximum(r, lim) if how == "amax" else minimum(r, lim)


def segment_reduce(
    data: Tensor,
    reduce: str,
    *,
    lengths: Tensor | None = None,
    indices: Tensor | None = None,
    offsets: Tensor | None = None,
    axis: int = 0,
    unsafe: bool = False,
    initial: Any = None,
) -> Tensor:
    """Reduce each segment of ``data`` along ``axis`` (module docstring). The result has
    ``data``'s shape with ``axis`` replaced by the number of segments."""
    how = _REDUCES.get(reduce)
    if how is None:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if not (data.is_floating_point() or data.is_complex()):
        name = _TORCH_C_NAMES.get(data.dtype.name, data.dtype.name)
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{name}'")
    axis = axis % data.ndim
    lens = _segments(lengths, offsets, axis, data.shape[axis], unsafe)
    lead = tuple(data.shape[:axis])
    rows = []
    for idx in np.ndindex(*lead):
        row = data[idx] if idx else data
        starts = np.concatenate([[0], np.cumsum(lens[idx])[:-1]]).astype(np.int64)
        parts = [
            _reduce(row.narrow(0, int(s), int(n)), how, initial, row)
            for s, n in zip(starts, lens[idx])
        ]
        if parts:
            rows.append(stack(parts, 0))
        else:
            rows.append(row.new_zeros((0,) + tuple(row.shape[1:])))
    out = stack(rows, 0) if lead else rows[0]
    return out.reshape(lead + (lens.shape[-1],) + tuple(data.shape[axis + 1 :]))
