"""Matrix products: matmul (NumPy's batch broadcasting and 1-D promotion rules), mm, bmm,
mv, dot, outer, and the fused addmm, addmv, baddbmm (beta input + alpha product)."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule._autocast_state import state as _ac
from chainrule._dispatch import upper as _upper
from chainrule._scalar_convert import checked_scalar, complex_scalar_value
from chainrule.ops import _autocast
from chainrule.ops._registry import OpDef, apply_op, defop, ns
from chainrule.ops.complex_numbers import cj
from chainrule.ops.linalg._common import (
    _c_name,
    _check_matmul_dtype,
    _check_same_dtype,
    _mT,
    _require_tensor,
    _shape_str,
    _type_name,
    check_addmm_dtype,
)

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "outer", "addmm", "addmv", "baddbmm"]


# Note [float16 products in float32]
#     NumPy has no BLAS loop for float16: its matmul converts each element pair to float32 in
#     a scalar loop, 22x slower than float32's BLAS (745 ms against 33 ms for a (256, 768) @
#     (768, 768) product). PyTorch's CPU kernels compute float16 products in float32 and round
#     once, as they do bfloat16's (Note [extension dtypes compute in float32] in
#     ops/_ext_dtypes.py, which covers bfloat16 here). So float16 operands on the CPU are cast
#     to float32 (exactly), multiplied by BLAS and rounded once; addmm's ``beta x + alpha a b``
#     is rounded once too, as PyTorch's (its epilogue runs in float32). The result is the
#     float32 product rounded once: PyTorch's bits wherever the two float32 accumulations
#     round alike, which is every element of small products and all but about 0.2% of large
#     ones (PyTorch's float16 kernel sums in its own order; those differ by one float16 ulp,
#     as PyTorch's own float16 and float32-then-rounded products do). A Tracer (compile
#     capture) is an ndarray, so captures take the same path; CuPy arrays keep cuBLAS's
#     float16 GEMM (which accumulates in float32 already).
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)


def _cpu_half(*arrays: Any) -> bool:
    """True when every array is a float16 NumPy array (Note [float16 products in float32])."""
    return all(a.dtype == _F16 and isinstance(a, np.ndarray) for a in arrays)


def _product(xp: Any, a: Any, b: Any) -> Any:
    """``xp.matmul(a, b)``; float16 on the CPU in float32, rounded once (Note [float16
    products in float32])."""
    if a.dtype == _F16 and _cpu_half(a, b):
        return xp.matmul(a.astype(_F32), b.astype(_F32)).astype(_F16)
    if a.dtype == _BOOL and ((a.size and b.size) or a.ndim == b.ndim == 1):
        raise _bool_product(a.ndim, b.ndim)  # (an empty product runs no kernel, but dot)
    return xp.matmul(a, b)


_BOOL = np.dtype(np.bool_)


def _bool_product(na: int, nb: int, name: str | None = None) -> NotImplementedError:
    """PyTorch's refusal of Bool operands by the kernel its product of these ranks runs: dot
    for two vectors, addmv for a vector on the right, addmm for a matrix there (matmul folds
    the batch of a 3-D left operand into rows), bmm otherwise."""
    if name is None:
        name = (
            "dot"
            if na == 1 and nb == 1
            else "addmv_impl_cpu"
            if nb == 1
            else "addmm_impl_cpu_"
            if nb == 2
            else "bmm"
        )
    return NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


# matmul --------------------------------------------------------------------------------------


@defop(name="matmul", saves={"a": "b", "b": "a"}, promote="same")
def _matmul(xp: Any, a: Any, b: Any) -> Any:
    """a @ b with NumPy's batch broadcasting and 1-D promotion rules (as torch.matmul).
    VJP: g @ b^H and a^H @ g (conjugate transposes; Note [Wirtinger gradients]), with 1-D
    operands unsqueezed first and squeezed after."""
    return _product(xp, a, b)


@_matmul.vjp
def _matmul_vjp(ctx: Any, g: Any) -> Any:
    # The gradient of a reads only b, that of b only a: an operand whose partner needs no
    # gradient was not saved (Note [saved only when needed]), and its rank comes from the
    # shape recorded for it (it requires grad, so the node has its shape).
    a, b = ctx.a, ctx.b
    need_a, need_b = ctx.needs_input_grad
    if not (need_a or need_b):
        return None, None
    shapes = ctx.input_shapes
    a_nd = a.ndim if a is not None else len(shapes[0])
    b_nd = b.ndim if b is not None else len(shapes[1])
    if a_nd == 1 and b_nd == 1:
        return (g * cj(b) if need_a else None, g * cj(a) if need_b else None)
    g2 = g
    if a_nd == 1:
        g2 = ns.unsqueeze(g2, dim=g2.ndim - 1)
    if b_nd == 1:
        g2 = ns.unsqueeze(g2, dim=g2.ndim)
    ga = gb = None
    if need_a:
        b2 = ns.unsqueeze(b, dim=b_nd) if b_nd == 1 else b
        ga = ns.matmul(g2, cj(_mT(b2)))
        if a_nd == 1:
            ga = ns.squeeze(ga, dim=(ga.ndim - 2,))
    if need_b:
        a2 = ns.unsqueeze(a, dim=0) if a_nd == 1 else a
        if a2.ndim == 2 and b_nd == 2 and _b_transposed(ctx, b):
            # b is a transposed weight (linear's W.t()): (g^T a)^T gives the gradient in the
            # weight's own memory order, so accumulating it needs no copy.
            gb = _mT(ns.matmul(_mT(g2), cj(a2)))
        else:
            gb = ns.matmul(cj(_mT(a2)), g2)
        if b_nd == 1:
            gb = ns.squeeze(gb, dim=(gb.ndim - 1,))
    return ga, gb


def _b_transposed(ctx: Any, b: Any) -> bool:
    """Whether the second operand is laid out column-major (linear's ``W.t()``). Without b
    itself (not saved when a needs no gradient), whether it is the output of a transpose:
    only the gradient's memory order depends on it, never its values."""
    if b is not None:
        return _is_transposed(b)
    node = ctx.b_node if type(ctx) is _Ctx2 else ctx._node.next_functions[1][0]
    return node is not None and getattr(getattr(node, "op", None), "name", None) == "t"


def _is_transposed(x: Any) -> bool:
    """Whether a 2-D array (or Tensor's array) is laid out column-major, e.g. ``W.t()``."""
    f = getattr(x, "_data", x).flags
    return f.f_contiguous and not f.c_contiguous


def matmul(input: Any, other: Any) -> Any:
    """Matrix product with broadcasting over batch dims (``@``)."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, other = _autocast.lower(input, other)
    for x, nm in ((input, "input"), (other, "other")):
        _require_tensor("matmul", x, nm)
        if x._data.ndim == 0:
            raise RuntimeError(
                "both arguments to matmul need to be at least 1D, but they are "
                f"{input._data.ndim}D and {other._data.ndim}D"
            )
    if input._sparse or other._sparse:  # a sparse COO operand: chainrule/sparse/
        return _upper.sparse_matmul(input, other)
    ka = input._data.shape[-1]
    kb = other._data.shape[-2] if other._data.ndim > 1 else other._data.shape[0]
    if input._data.ndim == 1 and other._data.ndim == 1:
        # dot checks dtypes before sizes; the other kernels after.
        _check_same_dtype(
            "dot",
            input,
            other,
            "dot : expected both vectors to have same "
            f"dtype, but found {_type_name(input)} and {_type_name(other)}",
        )
    if ka != kb:
        if input._data.ndim == 1 and other._data.ndim == 1:
            raise RuntimeError(
                "inconsistent tensor size, expected tensor [%d] and src [%d] to have the same "
                "number of elements, but got %d and %d elements respectively" % (ka, kb, ka, kb)
            )
        sa = _shape_str(input._data.shape if input._data.ndim > 1 else (1, ka))
        sb = _shape_str(other._data.shape if other._data.ndim > 1 else (kb, 1))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa} and {sb})")
    _check_matmul_dtype(input, other)
    # The fixed-rank cases record PyTorch's node (MmBackward0, MvBackward0, DotBackward0).
    op = _RANK_OPS.get((input._data.ndim, other._data.ndim), _matmul)
    return apply_op(op, (input, other))


# mm / bmm / mv / dot / outer -----------------------------------------------------------------


def _product_fwd(xp: Any, a: Any, b: Any) -> Any:
    """a @ b for matrices (mm), batches of matrices (bmm), matrix-vector (mv) or vectors (dot).
    VJP: as matmul's."""
    return _product(xp, a, b)


def _product_op(name: str, node: str) -> OpDef:
    """A fixed-rank product whose forward is ``xp.matmul``; the VJP is matmul's."""
    op = OpDef(
        name, _product_fwd, ("a", "b"), saves={"a": "b", "b": "a"}, promote="same", node_name=node
    )
    op.vjp(_matmul_vjp)
    return op


_mm = _product_op("mm", "MmBackward0")
_bmm = _product_op("bmm", "BmmBackward0")
_mv = _product_op("mv", "MvBackward0")
_dot = _product_op("dot", "DotBackward0")
_RANK_OPS = {(2, 2): _mm, (2, 1): _mv, (1, 1): _dot}


def _check_mm(input: Any, mat2: Any) -> None:
    _require_tensor("mm", input, "input")
    _require_tensor("mm", mat2, "mat2")
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied "
            f"({_shape_str(input._data.shape)} and {_shape_str(mat2._data.shape)})"
        )


