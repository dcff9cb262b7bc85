"""nn.functional calls that PyTorch records as one node, declared as one op each so that a
graph walk prints PyTorch's node (Note [node classes] in chainrule/autograd/_nodes.py):

- ``conv_transpose1d`` (``conv1d`` likewise, in ops/conv.py): the 2-d op's forward on a
  height-1 view of the arrays (no recorded unsqueeze/squeeze), one ``ConvolutionBackward0``;
  its VJP is the 2-d op's VJP, written with chainrule's ops on unsqueezed tensors.
- ``glu`` (``GluBackward0``): out = a sigmoid(b) for the halves (a, b) of x along ``dim``;
  VJP: cat(g s, g a s (1 - s)), s = sigmoid(b).
- ``hardshrink`` / ``softshrink`` (``HardshrinkBackward0`` / ``SoftshrinkBackward0``): VJP
  g where |x| > lambd, else 0.
- ``linear`` without a bias: PyTorch's matmul views an N-d input as a matrix around one
  ``mm`` and records its result's view as ``UnsafeViewBackward0`` (a 1-D input: unsqueeze,
  ``mm``, then an in-place ``squeeze_``, ``SqueezeBackward4``); ``unsafe_view`` and
  ``squeeze_linear`` are reshape and squeeze under those names; ``reshape_alias`` is reshape
  as a view under PyTorch's ``ReshapeAliasBackward0`` (its reshape of a non-contiguous tensor
  that can be viewed, which matmul records for scaled_dot_product_attention's math path).
- ``pixel_shuffle`` / ``pixel_unshuffle`` (``PixelShuffleBackward0`` /
  ``PixelUnshuffleBackward0``): one reshape-transpose-reshape copy; each one's VJP is the
  other.

The VJPs use differentiable ops, so double backward works.
"""

from __future__ import annotations

from typing import Any

from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops._registry import OpDef, apply_op, defop, ns
from chainrule.ops.conv import _conv_transpose2d
from chainrule.ops.shape.reshaping import _reshape, _reshape_vjp, _squeeze

__all__: list[str] = []


# conv1d / conv_transpose1d --------------------------------------------------------------------


def _params2d(ctx: Any) -> dict[str, Any]:
    return {
        "stride": ctx.stride,
        "padding": ctx.padding,
        "dilation": ctx.dilation,
        "groups": ctx.groups,
    }


@defop(name="conv_transpose1d", saves=("y", "w"), promote="same", node_name="ConvolutionBackward0")
def _conv_transpose1d(
    xp: Any,
    y: Any,
    w: Any,
    b: Any,
    *,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    out_hw: Any,
) -> Any:
    """The adjoint of conv1d in its input: conv_transpose2d's forward on height-1 images."""
    out = _conv_transpose2d.forward(
        xp,
        y[:, :, None],
        w[:, :, None],
        b,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
        out_hw=out_hw,
    )
    return out[:, :, 0]


@_conv_transpose1d.vjp
def _conv_transpose1d_vjp(ctx: Any, g: Any) -> Any:
    ny, nw, nb = ctx.needs_input_grad
    p = _params2d(ctx)
    g4 = ns.unsqueeze(g, dim=2)
    gy = gw = gb = None
    if ny:
        w4 = ns.unsqueeze(ctx.w, dim=2)
        gy = ns.squeeze(ns.conv2d(g4, w4, None, **p), dim=2)
        n = ctx.input_shapes[0][2]
        if gy.shape[2] != n:  # output_padding >= stride (dilation > 1): extra trailing columns
            gy = ns.index(gy, index=(slice(None), slice(None), slice(0, n)))
    if nw:
        y4 = ns.unsqueeze(ctx.y, dim=2)
        k = (1, ctx.input_shapes[1][2])
        gw = ns.squeeze(ns.conv2d_weight(g4, y4, kernel=k, **p), dim=2)
    if nb:
        gb = ns.sum(g, dim=(0, 2), keepdim=False)
    return gy, gw, gb


def conv_transpose1d(y: Any, w: Any, b: Any, params: dict[str, Any]) -> Any:
    """conv_transpose1d of a batched (N, C, L) ``y`` with checked 2-d ``params``."""
    return apply_op(_conv_transpose1d, (y, w, b), params)


# glu ------------------------------------------------------------------------------------------


@defop(name="glu", saves=("x",), promote=None)
def _glu(xp: Any, x: Any, *, dim: int) -> Any:
    """a sigmoid(b), (a, b) the halves of x along ``dim``."""
    from chainrule.ops._opdef import REGISTRY

    a, b = xp.split(x, 2, axis=dim)
    return a * REGISTRY["sigmoid"].forward(xp, b)


@_glu.vjp
def _glu_vjp(ctx: Any, g: Any) -> Any:
    x, d = ctx.x, ctx.dim
    n = ctx.input_shapes[0][d] // 2
    pre = (slice(None),) * d
    a = ns.index(x, index=pre + (slice(0, n),))
    s = ns.sigmoid(ns.index(x, index=pre + (slice(n, 2 * n),)))
    ga = g * s
    gb = ga * a * (1 - s)
    return (ns.cat(ga, gb, dim=d, sizes=(n, n)),)


