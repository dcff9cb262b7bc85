"""``threshold`` as one op, so that its node is PyTorch's ``ThresholdBackward0``."""

from __future__ import annotations

from typing import Any

from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops._registry import apply_op, defop, ns

__all__: list[str] = []


@defop(name="threshold", saves=("x",), promote=None)
def _threshold(xp: Any, x: Any, *, threshold: float, value: float) -> Any:
    """x where x > threshold, else ``value`` (a NaN stays NaN). VJP: g where x > threshold
    (a NaN x passes g), PyTorch's threshold_backward (Note [connected masks])."""
    return xp.where(x <= threshold, xp.asarray(value, dtype=x.dtype), x)


@_threshold.vjp
def _threshold_vjp(ctx: Any, g: Any) -> Any:
    return (ns.threshold_backward(g, ctx.x, lo=ctx.threshold, hi=None, slope=0.0, nan_passes=True),)


@refuses_complex("threshold")
def threshold(input: Any, threshold: float, value: float) -> Any:
    """Internal helper of ``F.threshold`` for a floating input."""
    return apply_op(_threshold, (input,), {"threshold": float(threshold), "value": float(value)})


@defop(name="threshold_inplace", saves=("x",), promote=None, node_name="ThresholdBackward1")
def _threshold_inplace(xp: Any, x: Any, *, threshold: float, value: float) -> Any:
    """``threshold_``'s op: the forward of threshold, written into x by ``apply_inplace`` (which
    keeps a copy of the input for the VJP), recorded as PyTorch's in-place overload
    ``ThresholdBackward1``. VJP: threshold's, g where the input was above ``threshold``."""
    return _threshold.forward(xp, x, threshold=threshold, value=value)


_threshold_inplace.vjp(_threshold_vjp)


@refuses_complex("threshold")
def threshold_(input: Any, threshold: float, value: float) -> Any:
    """Internal helper of ``F.threshold_`` (and ``inplace=True``) for a floating input."""
    from chainrule.ops.views import apply_inplace

    params = {"threshold": float(threshold), "value": float(value)}
    return apply_inplace(_threshold_inplace, input, (), params)