def mm(input: Any, mat2: Any) -> Any:
    """Product of two matrices, (n, m) @ (m, p)."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, mat2 = _autocast.lower(input, mat2)
    if getattr(input, "_sparse", False) or getattr(mat2, "_sparse", False):
        return _upper.sparse_mm(input, mat2)  # a sparse COO operand: chainrule/sparse/
    _check_mm(input, mat2)
    _check_same_dtype(
        "mm",
        input,
        mat2,
        f"expected m1 and m2 to have the same dtype, but got: {_c_name(input)} != {_c_name(mat2)}",
    )
    return apply_op(_mm, (input, mat2))


def _check_bmm(input: Any, mat2: Any, a: str = "batch1", b: str = "batch2") -> None:
    if input._data.ndim != 3:
        raise RuntimeError(f"{a} must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError(f"{b} must be a 3D tensor")
    bs, _, k = input._data.shape
    if mat2._data.shape[:2] != (bs, k):
        raise RuntimeError(
            f"Expected size for first two dimensions of {b} tensor to be: [{bs}, {k}] but got: "
            f"[{mat2._data.shape[0]}, {mat2._data.shape[1]}]."
        )


def bmm(input: Any, mat2: Any) -> Any:
    """Batched matrix product, (b, n, m) @ (b, m, p); no broadcasting."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, mat2 = _autocast.lower(input, mat2)
    _require_tensor("bmm", input, "input")
    _require_tensor("bmm", mat2, "mat2")
    _check_bmm(input, mat2)
    _check_same_dtype(
        "bmm", input, mat2, f"expected scalar type {_type_name(input)} but found {_type_name(mat2)}"
    )
    return apply_op(_bmm, (input, mat2))


