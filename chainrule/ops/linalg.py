"""Linear algebra ops: products (matmul, mm, bmm, mv, dot, outer, einsum, addmm/addmv/baddbmm)
and the ``linalg`` primitives (inv, det, slogdet, solve) that chainrule/linalg.py exposes.

Every VJP is written with ``ns`` (Note [ns]) so that double backward works.

Long because it holds the whole linear-algebra family (mm family, einsum,
inverse/det/solve/svd): one place per op.
"""

from __future__ import annotations

import string
from typing import Any, Sequence

from chainrule.ops._registry import OpDef, apply_op, defop, ns

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "outer", "einsum", "addmm", "addmv", "baddbmm",
           "det", "inverse", "slogdet", "logdet"]


class LinAlgError(RuntimeError):
    """Raised for singular inputs, like ``torch.linalg.LinAlgError``."""


def _mT(x: Any) -> Any:
    return ns.transpose(x, dim0=x.ndim - 1, dim1=x.ndim - 2)


# matmul --------------------------------------------------------------------------------------


@defop(name="matmul", saves={"a": "b", "b": "a"}, promote="same")
def _matmul(xp: Any, a: Any, b: Any) -> Any:
    """a @ b with NumPy's batch broadcasting and 1-D promotion rules (as torch.matmul).
    VJP: g @ b^T and a^T @ g, with 1-D operands unsqueezed first and squeezed after."""
    return xp.matmul(a, b)


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
        return (g * b if need_a else None, g * a if need_b else None)
    g2 = g
    if a_nd == 1:
        g2 = ns.unsqueeze(g2, dim=g2.ndim - 1)
    if b_nd == 1:
        g2 = ns.unsqueeze(g2, dim=g2.ndim)
    ga = gb = None
    if need_a:
        b2 = ns.unsqueeze(b, dim=b_nd) if b_nd == 1 else b
        ga = ns.matmul(g2, _mT(b2))
        if a_nd == 1:
            ga = ns.squeeze(ga, dim=(ga.ndim - 2,))
    if need_b:
        a2 = ns.unsqueeze(a, dim=0) if a_nd == 1 else a
        if a2.ndim == 2 and b_nd == 2 and _b_transposed(ctx, b):
            # b is a transposed weight (linear's W.t()): (g^T a)^T gives the gradient in the
            # weight's own memory order, so accumulating it needs no copy.
            gb = _mT(ns.matmul(_mT(g2), a2))
        else:
            gb = ns.matmul(_mT(a2), g2)
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


def _require_tensor(name: str, x: Any, arg: str) -> None:
    if not hasattr(x, "_data"):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _shape_str(s: Sequence[int]) -> str:
    return "x".join(map(str, s))


def _type_name(t: Any) -> str:
    from chainrule._tensor import _type_name

    return _type_name(t._data.dtype).replace("Tensor", "")


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}


def _c_name(t: Any) -> str:
    """The C++ scalar type name some PyTorch messages use (float, double...)."""
    n = t._data.dtype.name
    return _C_NAMES.get(n, n)


def _check_same_dtype(name: str, a: Any, b: Any, msg: str | None = None) -> None:
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(msg or f"{name}: expected both vectors to have same dtype, but found "
                           f"{_type_name(a)} and {_type_name(b)}")


def _check_matmul_dtype(a: Any, b: Any) -> None:
    """matmul's operands share one dtype (no promotion, as in torch); the message is the one
    of the kernel torch dispatches to for these ranks."""
    da, db = a._data.dtype, b._data.dtype
    if da == db:
        return
    na, nb = a._data.ndim, b._data.ndim
    if nb == 1 and na >= 2:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_type_name(b)}, {_type_name(a)}, and {_type_name(b)}")
    if nb == 2:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{_c_name(a)} != {_c_name(b)}")
    raise RuntimeError(f"expected scalar type {_type_name(a)} but found {_type_name(b)}")


def check_addmm_dtype(input: Any, mat1: Any, mat2: Any) -> None:
    """addmm's (and linear-with-bias's) dtype rule and torch's texts: input against mat2 first,
    then mat1 against mat2."""
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_type_name(input)} "
                           f"and {_type_name(mat2)}")
    if mat1._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_type_name(mat1)} "
                           f"and {_type_name(mat2)}")


