"""``threshold`` as one op, so that its node is PyTorch's ``ThresholdBackward0``."""

from __future__ import annotations

from typing import Any

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


def threshold(input: Any, threshold: float, value: float) -> Any:
    """Internal helper of ``F.threshold`` for a floating input."""
    return apply_op(_threshold, (input,), {"threshold": float(threshold), "value": float(value)})
