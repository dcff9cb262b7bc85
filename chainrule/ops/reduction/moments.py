"""Moments: var, std, var_mean and std_mean (with ``correction`` / ``unbiased``)."""

from __future__ import annotations

import builtins
import math
from typing import Any

from chainrule import _kinds
from chainrule.ops._broadcast import reduced_count, restore_reduced
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.reduction._common import _dims, _errstate, _keep
from chainrule.ops.reduction.sums import _mean

__all__ = ["var", "std", "var_mean", "std_mean"]


# var / std -----------------------------------------------------------------------------------


def _dof(shape: tuple[int, ...], dims: Any, correction: float) -> float:
    return builtins.max(reduced_count(shape, dims) - correction, 0)


@defop(name="var", saves=("x",), promote=None)
def _var(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False, correction: float = 1) -> Any:
    """sum(|x - mean|^2) / max(n - correction, 0), real for complex x (as PyTorch's).
    VJP: g * 2 (x - mean) / (n - correction)."""
    m = xp.mean(x, axis=dim, keepdims=True)
    d = x - m
    if d.dtype.kind == "c":
        s = xp.sum(d.real * d.real + d.imag * d.imag, axis=dim, keepdims=keepdim)
    else:
        s = xp.sum(d * d, axis=dim, keepdims=keepdim)
    with _errstate(xp):
        return s / s.dtype.type(_dof(x.shape, dim, correction))


@_var.vjp
def _var_vjp(ctx: Any, g: Any) -> Any:
    shape = ctx.input_shapes[0]
    x = ctx.x
    ge = restore_reduced(g, shape, ctx.dim, ctx.keepdim)
    dof = _dof(shape, ctx.dim, ctx.correction)
    centered = x - ns.mean(x, dim=ctx.dim, keepdim=True)
    return (ge * centered * (2.0 / dof if dof else math.inf),)


@defop(name="std", saves=("x", "out"), promote=None)
def _std(xp: Any, x: Any, *, dim: Any = None, keepdim: bool = False, correction: float = 1) -> Any:
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


def _var_args(
    name: str, input: Any, dim: Any, unbiased: Any, keepdim: bool, correction: Any
) -> tuple[Any, dict[str, Any]]:
    if isinstance(dim, builtins.bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{name}: Cannot pass both correction and unbiased arguments")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if not _kinds.is_inexact(input._data):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _dims(dim, input.ndim)
    if reduced_count(input._data.shape, dims) - correction <= 0:
        import warnings

        warnings.warn(
            f"{name.split('_')[0]}(): degrees of freedom is <= 0. Correction should be "
            "strictly less than the reduction factor (input numel divided by output "
            "numel).",
            UserWarning,
            stacklevel=3,
        )
    return input, {"dim": dims, "keepdim": builtins.bool(keepdim), "correction": correction}


def var(
    input: Any,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> Any:
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False`` means
    0). Also callable as ``var(input, unbiased)``."""
    input, p = _var_args("var", input, dim, unbiased, keepdim, correction)
    return apply_op(_var, (input,), p)


def std(
    input: Any,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> Any:
    """Standard deviation, sqrt(var); same arguments as ``var``."""
    input, p = _var_args("std", input, dim, unbiased, keepdim, correction)
    return apply_op(_std, (input,), p)


def var_mean(
    input: Any,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> tuple[Any, Any]:
    """``(var(input, ...), mean(input, dim, keepdim))``. Differs from torch: two nodes
    (VarBackward0, MeanBackward1) rather than one VarMeanBackward0."""
    input, p = _var_args("var_mean", input, dim, unbiased, keepdim, correction)
    return (
        apply_op(_var, (input,), p),
        apply_op(_mean, (input,), {"dim": p["dim"], "keepdim": p["keepdim"]}),
    )


def std_mean(
    input: Any,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> tuple[Any, Any]:
    """``(std(input, ...), mean(input, dim, keepdim))``; see ``var_mean``."""
    input, p = _var_args("std_mean", input, dim, unbiased, keepdim, correction)
    return (
        apply_op(_std, (input,), p),
        apply_op(_mean, (input,), {"dim": p["dim"], "keepdim": p["keepdim"]}),
    )