def matmul(input: Any, other: Any) -> Any:
    """Matrix product with broadcasting over batch dims (``@``)."""
    for x, nm in ((input, "input"), (other, "other")):
        _require_tensor("matmul", x, nm)
        if x._data.ndim == 0:
            raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                               f"{input._data.ndim}D and {other._data.ndim}D")
    ka = input._data.shape[-1]
    kb = other._data.shape[-2] if other._data.ndim > 1 else other._data.shape[0]
    if input._data.ndim == 1 and other._data.ndim == 1:
        # dot checks dtypes before sizes; the other kernels after.
        _check_same_dtype("dot", input, other, "dot : expected both vectors to have same "
                          f"dtype, but found {_type_name(input)} and {_type_name(other)}")
    if ka != kb:
        if input._data.ndim == 1 and other._data.ndim == 1:
            raise RuntimeError(
                "inconsistent tensor size, expected tensor [%d] and src [%d] to have the same "
                "number of elements, but got %d and %d elements respectively" % (ka, kb, ka, kb))
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
    return xp.matmul(a, b)


def _product_op(name: str, node: str) -> OpDef:
    """A fixed-rank product whose forward is ``xp.matmul``; the VJP is matmul's."""
    op = OpDef(name, _product_fwd, ("a", "b"), saves={"a": "b", "b": "a"},
               promote="same", node_name=node)
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
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({_shape_str(input._data.shape)} and {_shape_str(mat2._data.shape)})")


def mm(input: Any, mat2: Any) -> Any:
    """Product of two matrices, (n, m) @ (m, p)."""
    _check_mm(input, mat2)
    _check_same_dtype("mm", input, mat2, "expected m1 and m2 to have the same dtype, but got: "
                      f"{_c_name(input)} != {_c_name(mat2)}")
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
            f"[{mat2._data.shape[0]}, {mat2._data.shape[1]}].")


def bmm(input: Any, mat2: Any) -> Any:
    """Batched matrix product, (b, n, m) @ (b, m, p); no broadcasting."""
    _require_tensor("bmm", input, "input")
    _require_tensor("bmm", mat2, "mat2")
    _check_bmm(input, mat2)
    _check_same_dtype("bmm", input, mat2, "expected scalar type "
                      f"{_type_name(input)} but found {_type_name(mat2)}")
    return apply_op(_bmm, (input, mat2))


def _check_mv(input: Any, vec: Any) -> None:
    _require_tensor("mv", input, "input")
    _require_tensor("mv", vec, "vec")
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, "
                           f"{vec._data.ndim}")
    if input._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input._data.shape[0]}), mat "
                           f"({_shape_str(input._data.shape)}), vec ({vec._data.shape[0]})")


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
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{tensor._data.ndim}D tensors")
    _check_same_dtype("dot", input, tensor, "dot : expected both vectors to have same dtype, "
                      f"but found {_type_name(input)} and {_type_name(tensor)}")
    n, m = input._data.shape[0], tensor._data.shape[0]
    if n != m:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
            f"number of elements, but got {n} and {m} elements respectively")
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
    p = xp.matmul(a, b)
    if alpha != 1:
        p = p * alpha
    if beta == 0:
        return xp.broadcast_to(p, xp.broadcast_shapes(x.shape, p.shape)).copy()
    return p + (x if beta == 1 else x * beta)


def _addprod_vjp(ctx: Any, g: Any) -> Any:
    need_x, need_a, need_b = ctx.needs_input_grad
    inner = _Ctx2(ctx.a, ctx.b, (need_a, need_b), ctx.input_shapes[1:],
                  ctx._node.next_functions[2][0])
    ga, gb = _matmul_vjp(inner, g if ctx.alpha == 1 else g * ctx.alpha)
    gx = None
    if need_x:
        gx = g if ctx.beta == 1 else g * ctx.beta
    return gx, ga, gb


class _Ctx2:
    """The two-operand context ``_matmul_vjp`` reads: the operands (None where not saved),
    their needs, their recorded shapes and the node that made b."""

    __slots__ = ("a", "b", "needs_input_grad", "input_shapes", "b_node")

    def __init__(self, a: Any, b: Any, needs: tuple[bool, bool], shapes: tuple[Any, ...],
                 b_node: Any) -> None:
        self.a, self.b, self.needs_input_grad = a, b, needs
        self.input_shapes, self.b_node = shapes, b_node


