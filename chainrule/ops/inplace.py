"""In-place ops: each reuses an out-of-place op's forward and VJP through ``apply_inplace``,
which writes into the tensor, increments its version and rebases its history."""

from __future__ import annotations

from typing import Any

from chainrule._tensor import Tensor
from chainrule.ops import binary
from chainrule.ops._registry import OpDef, apply_inplace, ns

__all__ = ["fill_", "copy_", "add_", "sub_", "mul_", "div_"]


def _fill_fwd(xp: Any, x: Any, v: Any) -> Any:
    return xp.full_like(x, v)


# The old value is overwritten entirely: no gradient reaches it; a tensor fill value gets the
# sum of g.
_fill = OpDef("fill", _fill_fwd, ("x", "v"), promote=None, node_name="FillBackward0",
              vjps=(None, lambda ctx, g: ns.sum(g, dim=None, keepdim=False)))


def fill_(self: Tensor, value: Any) -> Tensor:
    """Fill ``self`` with ``value`` (a number or a 0-dim tensor), in place."""
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value._data.ndim} dimensions."
        )
    return apply_inplace(_fill, self, (value,))


def _copy_fwd(xp: Any, x: Any, src: Any) -> Any:
    return xp.broadcast_to(src, x.shape).astype(x.dtype)


_copy = OpDef("copy", _copy_fwd, ("x", "src"), promote=None, node_name="CopyBackwards",
              vjps=(None, lambda ctx, g: g))


def copy_(self: Tensor, src: Any) -> Tensor:
    """Copy ``src`` (broadcast, cast to self's dtype) into ``self``. VJP: g to ``src``."""
    if not isinstance(src, Tensor):
        from chainrule._creation import tensor

        src = tensor(src, dtype=self.dtype)
    return apply_inplace(_copy, self, (src,))


def add_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """self += alpha * other."""
    if alpha != 1:
        other = other * alpha
    return apply_inplace(binary._add.op, self, (other,))


def sub_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """self -= alpha * other."""
    if alpha != 1:
        other = other * alpha
    return apply_inplace(binary._sub.op, self, (other,))


def mul_(self: Tensor, other: Any) -> Tensor:
    """self *= other."""
    return apply_inplace(binary.mul.op, self, (other,))


def div_(self: Tensor, other: Any) -> Tensor:
    """self /= other (true division; an integer self fails, as in PyTorch)."""
    return apply_inplace(binary._div.op, self, (other,))
