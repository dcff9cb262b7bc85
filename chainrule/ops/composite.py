"""Functions of torch's namespace composed from chainrule's differentiable ops: fused
multiply-adds (addcmul, addcdiv, addr, addbmm), products (tensordot, inner, outer's alias
ger, chain_matmul, matrix_power, trace, vander), distances (cdist, dist, renorm), integrals and
statistics (trapezoid, cumulative_trapezoid, cov, corrcoef, diff, nansum, nanmean, aminmax),
elementwise forms (hypot, sinc, heaviside, copysign, logaddexp, logaddexp2, logcumsumexp, exp2,
deg2rad, rad2deg, positive, sgn, signbit, isposinf, isneginf, isreal), and selections and counts
(nonzero, argwhere, take, isin, bincount, histc, tril_indices, triu_indices).

Gradients come from the composed ops (``create_graph`` works); the recorded nodes are theirs,
not one node named after the composite. Non-differentiable results (indices, counts, masks) are
computed on the array backend directly.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from chainrule.ops._broadcast import wrap_dim

__all__ = [
    "addcmul", "addcdiv", "addr", "addbmm", "tensordot", "inner", "ger",
    "chain_matmul", "matrix_power", "trace", "vander", "cdist", "dist", "renorm", "trapezoid",
    "trapz", "cumulative_trapezoid", "cov", "corrcoef", "diff", "nansum", "nanmean", "aminmax",
    "hypot", "sinc", "heaviside", "copysign", "logaddexp", "logaddexp2", "logcumsumexp", "exp2",
    "deg2rad", "rad2deg", "positive", "sgn", "signbit", "isposinf", "isneginf", "isreal",
    "nonzero", "argwhere", "take", "isin", "bincount", "histc", "tril_indices", "triu_indices",
]


def _ops() -> Any:
    # The sibling families through the op table (chainrule/_dispatch.py), not the package,
    # which imports this module.
    from chainrule._dispatch import ops

    return ops


def _t(data: Any) -> Any:
    from chainrule._tensor import _new_tensor

    return _new_tensor(np.asarray(data))


def _is_t(x: Any) -> bool:
    return hasattr(x, "_data")


# Fused multiply-adds --------------------------------------------------------------------------


def addcmul(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    """``input + value * tensor1 * tensor2``."""
    return input + value * tensor1 * tensor2


def addcdiv(input: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    """``input + value * tensor1 / tensor2``; integer inputs raise as in PyTorch."""
    if not tensor1.is_floating_point() and not tensor2.is_floating_point():
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )
    return input + value * tensor1 / tensor2


def _scaled(beta: Any, input: Any, alpha: Any, prod: Any) -> Any:
    # beta == 0 ignores input entirely (NaN in it does not propagate), as PyTorch documents.
    p = prod if alpha == 1 else alpha * prod
    if beta == 0:
        # input still gets a (zero) gradient, as in PyTorch, but its NaN/inf do not propagate.
        return p + (input * 0).nan_to_num(0.0, 0.0, 0.0)
    return (input if beta == 1 else beta * input) + p


def _bshape(a: Any, b: Any) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))


def addr(input: Any, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(
            f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D" if vec1.ndim != 1 else
            f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D"
        )
    return _scaled(beta, input, alpha, _ops().outer(vec1, vec2))


def addbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3 else
                           "batch2 must be a 3D tensor")
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
        da, db = ([int(v) for v in d] if isinstance(d, (list, tuple)) else [int(d)]
                  for d in dims)
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
        "than multiple parameters.", UserWarning, stacklevel=2,
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
        return eye(input.shape[-1], dtype=input.dtype) + (input * 0).nan_to_num(0.0, 0.0, 0.0)
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


# Distances ---------------------------------------------------------------------------------------


def cdist(x1: Any, x2: Any, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Any:
    """Batched p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M).
    For p = 2 the gradient at zero distance is 0, as PyTorch's."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(
            f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D" if x1.ndim < 2 else
            f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D"
        )
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
            f"{x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _pnorm(diff, p, -1)


def _pnorm(d: Any, p: float, dim: int) -> Any:
    ops = _ops()
    if p == 2:
        sq = (d * d).sum(dim)
        # sqrt's gradient is infinite at 0; PyTorch gives 0 for coincident points.
        safe = ops.where(sq > 0, sq, 1.0)
        return ops.where(sq > 0, safe.sqrt(), 0.0)
    if p == 0:
        return (d != 0).to(d.dtype).sum(dim)
    if math.isinf(p):
        return d.abs().amax(dim)
    if p == 1:
        return d.abs().sum(dim)
    return _vector_norm(d, p, dim)


