"""Reductions and scans. ``dim`` is normalized by the public wrapper into a sorted tuple of
non-negative dims, or None for all dims (see ops/_broadcast.py ``normalize_dims``).

Every VJP is written with ``ns`` (Note [ns]) so that double backward works.

Long because it holds the whole reduction family: one place per op (ARCHITECTURE.md section 5).
"""

from __future__ import annotations

import builtins
import math
from typing import Any

from chainrule.ops._broadcast import normalize_dims, reduced_count, restore_reduced, wrap_dim
from chainrule.ops._registry import OpDef, apply_op, defop, ns

__all__ = [
    "sum", "mean", "sum_to_size", "prod", "max", "min", "amax", "amin", "argmax", "argmin",
    "var", "std", "var_mean", "std_mean", "norm", "logsumexp", "cumsum", "cumprod", "all",
    "any", "count_nonzero",
]


def _reduce_name(base: str) -> Any:
    return lambda p: f"{base}Backward{0 if p.get('dim') is None else 1}"


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "_data")


def _dtype_name(t: Any) -> str:
    """PyTorch's legacy scalar type name (Long, Float...), as its error messages spell it."""
    from chainrule._tensor import _type_name

    return _type_name(t._data.dtype).replace("Tensor", "")


def _cast(input: Any, dtype: Any) -> Any:
    """``input`` converted to ``dtype`` (the ``dtype=`` argument of reductions), if given."""
    if dtype is None:
        return input
    return input.to(dtype)


def _out_dtype(out: Any, dtype: Any) -> Any:
    """An integer result (which the op widened to int64) cast to an explicit ``dtype=``."""
    if dtype is not None and out.dtype != dtype:
        return out.to(dtype)
    return out


def _keep(x: Any, shape: tuple[int, ...], dims: Any, keepdim: bool) -> Any:
    """A reduction's output reshaped with its reduced dims kept (size 1), for broadcasting."""
    if keepdim or len(shape) == 0:
        return x
    kept = tuple(1 if (dims is None or i in dims) else s for i, s in enumerate(shape))
    return ns.reshape(x, shape=kept)


def _dims(dim: Any, ndim: int) -> Any:
    """Normalized reduction dims; a 0-d input accepts dim 0 / -1 and reduces over nothing."""
    d = normalize_dims(dim, ndim)
    return None if ndim == 0 else d


def _check_nonempty(name: str, input: Any, dims: Any) -> None:
    """PyTorch's errors for max/min/amax/argmax-like reductions over an empty slice."""
    shape = input._data.shape
    if dims is None:
        if input._data.size == 0:
            if name in ("argmax", "argmin"):
                raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                                 "input.numel() == 0.")
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.")
        return
    for d in dims:
        if len(shape) and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


# sum / mean ----------------------------------------------------------------------------------


@defop(name="sum", name_fn=_reduce_name("Sum"))
def _sum(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
    """Sum of x over ``dim``. VJP: g spread back over the reduced axes."""
    r = xp.sum(x, axis=dim, keepdims=keepdim)
    if x.dtype.kind in "biu":
        r = r.astype("int64", copy=False)
    return r


@_sum.vjp
def _sum_vjp(ctx: Any, g: Any) -> Any:
    return (restore_reduced(g, ctx.input_shapes[0], ctx.dim, ctx.keepdim),)


@defop(name="mean", name_fn=_reduce_name("Mean"))
def _mean(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
    """Mean of x over ``dim``. VJP: g / n spread back over the reduced axes."""
    if reduced_count(x.shape, dim) == 0:
        with _errstate(xp):  # the mean of nothing is NaN, silently, as in PyTorch
            return xp.sum(x, axis=dim, keepdims=keepdim) / x.dtype.type(0)
    return xp.mean(x, axis=dim, keepdims=keepdim, dtype=x.dtype)


@_mean.vjp
def _mean_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    n = reduced_count(shape, ctx.dim)
    return (restore_reduced(g, shape, ctx.dim, ctx.keepdim) / builtins.max(n, 1) if n else
            restore_reduced(g, shape, ctx.dim, ctx.keepdim),)


def sum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Sum over ``dim`` (int, tuple, or None for all). Integer and bool inputs sum to int64."""
    input = _cast(input, dtype)
    out = apply_op(_sum, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})
    return _out_dtype(out, dtype)


def mean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Arithmetic mean over ``dim``; needs a floating dtype (or ``dtype=``), as in PyTorch."""
    input = _cast(input, dtype)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_dtype_name(input)}"
        )
    return apply_op(_mean, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


@defop(name="sum_to_size", node_name="SumBackward1")
def _sum_to_size(xp: Any, x: Any, *, shape: tuple[int, ...]) -> Any:
    """Sum a broadcast array back down to ``shape``. VJP: expand g to the input shape."""
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1
    )
    if axes:
        x = xp.sum(x, axis=axes, keepdims=True)
    return x.reshape(shape)


