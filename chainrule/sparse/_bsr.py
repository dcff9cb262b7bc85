"""The blocked compressed layouts (``torch.sparse_bsr``, ``torch.sparse_bsc``): a
SparseCompressedTensor whose values are nnz blocks (block rows x block cols) and whose indices
count blocks. Its COO form has one entry per element of each block (values reshaped, so
differentiable), and conversions to a blocked layout go through the dense form, cut into blocks
(Note [compressed tensors are COO underneath] in _csr.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule._dispatch import upper as _upper
from chainrule._tensor import Tensor, _new_tensor
from chainrule.sparse._coo import SparseTensor, _make
from chainrule.sparse._csr import (
    SparseCompressedTensor,
    _compress,
    _expand,
    _make_compressed,
    _row_major,
    is_blocked,
    layout_name,
)

__all__ = ["blocked_coo_of", "to_blocked", "blocked_transpose"]


def blocked_coo_of(t: SparseCompressedTensor) -> SparseTensor:
    """The COO tensor of blocked ``t``: block ``k`` at block (r, c) gives the entries
    (r * bh + i, c * bw + j) with ``values[k, i, j]``, block after block, each row-major."""
    v = t._sp_values
    nnz, bh, bw = (int(k) for k in v.shape[:3])
    outer = _expand(t._sp_compressed._data)
    inner = t._sp_plain._data.astype(np.int64)
    br, bc = (outer, inner) if _row_major(t._sp_layout) else (inner, outer)
    ii, jj = np.meshgrid(np.arange(bh), np.arange(bw), indexing="ij")
    rows = (br[:, None] * bh + ii.reshape(1, -1)).reshape(-1)
    cols = (bc[:, None] * bw + jj.reshape(1, -1)).reshape(-1)
    idx = np.stack([rows, cols]).astype(np.int64).reshape(2, -1)
    vals = v.reshape((nnz * bh * bw,) + tuple(v.shape[3:]))
    return _make(_new_tensor(idx), vals, tuple(t.shape), nnz * bh * bw <= 1)


def _blocksize(blocksize: Any) -> tuple[int, int]:
    if isinstance(blocksize, int):
        return blocksize, blocksize
    bh, bw = (int(k) for k in blocksize)
    return bh, bw


def to_blocked(x: Tensor, layout: Any, blocksize: Any, dense_dim: int | None = None) -> Any:
    """``x.to_sparse_bsr(blocksize)`` / ``to_sparse_bsc``: the blocks of ``x``'s dense form
    that hold an element that is not zero (the whole block is stored); differentiable."""
    name = layout_name(layout)
    if isinstance(x, SparseCompressedTensor) and x.layout is layout:
        return x
    if blocksize is None:
        src = layout_name(x.layout)
        raise RuntimeError(
            f"dense_to_sparse: conversion from {src} to {name} without blocksize argument "
            "given is not supported"
        )
    if isinstance(x, SparseCompressedTensor) and is_blocked(x.layout):
        raise NotImplementedError(f"chainrule: conversion from {x._kind()} to {name}")
    bh, bw = _blocksize(blocksize)
    d = x.to_dense() if getattr(x, "_sparse", False) else x
    if dense_dim or d.dim() != 2:
        raise NotImplementedError(
            "chainrule: blocked layouts of tensors other than matrices are not supported"
        )
    n, m = (int(k) for k in d.shape)
    if n % bh or m % bw:
        raise RuntimeError(
            f"dense_to_sparse_{name[6:].lower()}: tensor sparse size ({n},{m}) must be "
            f"divisible by given blocksize ({bh},{bw})"
        )
    blocks = d.reshape(n // bh, bh, m // bw, bw).permute(0, 2, 1, 3)
    hit = np.asarray(blocks.detach().numpy() != 0).any(axis=(2, 3))
    br, bc = np.nonzero(hit if _row_major(layout) else hit.T)
    if not _row_major(layout):
        br, bc = bc, br
    sel = (_new_tensor(br.astype(np.int64)), _new_tensor(bc.astype(np.int64)))
    values = blocks[sel]
    outer, inner, count = (br, bc, n // bh) if _row_major(layout) else (bc, br, m // bw)
    offsets = _new_tensor(_compress(outer, count))
    plain = _new_tensor(np.ascontiguousarray(inner, dtype=np.int64))
    return _make_compressed(offsets, plain, values, (n, m), layout)


def blocked_transpose(t: SparseCompressedTensor) -> SparseCompressedTensor:
    """BSR (n, m) with blocks (bh, bw) becomes BSC (m, n) with the blocks transposed over the
    same indices, and back."""
    other = _upper.sparse_bsc if _row_major(t.layout) else _upper.sparse_bsr
    shape = (t.shape[1], t.shape[0])
    vals = t._sp_values.transpose(1, 2)
    return _make_compressed(t._sp_compressed, t._sp_plain, vals, shape, other)