def _check_mv(input: Any, vec: Any) -> None:
    _require_tensor("mv", input, "input")
    _require_tensor("mv", vec, "vec")
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input._data.ndim}, {vec._data.ndim}"
        )
    if input._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input._data.shape[0]}), mat "
            f"({_shape_str(input._data.shape)}), vec ({vec._data.shape[0]})"
        )


def mv(input: Any, vec: Any) -> Any:
    """Matrix-vector product, (n, m) @ (m,)."""
    _check_mv(input, vec)
    _check_matmul_dtype(input, vec)
    return apply_op(_mv, (input, vec))


def dot(input: Any, tensor: Any) -> Any:
    """Inner product of two 1-D tensors of one dtype."""
    _require_tensor("dot", input, "input")
    _require_tensor("dot", tensor, "tensor")
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {tensor._data.ndim}D tensors"
        )
    _check_same_dtype(
        "dot",
        input,
        tensor,
        "dot : expected both vectors to have same dtype, "
        f"but found {_type_name(input)} and {_type_name(tensor)}",
    )
    n, m = input._data.shape[0], tensor._data.shape[0]
    if n != m:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
            f"number of elements, but got {n} and {m} elements respectively"
        )
    return apply_op(_dot, (input, tensor))


def outer(input: Any, vec2: Any) -> Any:
    """Outer product of two vectors: out[i, j] = input[i] * vec2[j] (as torch, a broadcast
    multiply: grad_fn is MulBackward0)."""
    _require_tensor("outer", input, "input")
    _require_tensor("outer", vec2, "vec2")
    for t, nm in ((input, "self"), (vec2, "vec2")):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {nm}, but got {t._data.ndim}-D")
    from chainrule.ops.binary import mul
    from chainrule.ops.shape import unsqueeze

    return mul(unsqueeze(input, 1), vec2)


