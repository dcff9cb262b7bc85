"""Building sparse compressed tensors: ``torch.sparse_csr_tensor``, ``sparse_csc_tensor`` and
``sparse_compressed_tensor`` with PyTorch's argument and invariant checks, and the ``*_copy``
functions of the compressed and COO parts (docs/sparse.md)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from chainrule import _dtype
from chainrule._dispatch import upper as _upper
from chainrule._tensor import Tensor
from chainrule.sparse._coo import SparseTensor, _as_tensor, not_supported
from chainrule.sparse._csr import (
    SparseCompressedTensor,
    _expand,
    _make_compressed,
    _names,
    _row_major,
    is_blocked,
    layout_name,
)
from chainrule.sparse._ops import _scalar_type

__all__ = [
    "sparse_compressed_tensor",
    "sparse_csr_tensor",
    "sparse_csc_tensor",
    "sparse_bsr_tensor",
    "sparse_bsc_tensor",
    "crow_indices_copy",
    "col_indices_copy",
    "ccol_indices_copy",
    "row_indices_copy",
    "values_copy",
    "indices_copy",
]


def _check(comp: Tensor, plain: Tensor, values: Tensor, size: Any, layout: Any) -> tuple:
    """PyTorch's argument checks (``_validate_sparse_compressed_tensor_args``) in its order,
    then its invariant checks (chainrule always runs them); returns the shape."""
    cn, pn, plural, n_outer, n_inner = _names(layout)
    if comp.dtype is not plain.dtype:
        raise RuntimeError(
            f"{cn} and {pn} must have the same dtype, bot got {_scalar_type(comp)} and "
            f"{_scalar_type(plain)}, respectively"
        )
    if comp.dtype not in (_dtype.int32, _dtype.int64):
        raise RuntimeError(f"{cn} and {pn} dtype must be Int or Long, but got {_scalar_type(comp)}")
    if comp.dim() != plain.dim():
        raise RuntimeError(
            f"{cn} and {pn} dimensionalities must be equal but got {comp.dim()} and "
            f"{plain.dim()}, respectively"
        )
    if comp.dim() != 1:
        raise NotImplementedError(
            "chainrule: batched sparse compressed tensors (indices of more than one dim) "
            "are not supported"
        )
    nb = 2 if is_blocked(layout) else 0
    if values.dim() <= nb:
        raise RuntimeError(
            "values must have dimensionality > sum of batch and block dimensionalities "
            f"(=0 + {nb}) but got {values.dim()}"
        )
    c = np.asarray(comp._data).astype(np.int64)
    p = np.asarray(plain._data).astype(np.int64)
    nnz = int(values.shape[0])
    block = tuple(values.shape[1 : 1 + nb]) or (1, 1)
    dense = tuple(values.shape[1 + nb :])
    if size is None:
        extent = int(p.max()) + 1 if len(p) else 0
        base = (len(c) - 1, extent) if _row_major(layout) else (extent, len(c) - 1)
        shape = (base[0] * block[0], base[1] * block[1]) + dense
    else:
        shape = tuple(int(k) for k in size)
        if len(shape) != 2 + len(dense):
            raise RuntimeError(
                "tensor dimensionality must be sum of batch, base, and dense dimensionalities "
                f"(=0 + 2 + {len(dense)}) but got {len(shape)}"
            )
        if shape[2:] != dense:
            raise RuntimeError(
                f"values.shape[1:] must be equal to the dense dims of size {list(shape[2:])}, "
                f"but got {list(dense)}"
            )
    for d in (0, 1):
        if shape[d] % block[d]:
            raise RuntimeError(
                f"tensor shape[{d}] (={shape[d]}) must be divisible with blocksize[{d}] "
                f"(={block[d]}) as defined by values shape"
            )
    rows, cols = shape[0] // block[0], shape[1] // block[1]
    outer, inner = (rows, cols) if _row_major(layout) else (cols, rows)
    if len(c) != outer + 1:
        raise RuntimeError(
            f"{cn}.shape[-1] must be equal to the number of {plural} + 1 (={outer + 1}), "
            f"but got {len(c)}"
        )
    if len(p) != nnz:
        raise RuntimeError(
            f"{pn}.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[0], "
            f"but got {len(p)}"
        )
    _check_invariants(c, p, nnz, inner, (cn, pn, n_outer, n_inner))
    return shape


def _check_invariants(
    c: np.ndarray, p: np.ndarray, nnz: int, inner: int, names: tuple[str, str, str, str]
) -> None:
    """PyTorch's invariants of compressed indices ``c`` and plain indices ``p``, in its order."""
    cn, pn, n_outer, n_inner = names
    if c[0] != 0:
        raise RuntimeError(f"`{cn}[..., 0] == 0` is not satisfied.")
    if c[-1] != nnz:
        raise RuntimeError(f"`{cn}[..., -1] == nnz` is not satisfied.")
    if len(p) and (p.min() < 0 or p.max() >= inner):
        raise RuntimeError(f"`0 <= {pn} < {n_inner}` is not satisfied.")
    steps = np.diff(c)
    if np.all(steps >= 0):
        same = _expand(c)[1:] == _expand(c)[:-1]
        ordered = not np.any(same & (p[1:] <= p[:-1]))
    else:  # slices of a non-monotonic ``c``: as PyTorch reads them, one by one
        ordered = all(np.all(np.diff(p[c[i - 1] : c[i]]) > 0) for i in range(1, len(c)))
    if not ordered:
        raise RuntimeError(
            f"`{pn}[..., {cn}[..., i - 1]:{cn}[..., i]] for all i = 1, ..., {n_outer} are "
            "sorted and distinct along the last dimension values` is not satisfied."
        )
    if np.any(steps < 0) or np.any(steps > inner):
        raise RuntimeError(f"`0 <= {cn}[..., 1:] - {cn}[..., :-1] <= {n_inner}` is not satisfied.")


