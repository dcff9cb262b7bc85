"""Fused multiply-adds (addcmul, addcdiv, addr, addbmm) and products (tensordot, inner, ger,
chain_matmul, matrix_power, trace, vander), composed from the linear-algebra ops."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from chainrule import _kinds
from chainrule._autocast_state import state as _ac
from chainrule._scalar_convert import checked_scalar, complex_scalar_value
from chainrule.ops import _autocast
from chainrule.ops._broadcast import wrap_dim
from chainrule.ops.composite._common import _is_t, _ops
from chainrule.ops.linalg import check_addmm_dtype
from chainrule.ops.linalg.products import addprod_scalars

__all__ = [
    "addcmul",
    "addcdiv",
    "addr",
    "addbmm",
    "tensordot",
    "inner",
    "ger",
    "chain_matmul",
    "matrix_power",
    "trace",
    "vander",
]


# Fused multiply-adds --------------------------------------------------------------------------


def addcmul(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    """``input + value * tensor1 * tensor2``, ``value`` first converted to the result's dtype
    as PyTorch converts it (``_addc_value``: an integer result truncates ``value=0.5`` to 0)."""
    if type(value) is not int or value != 1 or _kinds.is_bool(input._data):
        value = _addc_value("addcmul", value, input, tensor1, tensor2)
    return input + value * tensor1 * tensor2


def _addc_value(name: str, value: Any, input: Any, tensor1: Any, tensor2: Any) -> Any:
    """addcmul's and addcdiv's ``value`` in the result's dtype, as PyTorch's kernels take it:
    checked against the dtype's range (Note [checked scalar conversion] in
    _scalar_convert.py; a complex number against a real result), truncated for an integer
    result; a bool result has no kernel."""
    from chainrule._dtype import result_type

    rt = result_type(input, tensor1, tensor2).np
    cat = _kinds.category(rt)
    t = type(value)
    if cat == 0:
        if t is int:
            checked_scalar(value, rt)  # (an int no Scalar holds fails first)
        raise NotImplementedError(f"\"{name}_cpu_out\" not implemented for 'Bool'")
    if t is complex:
        return complex_scalar_value(value, rt)
    if t is float or t is int:
        # (a float16/bfloat16 result computes in float32: the value is checked as a float)
        value = checked_scalar(value, _F32 if cat == 2 and rt.itemsize == 2 else rt)
        if cat == 1 and type(value) is float:
            value = int(value)  # truncated toward zero, as PyTorch's cast to the integer type
    return value


_F32 = np.dtype(np.float32)


def _complex_value(value: complex, *tensors: Any) -> Any:
    from chainrule._dtype import result_type

    return complex_scalar_value(value, result_type(*tensors).np)


def addcdiv(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    """``input + value * tensor1 / tensor2``; integer (or bool) tensor1 and tensor2 raise as in
    PyTorch (a complex one divides)."""
    if _kinds.category(tensor1._data) < 2 and _kinds.category(tensor2._data) < 2:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )
    if type(value) is not int or value != 1:
        value = _addc_value("addcdiv", value, input, tensor1, tensor2)
    return input + value * tensor1 / tensor2


def _scaled(beta: Any, input: Any, alpha: Any, prod: Any) -> Any:
    # beta == 0 ignores input entirely (NaN in it does not propagate), as PyTorch documents.
    if type(beta) is complex or type(alpha) is complex:  # PyTorch's error on real operands
        beta = _complex_value(beta, input, prod) if type(beta) is complex else beta
        alpha = _complex_value(alpha, input, prod) if type(alpha) is complex else alpha
    p = prod if alpha == 1 else alpha * prod
    if beta == 0:
        if type(beta) is bool:  # (addr's bool result: p or'd with an all-False input)
            return p | (input & False)
        # input still gets a (zero) gradient, as in PyTorch, but its NaN/inf do not propagate.
        return p + (input * 0).nan_to_num(0.0, 0.0, 0.0)
    return (input if beta == 1 else beta * input) + p


def _bshape(a: Any, b: Any) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))


def addr(input: Any, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(
            f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D"
            if vec1.ndim != 1
            else f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D"
        )
    if type(beta) is not int or type(alpha) is not int or beta != 1 or alpha != 1:
        beta, alpha = _addr_scalars(input, vec1, vec2, beta, alpha)
    return _scaled(beta, input, alpha, _ops().outer(vec1, vec2))


def _addr_scalars(input: Any, vec1: Any, vec2: Any, beta: Any, alpha: Any) -> tuple[Any, Any]:
    """addr's checks of beta and alpha, PyTorch's: bool ones for a bool result only, no
    floating or complex ones for an integer or bool result; for a bool result an int is
    read as a bool (``beta=2`` is True, ``beta=0`` False, which ignores ``input``)."""
    from chainrule._dtype import result_type

    rt = result_type(input, vec1, vec2).np
    cat = _kinds.category(rt)
    out = []
    for name, v in (("beta", beta), ("alpha", alpha)):
        if type(v) is bool and cat != 0:
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if cat < 2 and isinstance(v, (float, complex)):
            raise RuntimeError(
                f"For integral input tensors, argument {name} must not be a floating point number."
            )
        t = type(v)
        if t is int or t is float:  # PyTorch's range check (Note [checked scalar conversion])
            v = checked_scalar(v, rt)
        out.append(builtins.bool(v) if cat == 0 else v)
    return out[0], out[1]


def addbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, batch1, batch2 = _autocast.lower(input, batch1, batch2)
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(
            "batch1 must be a 3D tensor" if batch1.ndim != 3 else "batch2 must be a 3D tensor"
        )
    # PyTorch runs addbmm as addmm over the batch: addmm's dtype rule (no promotion: a complex
    # or double batch beside a float input is refused, in place or not) and its Bool refusal
    check_addmm_dtype(input, batch1, batch2)
    if _kinds.category(input._data) == 0:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if type(beta) is not int or type(alpha) is not int or beta != 1 or alpha != 1:
        dt = batch1._data.dtype
        if dt.name in ("float16", "bfloat16"):  # (checked as float: PyTorch's opmath)
            dt = np.dtype(np.float32)
        beta, alpha = addprod_scalars("addbmm", dt, beta, alpha)
    return _scaled(beta, input, alpha, _ops().bmm(batch1, batch2).sum(0))


# Products ----------------------------------------------------------------------------------------


def tensordot(a: Any, b: Any, dims: Any = 2, out: Any = None) -> Any:
    """Contract the last ``dims`` dims of ``a`` with the first ``dims`` of ``b`` (or the dim
    lists ``dims = ([a dims], [b dims])``), as one matmul of the folded operands."""
    if _is_t(dims):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        n = int(dims)
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={n}")
        # Named as PyTorch names them in errors: a's dims counted from the end.
        da_named = list(range(-n, 0))
        db = list(range(n))
        da = [d + a.ndim for d in da_named]
    else:
        da, db = ([int(v) for v in d] if isinstance(d, (list, tuple)) else [int(d)] for d in dims)
        da_named = da
        da = [wrap_dim(d, a.ndim) for d in da]
        db = [wrap_dim(d, b.ndim) for d in db]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for x, xn, y in zip(da, da_named, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[x]} in dim "
                f"{xn} and second has size {b.shape[y]} in dim {y}"
            )
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da])) if da else 1
    am = a.permute(*free_a, *da).reshape(-1, k)
    bm = b.permute(*db, *free_b).reshape(k, -1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return (am @ bm).reshape(*shape)


def inner(input: Any, other: Any) -> Any:
    """Sum over the last dims: ``a[..., k] * b[..., k]`` for every pair of leading indices
    (a scalar factor when either is 0-d)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def ger(input: Any, vec2: Any) -> Any:
    """Outer product of two vectors (the old name of ``outer``)."""
    return _ops().outer(input, vec2)