@_sum_to_size.vjp
def _sum_to_size_vjp(ctx: Any, g: Any) -> Any:
    return (ns.expand(g, shape=ctx.input_shapes[0]),)


def sum_to_size(input: Any, shape: Any) -> Any:
    """Sum ``input`` to ``shape``, which it must be expandable from (used by broadcast VJPs)."""
    from chainrule.autograd.engine import _expandable

    shape = tuple(shape)
    if not _expandable(shape, tuple(input.shape)):
        raise RuntimeError(f"size {{{', '.join(map(str, shape))}}} is not expandable to size "
                           f"{{{', '.join(map(str, input.shape))}}}.")
    if tuple(input.shape) == shape:
        return input
    return apply_op(_sum_to_size, (input,), {"shape": shape})


# prod ----------------------------------------------------------------------------------------


@defop(name="prod", saves=("x", "out"), name_fn=_reduce_name("Prod"))
def _prod(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
    """Product of x over ``dim``.

    VJP: g * prod_{j != i} x_j. Without zeros that is g * out / x. With zeros it is built from
    z = (x == 0), the count c of zeros per slice, the product P of the non-zero entries and
    the product Z of the zero entries: prod_{j != i} x_j = T_i * P / xn_i, where xn is x with
    zeros replaced by 1 and T_i is the product of the zeros other than x_i (Z at a non-zero
    position; 1 if c == 1, the other zero if c == 2, 0 if c >= 3 at a zero position). Written
    this way the formula is exact to second order, so double backward is right at zeros too.
    """
    r = xp.prod(x, axis=dim, keepdims=keepdim)
    if x.dtype.kind in "biu":
        r = r.astype("int64", copy=False)
    return r


@_prod.vjp
def _prod_vjp(ctx: Any, g: Any) -> Any:
    x = ctx.x
    shape = ctx.input_shapes[0]
    dims = ctx.dim
    ge = restore_reduced(g, shape, dims, ctx.keepdim)
    z = ns.eq(x, 0.0)
    if not builtins.bool(ns.sum(z)):
        return (ge * _keep(ctx.out, shape, dims, ctx.keepdim) / x,)
    c = ns.sum(z, dim=dims, keepdim=True)
    xn = ns.where(z, 1.0, x)
    xz = ns.where(z, x, 1.0)
    pn = ns.prod(xn, dim=dims, keepdim=True)
    pz = ns.prod(xz, dim=dims, keepdim=True)
    sz = ns.sum(ns.where(z, x, 0.0), dim=dims, keepdim=True)
    at_zero = ns.where(ns.eq(c, 1), 1.0, ns.where(ns.eq(c, 2), sz - x, 0.0))
    t = ns.where(z, at_zero, pz)
    return (ge * t * pn / xn,)


def prod(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Product over one ``dim`` (or all elements). Integer and bool inputs give int64."""
    if dim is not None and not isinstance(dim, int):
        raise TypeError(
            f"prod() received an invalid combination of arguments - got (Tensor, "
            f"{type(dim).__name__}), but expected one of:\n * (Tensor input, *, torch.dtype dtype"
            " = None)\n * (Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = "
            "None, Tensor out = None)\n")
    input = _cast(input, dtype)
    out = apply_op(_prod, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})
    return _out_dtype(out, dtype)


# max / min / amax / amin ---------------------------------------------------------------------


def _extreme_fwd(kind: str) -> Any:
    def fwd(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
        """Max (min) over ``dim``. VJP: g split evenly among the tied extremes."""
        f = xp.max if kind == "max" else xp.min
        return f(x, axis=dim, keepdims=keepdim)

    return fwd


def _evenly_vjp(ctx: Any, g: Any) -> Any:
    """Gradient of amax/amin (and full max/min): g split evenly among the tied extremes."""
    shape = ctx.input_shapes[0]
    x = ctx.x
    out = _keep(ctx.out, shape, ctx.dim, ctx.keepdim)
    mask = ns.eq(x, out)
    count = ns.sum(mask, dim=ctx.dim, keepdim=True)
    ge = restore_reduced(g, shape, ctx.dim, ctx.keepdim)
    return (ns.where(mask, ge, 0.0) / count,)


def _extreme_op(name: str, kind: str, node: str) -> OpDef:
    op = OpDef(name, _extreme_fwd(kind), ("x",), saves=("x", "out"), promote=None,
               node_name=node)
    op.vjp(_evenly_vjp)
    return op


_amax = _extreme_op("amax", "max", "AmaxBackward0")
_amin = _extreme_op("amin", "min", "AminBackward0")
_max_all = _extreme_op("max", "max", "MaxBackward1")
_min_all = _extreme_op("min", "min", "MinBackward1")


def _evenly_all_vjp(ctx: Any, g: Any) -> Any:
    """Gradient of full max/min: g split evenly among the elements equal to the result, or,
    when the result is NaN, among the NaNs (PyTorch's rule: one-hot at a single NaN; amax and
    amin, whose mask has no NaN case, give NaN everywhere there, as in PyTorch)."""
    x, out = ctx.x, ctx.out
    mask = ns.eq(x, out) | (ns.isnan(x) & ns.isnan(out))
    count = ns.sum(mask, dim=None, keepdim=False)
    return (ns.where(mask, g, 0.0) / count,)


_max_all.vjp(_evenly_all_vjp)
_min_all.vjp(_evenly_all_vjp)


class _ReturnType(tuple):
    """A (values, indices) pair like ``torch.return_types.max``."""

    __slots__ = ()
    _name = ""

    def __new__(cls, values: Any, indices: Any) -> Any:
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self) -> Any:
        return self[0]

    @property
    def indices(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"

    def __reduce__(self) -> Any:
        return (type(self), (self[0], self[1]))


def _return_type(name: str) -> type:
    return type(name, (_ReturnType,), {"__slots__": (), "_name": name})


class _MinMax(tuple):
    """A (min, max) pair like ``torch.return_types.aminmax``."""

    __slots__ = ()

    def __new__(cls, min: Any, max: Any) -> Any:
        return tuple.__new__(cls, (min, max))

    @property
    def min(self) -> Any:
        return self[0]

    @property
    def max(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"


_MinMax.__name__ = _MinMax.__qualname__ = "aminmax"


class return_types:  # noqa: N801  (mirrors the torch.return_types namespace)
    """Namedtuple-like results of reductions that return values and indices."""

    max = _return_type("max")
    min = _return_type("min")
    # The sorting family's (ops/sorting.py).
    sort = _return_type("sort")
    topk = _return_type("topk")
    kthvalue = _return_type("kthvalue")
    median = _return_type("median")
    nanmedian = _return_type("nanmedian")
    mode = _return_type("mode")
    cummax = _return_type("cummax")
    cummin = _return_type("cummin")
    aminmax = _MinMax  # ops/composite.py


def _select_fwd(kind: str) -> Any:
    def fwd(xp: Any, x: Any, *, dim: int, keepdim: bool = False) -> Any:
        if x.ndim == 0:
            return (x.copy(), xp.zeros((), dtype="int64")), {"where": (Ellipsis,)}
        arg = xp.argmax if kind == "max" else xp.argmin
        idx = arg(x, axis=dim, keepdims=True)
        # The advanced index of the selected elements, for the VJP's scatter (index_grad).
        where = tuple(
            idx if i == dim else xp.arange(s).reshape((-1,) + (1,) * (x.ndim - 1 - i))
            for i, s in enumerate(x.shape)
        )
        vals = x[where]
        if not keepdim:
            vals = xp.squeeze(vals, axis=dim)
            idx = xp.squeeze(idx, axis=dim)
        return (vals, idx.astype("int64", copy=False)), {"where": where}

    return fwd


def _select_vjp(ctx: Any, g: Any) -> Any:
    """Gradient of max/min along a dim: g scattered to the selected index (one per slice)."""
    g = g[0]
    shape = ctx.input_shapes[0]
    if len(shape):
        g = _keep(g, shape, (ctx.dim,), ctx.keepdim)
    return (ns.index_grad(g, shape=shape, index=ctx.where),)


def _select_op(name: str, kind: str, node: str) -> OpDef:
    op = OpDef(name, _select_fwd(kind), ("x",), promote=None, node_name=node, num_outputs=2,
               aux=True)
    op.vjp(_select_vjp)
    return op


_max_dim = _select_op("max_dim", "max", "MaxBackward0")
_min_dim = _select_op("min_dim", "min", "MinBackward0")


def _extreme(kind: str, input: Any, dim: Any, keepdim: Any, other: Any) -> Any:
    if other is not None or (_is_tensor(dim) and keepdim is False):
        from chainrule.ops.binary import maximum, minimum

        other = dim if other is None else other
        return (maximum if kind == "max" else minimum)(input, other)
    if dim is None:
        _check_nonempty(kind, input, None)
        return apply_op(_max_all if kind == "max" else _min_all, (input,),
                        {"dim": None, "keepdim": False})
    d = wrap_dim(int(dim), input.ndim)
    _check_nonempty(kind, input, (d,))
    op = _max_dim if kind == "max" else _min_dim
    v, i = apply_op(op, (input,), {"dim": d, "keepdim": builtins.bool(keepdim)})
    return getattr(return_types, kind)(v, i)


def max(input: Any, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    """``max(input)``: the largest element (0-d; ties share the gradient evenly).
    ``max(input, dim, keepdim=False)``: ``(values, indices)`` along ``dim``; the gradient goes
    to the selected (first) index. ``max(input, other)``: elementwise ``maximum``."""
    return _extreme("max", input, dim, keepdim, other)


def min(input: Any, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    """``min(input)``, ``min(input, dim, keepdim=False)`` or ``min(input, other)``; see max."""
    return _extreme("min", input, dim, keepdim, other)


def _amaxmin(kind: str, input: Any, dim: Any, keepdim: bool) -> Any:
    dims = _dims(dim, input.ndim)
    _check_nonempty("a" + kind, input, dims)
    return apply_op(_amax if kind == "max" else _amin, (input,), {"dim": dims, "keepdim": keepdim})


def amax(input: Any, dim: Any = (), keepdim: bool = False) -> Any:
    """Max over ``dim`` (``()`` = all dims). VJP: g split evenly among tied maxima."""
    return _amaxmin("max", input, dim, keepdim)


def amin(input: Any, dim: Any = (), keepdim: bool = False) -> Any:
    """Min over ``dim`` (``()`` = all dims). VJP: g split evenly among tied minima."""
    return _amaxmin("min", input, dim, keepdim)


def _arg_fwd(kind: str) -> Any:
    def fwd(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
        f = xp.argmax if kind == "max" else xp.argmin
        if x.ndim == 0:
            return xp.zeros((), dtype="int64")
        if dim is None:
            r = f(x.reshape(-1))
            if keepdim:
                r = xp.reshape(r, (1,) * x.ndim)
        else:
            r = f(x, axis=dim, keepdims=keepdim)
        return xp.asarray(r).astype("int64", copy=False)

    return fwd


_argmax = OpDef("argmax", _arg_fwd("max"), ("x",), promote=None, differentiable=False)
_argmin = OpDef("argmin", _arg_fwd("min"), ("x",), promote=None, differentiable=False)


def argmax(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """Index of the (first) maximum along ``dim``, or in the flattened input; int64."""
    d = None if dim is None else wrap_dim(int(dim), input.ndim)
    _check_nonempty("argmax", input, None if d is None else (d,))
    return apply_op(_argmax, (input,), {"dim": d, "keepdim": keepdim})


def argmin(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """Index of the (first) minimum along ``dim``, or in the flattened input; int64."""
    d = None if dim is None else wrap_dim(int(dim), input.ndim)
    _check_nonempty("argmin", input, None if d is None else (d,))
    return apply_op(_argmin, (input,), {"dim": d, "keepdim": keepdim})


# var / std -----------------------------------------------------------------------------------


def _dof(shape: tuple[int, ...], dims: Any, correction: float) -> float:
    return builtins.max(reduced_count(shape, dims) - correction, 0)


@defop(name="var", saves=("x",), promote=None)
def _var(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False,
         correction: float = 1) -> Any:
    """sum((x - mean)^2) / max(n - correction, 0). VJP: g * 2 (x - mean) / (n - correction)."""
    m = xp.mean(x, axis=dim, keepdims=True)
    d = x - m
    s = xp.sum(d * d, axis=dim, keepdims=keepdim)
    with _errstate(xp):
        return s / x.dtype.type(_dof(x.shape, dim, correction))


@_var.vjp
def _var_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    x = ctx.x
    ge = restore_reduced(g, shape, ctx.dim, ctx.keepdim)
    dof = _dof(shape, ctx.dim, ctx.correction)
    centered = x - ns.mean(x, dim=ctx.dim, keepdim=True)
    return (ge * centered * (2.0 / dof if dof else math.inf),)


@defop(name="std", saves=("x", "out"), promote=None)
def _std(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False,
         correction: float = 1) -> Any:
    """sqrt(var). VJP: g (x - mean) / ((n - correction) std), 0 where std == 0."""
    return xp.sqrt(_var.forward(xp, x, dim=dim, keepdim=keepdim, correction=correction))


@_std.vjp
def _std_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    x = ctx.x
    ge = restore_reduced(g, shape, ctx.dim, ctx.keepdim)
    out = _keep(ctx.out, shape, ctx.dim, ctx.keepdim)
    safe = ns.where(ns.eq(out, 0.0), 1.0, out)
    dof = _dof(shape, ctx.dim, ctx.correction)
    centered = x - ns.mean(x, dim=ctx.dim, keepdim=True)
    return (ge * centered / safe * (1.0 / dof if dof else math.inf),)


class _errstate:
    """NumPy's errstate (ignore 0/0 and x/0) when the backend is NumPy; PyTorch is silent."""

    def __init__(self, xp: Any) -> None:
        self._cm = xp.errstate(divide="ignore", invalid="ignore") if hasattr(
            xp, "errstate") else None

    def __enter__(self) -> None:
        if self._cm is not None:
            self._cm.__enter__()

    def __exit__(self, *a: Any) -> None:
        if self._cm is not None:
            self._cm.__exit__(*a)


def _var_args(name: str, input: Any, dim: Any, unbiased: Any, keepdim: bool,
              correction: Any) -> tuple[Any, dict[str, Any]]:
    if isinstance(dim, builtins.bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{name}: Cannot pass both correction and unbiased arguments")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if input._data.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _dims(dim, input.ndim)
    if reduced_count(input._data.shape, dims) - correction <= 0:
        import warnings

        warnings.warn(f"{name.split('_')[0]}(): degrees of freedom is <= 0. Correction should be "
                      "strictly less than the reduction factor (input numel divided by output "
                      "numel).", UserWarning, stacklevel=3)
    return input, {"dim": dims, "keepdim": builtins.bool(keepdim), "correction": correction}


def var(input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Any:
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False`` means
    0). Also callable as ``var(input, unbiased)``."""
    input, p = _var_args("var", input, dim, unbiased, keepdim, correction)
    return apply_op(_var, (input,), p)


def std(input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Any:
    """Standard deviation, sqrt(var); same arguments as ``var``."""
    input, p = _var_args("std", input, dim, unbiased, keepdim, correction)
    return apply_op(_std, (input,), p)


def var_mean(input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Any, Any]:
    """``(var(input, ...), mean(input, dim, keepdim))``. Differs from torch: two nodes
    (VarBackward0, MeanBackward1) rather than one VarMeanBackward0."""
    input, p = _var_args("var_mean", input, dim, unbiased, keepdim, correction)
    return (apply_op(_var, (input,), p),
            apply_op(_mean, (input,), {"dim": p["dim"], "keepdim": p["keepdim"]}))


def std_mean(input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Any, Any]:
    """``(std(input, ...), mean(input, dim, keepdim))``; see ``var_mean``."""
    input, p = _var_args("std_mean", input, dim, unbiased, keepdim, correction)
    return (apply_op(_std, (input,), p),
            apply_op(_mean, (input,), {"dim": p["dim"], "keepdim": p["keepdim"]}))


# norm ----------------------------------------------------------------------------------------


@defop(name="vector_norm", saves=("x", "out"), promote=None,
       node_name="LinalgVectorNormBackward0")
def _vector_norm(xp: Any, x: Any, *, ord: float = 2.0, dim: Any = None,
                 keepdim: bool = False) -> Any:
    """||x||_p over ``dim``: (sum |x|^p)^(1/p); max|x| (p=inf), min|x| (p=-inf), count of
    non-zeros (p=0).

    VJP: g sign(x) |x|^(p-1) / out^(p-1) (0 where out == 0); p=1: g sign(x); p=2: g x / out;
    p=+-inf: g sign(x) split evenly among the tied extremes; p=0: 0.
    """
    a = xp.abs(x)
    if ord == 2:
        return xp.sqrt(xp.sum(a * a, axis=dim, keepdims=keepdim))
    if ord == 1:
        return xp.sum(a, axis=dim, keepdims=keepdim)
    if ord == math.inf:
        return xp.max(a, axis=dim, keepdims=keepdim)
    if ord == -math.inf:
        return xp.min(a, axis=dim, keepdims=keepdim)
    if ord == 0:
        return xp.sum(a != 0, axis=dim, keepdims=keepdim).astype(x.dtype)
    with _errstate(xp):
        return xp.sum(a ** ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)


@_vector_norm.vjp
def _vector_norm_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    x, p = ctx.x, ctx.ord
    ge = restore_reduced(g, shape, ctx.dim, ctx.keepdim)
    if p == 0:
        return (ge * 0.0 * x,)
    if p == 1:
        return (ge * ns.sign(x),)
    out = _keep(ctx.out, shape, ctx.dim, ctx.keepdim)
    if p in (math.inf, -math.inf):
        mask = ns.eq(ns.abs(x), out)
        count = ns.sum(mask, dim=ctx.dim, keepdim=True)
        return (ns.sign(x) * ns.where(mask, ge, 0.0) / count,)
    zero = ns.eq(out, 0.0)
    scale = ns.where(zero, 0.0, ge) / ns.where(zero, 1.0, out)
    if p == 2:
        return (x * scale,)
    scale = ns.where(zero, 0.0, ge) / ns.pow(ns.where(zero, 1.0, out), p - 1)
    if p < 1:
        xz = ns.eq(x, 0.0)
        return (ns.where(xz, 0.0, ns.sign(x) * ns.pow(ns.where(xz, 1.0, ns.abs(x)), p - 1))
                * scale,)
    return (ns.sign(x) * ns.pow(ns.abs(x), p - 1) * scale,)


def vector_norm_impl(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False,
                     dtype: Any = None, name: str = "linalg.vector_norm") -> Any:
    """Shared body of ``torch.norm``, ``linalg.vector_norm`` and ``linalg.norm``."""
    if dtype is not None:
        x = x.to(dtype)
    if x._data.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_dtype_name(x)}")
    p = builtins.float(ord)
    dims = _dims(dim, x.ndim)
    if p < 0 and x._data.size == 0:
        raise RuntimeError(f"{name} cannot compute the {ord} norm on an empty tensor because "
                           "the operation does not have an identity")
    return apply_op(_vector_norm, (x,), {"ord": p, "dim": dims, "keepdim": keepdim})


# torch.linalg.matrix_norm (chainrule/linalg.py re-exports it), here since torch.norm needs it.
def matrix_norm(A: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Any:
    """Matrix norm over the two dims ``dim``: 'fro', or the max/min absolute row sum (inf/-inf)
    or column sum (1/-1), or of the singular values: their sum ('nuc'), the largest (2) or the
    smallest (-2)."""
    if dtype is not None:
        A = A.to(dtype)
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    d0, d1 = (wrap_dim(int(d), A.ndim) for d in dim)
    if ord == "fro":
        return vector_norm_impl(A, 2, (d0, d1), keepdim, None, name="linalg.matrix_norm")
    if ord in (math.inf, -math.inf, 1, -1):
        # inf: max over rows of the sum over columns; 1: max over columns of the row sums.
        inner, outer = (d1, d0) if abs(ord) == math.inf else (d0, d1)
        s = sum(A.abs(), inner, keepdim=True)
        r = (amax if ord > 0 else amin)(s, outer, keepdim=True)
        if not keepdim:
            r = r.squeeze((d0, d1)) if hasattr(r, "squeeze") else r
        return r
    if ord in ("nuc", 2, -2):
        # Functions of the singular values: their sum (nuclear) or the largest / smallest.
        nd = A.ndim
        rest = [i for i in range(nd) if i not in (d0, d1)]
        from chainrule.ops.linalg import linalg_svdvals

        sv = linalg_svdvals(A.permute(*rest, d0, d1))
        r = sv.sum(-1) if ord == "nuc" else (amax if ord == 2 else amin)(sv, -1)
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return r
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(input: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Any:
    """``torch.norm``: the vector p-norm over ``dim`` (all elements by default). ``'fro'`` is
    the 2-norm; ``'nuc'`` the nuclear norm of matrices over ``dim`` (the last two by default)."""
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        if dim is None:
            dim = (-2, -1)
        return matrix_norm(input, "nuc", dim, keepdim, dtype=dtype)
    if isinstance(p, str):
        raise RuntimeError(f"linalg.vector_norm: ord={p!r} is not supported")
    return vector_norm_impl(input, p, dim, keepdim, dtype, name="linalg.vector_norm")


# logsumexp -----------------------------------------------------------------------------------


@defop(name="logsumexp", saves=("x", "out"), promote="float")
def _logsumexp(xp: Any, x: Any, *, dim: Any, keepdim: bool = False) -> Any:
    """m + log(sum(exp(x - m))) with m = max over ``dim`` (0 where infinite).
    VJP: g exp(x - out) = g softmax(x)."""
    if x.size == 0:
        return xp.log(xp.sum(xp.exp(x), axis=dim, keepdims=keepdim))
    m = xp.max(x, axis=dim, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    with _errstate(xp):
        s = xp.log(xp.sum(xp.exp(x - m), axis=dim, keepdims=True)) + m
    if not keepdim:
        s = xp.squeeze(s, axis=dim) if dim is not None else s.reshape(())
    return s


@_logsumexp.vjp
def _logsumexp_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    ge = restore_reduced(g, shape, ctx.dim, ctx.keepdim)
    return (ge * ns.exp(ctx.x - _keep(ctx.out, shape, ctx.dim, ctx.keepdim)),)


def logsumexp(input: Any, dim: Any, keepdim: bool = False) -> Any:
    """log(sum(exp(input))) over ``dim``, computed stably. Integer inputs give floats."""
    return apply_op(_logsumexp, (input,),
                    {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


# cumsum / cumprod ----------------------------------------------------------------------------


@defop(name="cumsum", node_name="CumsumBackward0")
def _cumsum(xp: Any, x: Any, *, dim: int, reverse: bool = False) -> Any:
    """Running sum along ``dim`` (from the end when ``reverse``).
    VJP: the running sum of g in the other direction."""
    if x.ndim == 0:
        r = x.copy()
    elif reverse:
        r = xp.flip(xp.cumsum(xp.flip(x, axis=dim), axis=dim), axis=dim)
    else:
        r = xp.cumsum(x, axis=dim)
    if x.dtype.kind in "biu":
        r = r.astype("int64", copy=False)
    return r


@_cumsum.vjp
def _cumsum_vjp(ctx: Any, g: Any) -> Any:
    return (ns.cumsum(g, dim=ctx.dim, reverse=not ctx.reverse),)


@defop(name="cumprod", saves=("x", "out"), node_name="CumprodBackward0")
def _cumprod(xp: Any, x: Any, *, dim: int) -> Any:
    """Running product along ``dim``.

    VJP: without zeros, rcumsum(g out) / x (rcumsum = running sum from the end). With zeros,
    let f be the first zero of a slice: before f the same formula holds; after f the
    gradient is 0; at f it is rcumsum(g * cumprod(x with x_f := 1)) at f. Exact to all orders.
    """
    r = x.copy() if x.ndim == 0 else xp.cumprod(x, axis=dim)
    if x.dtype.kind in "biu":
        r = r.astype("int64", copy=False)
    return r


@_cumprod.vjp
def _cumprod_vjp(ctx: Any, g: Any) -> Any:
    return (_cumprod_grad(ctx.x, ctx.out, ctx.dim, g),)


def _cumprod_grad(x: Any, out: Any, d: int, g: Any) -> Any:
    z = ns.eq(x, 0.0)
    if not builtins.bool(ns.sum(z)):
        return ns.cumsum(g * out, dim=d, reverse=True) / x
    seen = ns.cumsum(z, dim=d, reverse=False)
    before = ns.eq(seen, 0)
    first = z & ns.eq(seen, 1)
    xn = ns.where(z, 1.0, x)
    head = ns.where(before, ns.cumsum(g * out, dim=d, reverse=True) / xn, 0.0)
    x1 = ns.where(first, 1.0, x)
    c1 = ns.cumprod(x1, dim=d)
    grad = head + ns.where(first, ns.cumsum(g * c1, dim=d, reverse=True), 0.0)
    if hasattr(g, "grad_fn"):
        # Under create_graph only: after the first zero x_f the gradient is x_f times the
        # gradient of cumprod at x1 (x with x_f := 1). Its value is 0, but its derivative in
        # x_f is not, and the second derivative needs it.
        after = ns.gt(seen, 0) & ns.eq(first, False)
        xf = ns.sum(ns.where(first, x, 0.0), dim=(d,), keepdim=True)
        grad = grad + ns.where(after, xf * _cumprod_grad(x1, c1, d, g), 0.0)
    return grad


def _scan_args(input: Any, dim: Any, dtype: Any) -> tuple[Any, int]:
    input = _cast(input, dtype)
    return input, wrap_dim(int(dim), input.ndim)


def cumsum(input: Any, dim: int, *, dtype: Any = None) -> Any:
    """Running sum along ``dim``. Integer and bool inputs give int64."""
    input, d = _scan_args(input, dim, dtype)
    return _out_dtype(apply_op(_cumsum, (input,), {"dim": d, "reverse": False}), dtype)


def cumprod(input: Any, dim: int, *, dtype: Any = None) -> Any:
    """Running product along ``dim``. Integer and bool inputs give int64."""
    input, d = _scan_args(input, dim, dtype)
    return _out_dtype(apply_op(_cumprod, (input,), {"dim": d}), dtype)


# all / any / count_nonzero -------------------------------------------------------------------


def _logical_fwd(kind: str) -> Any:
    def fwd(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False) -> Any:
        f = xp.all if kind == "all" else xp.any
        r = xp.asarray(f(x, axis=dim, keepdims=keepdim))
        return r.astype("uint8") if x.dtype == "uint8" else r

    return fwd


_all = OpDef("all", _logical_fwd("all"), ("x",), promote=None, differentiable=False)
_any = OpDef("any", _logical_fwd("any"), ("x",), promote=None, differentiable=False)


def all(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """True where every element over ``dim`` is non-zero (uint8 inputs give uint8)."""
    return apply_op(_all, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


def any(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """True where some element over ``dim`` is non-zero (uint8 inputs give uint8)."""
    return apply_op(_any, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


@defop(name="count_nonzero", differentiable=False)
def _count_nonzero(xp: Any, x: Any, *, dim: Any = None) -> Any:
    """Number of non-zero elements over ``dim``; int64."""
    return xp.asarray(xp.sum(x != 0, axis=dim)).astype("int64", copy=False)


def count_nonzero(input: Any, dim: Any = None) -> Any:
    """Number of non-zero elements over ``dim`` (int or tuple; all by default); int64."""
    return apply_op(_count_nonzero, (input,), {"dim": _dims(dim, input.ndim)})
