"""einsum, with equations normalized to explicit form."""

from __future__ import annotations

import string
from typing import Any, Sequence

from chainrule._autocast_state import state as _ac
from chainrule.ops import _autocast
from chainrule.ops._registry import OpDef, apply_op, defop, ns
from chainrule.ops.linalg._common import _type_name

__all__ = ["einsum"]


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
    _op = OpDef(
        "einsum" if _n == 2 else f"einsum{_n}",
        _einsum_fwd,
        tuple(f"x{i}" for i in range(_n)),
        saves={f"x{i}": tuple(f"x{j}" for j in range(_n) if j != i) for i in range(_n)},
        promote="same",
        node_name="EinsumBackward0",
    )
    _op.vjp(_einsum_vjp)
    _EINSUM_OPS[_n] = _op


def _einsum_apply(xs: Sequence[Any], eq: str) -> Any:
    return getattr(ns, "einsum" if len(xs) == 2 else f"einsum{len(xs)}")(*xs, equation=eq)


def _diag_index(xp: Any, src: str, dst: str, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The advanced index into an array of ``shape`` (letters ``dst``) selecting the entries
    where repeated letters agree, laid out along the letters of ``src``."""
    sizes = dict(zip(dst, shape))
    n = len(src)
    grids = {c: xp.arange(sizes[c]).reshape((-1,) + (1,) * (n - 1 - k)) for k, c in enumerate(src)}
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
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(subs) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
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
            s = s.replace("...", ell[ell_nd - k :] if k else "")
        if len(s) != x._data.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(s)}) "
                "does not match the number of dimensions "
                f"({x._data.ndim}) for operand {len(new)} and no ellipsis was "
                "given"
            )
        new.append(s)
    out = _explicit_output(out, new, ell) if explicit else _implicit_output(new, ell)
    _check_sizes(new, operands)
    return ",".join(new) + "->" + out


def _explicit_output(out: str, subs: list[str], ell: str) -> str:
    """The given output subscripts (ellipsis expanded), each used by an input, once."""
    out = out.replace("...", ell)
    seen_in = set("".join(subs))
    for k, c in enumerate(out):
        if c not in seen_in:
            raise RuntimeError(
                f"einsum(): output subscript {c} does not appear in the "
                "equation for any input operand"
            )
        if c in out[:k]:
            raise RuntimeError(
                f"einsum(): output subscript {c} appears more than once in the output"
            )
    return out


def _implicit_output(subs: list[str], ell: str) -> str:
    """The implicit output: the ellipsis dims, then the subscripts used once, sorted."""
    counts: dict[str, int] = {}
    for s in subs:
        for c in s:
            counts[c] = counts.get(c, 0) + 1
    return ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))


def _check_sizes(subs: list[str], operands: Sequence[Any]) -> None:
    """Each subscript's sizes agree across operands (size-1 dims broadcast)."""
    sizes: dict[str, int] = {}
    for i, (s, x) in enumerate(zip(subs, operands)):
        for c, n in zip(s, x._data.shape):
            if c in sizes and sizes[c] != n and n != 1 and sizes[c] != 1:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {n} for operand {i} which "
                    f"does not broadcast with previously seen size {sizes[c]}"
                )
            if n != 1 or c not in sizes:
                sizes[c] = n


def _refuse_bool_contraction(lhs: str, rhs: str, operands: tuple[Any, ...]) -> None:
    """PyTorch contracts pairs with bmm, which has no Bool kernel: a subscript shared by two
    operands and summed over makes one (unless some operand is empty: no kernel runs)."""
    if len(operands) < 2 or not any(x._data.dtype.kind == "b" for x in operands):
        return
    if not all(x._data.size for x in operands):
        return
    terms = lhs.split(",")
    shared = {c for i, t in enumerate(terms) for c in t if any(c in u for u in terms[i + 1 :])}
    if shared - set(rhs):
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")


def einsum(equation: str, *operands: Any) -> Any:
    """Einstein summation, e.g. ``einsum('ij,jk->ik', a, b)``; implicit output, ellipses and
    repeated subscripts (diagonals) are supported. The forward is ``xp.einsum`` (with an
    optimized contraction path); the VJP of each operand is einsum again."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    if _ac.cpu:  # PyTorch's einsum is a bmm: Note [autocast] in _autocast_state.py
        operands = _autocast.lower(*operands)
    for i, x in enumerate(operands):
        if not hasattr(x, "_data"):
            raise TypeError(
                f"expected Tensor as element {i} in argument 1, but got {type(x).__name__}"
            )
    if len(operands) > _EINSUM_MAX:
        raise NotImplementedError(f"einsum(): at most {_EINSUM_MAX} operands are supported")
    eq = _normalize_equation(equation, operands)
    lhs, rhs = eq.split("->")
    if len(operands) == 2 and operands[0]._data.dtype != operands[1]._data.dtype:
        # torch contracts a pair that sums over a shared subscript with bmm, which refuses
        # mixed dtypes (an elementwise or outer product is a broadcast multiply: promoted).
        a, b = lhs.split(",")
        if (set(a) & set(b)) - set(rhs):
            raise RuntimeError(
                f"expected scalar type {_type_name(operands[0])} but found "
                f"{_type_name(operands[1])}"
            )
    _refuse_bool_contraction(lhs, rhs, operands)
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