def _addprod_op(name: str, node: str) -> OpDef:
    op = OpDef(name, _addprod_fwd, ("x", "a", "b"), saves={"a": "b", "b": "a"}, promote="same",
               node_name=node)
    op.vjp(_addprod_vjp)
    return op


_addmm = _addprod_op("addmm", "AddmmBackward0")
_addmv = _addprod_op("addmv", "AddmvBackward0")
_baddbmm = _addprod_op("baddbmm", "BaddbmmBackward0")


def _addprod(op: OpDef, input: Any, prod_shape: tuple[int, ...], a: Any, b: Any, beta: Any,
             alpha: Any) -> Any:
    shape = tuple(input._data.shape)
    ok = len(shape) <= len(prod_shape) and all(
        s in (1, t) for s, t in zip(shape[::-1], prod_shape[::-1]))
    if not ok:
        i = next((k for k, (s, t) in enumerate(zip(shape[::-1], prod_shape[::-1])) if s not in
                  (1, t)), 0)
        d = len(prod_shape) - 1 - i
        raise RuntimeError(
            f"The expanded size of the tensor ({prod_shape[d]}) must match the existing size "
            f"({shape[-1 - i] if i < len(shape) else 1}) at non-singleton dimension {d}.  "
            f"Target sizes: {list(prod_shape)}.  Tensor sizes: {list(shape)}")
    return apply_op(op, (input, a, b), {"beta": beta, "alpha": alpha})


def addmm(input: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape."""
    _require_tensor("addmm", input, "input")
    _check_mm(mat1, mat2)
    check_addmm_dtype(input, mat1, mat2)
    shape = (mat1._data.shape[0], mat2._data.shape[1])
    return _addprod(_addmm, input, shape, mat1, mat2, beta, alpha)


def addmv(input: Any, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """beta * input + alpha * (mat @ vec), input broadcast to the product's shape."""
    _require_tensor("addmv", input, "input")
    _check_mv(mat, vec)
    if not input._data.dtype == mat._data.dtype == vec._data.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_type_name(input)}, {_type_name(mat)}, and {_type_name(vec)}")
    n = mat._data.shape[0]
    if input._data.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, 2, 1")
    if input._data.ndim == 1 and input._data.shape[0] not in (1, n):
        raise RuntimeError(f"size mismatch, got input ({input._data.shape[0]}), mat "
                           f"({_shape_str(mat._data.shape)}), vec ({vec._data.shape[0]})")
    return _addprod(_addmv, input, (mat._data.shape[0],), mat, vec, beta, alpha)


def baddbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """beta * input + alpha * bmm(batch1, batch2), input broadcast to the product's shape."""
    _require_tensor("baddbmm", input, "input")
    _require_tensor("baddbmm", batch1, "batch1")
    _require_tensor("baddbmm", batch2, "batch2")
    _check_bmm(batch1, batch2)
    if input._data.dtype != batch1._data.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_c_name(input)}, "
                           f"batch1: {_c_name(batch1)}, batch2: {_c_name(batch2)}")
    _check_same_dtype("baddbmm", batch1, batch2, "expected scalar type "
                      f"{_type_name(batch1)} but found {_type_name(batch2)}")
    shape = (batch1._data.shape[0], batch1._data.shape[1], batch2._data.shape[2])
    return _addprod(_baddbmm, input, shape, batch1, batch2, beta, alpha)


# einsum --------------------------------------------------------------------------------------

# One op per number of operands (the registry saves inputs by position); all share a forward
# and a VJP. Equations are normalized to explicit form with ellipses spelled out as letters.
_EINSUM_MAX = 6


def _einsum_fwd(xp: Any, *xs: Any, equation: str) -> Any:
    return xp.einsum(equation, *xs, optimize=len(xs) > 1)


