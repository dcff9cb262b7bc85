"""``torch.gradient``: finite-difference estimates of a function's derivative along dims.

For samples ``f`` at points ``x`` along a dim, with steps ``h_l = x_i - x_{i-1}`` and
``h_r = x_{i+1} - x_i``, the interior estimate is the second-order central difference

    f'(x_i) ~ (-h_r / (h_l (h_l + h_r))) f_{i-1} + ((h_r - h_l) / (h_l h_r)) f_i
              + (h_l / (h_r (h_l + h_r))) f_{i+1}

(``(f_{i+1} - f_{i-1}) / 2h`` for a uniform step ``h``). At the two ends the estimate is a
one-sided difference of order ``edge_order`` (1: ``(f_1 - f_0) / h_0``; 2: the three-point
formula). Spacing is a scalar (the step of every dim), a list of scalars (one step per dim) or
a list of 1-D coordinate tensors (one per dim). The result is built from chainrule's
differentiable ops, so it has gradients with respect to ``input`` (and to the coordinates).
Integer inputs give the default float dtype, as PyTorch.
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

from chainrule import _dtype
from chainrule._tensor import Tensor
from chainrule.ops import cat

__all__ = ["gradient"]


def _dims(input: Tensor, dim: Any) -> list[int]:
    nd = input.ndim
    if dim is None:
        return list(range(nd))
    ds = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    return [int(d) % nd if nd else int(d) for d in ds]


def _spacings(input: Tensor, spacing: Any, dims: list[int], dim_given: bool) -> list[Any]:
    if isinstance(spacing, (numbers.Number, Tensor)) and not (
        isinstance(spacing, Tensor) and spacing.ndim > 0
    ):
        s = spacing.item() if isinstance(spacing, Tensor) else spacing
        return [s] * len(dims)
    sp = list(spacing)
    if len(sp) != len(dims):
        if dim_given:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                f"dim arguments to have the same length, but got a spacing argument of length "
                f"{len(sp)} and a dim argument of length {len(dims)}."
            )
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {input.ndim}', since dim argument was not given, but got "
            f"a list of length {len(sp)}"
        )
    return sp


def _along(v: Tensor, d: int, nd: int) -> Tensor:
    """A 1-D tensor reshaped to broadcast along dim ``d`` of an ``nd``-dim tensor."""
    return v.reshape([-1 if i == d else 1 for i in range(nd)])


def _one_dim(f: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    n = f.shape[d]
    nd = f.ndim

    def sl(start: int, length: int) -> Tensor:
        return f.narrow(d, start if start >= 0 else n + start, length)

    if isinstance(h, Tensor):
        x = h.to(f.dtype) if not h.is_floating_point() else h
        dx = x[1:] - x[:-1]
        hl, hr = _along(dx[:-1], d, nd), _along(dx[1:], d, nd)
        a = -hr / (hl * (hl + hr))
        b = (hr - hl) / (hl * hr)
        c = hl / (hr * (hl + hr))
        mid = a * sl(0, n - 2) + b * sl(1, n - 2) + c * sl(2, n - 2)
        if edge_order == 1:
            first = (sl(1, 1) - sl(0, 1)) / _along(dx[:1], d, nd)
            last = (sl(-1, 1) - sl(-2, 1)) / _along(dx[-1:], d, nd)
        else:
            d1, d2 = _along(dx[:1], d, nd), _along(dx[1:2], d, nd)
            first = (
                -(2 * d1 + d2) / (d1 * (d1 + d2)) * sl(0, 1)
                + (d1 + d2) / (d1 * d2) * sl(1, 1)
                - d1 / (d2 * (d1 + d2)) * sl(2, 1)
            )
            d1, d2 = _along(dx[-2:-1], d, nd), _along(dx[-1:], d, nd)
            last = (
                d2 / (d1 * (d1 + d2)) * sl(-3, 1)
                - (d2 + d1) / (d1 * d2) * sl(-2, 1)
                + (2 * d2 + d1) / (d2 * (d1 + d2)) * sl(-1, 1)
            )
    else:
        mid = (sl(2, n - 2) - sl(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (sl(1, 1) - sl(0, 1)) / h
            last = (sl(-1, 1) - sl(-2, 1)) / h
        else:
            first = (-1.5 * sl(0, 1) + 2 * sl(1, 1) - 0.5 * sl(2, 1)) / h
            last = (0.5 * sl(-3, 1) - 2 * sl(-2, 1) + 1.5 * sl(-1, 1)) / h
    return cat([first, mid, last], dim=d)


def gradient(
    input: Tensor,
    *,
    spacing: Any = 1,
    dim: int | Sequence[int] | None = None,
    edge_order: int = 1,
) -> tuple[Tensor, ...]:
    """Estimate the derivative of ``input`` along each dim of ``dim`` (all dims by default)
    by finite differences (module docstring); one tensor per dim, each of ``input``'s shape."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = _dims(input, dim)
    sp = _spacings(input, spacing, dims, dim is not None)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
    f = input
    if not (f.is_floating_point() or f.is_complex()):
        f = f.to(_dtype.get_default_dtype())
    out = []
    for d, h in zip(dims, sp):
        if isinstance(h, Tensor) and h.ndim == 0:
            h = h.item()
        out.append(_one_dim(f, d, h, edge_order))
    return tuple(out)