# addmm / addmv / baddbmm ---------------------------------------------------------------------


def _addprod_fwd(xp: Any, x: Any, a: Any, b: Any, *, beta: Any, alpha: Any) -> Any:
    """beta * x + alpha * (a @ b); beta == 0 ignores x (NaNs in it do not propagate).
    VJP: beta g; alpha g @ b^T; alpha a^T @ g (the products as in matmul's VJP)."""
    if a.dtype == _F16 and _cpu_half(x, a, b):  # Note [float16 products in float32]
        up = _addprod_fwd(
            xp, x.astype(_F32), a.astype(_F32), b.astype(_F32), beta=beta, alpha=alpha
        )
        return up.astype(_F16)
    p = xp.matmul(a, b)
    if alpha != 1:
        p = p * alpha
    if beta == 0:
        return xp.broadcast_to(p, xp.broadcast_shapes(x.shape, p.shape)).copy()
    return p + (x if beta == 1 else x * beta)


def _addprod_vjp(ctx: Any, g: Any) -> Any:
    need_x, need_a, need_b = ctx.needs_input_grad
    inner = _Ctx2(
        ctx.a, ctx.b, (need_a, need_b), ctx.input_shapes[1:], ctx._node.next_functions[2][0]
    )
    # complex scalars enter conjugated (Note [Wirtinger gradients]), as in PyTorch's formulas
    ga, gb = _matmul_vjp(inner, g if ctx.alpha == 1 else g * cj(ctx.alpha))
    gx = None
    if need_x:
        gx = g if ctx.beta == 1 else g * cj(ctx.beta)
    return gx, ga, gb


class _Ctx2:
    """The two-operand context ``_matmul_vjp`` reads: the operands (None where not saved),
    their needs, their recorded shapes and the node that made b."""

    __slots__ = ("a", "b", "needs_input_grad", "input_shapes", "b_node")

    def __init__(
        self, a: Any, b: Any, needs: tuple[bool, bool], shapes: tuple[Any, ...], b_node: Any
    ) -> None:
        self.a, self.b, self.needs_input_grad = a, b, needs
        self.input_shapes, self.b_node = shapes, b_node


def _addprod_op(name: str, node: str) -> OpDef:
    op = OpDef(
        name,
        _addprod_fwd,
        ("x", "a", "b"),
        saves={"a": "b", "b": "a"},
        promote="same",
        node_name=node,
    )
    op.vjp(_addprod_vjp)
    return op


_addmm = _addprod_op("addmm", "AddmmBackward0")
_addmv = _addprod_op("addmv", "AddmvBackward0")
_baddbmm = _addprod_op("baddbmm", "BaddbmmBackward0")


def addprod_scalars(name: str, dt: Any, beta: Any, alpha: Any) -> tuple[Any, Any]:
    """beta and alpha of ``name`` (addmm, addmv, baddbmm, addbmm) converted to the operands'
    dtype as PyTorch converts them: a complex one with a nonzero imaginary part refused on
    real operands, a real one range-checked (Note [checked scalar conversion] in
    _scalar_convert.py); for addbmm and addmv (one signature each in PyTorch's parser)
    anything but a number is its TypeError."""
    out = []
    for arg, v in (("beta", beta), ("alpha", alpha)):
        if (
            (name == "addbmm" or name == "addmv")
            and not isinstance(v, (int, float, complex))
            and not (hasattr(v, "_data") and v._data.ndim == 0)
        ):
            raise TypeError(f"{name}(): argument '{arg}' must be Number, not {type(v).__name__}")
        if type(v) is complex:
            v = complex_scalar_value(v, dt)
        elif type(v) is float or type(v) is int:
            v = checked_scalar(v, dt)
            if type(v) is float and dt.kind in "iu":
                v = int(v)  # truncated: integer operands keep an integer result, as PyTorch
        out.append(v)
    return out[0], out[1]