def sparse_compressed_tensor(
    compressed_indices: Any,
    plain_indices: Any,
    values: Any,
    size: Sequence[int] | None = None,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
) -> SparseCompressedTensor:
    """A sparse compressed tensor of ``layout`` (``torch.sparse_csr``, ``sparse_csc``,
    ``sparse_bsr`` or ``sparse_bsc``, whose values are blocks and indices count blocks):
    for CSR, row ``i`` holds ``values[k]`` at column ``plain_indices[k]`` for ``k`` in
    ``compressed_indices[i]:compressed_indices[i + 1]`` (CSC: columns and rows swapped).
    ``size`` defaults to the smallest that holds the indices. chainrule always checks the
    invariants. Differentiable in ``values``; with ``requires_grad=True`` a leaf."""
    if layout not in (_upper.sparse_csr, _upper.sparse_csc) and not is_blocked(layout):
        raise RuntimeError(
            "sparse_compressed_tensor expected sparse compressed tensor layout but got "
            f"{layout_name(layout)}"
        )
    if device is not None and str(device) != "cpu":
        raise NotImplementedError("chainrule: sparse tensors live on the CPU only")
    comp = _as_tensor(compressed_indices)
    plain = _as_tensor(plain_indices)
    vals = _as_tensor(values, dtype)
    shape = _check(comp, plain, vals, size, layout)
    if requires_grad:
        v = vals.detach().requires_grad_(True)
    elif vals.requires_grad:
        v = vals.view_as(vals)
    else:
        v = vals
    return _make_compressed(comp.detach(), plain.detach(), v, shape, layout)


def sparse_csr_tensor(
    crow_indices: Any,
    col_indices: Any,
    values: Any,
    size: Sequence[int] | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
) -> SparseCompressedTensor:
    """``torch.sparse_csr_tensor``: row ``i`` holds ``values[k]`` at column
    ``col_indices[k]`` for ``k`` in ``crow_indices[i]:crow_indices[i + 1]``."""
    return sparse_compressed_tensor(
        crow_indices,
        col_indices,
        values,
        size,
        dtype=dtype,
        layout=_upper.sparse_csr,
        device=device,
        requires_grad=requires_grad,
    )


