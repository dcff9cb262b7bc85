"""torch.nn.functional.pad: constant padding (``constant_pad_nd``) and the reflect, replicate
and circular modes (a gather with a fixed index). chainrule.nn.functional re-exports ``pad``."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from chainrule.ops._registry import OpDef, apply_op, defop, ns
from chainrule.ops.shape._common import _ints

__all__ = ["pad"]


def _pad_widths(pad: tuple[int, ...], nd: int) -> list[tuple[int, int]]:
    """F.pad's (last-dim-first) pairs as NumPy-style (before, after) widths for every dim."""
    w = [(0, 0)] * nd
    for k in range(len(pad) // 2):
        w[nd - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    return w


@defop(name="constant_pad_nd", promote=None)
def _constant_pad_nd(xp: Any, x: Any, *, pad: tuple[int, ...], value: Any) -> Any:
    """x padded with ``value`` (negative widths crop). VJP: the same op with negated widths."""
    w = _pad_widths(pad, x.ndim)
    crop = tuple(
        slice(-b if b < 0 else 0, x.shape[i] + a if a < 0 else None) for i, (b, a) in enumerate(w)
    )
    x = x[crop]
    pos = [(max(b, 0), max(a, 0)) for b, a in w]
    return xp.pad(x, pos, mode="constant", constant_values=value)


_constant_pad_nd.vjp(
    lambda ctx, g: (ns.constant_pad_nd(g, pad=tuple(-p for p in ctx.pad), value=0),)
)


def _pad_gather_fwd(xp: Any, x: Any, *, index: tuple[Any, ...], mode: str) -> Any:
    return x[index]


def _pad_name(p: dict[str, Any]) -> str:
    k = len([i for i in p["index"] if i is not Ellipsis])
    base = {"reflect": "ReflectionPad", "replicate": "ReplicationPad"}.get(p["mode"])
    return f"{base}{k}DBackward0" if base else "IndexBackward0"


# Reflect, replicate and circular padding read each output element from one input element: a
# gather with a fixed index, whose VJP scatter-adds g back (index_grad).
_pad_gather = OpDef("pad_gather", _pad_gather_fwd, ("x",), promote=None, name_fn=_pad_name)


@_pad_gather.vjp
def _pad_gather_vjp(ctx: Any, g: Any) -> Any:
    return (ns.index_grad(g, shape=tuple(ctx.input_shapes[0]), index=ctx.index),)


def _pad_source(n: int, before: int, after: int, mode: str) -> np.ndarray:
    j = np.arange(-before, n + after)
    if mode == "reflect":
        j = np.abs(j)
        j = np.where(j >= n, 2 * (n - 1) - j, j)
    elif mode == "replicate":
        j = np.clip(j, 0, n - 1)
    else:
        j = np.mod(j, n)
    return j


def pad(input: Any, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Any:
    """torch.nn.functional.pad: pad the last ``len(pad) // 2`` dims (last dim first).

    ``constant`` pads with ``value`` (negative widths crop); ``reflect``, ``replicate`` and
    ``circular`` repeat input elements, and their VJP scatter-adds g back."""
    pad = _ints(pad)
    shp = input._data.shape
    nd = len(shp)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > nd:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input "
            "dimension but got padding length "
            f"{len(pad)} and input of dimension "
            f"{nd}"
        )
    if mode == "constant":
        w = _pad_widths(pad, nd)
        for i, (b, a) in enumerate(w):
            if shp[i] + b + a < 0:
                # PyTorch crops negative widths with narrow and reports its error.
                raise RuntimeError("narrow(): length must be non-negative.")
        return apply_op(
            _constant_pad_nd, (input,), {"pad": pad, "value": 0 if value is None else value}
        )
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument.')
    k = len(pad) // 2
    if not (1 <= k <= 3 and nd in (k + 1, k + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    w = _pad_widths(pad, nd)[nd - k :]
    for j, (b, a) in enumerate(w):
        n = shp[nd - k + j]
        if mode == "reflect" and (b >= n or a >= n):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({b}, {a}) at dimension {nd - k + j} of input "
                f"{list(shp)}"
            )
        if mode == "circular" and (b > n or a > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate" and n == 0:
            raise RuntimeError("padding size should be less than the corresponding input dimension")
    srcs = [_pad_source(shp[nd - k + j], b, a, mode) for j, (b, a) in enumerate(w)]
    xp = input._backend.xp
    index = (Ellipsis,) + tuple(
        xp.asarray(s.reshape((-1,) + (1,) * (k - 1 - j))) for j, s in enumerate(srcs)
    )
    return apply_op(_pad_gather, (input,), {"index": index, "mode": mode})
