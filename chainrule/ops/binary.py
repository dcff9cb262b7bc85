"""Elementwise ops of two inputs, as a table. VJPs are written as if nothing broadcasts; the
engine sums each gradient back to its input's shape."""

from __future__ import annotations

from typing import Any

from chainrule.ops._registry import apply_op, binary, ns

__all__ = ["add", "sub", "rsub", "mul", "div", "rdiv", "pow", "rpow",
           "eq", "ne", "lt", "le", "gt", "ge", "where",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"]

_add = binary("add", lambda xp, a, b: a + b, vjp=(lambda ctx, g: g, lambda ctx, g: g),
              doc="a + b. VJP: g to both.")
_sub = binary("sub", lambda xp, a, b: a - b, vjp=(lambda ctx, g: g, lambda ctx, g: -g),
              doc="a - b. VJP: g, -g.")
_rsub = binary("rsub", lambda xp, a, b: b - a, vjp=(lambda ctx, g: -g, lambda ctx, g: g),
               doc="b - a (for ``scalar - tensor``). VJP: -g, g.")
mul = binary("mul", lambda xp, a, b: a * b, saves=("a", "b"),
             vjp=(lambda ctx, g: g * ctx.b, lambda ctx, g: g * ctx.a),
             doc="a * b. VJP: g b, g a.")
_div = binary("div", lambda xp, a, b: a / b, saves=("b", "out"), promote="float",
              vjp=(lambda ctx, g: g / ctx.b, lambda ctx, g: -g * ctx.out / ctx.b),
              doc="a / b (true division). VJP: g / b, -g a / b**2.")
_rdiv = binary("rdiv", lambda xp, a, b: b / a, saves=("a", "out"), promote="float",
               vjp=(lambda ctx, g: -g * ctx.out / ctx.a, None), node_name="DivBackward0",
               doc="b / a (for ``scalar / tensor``). VJP: -g b / a**2.")


def _pow_base_vjp(ctx: Any, g: Any) -> Any:
    b = ctx.b
    if isinstance(b, (int, float)):
        if b == 0:
            return g * 0
        return g * b * ns.pow(ctx.a, b - 1)
    return g * b * ns.pow(ctx.a, b - 1)


def _pow_exp_vjp(ctx: Any, g: Any) -> Any:
    # d(a**b)/db = a**b log(a); PyTorch defines it as 0 where a == 0 and b >= 0.
    a = ctx.a
    if isinstance(a, (int, float)):
        import math

        return g * ctx.out * (math.log(a) if a > 0 else float("nan") if a < 0 else 0.0)
    mask = (a == 0) & (ctx.b >= 0)
    return ns.where(mask, g * 0, g * ctx.out * ns.log(a))


_pow = binary("pow", lambda xp, a, b: xp.power(a, b), saves=("a", "b", "out"),
              vjp=(_pow_base_vjp, _pow_exp_vjp),
              doc="a ** b. VJP: g b a**(b-1); g a**b log(a) (0 where a == 0, b >= 0).")


def _rpow_vjp(ctx: Any, g: Any) -> Any:
    import math

    b = ctx.b
    return g * ctx.out * (math.log(b) if b > 0 else float("nan") if b < 0 else 0.0)


_rpow = binary("rpow", lambda xp, a, b: xp.power(b, a), saves=("b", "out"),
               vjp=(_rpow_vjp, None), node_name="PowBackward2",
               doc="b ** a for a scalar base b. VJP: g b**a log(b).")


def _div_rounded_fwd(xp: Any, a: Any, b: Any, *, rounding_mode: str) -> Any:
    if rounding_mode == "floor":
        return xp.floor_divide(a, b)
    q = a / b
    if getattr(q, "dtype", None) is not None and getattr(a, "dtype", q.dtype).kind in "iu":
        return xp.trunc(q).astype(a.dtype)
    return xp.trunc(q)


from chainrule.ops._registry import OpDef  # noqa: E402

# Rounded division is piecewise constant: its gradient is zero, as in PyTorch.
_div_rounded = OpDef("div_rounded", _div_rounded_fwd, ("a", "b"), promote="same",
                     vjps=(lambda ctx, g: g * 0, lambda ctx, g: g * 0),
                     node_name="DivBackward2")


def _cmp(name: str, f: Any) -> Any:
    return binary(name, f, differentiable=False, doc=f"Elementwise {name}; a bool tensor.")


eq = _cmp("eq", lambda xp, a, b: xp.equal(a, b))
ne = _cmp("ne", lambda xp, a, b: xp.not_equal(a, b))
lt = _cmp("lt", lambda xp, a, b: xp.less(a, b))
le = _cmp("le", lambda xp, a, b: xp.less_equal(a, b))
gt = _cmp("gt", lambda xp, a, b: xp.greater(a, b))
ge = _cmp("ge", lambda xp, a, b: xp.greater_equal(a, b))


def add(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """input + alpha * other, broadcasting. VJP: g, alpha g."""
    if alpha != 1:
        other = other * alpha
    if not hasattr(input, "_data"):
        return _add(other, input)
    return _add(input, other)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """input - alpha * other, broadcasting. VJP: g, -alpha g."""
    if alpha != 1:
        other = other * alpha
    if not hasattr(input, "_data"):
        return _rsub(other, input)
    return _sub(input, other)


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """other - alpha * input (PyTorch's ``rsub``)."""
    if alpha != 1:
        input = input * alpha
    return _rsub(input, other)


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Any:
    """input / other. With ``rounding_mode`` 'trunc' or 'floor', the rounded quotient (its
    gradient is zero). Integer inputs give a float result unless rounding."""
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                f"'{rounding_mode}'"
            )
        return apply_op(_div_rounded, (input, other), {"rounding_mode": rounding_mode})
    if not hasattr(input, "_data"):
        return _rdiv(other, input)
    return _div(input, other)


def rdiv(input: Any, other: Any) -> Any:
    """other / input."""
    return _rdiv(input, other)


def pow(input: Any, exponent: Any) -> Any:
    """input ** exponent (either may be a scalar). VJP: see ``_pow``."""
    if not hasattr(input, "_data"):
        return _rpow(exponent, input)
    return _pow(input, exponent)


def rpow(input: Any, other: Any) -> Any:
    """other ** input, for a scalar ``other``."""
    if hasattr(other, "_data"):
        return _pow(other, input)
    return _rpow(input, other)


def _where_fwd(xp: Any, c: Any, a: Any, b: Any) -> Any:
    return xp.where(c, a, b)


def _where_vjp(ctx: Any, g: Any) -> Any:
    z = g * 0
    c = ctx.c
    return (None, ns.where(c, g, z) if ctx.needs_input_grad[1] else None,
            ns.where(c, z, g) if ctx.needs_input_grad[2] else None)


_where = OpDef("where", _where_fwd, ("c", "a", "b"), saves=("c",), promote=None)
_where.vjp(_where_vjp)


def where(condition: Any, input: Any, other: Any) -> Any:
    """Elementwise ``input if condition else other``. VJP: g routed by the condition."""
    from chainrule._dtype import result_type

    if not hasattr(condition, "_data"):
        raise TypeError("where(): argument 'condition' must be Tensor")
    rt = result_type(input, other)
    if hasattr(input, "_data") and input._data.dtype != rt.np:
        input = input.to(rt)
    if hasattr(other, "_data") and other._data.dtype != rt.np:
        other = other.to(rt)
    if not hasattr(input, "_data") and not hasattr(other, "_data"):
        from chainrule._creation import tensor

        input = tensor(input, dtype=rt)
    if condition._data.dtype.kind != "b":
        condition = condition.bool()
    return apply_op(_where, (condition, input, other))


def _bitwise(name: str, f: Any) -> Any:
    return binary(name, f, differentiable=False, doc=f"Elementwise {name} of integer or bool tensors.")


bitwise_and = _bitwise("bitwise_and", lambda xp, a, b: xp.bitwise_and(a, b))
bitwise_or = _bitwise("bitwise_or", lambda xp, a, b: xp.bitwise_or(a, b))
bitwise_xor = _bitwise("bitwise_xor", lambda xp, a, b: xp.bitwise_xor(a, b))


def _not_fwd(xp: Any, x: Any) -> Any:
    return xp.logical_not(x) if x.dtype.kind == "b" else xp.invert(x)


_bitwise_not = OpDef("bitwise_not", _not_fwd, ("x",), differentiable=False, promote=None)


def bitwise_not(input: Any) -> Any:
    """Bitwise NOT (logical NOT for bool tensors)."""
    return apply_op(_bitwise_not, (input,))
