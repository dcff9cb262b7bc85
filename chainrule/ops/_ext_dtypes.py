"""Forwards on the ml_dtypes formats (bfloat16, float8_*): computed in float32, rounded once.

Note [extension dtypes compute in float32]
    NumPy runs ufuncs on ml_dtypes' bfloat16 by converting each element to float32 and back,
    but a reduction then accumulates in bfloat16 (the sum of 1000 ones is 256) and several
    functions (``np.where``'s callers, LAPACK) have no loop for it at all. PyTorch's CPU
    kernels compute bfloat16 in float32 and round the result once, and accumulate reductions
    in float32. ``ext_forward`` does the same for every op, in one place: the arrays of the
    extension dtype are cast to float32, the op's forward runs, and each float32 result is
    rounded back to the extension dtype. The cast is exact (every bfloat16 or float8 value is
    a float32 value), so data-movement ops (indexing, cat, copies) give the same bits. View ops
    run on the arrays as they are, since their result must share memory with the input, and
    so do casts (``to_dtype``), whose float32 result must stay float32.

    PyTorch refuses most arithmetic on the float8 formats: only the ops in ``_FLOAT8_OK`` run
    on them; any other raises NotImplementedError naming the kernel as PyTorch does
    (``"add_stub" not implemented for 'Float8_e4m3fn'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from chainrule import _kinds

if TYPE_CHECKING:
    from chainrule.ops._opdef import OpDef

__all__ = ["ext_forward", "torch_type_name"]

_F32 = np.dtype(np.float32)

_TORCH_NAMES = {
    "bfloat16": "BFloat16",
    "float8_e4m3fn": "Float8_e4m3fn",
    "float8_e5m2": "Float8_e5m2",
    "float8_e4m3fnuz": "Float8_e4m3fnuz",
    "float8_e5m2fnuz": "Float8_e5m2fnuz",
    "float8_e8m0fnu": "Float8_e8m0fnu",
}

# The ops PyTorch 2.13 runs on float8 tensors on the CPU (the rest raise); views run as well.
_FLOAT8_OK = frozenset(
    {
        "abs",
        "mul",
        "mm",
        "matmul",
        "bmm",
        "clone",
        "cat",
        "stack",
        "copy",
        "copy_slices",
        "fill",
        "eq",
        "ne",
        "isnan",
        "index_select",
        "getitem",
        "index",
        "index_put",
        "to_dtype",
        "expand",
        "repeat",
        "unbind",
        "split",
    }
)

# Ops that run on the arrays as they are: casts (rounding their float32 result back would undo
# a cast to float32).
_DIRECT = frozenset({"to_dtype"})

# float8_e8m0fnu (a power of two without sign) refuses these too.
_E8M0_REFUSED = frozenset({"abs", "mm", "matmul", "bmm"})

# PyTorch's kernel names in its "not implemented" error, for the common ops.
_KERNELS = {
    "add": "add_stub",
    "sub": "add_stub",
    "rsub": "add_stub",
    "div": "div_cpu_reduced_float",
    "exp": "exp_vml_cpu",
    "log": "log_vml_cpu",
    "sqrt": "sqrt_vml_cpu",
    "sum": "sum_cpu",
    "mean": "sum_cpu",
    "max": "max_all",
    "min": "min_all",
    "relu": "clamp_min_scalar_cpu",
    "where": "where_cpu",
    "sort": "sorting_kernel_method_name",
    "arange": "arange_cpu",
    "mm": "addmm_impl_cpu_",
    "matmul": "addmm_impl_cpu_",
}


def torch_type_name(d: Any) -> str:
    """PyTorch's C++ name of an extension dtype (``BFloat16``, ``Float8_e4m3fn``)."""
    name = np.dtype(d).name
    return _TORCH_NAMES.get(name, name)


def _refuse_float8(op: OpDef, d: np.dtype) -> None:
    kernel = _KERNELS.get(op.name, op.name + "_cpu")
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{torch_type_name(d)}'")


def ext_forward(op: OpDef, xp: Any, arrays: list[Any], params: Any) -> Any:
    """Run ``op.forward`` on ``arrays``, some of an extension dtype, as Note [extension dtypes
    compute in float32] says; returns what the forward returns (results rounded back)."""
    ext = None
    for a in arrays:
        dt = getattr(a, "dtype", None)
        if dt is not None and dt.num >= 256 and _kinds.is_floating(dt):
            ext = dt
            break
    if ext is None or op.view or op.name in _DIRECT:
        return op.forward(xp, *arrays, **params) if params else op.forward(xp, *arrays)
    if ext.itemsize == 1 and (
        op.name not in _FLOAT8_OK or (op.name in _E8M0_REFUSED and ext.name == "float8_e8m0fnu")
    ):
        _refuse_float8(op, ext)
    up = [a.astype(_F32) if getattr(a, "dtype", None) == ext else a for a in arrays]
    out = op.forward(xp, *up, **params) if params else op.forward(xp, *up)
    if op.aux:
        res, aux = out
        return _round(res, ext, op.num_outputs), aux
    return _round(out, ext, op.num_outputs)


def _round(out: Any, ext: np.dtype, n: int) -> Any:
    if n == 1:
        return _kinds.astype(out, ext) if getattr(out, "dtype", None) == _F32 else out
    return tuple(_kinds.astype(o, ext) if getattr(o, "dtype", None) == _F32 else o for o in out)