def _addprod(
    op: OpDef, input: Any, prod_shape: tuple[int, ...], a: Any, b: Any, beta: Any, alpha: Any
) -> Any:
    if a._data.dtype == _BOOL and a._data.size and b._data.size:
        raise _bool_product(2, b._data.ndim, "baddbmm" if op is _baddbmm else None)
    if beta != 1 or alpha != 1:  # (the default 1, 1 needs no conversion)
        beta, alpha = addprod_scalars(op.name, a._data.dtype, beta, alpha)
    shape = tuple(input._data.shape)
    ok = len(shape) <= len(prod_shape) and all(
        s in (1, t) for s, t in zip(shape[::-1], prod_shape[::-1])
    )
    if not ok:
        i = next(
            (k for k, (s, t) in enumerate(zip(shape[::-1], prod_shape[::-1])) if s not in (1, t)), 0
        )
        d = len(prod_shape) - 1 - i
        raise RuntimeError(
            f"The expanded size of the tensor ({prod_shape[d]}) must match the existing size "
            f"({shape[-1 - i] if i < len(shape) else 1}) at non-singleton dimension {d}.  "
            f"Target sizes: {list(prod_shape)}.  Tensor sizes: {list(shape)}"
        )
    return apply_op(op, (input, a, b), {"beta": beta, "alpha": alpha})


def addmm(input: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, mat1, mat2 = _autocast.lower(input, mat1, mat2)
    if getattr(mat1, "_sparse", False) or getattr(input, "_compressed", False):  # sparse/
        return _upper.sparse_addmm(input, mat1, mat2, beta=beta, alpha=alpha)
    _require_tensor("addmm", input, "input")
    _check_mm(mat1, mat2)
    check_addmm_dtype(input, mat1, mat2)
    shape = (mat1._data.shape[0], mat2._data.shape[1])
    return _addprod(_addmm, input, shape, mat1, mat2, beta, alpha)


def linear_addmm(input: Any, mat1: Any, mat2: Any) -> Any:
    """input + mat1 @ mat2 as one addmm (AddmmBackward0), for ``F.linear``, which has checked
    the operands (and lowered them under autocast) already."""
    shape = (mat1._data.shape[0], mat2._data.shape[1])
    return _addprod(_addmm, input, shape, mat1, mat2, 1, 1)


def addmv(input: Any, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """beta * input + alpha * (mat @ vec), input broadcast to the product's shape."""
    _require_tensor("addmv", input, "input")
    _check_mv(mat, vec)
    n = mat._data.shape[0]
    # (PyTorch checks the shapes, then the dtypes)
    if input._data.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, 2, 1")
    if input._data.ndim == 1 and input._data.shape[0] not in (1, n):
        raise RuntimeError(
            f"size mismatch, got input ({input._data.shape[0]}), mat "
            f"({_shape_str(mat._data.shape)}), vec ({vec._data.shape[0]})"
        )
    if not input._data.dtype == mat._data.dtype == vec._data.dtype:
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got "
            f"{_type_name(input)}, {_type_name(mat)}, and {_type_name(vec)}"
        )
    return _addprod(_addmv, input, (mat._data.shape[0],), mat, vec, beta, alpha)


def baddbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """beta * input + alpha * bmm(batch1, batch2), input broadcast to the product's shape."""
    if _ac.cpu:  # an autocast region: Note [autocast] in _autocast_state.py
        input, batch1, batch2 = _autocast.lower(input, batch1, batch2)
    _require_tensor("baddbmm", input, "input")
    _require_tensor("baddbmm", batch1, "batch1")
    _require_tensor("baddbmm", batch2, "batch2")
    _check_bmm(batch1, batch2)
    if input._data.dtype != batch1._data.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_c_name(input)}, "
            f"batch1: {_c_name(batch1)}, batch2: {_c_name(batch2)}"
        )
    _check_same_dtype(
        "baddbmm",
        batch1,
        batch2,
        f"expected scalar type {_type_name(batch1)} but found {_type_name(batch2)}",
    )
    shape = (batch1._data.shape[0], batch1._data.shape[1], batch2._data.shape[2])
    return _addprod(_baddbmm, input, shape, batch1, batch2, beta, alpha)