def _vector_norm(x: Any, p: float, dim: Any, keepdim: bool = False) -> Any:
    from chainrule.ops.reduction import vector_norm_impl

    return vector_norm_impl(x, p, dim, keepdim, None, name="linalg.vector_norm")


def dist(input: Any, other: Any, p: float = 2) -> Any:
    """p-norm of ``input - other`` (broadcast), as a 0-d tensor."""
    d = (input - other).reshape(-1)
    return _vector_norm(d, float(p), 0)


def renorm(input: Any, p: float, dim: int, maxnorm: float) -> Any:
    """Each slice along ``dim`` rescaled so that its p-norm is at most ``maxnorm``."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = wrap_dim(int(dim), input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    norms = _vector_norm(input, p, others, keepdim=True)
    # PyTorch scales by maxnorm / (norm + 1e-7) where the norm exceeds maxnorm.
    factor = _ops().where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * factor


# Integrals and statistics ------------------------------------------------------------------------


def trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    """Trapezoid rule along ``dim``: spacing ``dx`` (default 1) or sample points ``x``."""
    d = wrap_dim(int(dim), y.ndim)
    n = y.shape[d]
    if n == 0:
        return y.sum(d)
    lo, hi = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is not None and _is_t(x):
        xd = d if x.ndim == y.ndim else x.ndim - 1
        dxs = x.narrow(xd, 1, n - 1) - x.narrow(xd, 0, n - 1)
        return ((lo + hi) * dxs).sum(d) / 2
    step = 1.0 if dx is None and x is None else (x if dx is None else dx)
    return (lo + hi).sum(d) * step / 2


def trapz(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    """Running trapezoid integral along ``dim`` (one element shorter than ``y``)."""
    d = wrap_dim(int(dim), y.ndim)
    n = y.shape[d]
    if n == 0:
        return y
    lo, hi = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is not None and _is_t(x):
        xd = d if x.ndim == y.ndim else x.ndim - 1
        dxs = x.narrow(xd, 1, n - 1) - x.narrow(xd, 0, n - 1)
        return ((lo + hi) * dxs / 2).cumsum(d)
    step = 1.0 if dx is None and x is None else (x if dx is None else dx)
    return ((lo + hi) * step / 2).cumsum(d)


def cov(input: Any, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
    """Covariance of the rows of ``input`` (variables) over its columns (observations), with
    optional integer frequency and float observation weights, as ``numpy.cov``."""
    if input.ndim > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not x.is_floating_point():
        from chainrule._dtype import get_default_dtype

        x = x.to(get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        avg = x.mean(1)
        w_sum = float(n)
        norm = w_sum - correction
        xc = x - avg.unsqueeze(1)
        c = (xc @ xc.transpose(0, 1)) / builtins.max(norm, 0)
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights.to(x.dtype)).sum() / w_sum
        xc = x - avg.unsqueeze(1)
        c = (xc * w) @ xc.transpose(0, 1) / _ops().clamp(norm, min=0)
    return c.squeeze() if input.ndim < 2 else c


def corrcoef(input: Any) -> Any:
    """Pearson correlation coefficients of the rows, clipped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = _ops().diagonal(c)
    stddev = d.sqrt()
    c = c / stddev.unsqueeze(1) / stddev.unsqueeze(0)
    return _ops().clamp(c, -1, 1)


def diff(input: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """``n``-th forward difference along ``dim`` (booleans: ``!=``), after joining ``prepend``
    and ``append``."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(int(dim), input.ndim)
    x = input
    parts = [t for t in (prepend, x, append) if t is not None]
    if len(parts) > 1:
        x = _ops().cat(parts, d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = (a != b) if x.dtype == _bool_dtype() else a - b
    return x


def _bool_dtype() -> Any:
    from chainrule import _dtype

    return _dtype.bool


def nansum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Sum treating NaN as zero. VJP: g where the input is not NaN."""
    x = input if dtype is None else input.to(dtype)
    if x.is_floating_point():
        x = _ops().where(x.isnan(), 0.0, x)
    return x.sum() if dim is None else x.sum(dim, keepdim)


def nanmean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """Mean over the non-NaN elements (NaN where all are NaN)."""
    if not input.is_floating_point():
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{_dtype_name(input)}"
        )
    count = (~input.isnan()).sum() if dim is None else (~input.isnan()).sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _dtype_name(t: Any) -> str:
    from chainrule._tensor import _type_name

    return _type_name(t._data.dtype).replace("Tensor", "")


