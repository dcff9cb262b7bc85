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


# Note [big unsigned integers]
#     PyTorch 2.13 has few CPU kernels for uint16, uint32 and uint64. The dispatch fast paths
#     send these dtypes to the general path (their entry in _kinds.CATEGORY_BY_NUM is -1), and
#     ext_forward runs only the ops of _UINT_OK on them, refusing the others with PyTorch's
#     error. An op whose inputs were promoted to another dtype first (x / 2, x + 1.5) runs.
_BIG_UINTS = {
    np.dtype(np.uint16): "UInt16",
    np.dtype(np.uint32): "UInt32",
    np.dtype(np.uint64): "UInt64",
}
_UINT_OK = frozenset(
    {
        "mul",
        "sum",
        "prod",
        "cumsum",
        "cumprod",
        "eq",
        "ne",
        "isnan",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "any",
        "all",
        "to_dtype",
        "cat",
        "stack",
        "clone",
        "copy",
        "copy_slices",
        "fill",
        "getitem",
        "index",
        "where",
        "repeat",
        "roll",
        "sort",
        "diag",
        "expand",
        "unbind",
        "split",
        "unique1",
        "unique2",
        "unique3",
        "unique_consecutive1",
        "unique_consecutive2",
        "unique_consecutive3",
    }
)
_UINT_KERNELS = {
    "add": "add_stub",
    "sub": "add_stub",
    "rsub": "add_stub",
    "neg": "neg_cpu",
    "max": "max_all",
    "min": "min_all",
    "amax": "max_values_cpu",
    "amin": "min_values_cpu",
    "div_rounded": "div_floor_cpu",
    "remainder": "remainder_cpu",
    "remainder_scalar": "remainder_cpu",
    "pow": "pow",
    "pow_scalar": "pow",
    "clamp": "clamp_scalar_cpu",
    "clamp_min": "clamp_scalar_cpu",
    "clamp_max": "clamp_scalar_cpu",
    "bitwise_left_shift": "lshift_cpu",
    "bitwise_right_shift": "rshift_cpu",
    "masked_fill": "masked_fill",
    "tril": "tril",
    "triu": "triu",
    "gather": "scatter_gather_tensor_cpu",
    "gather_along": "scatter_gather_tensor_cpu",
    "scatter": "scatter_gather_tensor_cpu",
    "count_nonzero": "nonzero_count_cpu",
    "mm": "addmm_impl_cpu_",
    "matmul": "addmm_impl_cpu_",
    "index_select": "index_select",
    "median_all": "median_cpu",
    "median_dim": "median_cpu",
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
    compute in float32] says; returns what the forward returns (results rounded back).

    Arrays of uint16/32/64 come here too (Note [big unsigned integers])."""
    ext = None
    for a in arrays:
        dt = getattr(a, "dtype", None)
        if dt is None:
            continue
        if dt.num >= 256 and _kinds.is_floating(dt):
            ext = dt
            break
        if dt in _BIG_UINTS and not op.view and op.name not in _UINT_OK:
            kernel = _UINT_KERNELS.get(op.name, op.name + "_cpu")
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_BIG_UINTS[dt]}'")
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