def chain_matmul(*matrices: Any) -> Any:
    """The product of 2-d matrices, left to right (deprecated in PyTorch for linalg.multi_dot)."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    import warnings

    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather "
        "than multiple parameters.",
        UserWarning,
        stacklevel=2,
    )
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    out = matrices[0]
    for m in matrices[1:]:
        out = out @ m
    return out


def matrix_power(input: Any, n: int) -> Any:
    """``input`` multiplied by itself ``n`` times (square matrices, batched); ``n = 0`` gives
    the identity and ``n < 0`` powers of the inverse. Square-and-multiply: O(log n) matmuls."""
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{input.shape[-2] if input.ndim >= 2 else 1} by {input.shape[-1]} matrices"
        )
    n = int(n)
    if n == 0:
        from chainrule._creation import eye

        # The identity, still connected to input (a zero gradient, as PyTorch gives).
        return eye(input.shape[-1], dtype=input.dtype, device=input.device) + (
            input * 0
        ).nan_to_num(0.0, 0.0, 0.0)
    base = input if n > 0 else _ops().inverse(input)
    n = builtins.abs(n)
    result = None
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def trace(input: Any) -> Any:
    """Sum of the main diagonal of a 2-d input."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input = _autocast.fp32_1(input)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return _ops().diagonal(input).sum()


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """Vandermonde matrix: columns ``x**(N-1), ..., x, 1`` (``increasing``: ``1, x, ...``)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if n == 0:
        return x.reshape(-1, 1)[:, :0]
    # The x**0 column: ones of x's shape and dtype (where() of two scalars, then cast).
    cols = [_ops().where(x == x, 1.0, 1.0).to(x.dtype)]
    for _ in range(1, n):
        cols.append(cols[-1] * x)
    if not increasing:
        cols = cols[::-1]
    out = _ops().stack(cols, 1)
    return out if x.is_floating_point() else out.to(x.dtype)