def aminmax(input: Any, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """``(min, max)`` over ``dim`` (or all elements), as a named pair."""
    from chainrule.ops.reduction import return_types

    if dim is None:
        lo, hi = input.amin(), input.amax()
        if keepdim:
            lo = lo.reshape((1,) * input.ndim)
            hi = hi.reshape((1,) * input.ndim)
    else:
        lo, hi = input.amin(dim, keepdim), input.amax(dim, keepdim)
    return return_types.aminmax(lo, hi)


# Elementwise forms ------------------------------------------------------------------------------


def hypot(input: Any, other: Any) -> Any:
    """``sqrt(input**2 + other**2)``, scaled by the larger magnitude so that it cannot overflow.
    VJP: (g * a / h, g * b / h)."""
    ops = _ops()
    a, b = input.abs(), other.abs()
    m = ops.maximum(a, b)
    safe = ops.where(m > 0, m, 1.0)
    r = ops.minimum(a, b) / safe
    return ops.where(m > 0, m * (1 + r * r).sqrt(), m)


def sinc(input: Any) -> Any:
    """Normalized sinc: ``sin(pi x) / (pi x)``, 1 at 0 (where its gradient is 0)."""
    ops = _ops()
    x = input if input.is_floating_point() else input.float()
    px = math.pi * x
    zero = x == 0
    safe = ops.where(zero, 1.0, px)
    return ops.where(zero, 1.0, safe.sin() / safe)


def heaviside(input: Any, values: Any) -> Any:
    """Step function: 0 where input < 0, ``values`` where input == 0, 1 where input > 0."""
    ops = _ops()
    if input.dtype != values.dtype:
        raise RuntimeError(
            "heaviside is not yet implemented for tensors with different dtypes"
        )
    step = ops.where(input > 0, 1.0, 0.0).to(input.dtype)
    return ops.where(input == 0, values, step)


def copysign(input: Any, other: Any) -> Any:
    """``|input|`` with the sign of ``other`` (``-0.0`` counts as negative)."""
    ops = _ops()
    o = other if _is_t(other) else _t(np.asarray(other, dtype=np.float64 if isinstance(
        other, float) else np.asarray(other).dtype))
    neg = _t(np.signbit(np.asarray(o._data)))
    x = input if input.is_floating_point() else input.float()
    a = x.abs()
    return ops.where(neg, -a, a)


def logaddexp(input: Any, other: Any) -> Any:
    """``log(exp(a) + exp(b))`` computed as ``max + log1p(exp(-|a - b|))``."""
    ops = _ops()
    m = ops.maximum(input, other)
    d = (input - other).abs()
    # Equal infinities: a - b is NaN; the answer is that infinity.
    same_inf = (input == other) & input.isinf()
    safe_d = ops.where(same_inf, 0.0, d)
    return ops.where(same_inf, input, m + (-safe_d).exp().log1p())


def logaddexp2(input: Any, other: Any) -> Any:
    """``log2(2**a + 2**b)``."""
    ln2 = math.log(2.0)
    return logaddexp(input * ln2, other * ln2) / ln2


def logcumsumexp(input: Any, dim: int) -> Any:
    """``log(cumsum(exp(x)))`` along ``dim``, shifted by the slice maximum for stability."""
    ops = _ops()
    d = wrap_dim(int(dim), input.ndim)
    if input.numel() == 0:
        return input.clone()
    m = input.amax(d, keepdim=True).detach()
    m = ops.where(m.isinf(), 0.0, m)
    return (input - m).exp().cumsum(d).log() + m


def exp2(input: Any) -> Any:
    """``2 ** input``."""
    x = input if input.is_floating_point() else input.float()
    return (x * math.log(2.0)).exp()


def deg2rad(input: Any) -> Any:
    """Degrees to radians."""
    x = input if input.is_floating_point() else input.float()
    return x * (math.pi / 180.0)


def rad2deg(input: Any) -> Any:
    """Radians to degrees."""
    x = input if input.is_floating_point() else input.float()
    return x * (180.0 / math.pi)


def positive(input: Any) -> Any:
    """``input`` itself (``+x``); booleans raise as in PyTorch."""
    if input.dtype == _bool_dtype():
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def sgn(input: Any) -> Any:
    """``sign`` for real tensors (PyTorch's complex extension ``x / |x|`` needs complex)."""
    return input.sign()


def signbit(input: Any) -> Any:
    """True where the sign bit is set (negative numbers and ``-0.0``)."""
    return _t(np.signbit(np.asarray(input._data)))


def isposinf(input: Any) -> Any:
    """True where the element is ``+inf``."""
    return input.isinf() & (input > 0)


def isneginf(input: Any) -> Any:
    """True where the element is ``-inf``."""
    return input.isinf() & (input < 0)


def isreal(input: Any) -> Any:
    """True everywhere: chainrule's tensors are real."""
    return _t(np.ones(tuple(input.shape), dtype=bool))


# Selections and counts (not differentiable) ------------------------------------------------------


def nonzero(input: Any, *, as_tuple: bool = False) -> Any:
    """Indices of the nonzero elements: an (n, ndim) int64 tensor, or one 1-d tensor per dim
    with ``as_tuple=True`` (a 0-d input counts as 1-d)."""
    a = np.asarray(input._data)
    if as_tuple:
        idx = np.nonzero(np.atleast_1d(a))
        return tuple(_t(i.astype(np.int64)) for i in idx)
    return _t(np.argwhere(a).astype(np.int64))


def argwhere(input: Any) -> Any:
    """``nonzero(input)``: an (n, ndim) int64 tensor of the nonzero positions."""
    return nonzero(input)


def take(input: Any, index: Any) -> Any:
    """Elements of the flattened ``input`` at ``index`` (any shape; the result has its shape)."""
    n = input.numel()
    idx = np.asarray(index._data)
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = idx.max() if idx.max() >= n else idx.min()
        raise IndexError(f"out of range: tried to access index {int(bad)} on a tensor of {n} "
                         "elements.")
    return input.reshape(-1)[_t(np.asarray(idx, dtype=np.int64))]


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Any:
    """True where an element of ``elements`` occurs in ``test_elements`` (either may be a
    scalar)."""
    e = np.asarray(elements._data if _is_t(elements) else elements)
    t = np.asarray(test_elements._data if _is_t(test_elements) else test_elements)
    return _t(np.isin(e, t, invert=invert))


def bincount(input: Any, weights: Any = None, minlength: int = 0) -> Any:
    """Count of each value in the 1-d non-negative integer ``input`` (or the sum of
    ``weights`` at them), of length ``max(input) + 1`` or ``minlength``."""
    a = np.asarray(input._data)
    if a.ndim != 1 or a.dtype.kind not in "iub":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _t(np.bincount(a, minlength=minlength).astype(np.int64))
    w = np.asarray(weights._data)
    out = np.bincount(a, weights=w, minlength=minlength)
    return _t(out.astype(w.dtype if w.dtype.kind == "f" and w.dtype.itemsize == 4 else
                         np.float64))


def histc(input: Any, bins: int = 100, min: Any = 0, max: Any = 0) -> Any:
    """Histogram of ``bins`` equal-width bins over [min, max] (the data's range when both are
    0); values outside are ignored; the last bin includes ``max``."""
    a = np.asarray(input._data)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("max must be larger than min")
    counts, _ = np.histogram(a[(a >= lo) & (a <= hi)], bins=bins, range=(lo, hi))
    return _t(counts.astype(a.dtype))


def _tri_indices(row: int, col: int, offset: int, lower: bool, dtype: Any) -> Any:
    from chainrule import _dtype

    f = np.tril_indices if lower else np.triu_indices
    r, c = f(row, offset, col)
    dt = _dtype.int64 if dtype is None else dtype
    return _t(np.stack([r, c]).astype(np.int64)).to(dt)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None, layout: Any = None) -> Any:
    """The (2, N) coordinates of the lower triangle (on and below diagonal ``offset``)."""
    return _tri_indices(row, col, offset, True, dtype)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None, layout: Any = None) -> Any:
    """The (2, N) coordinates of the upper triangle (on and above diagonal ``offset``)."""
    return _tri_indices(row, col, offset, False, dtype)