def _einsum_vjp(ctx: Any, g: Any) -> Any:
    """d/d(operand i) of einsum('s_0,...,s_n->o'): einsum('s_0,..(skip i)..,o->s_i') of the
    other operands and g. Letters of s_i found nowhere else are summed out in the forward, so
    the gradient is expanded along them; a letter repeated in s_i (a diagonal) is handled by
    an identity factor."""
    lhs, out = ctx.equation.split("->")
    subs = lhs.split(",")
    # Operand i's gradient reads the others only: operands no needed gradient reads were not
    # saved (Note [saved only when needed]).
    xs = [getattr(ctx, f"x{i}", None) for i in range(len(subs))]
    grads = []
    for i, s in enumerate(subs):
        if not ctx.needs_input_grad[i]:
            grads.append(None)
            continue
        others = [(subs[j], xs[j]) for j in range(len(subs)) if j != i] + [(out, g)]
        avail = set("".join(t for t, _ in others))
        target = "".join(dict.fromkeys(c for c in s if c in avail))
        eq = ",".join(t for t, _ in others) + "->" + target
        r = _einsum_apply([x for _, x in others], eq)
        shape = ctx.input_shapes[i]
        sizes = dict(zip(s, shape))
        uniq = "".join(dict.fromkeys(s))
        # target lists s's letters in order of first appearance, less those found nowhere else
        # (summed out in the forward): expand the gradient along those.
        if target != uniq:
            r = ns.reshape(r, shape=tuple(sizes[c] if c in target else 1 for c in uniq))
            r = ns.expand(r, shape=tuple(sizes[c] for c in uniq))
        full = uniq
        if full != s:
            # Repeated letters: place r on the diagonal via index_grad at the diagonal index.
            r = ns.einsum_diag(r, src=full, dst=s, shape=tuple(shape))
        grads.append(r)
    return tuple(grads)


_EINSUM_OPS = {}
for _n in range(1, _EINSUM_MAX + 1):
    _op = OpDef("einsum" if _n == 2 else f"einsum{_n}", _einsum_fwd,
                tuple(f"x{i}" for i in range(_n)),
                saves={f"x{i}": tuple(f"x{j}" for j in range(_n) if j != i) for i in range(_n)},
                promote="same", node_name="EinsumBackward0")
    _op.vjp(_einsum_vjp)
    _EINSUM_OPS[_n] = _op


def _einsum_apply(xs: Sequence[Any], eq: str) -> Any:
    return getattr(ns, "einsum" if len(xs) == 2 else f"einsum{len(xs)}")(*xs, equation=eq)


def _diag_index(xp: Any, src: str, dst: str, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The advanced index into an array of ``shape`` (letters ``dst``) selecting the entries
    where repeated letters agree, laid out along the letters of ``src``."""
    sizes = dict(zip(dst, shape))
    n = len(src)
    grids = {c: xp.arange(sizes[c]).reshape((-1,) + (1,) * (n - 1 - k))
             for k, c in enumerate(src)}
    return tuple(grids[c] for c in dst)


@defop(name="einsum_diag", node_name="EinsumBackward0", promote=None)
def _einsum_diag(xp: Any, x: Any, *, src: str, dst: str, shape: tuple[int, ...]) -> Any:
    """Zeros of ``shape`` (letters ``dst``, with repeats) with x (letters ``src``, unique)
    written on the diagonal. VJP: einsum('dst->src') of g, i.e. the diagonal of g."""
    z = xp.zeros(shape, dtype=x.dtype)
    z[_diag_index(xp, src, dst, shape)] = x
    return z


@_einsum_diag.vjp
def _einsum_diag_vjp(ctx: Any, g: Any) -> Any:
    return (ns.einsum1(g, equation=f"{ctx.dst}->{ctx.src}"),)


def _normalize_equation(equation: str, operands: Sequence[Any]) -> str:
    """Explicit form (with '->'), spaces removed and '...' replaced by unused letters."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
        explicit = True
    else:
        lhs, out, explicit = eq, "", False
    subs = lhs.split(",")
    if len(subs) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(subs) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    used = set(eq) - set(".,->")
    free = [c for c in string.ascii_letters if c not in used]
    ell_nd = 0
    for s, x in zip(subs, operands):
        if "..." in s:
            ell_nd = max(ell_nd, x._data.ndim - (len(s) - 3))
    ell = "".join(free[:ell_nd])
    new = []
    for s, x in zip(subs, operands):
        if "..." in s:
            k = x._data.ndim - (len(s) - 3)
            s = s.replace("...", ell[ell_nd - k:] if k else "")
        if len(s) != x._data.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(s)}) "
                               "does not match the number of dimensions "
                               f"({x._data.ndim}) for operand {len(new)} and no ellipsis was "
                               "given")
        new.append(s)
    if explicit:
        out = out.replace("...", ell)
        seen_in = set("".join(new))
        for k, c in enumerate(out):
            if c not in seen_in:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
            if c in out[:k]:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   "the output")
    else:
        counts: dict[str, int] = {}
        for s in new:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    # Sizes must agree (size-1 dims broadcast).
    sizes: dict[str, int] = {}
    for i, (s, x) in enumerate(zip(new, operands)):
        for c, n in zip(s, x._data.shape):
            if c in sizes and sizes[c] != n and n != 1 and sizes[c] != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which "
                                   f"does not broadcast with previously seen size {sizes[c]}")
            if n != 1 or c not in sizes:
                sizes[c] = n
    return ",".join(new) + "->" + out


