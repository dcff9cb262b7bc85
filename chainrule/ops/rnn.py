"""Fused pointwise parts of the LSTM and GRU cells.

A recurrent step is two matrix products (the input's, precomputed for every step of a layer,
and the hidden state's) followed by a dozen elementwise operations on the gates. Each op here
does that elementwise part in one registered op, so a time step records three nodes instead of
about fifteen. Their VJPs are written with ``ns`` ops: in an ordinary backward they run on the
arrays kept from the forward; under ``create_graph`` they recompute the gate activations from
the saved inputs with Tensor ops, so that the backward is itself differentiable.

Gate layout is PyTorch's: LSTM rows ``[i, f, g, o]`` (4 H), GRU rows ``[r, z, n]`` (3 H).
"""

from __future__ import annotations

from typing import Any

from chainrule.ops._registry import OpDef, apply_op, defop, ns

__all__ = ["lstm_pointwise", "gru_pointwise", "lstm_layer_steps"]


def _sigmoid(xp: Any, x: Any) -> Any:
    # 1 / (1 + e^-x): e^-x overflows to inf for very negative x, giving exactly 0, which is
    # the correctly rounded value (NumPy's overflow warning is off, see chainrule/__init__).
    s = xp.exp(-x)
    s += 1
    return xp.reciprocal(s, out=s)


def _cat(parts: tuple[Any, ...]) -> Any:
    """Join gate blocks along the last dim (arrays or Tensors)."""
    d = parts[0].ndim - 1
    return ns.cat(*parts, dim=d, sizes=tuple(p.shape[d] for p in parts))


def _lstm_gates(xp: Any, xg: Any, hg: Any) -> tuple[Any, Any, Any, Any]:
    gates = xg + hg
    h = gates.shape[-1] // 4
    s = _sigmoid(xp, gates)
    return s[..., :h], s[..., h : 2 * h], xp.tanh(gates[..., 2 * h : 3 * h]), s[..., 3 * h :]


@defop(
    name="lstm_pointwise",
    num_outputs=2,
    aux=True,
    saves=("xg", "hg", "c"),
    node_name="LstmPointwiseBackward0",
)
def _lstm_pointwise(xp: Any, xg: Any, hg: Any, c: Any) -> Any:
    """The LSTM cell after its two matrix products: with gates = xg + hg split as [i, f, g, o],
    i, f, o = sigmoid(.), g = tanh(.), c' = f c + i g, and h = o tanh(c').
    VJP: with dc = gc' + gh o (1 - tanh(c')^2): d_gates = [dc g i(1-i), dc c f(1-f),
    dc i (1-g^2), gh tanh(c') o(1-o)] for both xg and hg, and dc f for c."""
    i, f, g, o = _lstm_gates(xp, xg, hg)
    c_new = f * c
    c_new += i * g
    tc = xp.tanh(c_new)
    return (o * tc, c_new), {"i": i, "f": f, "g": g, "o": o, "tc": tc}


@_lstm_pointwise.vjp
def _lstm_pointwise_vjp(ctx: Any, grads: Any) -> Any:
    gh, gc = grads
    c = ctx.c
    if hasattr(c, "grad_fn"):  # create_graph: differentiable gate values
        xg, hg = ctx.xg, ctx.hg
        gates = xg + hg
        h = c.shape[-1]
        i = ns.sigmoid(ns.index(gates, index=(Ellipsis, slice(0, h))))
        f = ns.sigmoid(ns.index(gates, index=(Ellipsis, slice(h, 2 * h))))
        g = ns.tanh(ns.index(gates, index=(Ellipsis, slice(2 * h, 3 * h))))
        o = ns.sigmoid(ns.index(gates, index=(Ellipsis, slice(3 * h, 4 * h))))
        tc = ns.tanh(f * c + i * g)
    else:
        i, f, g, o, tc = ctx.i, ctx.f, ctx.g, ctx.o, ctx.tc
    dc = gc + gh * o * (1 - tc * tc)
    d_gates = _cat(
        (dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g), gh * tc * o * (1 - o))
    )
    return (d_gates, d_gates, dc * f)


def lstm_pointwise(xg: Any, hg: Any, c: Any) -> tuple[Any, Any]:
    """``(h, c')`` of an LSTM step from its gate pre-activations ``xg + hg`` (each (*, 4H), in
    PyTorch's [i, f, g, o] order) and the cell state ``c`` (*, H); see ``_lstm_pointwise``."""
    h, c_new = apply_op(_lstm_pointwise, (xg, hg, c))
    return h, c_new


