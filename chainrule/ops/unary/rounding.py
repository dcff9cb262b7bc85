"""Rounding: floor, ceil, trunc, fix, frac and round (zero gradients; frac's is 1)."""

from __future__ import annotations

from typing import Any

from chainrule import _kinds
from chainrule.ops._registry import OpDef, apply_op, unary
from chainrule.ops.unary._common import _cast, _legacy

__all__ = ["floor", "ceil", "round", "trunc", "fix", "frac"]


# Rounding -------------------------------------------------------------------------------------


def _rounding(name: str, f: Any) -> Any:
    def fwd(xp: Any, x: Any) -> Any:
        return x.copy() if _kinds.is_integral(x, include_bool=True) else f(xp, x)

    return unary(
        name,
        fwd,
        vjp=lambda ctx, g: g * 0,
        promote=None,
        doc=f"Elementwise {name}; integer tensors are returned unchanged (a copy). "
        "VJP: zero (piecewise constant).",
    )


floor = _rounding("floor", lambda xp, x: xp.floor(x))
ceil = _rounding("ceil", lambda xp, x: xp.ceil(x))
trunc = _rounding("trunc", lambda xp, x: xp.trunc(x))
fix = trunc
frac = unary(
    "frac",
    lambda xp, x: x - xp.trunc(x),
    vjp=lambda ctx, g: g,
    promote=None,
    doc="x - trunc(x), with the sign of x. VJP: g.",
)


def _round_fwd(xp: Any, x: Any, *, decimals: int = 0) -> Any:
    if _kinds.is_integral(x, include_bool=True):
        return x.copy()
    if decimals == 0:
        return xp.rint(x)  # round half to even, as PyTorch's nearbyint
    if decimals > 0:
        p = 10.0**decimals
        return _cast(xp.rint(x * p) / p, x)
    p = 10.0**-decimals
    return _cast(xp.rint(x / p) * p, x)


_round = OpDef(
    "round",
    _round_fwd,
    ("x",),
    promote=None,
    vjps=(lambda ctx, g: g * 0,),
    name_fn=lambda p: "RoundBackward1" if p and p.get("decimals") else "RoundBackward0",
)


def round(input: Any, *, decimals: int = 0) -> Any:
    """Round half to even, to ``decimals`` decimal places (x * 10**d rounded, / 10**d, as
    PyTorch). VJP: zero."""
    if decimals:
        if not _kinds.is_floating(input._data):
            raise NotImplementedError(f"\"round_cpu\" not implemented for '{_legacy(input)}'")
        return apply_op(_round, (input,), {"decimals": int(decimals)})
    return apply_op(_round, (input,))
