"""Copies that rearrange elements: repeat/tile and flip/roll."""

from __future__ import annotations

from typing import Any, Sequence

from chainrule.ops._broadcast import wrap_dim
from chainrule.ops._registry import apply_op, defop, ns
from chainrule.ops.shape._common import _ints

__all__ = ["repeat", "tile", "flip", "roll"]


# repeat / tile --------------------------------------------------------------------------------


@defop(name="repeat", promote=None)
def _repeat(xp: Any, x: Any, *, repeats: tuple[int, ...]) -> Any:
    """x tiled ``repeats[i]`` times along dim i (new leading dims for extra repeats).
    VJP: g reshaped to (r0, s0, r1, s1, ...) and summed over the r axes."""
    return xp.tile(x, repeats)


@_repeat.vjp
def _repeat_vjp(ctx: Any, g: Any) -> Any:
    reps = ctx.repeats
    src = ctx.input_shapes[0]
    padded = (1,) * (len(reps) - len(src)) + tuple(src)
    inter: list[int] = []
    for r, s in zip(reps, padded):
        inter += [r, s]
    g = ns.reshape(g, shape=tuple(inter))
    g = ns.sum(g, dim=tuple(range(0, 2 * len(reps), 2)), keepdim=False)
    return (ns.reshape(g, shape=tuple(src)),)


def repeat(input: Any, repeats: Sequence[int]) -> Any:
    """``input`` tiled; ``len(repeats)`` must be at least ``input.dim()`` (Tensor.repeat)."""
    reps = _ints(repeats)
    if len(reps) < input._data.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    if any(r < 0 for r in reps):
        padded = (1,) * (len(reps) - input._data.ndim) + input._data.shape
        out = [r * s for r, s in zip(reps, padded)]
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {out}")
    return apply_op(_repeat, (input,), {"repeats": reps})


def tile(input: Any, dims: Sequence[int]) -> Any:
    """Like ``repeat``, with ``dims`` padded with leading 1s when shorter than ``input.dim()``."""
    reps = _ints(dims)
    reps = (1,) * (input._data.ndim - len(reps)) + reps
    return repeat(input, reps)


# flip / roll ----------------------------------------------------------------------------------


@defop(name="flip", promote=None)
def _flip(xp: Any, x: Any, *, dims: tuple[int, ...]) -> Any:
    """x reversed along ``dims`` (a copy, as in PyTorch). VJP: flip g back."""
    return xp.flip(x, axis=dims).copy()


_flip.vjp(lambda ctx, g: (ns.flip(g, dims=ctx.dims),))


def flip(input: Any, dims: Sequence[int]) -> Any:
    """Reverse the order of elements along each of ``dims``."""
    nd = input._data.ndim
    d = tuple(wrap_dim(int(i), nd) for i in _ints(dims))
    if nd == 0:
        d = ()  # dim 0 of a 0-dim tensor names the tensor itself
    for i, a in enumerate(d):
        if a in d[:i]:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    return apply_op(_flip, (input,), {"dims": d})


@defop(name="roll", promote=None)
def _roll(xp: Any, x: Any, *, shifts: tuple[int, ...], dims: Any) -> Any:
    """x shifted circularly by ``shifts`` along ``dims`` (flattened when ``dims`` is None).
    VJP: roll g by ``-shifts``."""
    if dims is None:
        return xp.roll(x, shifts[0])
    return xp.roll(x, shifts, axis=dims)


@_roll.vjp
def _roll_vjp(ctx: Any, g: Any) -> Any:
    return (ns.roll(g, shifts=tuple(-s for s in ctx.shifts), dims=ctx.dims),)


def roll(input: Any, shifts: Any, dims: Any = None) -> Any:
    """Roll ``input`` by ``shifts`` along ``dims``; with no dims, over the flattened tensor."""
    sh = _ints(shifts)
    nd = input._data.ndim
    if dims is None or (isinstance(dims, (tuple, list)) and len(dims) == 0):
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        return apply_op(_roll, (input,), {"shifts": sh, "dims": None})
    d = _ints(dims)
    if len(sh) != len(d):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(d)}")
    d = tuple(wrap_dim(i, nd) for i in d)
    return apply_op(_roll, (input,), {"shifts": sh, "dims": d})