def sparse_csc_tensor(
    ccol_indices: Any,
    row_indices: Any,
    values: Any,
    size: Sequence[int] | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
) -> SparseCompressedTensor:
    """``torch.sparse_csc_tensor``: column ``j`` holds ``values[k]`` at row
    ``row_indices[k]`` for ``k`` in ``ccol_indices[j]:ccol_indices[j + 1]``."""
    return sparse_compressed_tensor(
        ccol_indices,
        row_indices,
        values,
        size,
        dtype=dtype,
        layout=_upper.sparse_csc,
        device=device,
        requires_grad=requires_grad,
    )


def _blocked_ctor(layout_name_: str, doc: str) -> Any:
    def ctor(
        compressed_indices: Any,
        plain_indices: Any,
        values: Any,
        size: Sequence[int] | None = None,
        *,
        dtype: Any = None,
        device: Any = None,
        pin_memory: bool = False,
        requires_grad: bool = False,
        check_invariants: bool | None = None,
    ) -> SparseCompressedTensor:
        return sparse_compressed_tensor(
            compressed_indices,
            plain_indices,
            values,
            size,
            dtype=dtype,
            layout=getattr(_upper, layout_name_),
            device=device,
            requires_grad=requires_grad,
        )

    ctor.__name__ = ctor.__qualname__ = layout_name_ + "_tensor"
    ctor.__doc__ = doc
    return ctor


sparse_bsr_tensor = _blocked_ctor(
    "sparse_bsr",
    """``torch.sparse_bsr_tensor``: block row ``i`` holds the block ``values[k]`` (block rows x
    block cols) at block column ``col_indices[k]`` for ``k`` in
    ``crow_indices[i]:crow_indices[i + 1]``.""",
)
sparse_bsc_tensor = _blocked_ctor(
    "sparse_bsc",
    """``torch.sparse_bsc_tensor``: block column ``j`` holds the block ``values[k]`` at block
    row ``row_indices[k]`` for ``k`` in ``ccol_indices[j]:ccol_indices[j + 1]``.""",
)


def _copy_of(x: Any, method: str) -> Tensor:
    """``x.<method>()`` copied; PyTorch has no COO kernel for the ``*_copy`` functions (its
    NotImplementedError), and a dense tensor gets the method's layout error."""
    if isinstance(x, SparseTensor):
        raise not_supported(method + "_copy")
    return getattr(x, method)().clone()


def crow_indices_copy(input: Tensor) -> Tensor:
    """``torch.crow_indices_copy``: a copy of a CSR tensor's ``crow_indices()``."""
    return _copy_of(input, "crow_indices")


def col_indices_copy(input: Tensor) -> Tensor:
    """``torch.col_indices_copy``: a copy of a CSR tensor's ``col_indices()``."""
    return _copy_of(input, "col_indices")


def ccol_indices_copy(input: Tensor) -> Tensor:
    """``torch.ccol_indices_copy``: a copy of a CSC tensor's ``ccol_indices()``."""
    return _copy_of(input, "ccol_indices")


def row_indices_copy(input: Tensor) -> Tensor:
    """``torch.row_indices_copy``: a copy of a CSC tensor's ``row_indices()``."""
    return _copy_of(input, "row_indices")


def values_copy(input: Tensor) -> Tensor:
    """``torch.values_copy``: a copy of a compressed tensor's ``values()`` (differentiable)."""
    return _copy_of(input, "values")


def indices_copy(input: Tensor) -> Tensor:
    """``torch.indices_copy``: PyTorch has no COO kernel for it (its NotImplementedError); a
    dense or compressed tensor gets ``indices()``'s layout error."""
    return _copy_of(input, "indices")