def einsum(equation: str, *operands: Any) -> Any:
    """Einstein summation, e.g. ``einsum('ij,jk->ik', a, b)``; implicit output, ellipses and
    repeated subscripts (diagonals) are supported. The forward is ``xp.einsum`` (with an
    optimized contraction path); the VJP of each operand is einsum again."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for i, x in enumerate(operands):
        if not hasattr(x, "_data"):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(x).__name__}")
    if len(operands) > _EINSUM_MAX:
        raise NotImplementedError(f"einsum(): at most {_EINSUM_MAX} operands are supported")
    eq = _normalize_equation(equation, operands)
    lhs, rhs = eq.split("->")
    if len(operands) == 2 and operands[0]._data.dtype != operands[1]._data.dtype:
        # torch contracts a pair that sums over a shared subscript with bmm, which refuses
        # mixed dtypes (an elementwise or outer product is a broadcast multiply: promoted).
        a, b = lhs.split(",")
        if (set(a) & set(b)) - set(rhs):
            raise RuntimeError(f"expected scalar type {_type_name(operands[0])} but found "
                               f"{_type_name(operands[1])}")
    # size-1 dims that broadcast against a larger size: expand them first (NumPy won't).
    lhs, _ = eq.split("->")
    sizes: dict[str, int] = {}
    for s, x in zip(lhs.split(","), operands):
        for c, n in zip(s, x._data.shape):
            if n != 1 or c not in sizes:
                sizes[c] = n
    ops = []
    for s, x in zip(lhs.split(","), operands):
        want = tuple(sizes[c] for c in s)
        if tuple(x._data.shape) != want and len(set(s)) == len(s):
            from chainrule.ops.shape import expand

            x = expand(x, want)
        ops.append(x)
    return apply_op(_EINSUM_OPS[len(ops)], tuple(ops), {"equation": eq})


# linalg primitives ---------------------------------------------------------------------------


def _square(name: str, a: Any) -> None:
    nd = a._data.ndim
    if nd < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    m, n = a._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {m} by "
                           f"{n} matrices")
    if a._data.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(a)}")


def _first_zero_pivot(a: Any) -> int:
    """1-based index of the first zero pivot of LU with partial pivoting (the number PyTorch's
    singular-matrix message reports), for the first singular matrix of a batch."""
    import numpy as np

    if not isinstance(a, np.ndarray) and hasattr(a, "get"):
        a = a.get()  # a device array: this error path runs on the host
    a = np.asarray(a, dtype=np.float64).reshape((-1,) + a.shape[-2:])
    for m in a:
        m = m.copy()
        n = m.shape[0]
        for k in range(n):
            p = k + int(np.argmax(np.abs(m[k:, k])))
            if m[p, k] == 0:
                return k + 1
            m[[k, p]] = m[[p, k]]
            m[k + 1:, k:] -= np.outer(m[k + 1:, k] / m[k, k], m[k, k:])
    return 1


@defop(name="linalg_inv", saves=("out",), promote=None, node_name="LinalgInvExBackward0")
def _inv(xp: Any, a: Any) -> Any:
    """A^-1 (batched). VJP: -A^-T g A^-T."""
    try:
        return xp.linalg.inv(a)
    except Exception as e:
        if type(e).__name__ != "LinAlgError":
            raise
        k = _first_zero_pivot(a)
        raise LinAlgError(f"linalg.inv: The diagonal element {k} is zero, the inversion could "
                          "not be completed because the input matrix is singular.") from None


@_inv.vjp
def _inv_vjp(ctx: Any, g: Any) -> Any:
    it = _mT(ctx.out)
    return (-ns.matmul(ns.matmul(it, g), it),)


def linalg_inv(A: Any) -> Any:
    """Inverse of a (batch of) square matrices."""
    _square("linalg.inv", A)
    return apply_op(_inv, (A,))


def inverse(input: Any) -> Any:
    """``torch.inverse``: same as ``torch.linalg.inv``."""
    _square("linalg.inv", input)
    return apply_op(_inv, (input,))


@defop(name="linalg_det", saves=("a", "out"), promote=None, node_name="LinalgDetBackward0",
       aux=True)
def _det(xp: Any, a: Any) -> Any:
    """det(A) (batched). VJP: g det(A) A^-T, i.e. g times the cofactor matrix of A.

    When some matrix is exactly singular (A^-1 does not exist) the cofactors are computed
    directly as signed determinants of the (n-1)x(n-1) minors, which the forward prepares as
    an index (``minors``) and a sign pattern (``cof_sign``)."""
    d = xp.linalg.det(a)
    aux: dict[str, Any] = {"minors": None, "cof_sign": None}
    n = a.shape[-1]
    if n and bool(xp.any(d == 0)):
        r = xp.arange(n - 1)
        rows = r[None, :] + (r[None, :] >= xp.arange(n)[:, None])  # rows[i] = range(n) - {i}
        aux["minors"] = (Ellipsis, rows[:, None, :, None], rows[None, :, None, :])
        sign = 1.0 - 2.0 * ((xp.arange(n)[:, None] + xp.arange(n)[None, :]) % 2)
        aux["cof_sign"] = sign.astype(a.dtype)
    return d, aux


@_det.vjp
def _det_vjp(ctx: Any, g: Any) -> Any:
    s = ns.unsqueeze(ns.unsqueeze(g, dim=g.ndim), dim=g.ndim + 1)
    if ctx.minors is not None:
        cof = ns.linalg_det(ns.index(ctx.a, index=ctx.minors)) * ctx.cof_sign
        return (s * cof,)
    s = ns.unsqueeze(ns.unsqueeze(g * ctx.out, dim=g.ndim), dim=g.ndim + 1)
    return (s * _mT(ns.linalg_inv(ctx.a)),)


def linalg_det(A: Any) -> Any:
    """Determinant of a (batch of) square matrices."""
    _square("linalg.det", A)
    return apply_op(_det, (A,))


def det(input: Any) -> Any:
    """``torch.det``: same as ``torch.linalg.det``."""
    return linalg_det(input)


def _slogdet_fwd(xp: Any, a: Any) -> Any:
    sign, logabs = xp.linalg.slogdet(a)
    return xp.asarray(sign), xp.asarray(logabs)


_slogdet = OpDef("linalg_slogdet", _slogdet_fwd, ("a",), saves=("a",), promote=None,
                 num_outputs=2, node_name="LinalgSlogdetBackward0")


@_slogdet.vjp
def _slogdet_vjp(ctx: Any, g: Any) -> Any:
    """(sign, log|det A|); VJP of log|det A|: g A^-T (the sign is piecewise constant)."""
    gl = g[1]
    s = ns.unsqueeze(ns.unsqueeze(gl, dim=gl.ndim), dim=gl.ndim + 1)
    return (s * _mT(ns.linalg_inv(ctx.a)),)


def linalg_slogdet(A: Any) -> Any:
    """``(sign, logabsdet)`` of a (batch of) square matrices."""
    _square("linalg.slogdet", A)
    sign, logabs = apply_op(_slogdet, (A,))
    return slogdet_type(sign, logabs)


def slogdet(input: Any) -> Any:
    """``torch.slogdet``: same as ``torch.linalg.slogdet``."""
    return linalg_slogdet(input)


def logdet(input: Any) -> Any:
    """log det(input): log|det| where det > 0, NaN where det < 0, -inf where det == 0."""
    from chainrule.ops.binary import where

    sign, logabs = linalg_slogdet(input)
    return where(sign < 0, float("nan"), logabs)


class slogdet_type(tuple):  # noqa: N801  (torch.return_types.slogdet)
    """``(sign, logabsdet)`` with named fields."""

    __slots__ = ()

    def __new__(cls, sign: Any, logabsdet: Any) -> Any:
        return tuple.__new__(cls, (sign, logabsdet))

    @property
    def sign(self) -> Any:
        return self[0]

    @property
    def logabsdet(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.linalg_slogdet(\nsign={self[0]!r},\nlogabsdet={self[1]!r})"


def _svd_fwd(xp: Any, a: Any, *, full_matrices: bool) -> Any:
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    # The factors are kept as aux (constants); under create_graph the VJP recomputes them from
    # the saved input so that they are differentiable (a saved output of a multi-output node
    # would come back as output 0; see the report on SavedTensor.unpack).
    return (u, s, vh), {"eye": xp.eye(s.shape[-1], dtype=a.dtype), "u": u, "s": s, "vh": vh}


_svd = OpDef("linalg_svd", _svd_fwd, ("a",), saves=("a",), promote=None,
             num_outputs=3, aux=True, materialize_grads=False, node_name="LinalgSvdBackward0")


@_svd.vjp
def _svd_vjp(ctx: Any, g: Any) -> Any:
    """A = U diag(S) Vh (reduced; with ``full_matrices`` only the first k = min(m, n) singular
    vectors carry gradient, as in PyTorch). VJP (PyTorch's svd_backward, real case), with
    skew(X) = X - X^T and E_ij = S_j^2 - S_i^2 (1 on the diagonal):
    core = (skew(U^T gU) S_j + S_i skew(Vh gVh^T)) / E + diag(gS), then
    gA = U core Vh plus, for m > n, (I - U U^T) gU S^-1 Vh, and for m < n, U S^-1 gVh (I - V Vh).
    Unstable (as in PyTorch) when singular values repeat and gU or gVh is non-zero."""
    gU, gS, gVh = g
    U, S, Vh = ctx.u, ctx.s, ctx.vh
    if hasattr(U, "grad_fn"):  # create_graph: differentiable factors
        U, S, Vh = ns.linalg_svd(ctx.a, full_matrices=ctx.full_matrices)
    k = S.shape[-1]
    m, n = U.shape[-2], Vh.shape[-1]
    if ctx.full_matrices:
        if U.shape[-1] != k:
            U = ns.index(U, index=(Ellipsis, slice(0, k)))
            gU = None if gU is None else ns.index(gU, index=(Ellipsis, slice(0, k)))
        if Vh.shape[-2] != k:
            Vh = ns.index(Vh, index=(Ellipsis, slice(0, k), slice(None)))
            gVh = None if gVh is None else ns.index(gVh, index=(Ellipsis, slice(0, k),
                                                                  slice(None)))
    s_row = ns.unsqueeze(S, dim=S.ndim - 1)  # S_j, shape (..., 1, k)
    s_col = ns.unsqueeze(S, dim=S.ndim)  # S_i, shape (..., k, 1)
    if gU is None and gVh is None:
        if gS is None:
            return (None,)
        return (ns.matmul(U * ns.unsqueeze(gS, dim=gS.ndim - 1), Vh),)
    s2 = S * S
    e = ns.unsqueeze(s2, dim=s2.ndim - 1) - ns.unsqueeze(s2, dim=s2.ndim) + ctx.eye
    core = None
    if gU is not None:
        x = ns.matmul(_mT(U), gU)
        core = (x - _mT(x)) * s_row / e
    if gVh is not None:
        y = ns.matmul(Vh, _mT(gVh))
        t = s_col * (y - _mT(y)) / e
        core = t if core is None else core + t
    if gS is not None:
        core = core + ctx.eye * ns.unsqueeze(gS, dim=gS.ndim - 1)
    if m > n and gU is not None:
        ga = ns.matmul(U, core)
        gus = gU / s_row
        ga = ga + gus - ns.matmul(U, ns.matmul(_mT(U), gus))
        return (ns.matmul(ga, Vh),)
    if m < n and gVh is not None:
        ga = ns.matmul(core, Vh)
        gvs = gVh / s_col
        ga = ga + gvs - ns.matmul(ns.matmul(gvs, _mT(Vh)), Vh)
        return (ns.matmul(U, ga),)
    return (ns.matmul(U, ns.matmul(core, Vh)),)


class svd_type(tuple):  # noqa: N801  (torch.return_types.linalg_svd)
    """``(U, S, Vh)`` with named fields."""

    __slots__ = ()

    def __new__(cls, U: Any, S: Any, Vh: Any) -> Any:
        return tuple.__new__(cls, (U, S, Vh))

    @property
    def U(self) -> Any:  # noqa: N802
        return self[0]

    @property
    def S(self) -> Any:  # noqa: N802
        return self[1]

    @property
    def Vh(self) -> Any:  # noqa: N802
        return self[2]

    def __repr__(self) -> str:
        return (f"torch.return_types.linalg_svd(\nU={self[0]!r},\nS={self[1]!r},\n"
                f"Vh={self[2]!r})")


def linalg_svd(A: Any, full_matrices: bool = True) -> Any:
    """Singular value decomposition ``(U, S, Vh)``, S descending."""
    if A._data.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    if A._data.dtype.kind not in "fc":
        raise RuntimeError("linalg.svd: Expected a floating point or complex tensor as input. "
                           f"Got {_type_name(A)}")
    u, s, vh = apply_op(_svd, (A,), {"full_matrices": bool(full_matrices)})
    return svd_type(u, s, vh)


def linalg_svdvals(A: Any) -> Any:
    """Singular values of A, descending (gradient U diag(g) Vh)."""
    return linalg_svd(A, full_matrices=False)[1]


@defop(name="linalg_solve", saves=("a", "out"), promote="same",
       node_name="LinalgSolveExBackward0")
def _solve(xp: Any, a: Any, b: Any, *, vector: bool) -> Any:
    """X with A X = B (B a batch of vectors when ``vector``).
    VJP: gB = solve(A^T, g); gA = -gB X^T."""
    try:
        if vector:
            return xp.linalg.solve(a, b[..., None])[..., 0]
        return xp.linalg.solve(a, xp.broadcast_to(b, a.shape[:-2] + b.shape[-2:])
                               if b.ndim < a.ndim else b)
    except Exception as e:
        if type(e).__name__ != "LinAlgError":
            raise
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is "
                          "singular.") from None


@_solve.vjp
def _solve_vjp(ctx: Any, g: Any) -> Any:
    a, x = ctx.a, ctx.out
    gb = ns.linalg_solve(_mT(a), g, vector=ctx.vector)
    ga = None
    if ctx.needs_input_grad[0]:
        if ctx.vector:
            ga = -ns.matmul(ns.unsqueeze(gb, dim=gb.ndim), ns.unsqueeze(x, dim=x.ndim - 1))
        else:
            ga = -ns.matmul(gb, _mT(x))
    return ga, gb if ctx.needs_input_grad[1] else None


def linalg_solve(A: Any, B: Any, *, left: bool = True) -> Any:
    """The solution X of A X = B (``left=False``: X A = B). B is a (batch of) vector(s) when it
    is 1-D or has A's shape without the last dim, as in PyTorch."""
    _square("linalg.solve", A)
    if not left:
        from chainrule.ops.shape import transpose

        return transpose(linalg_solve(transpose(A, -2, -1), transpose(B, -2, -1)), -2, -1)
    na, nb = A._data.ndim, B._data.ndim
    vector = nb == 1 or (nb == na - 1 and tuple(B._data.shape) == tuple(A._data.shape[:-1]))
    n = A._data.shape[-1]
    k = B._data.shape[-1] if vector else B._data.shape[-2] if nb >= 2 else -1
    if k != n:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({_shape_str(A._data.shape)} and "
            f"{_shape_str(B._data.shape)})")
    if vector and nb == 1 and na > 2:
        from chainrule.ops.shape import expand

        B = expand(B, tuple(A._data.shape[:-1]))
    elif not vector and nb < na:
        from chainrule.ops.shape import expand

        B = expand(B, tuple(A._data.shape[:-2]) + tuple(B._data.shape[-2:]))
    elif not vector and na < nb:
        from chainrule.ops.shape import expand

        A = expand(A, tuple(B._data.shape[:-2]) + tuple(A._data.shape[-2:]))
    return apply_op(_solve, (A, B), {"vector": vector})