@defop(
    name="gru_pointwise",
    aux=True,
    saves=("gi", "gh", "h", "b_hh"),
    node_name="GruPointwiseBackward0",
)
def _gru_pointwise(xp: Any, gi: Any, gh: Any, h: Any, b_hh: Any) -> Any:
    """The GRU cell after its two matrix products: with gi = x W_ih^T + b_ih and
    gh = h W_hh^T + b_hh (``b_hh`` added here; None for no bias), both split as [r, z, n]:
    r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r gh_n) and
    h' = (1 - z) n + z h. VJP: with dn = g (1 - z) (1 - n^2): d_gi = [dr, dz, dn], d_gh = [dr,
    dz, dn r] (summed over the batch for b_hh), d_h = g z; where dr = dn gh_n r (1 - r) and
    dz = g (h - n) z (1 - z)."""
    k = h.shape[-1]
    if b_hh is not None:
        gh = gh + b_hh
    rz = _sigmoid(xp, gi[..., : 2 * k] + gh[..., : 2 * k])
    r, z = rz[..., :k], rz[..., k:]
    ghn = gh[..., 2 * k :]
    n = xp.tanh(gi[..., 2 * k :] + r * ghn)
    out = h - n
    out *= z
    out += n
    return out, {"r": r, "z": z, "n": n, "ghn": ghn}


@_gru_pointwise.vjp
def _gru_pointwise_vjp(ctx: Any, g: Any) -> Any:
    h = ctx.h
    k = h.shape[-1]
    if hasattr(h, "grad_fn"):  # create_graph: differentiable gate values
        gi, gh = ctx.gi, ctx.gh
        if ctx.b_hh is not None:
            gh = gh + ctx.b_hh
        r = ns.sigmoid(
            ns.index(gi, index=(Ellipsis, slice(0, k)))
            + ns.index(gh, index=(Ellipsis, slice(0, k)))
        )
        z = ns.sigmoid(
            ns.index(gi, index=(Ellipsis, slice(k, 2 * k)))
            + ns.index(gh, index=(Ellipsis, slice(k, 2 * k)))
        )
        ghn = ns.index(gh, index=(Ellipsis, slice(2 * k, 3 * k)))
        n = ns.tanh(ns.index(gi, index=(Ellipsis, slice(2 * k, 3 * k))) + r * ghn)
    else:
        r, z, n, ghn = ctx.r, ctx.z, ctx.n, ctx.ghn
    dn = g * (1 - z) * (1 - n * n)
    dz = g * (h - n) * z * (1 - z)
    dr = dn * ghn * r * (1 - r)
    d_gi = _cat((dr, dz, dn))
    d_gh = _cat((dr, dz, dn * r))
    return (d_gi, d_gh, g * z, None if ctx.b_hh is None else d_gh)


def gru_pointwise(gi: Any, gh: Any, h: Any, b_hh: Any = None) -> Any:
    """``h'`` of a GRU step from ``gi = x W_ih^T + b_ih``, ``gh = h W_hh^T`` (each (*, 3H), in
    PyTorch's [r, z, n] order), the state ``h`` (*, H) and the optional bias ``b_hh`` (3H,)
    added to ``gh``; see ``_gru_pointwise``."""
    return apply_op(_gru_pointwise, (gi, gh, h, b_hh))


def _steps_fwd(xp: Any, *outs: Any) -> Any:
    return xp.stack(outs, axis=0)


# A dense LSTM layer's step outputs joined along a new time dim (a stack), recorded as the node
# of PyTorch's oneDNN LSTM layer (``mkldnn_rnn_layer``), which is what ``nn.LSTM``'s output shows
# as its ``grad_fn`` on the CPU in float32 (Note [node classes] in chainrule/autograd/_nodes.py).
_lstm_layer_steps = OpDef(
    "lstm_layer_steps", _steps_fwd, (), promote="same", node_name="MkldnnRnnLayerBackward0"
)


@_lstm_layer_steps.vjp
def _lstm_layer_steps_vjp(ctx: Any, g: Any) -> Any:
    return ns.unbind(g, dim=0)


def lstm_layer_steps(outs: Any) -> Any:
    """The step outputs ``outs`` (each (B, H)) of one dense LSTM layer as one (T, B, H) tensor:
    ``stack(outs)``, recorded as PyTorch's ``MkldnnRnnLayerBackward0``."""
    return apply_op(_lstm_layer_steps, tuple(outs), {})
