"""``nn.functional.grouped_mm``: several matrix products in one call, the groups given by the
cumulative ends ``offs`` along one dimension (mixture-of-experts layers use it).

Composed of ``matmul``, slicing and ``cat``, so its gradients are theirs. PyTorch's CPU kernel
leaves rows (or columns) past ``offs[-1]`` uninitialised; here they are zeros.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.backends import backend_of

__all__ = ["grouped_mm"]

# ScalarType names in PyTorch's first check and C++ type names in its second.
_TORCH_NAME = {"float32": "Float", "bfloat16": "BFloat16", "float16": "Half", "float64": "Double"}
_CPP_NAME = {"float32": "float", "float64": "double", "bfloat16": "c10::BFloat16"}
_CPP_NAME["float16"] = "c10::Half"
_ALLOWED = ("float32", "bfloat16", "float16")


def _host(t: Tensor) -> np.ndarray:
    """``t``'s values on the host (a copy from a GPU): index structure is worked out there."""
    return backend_of(t._data).to_host(t._data)


def _dname(t: Tensor) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _check_strides(t: Tensor) -> None:
    """PyTorch's CPU kernel needs each matrix's leading stride to be a multiple of 16 bytes."""
    strides = getattr(t._data, "strides", None)
    if strides is None or t.ndim < 2:
        return
    item = t._data.itemsize
    for s, n in zip(strides[-2:], t.shape[-2:]):
        if s != item and n > 1 and s % 16:
            raise RuntimeError("strides should be multiple of 16 bytes")


def grouped_mm(
    mat_a: Tensor,
    mat_b: Tensor,
    *,
    offs: Tensor | None = None,
    bias: Tensor | None = None,
    out_dtype: Any = None,
) -> Tensor:
    """Grouped matrix products. With g's range r_g = [offs[g-1], offs[g]) (offs[-1] := 0):

    - a (M, K), b (G, K, N): out (M, N), out[r_g] = a[r_g] @ b[g] (row groups);
    - a (G, M, K), b (K, N): out (M, N), out[:, r_g] = a[g] @ b[:, r_g] (column groups);
    - a (M, K), b (K, N): out (G, M, N), out[g] = a[:, r_g] @ b[r_g] (groups along K);
    - a (G, M, K), b (G, K, N), no ``offs``: out = a @ b.

    ``offs`` is a 1-d int32 tensor; the dtypes are float32, bfloat16 or float16, the same for
    both; ``bias`` is not supported and ``out_dtype`` must be mat_a's (PyTorch's rules)."""
    _check(mat_a, mat_b, offs, bias, out_dtype)
    if offs is None:
        return _ops.matmul(mat_a, mat_b)
    ends = [int(e) for e in _host(offs).reshape(-1)]
    starts = [0, *ends[:-1]]
    if mat_a.ndim == 2 and mat_b.ndim == 2:
        parts = [_ops.matmul(mat_a[:, s:e], mat_b[s:e]) for s, e in zip(starts, ends)]
        return _ops.stack(parts, 0)
    if mat_a.ndim == 2:
        n, total, dim = mat_b.shape[-1], mat_a.shape[0], 0
        parts = [_ops.matmul(mat_a[s:e], mat_b[g]) for g, (s, e) in enumerate(zip(starts, ends))]
    else:
        n, total, dim = mat_a.shape[1], mat_b.shape[1], 1
        parts = [_ops.matmul(mat_a[g], mat_b[:, s:e]) for g, (s, e) in enumerate(zip(starts, ends))]
    tail = total - (ends[-1] if ends else 0)
    if tail > 0:
        shape = (tail, n) if dim == 0 else (n, tail)
        parts.append(_creation.zeros(shape, dtype=mat_a.dtype, device=mat_a.device))
    return _ops.cat(parts, dim)


def _check(
    mat_a: Tensor, mat_b: Tensor, offs: Tensor | None, bias: Tensor | None, out_dtype: Any
) -> None:
    """PyTorch's argument checks, with its texts."""
    da, db = _dname(mat_a), _dname(mat_b)
    if da not in _ALLOWED:
        raise RuntimeError(
            "Expected mat_a to be Float32, BFloat16 or Float16 matrix, got "
            f"{_TORCH_NAME.get(da, da.capitalize())}"
        )
    if da != db:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_CPP_NAME.get(da, da)} != {_CPP_NAME.get(db, db)}"
        )
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if t.ndim not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    if (offs is None) != (mat_a.ndim == 3 and mat_b.ndim == 3):
        raise RuntimeError(
            "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d"
        )
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    _check_strides(mat_a)
    _check_strides(mat_b)
    if offs is None:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError("batched dimension has to match")
        return
    if offs.ndim != 1:
        raise RuntimeError("offs has to be 1D")
    if _dname(offs) != "int32":
        raise RuntimeError("Offsets have to be int32")
    groups = offs.shape[0]
    if (mat_a.ndim == 3 and mat_a.shape[0] != groups) or (
        mat_b.ndim == 3 and mat_b.shape[0] != groups
    ):
        raise RuntimeError("matrix batch sizes have to match")