@refuses_complex("glu")
def glu(x: Any, dim: int) -> Any:
    """glu of ``x`` along the checked, wrapped ``dim`` (of even size)."""
    return apply_op(_glu, (x,), {"dim": dim})


# hardshrink / softshrink ----------------------------------------------------------------------


@defop(name="hardshrink", saves=("x",), promote=None)
def _hardshrink(xp: Any, x: Any, *, lambd: float) -> Any:
    """x where |x| > lambd, else 0."""
    return xp.where(xp.abs(x) > lambd, x, xp.zeros((), x.dtype))


def _shrink_vjp(ctx: Any, g: Any) -> Any:
    return (ns.where(ns.abs(ctx.x) > ctx.lambd, g, 0.0),)


_hardshrink.vjp(_shrink_vjp)


@defop(name="softshrink", saves=("x",), promote=None)
def _softshrink(xp: Any, x: Any, *, lambd: float) -> Any:
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0."""
    lam = xp.asarray(lambd, dtype=x.dtype)
    zero = xp.zeros((), x.dtype)
    return xp.where(x > lam, x - lam, xp.where(x < -lam, x + lam, zero))


_softshrink.vjp(_shrink_vjp)


@refuses_complex("hardshrink")
def hardshrink(x: Any, lambd: float) -> Any:
    return apply_op(_hardshrink, (x,), {"lambd": float(lambd)})


@refuses_complex("softshrink")
def softshrink(x: Any, lambd: float) -> Any:
    return apply_op(_softshrink, (x,), {"lambd": float(lambd)})


# pixel_shuffle / pixel_unshuffle --------------------------------------------------------------


@defop(name="pixel_shuffle", promote=None)
def _pixel_shuffle(xp: Any, x: Any, *, r: int) -> Any:
    """(*, C r^2, H, W) -> (*, C, H r, W r): out[..., c, h r + i, w r + j] =
    x[..., c r^2 + i r + j, h, w]."""
    *lead, c, h, w = x.shape
    nl = len(lead)
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    y = y.transpose(*range(nl), nl, nl + 3, nl + 1, nl + 4, nl + 2)
    return xp.ascontiguousarray(y).reshape(*lead, c // (r * r), h * r, w * r)


@defop(name="pixel_unshuffle", promote=None)
def _pixel_unshuffle(xp: Any, x: Any, *, r: int) -> Any:
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle."""
    *lead, c, hr, wr = x.shape
    nl = len(lead)
    h, w = hr // r, wr // r
    y = x.reshape(*lead, c, h, r, w, r)
    y = y.transpose(*range(nl), nl, nl + 2, nl + 4, nl + 1, nl + 3)
    return xp.ascontiguousarray(y).reshape(*lead, c * r * r, h, w)


@_pixel_shuffle.vjp
def _pixel_shuffle_vjp(ctx: Any, g: Any) -> Any:
    return (ns.pixel_unshuffle(g, r=ctx.r),)


@_pixel_unshuffle.vjp
def _pixel_unshuffle_vjp(ctx: Any, g: Any) -> Any:
    return (ns.pixel_shuffle(g, r=ctx.r),)


def pixel_shuffle(x: Any, r: int) -> Any:
    return apply_op(_pixel_shuffle, (x,), {"r": int(r)})


def pixel_unshuffle(x: Any, r: int) -> Any:
    return apply_op(_pixel_unshuffle, (x,), {"r": int(r)})


# linear's views ------------------------------------------------------------------------------

_unsafe_view = OpDef(
    "unsafe_view", _reshape.forward, ("x",), promote=None, node_name="UnsafeViewBackward0"
)
_unsafe_view.vjp(_reshape_vjp)
_squeeze_linear = OpDef(
    "squeeze_linear",
    _squeeze.forward,
    ("x",),
    view=True,
    promote=None,
    node_name="SqueezeBackward4",
)
_squeeze_linear.vjp(_reshape_vjp)


_reshape_alias = OpDef(
    "reshape_alias",
    _reshape.forward,
    ("x",),
    view=True,
    promote=None,
    node_name="ReshapeAliasBackward0",
)
_reshape_alias.vjp(_reshape_vjp)


def reshape_alias(x: Any, shape: tuple[int, ...]) -> Any:
    """x viewed with ``shape`` (the caller checks that a view exists), recorded as PyTorch's
    ``_reshape_alias`` (ReshapeAliasBackward0)."""
    return apply_op(_reshape_alias, (x,), {"shape": shape})


def unsafe_view(x: Any, shape: tuple[int, ...]) -> Any:
    """x reshaped (a fresh product's result), recorded as PyTorch's ``UnsafeViewBackward0``."""
    return apply_op(_unsafe_view, (x,), {"shape": shape})


def squeeze0(x: Any) -> Any:
    """x without its leading size-1 dim, recorded as PyTorch's ``squeeze_`` (SqueezeBackward4)."""
    return apply_op(_squeeze_linear, (x,), {"dim": (0,)})
