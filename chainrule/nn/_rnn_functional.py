"""The maths of the recurrent layers: single cell steps and the multi-layer time loop.

``rnn`` runs every layer and direction over *packed* rows: step ``t`` owns ``batch_sizes[t]``
consecutive rows of ``data`` (non-increasing, as ``nn.utils.rnn.PackedSequence`` keeps them);
a padded (T, B, *) input is the special case ``batch_sizes = [B] * T``. For each layer and
direction the input's contribution to the gates, ``x W_ih^T + b``, is one matrix product over
all steps; each step then costs one product ``h W_hh^T`` (two with ``proj_size``) and one fused
pointwise op (``chainrule.ops.rnn``), so a step records three nodes whatever the cell.

Gate layouts and equations are PyTorch's:
    RNN:  h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)
    LSTM: [i, f, g, o] = x W_ih^T + b_ih + h W_hh^T + b_hh;  c' = s(f) c + s(i) tanh(g);
          h' = s(o) tanh(c')  (times W_hr^T with proj_size)
    GRU:  [r, z] = s(x W_i^T + b_i + h W_h^T + b_h) for those rows;
          n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn));  h' = (1 - z) n + z h
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.nn import functional as F
from chainrule.ops.rnn import gru_pointwise, lstm_layer_steps, lstm_pointwise

__all__ = ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell", "rnn", "dense_kind"]


def rnn_tanh_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One Elman step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``, x (B, I), h (B, H)."""
    return _ops.tanh(F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh))


def rnn_relu_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One Elman step with ReLU: ``h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return _ops.relu(F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh))


def lstm_cell(
    input: Tensor,
    hx: Sequence[Tensor],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """One LSTM step (``torch.lstm_cell``): ``hx = (h, c)``, returns ``(h', c')`` with the
    equations of the module docstring; x (B, I), h and c (B, H), w_ih (4H, I), w_hh (4H, H)."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    return lstm_pointwise(F.linear(input, w_ih, b_ih), F.linear(h, w_hh, b_hh), c)


def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One GRU step (``torch.gru_cell``) with the equations of the module docstring; x (B, I),
    h (B, H), w_ih (3H, I), w_hh (3H, H)."""
    return gru_pointwise(F.linear(input, w_ih, b_ih), F.linear(hx, w_hh), hx, b_hh)


def _step_fn(mode: str, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None) -> Any:
    """The per-step update ``state -> state`` given the step's input gates ``xt`` (which
    already hold ``b_ih``, and ``b_hh`` except for the GRU, whose ``b_hh`` is gated by r)."""
    w_hh_t = _ops.t(w_hh)
    mm = _ops.matmul
    if mode == "LSTM":
        w_hr_t = None if w_hr is None else _ops.t(w_hr)

        def lstm(xt: Tensor, state: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
            h, c = lstm_pointwise(xt, mm(state[0], w_hh_t), state[1])
            return (h if w_hr_t is None else mm(h, w_hr_t), c)

        return lstm
    if mode == "GRU":

        def gru(xt: Tensor, state: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
            h = state[0]
            return (gru_pointwise(xt, mm(h, w_hh_t), h, b_hh),)

        return gru
    act = _ops.tanh if mode == "RNN_TANH" else _ops.relu

    def elman(xt: Tensor, state: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        return (act(xt + mm(state[0], w_hh_t)),)

    return elman


def _direction(
    mode: str,
    x: Tensor,
    batch_sizes: list[int],
    state0: tuple[Tensor, ...],
    w: tuple[Any, ...],
    reverse: bool,
    dense: str | None = None,
) -> tuple[Tensor, tuple[Tensor, ...]]:
    """One layer in one direction over packed rows ``x`` (N, I). Returns the packed outputs
    (N, H_out) (with ``dense``, the steps' outputs stacked as (T, B, H_out), see ``rnn``) and
    the final states (B, *), B = batch_sizes[0], in the batch's order."""
    w_ih, w_hh, b_ih, b_hh, w_hr = w
    if mode == "GRU" or b_ih is None:
        bias = b_ih
    else:
        bias = b_ih + b_hh  # both biases enter the gates additively: add them once
    xg = F.linear(x, w_ih, bias)
    steps = _ops.split(xg, batch_sizes, 0) if len(batch_sizes) > 1 else (xg,)
    step = _step_fn(mode, w_hh, b_hh if mode == "GRU" else None, w_hr)
    n = len(batch_sizes)
    outs: list[Any] = [None] * n
    if not reverse:
        state = state0
        done: list[tuple[Tensor, ...]] = []  # final states of sequences that ended early
        for t in range(n):
            bs = batch_sizes[t]
            cur = state[0].shape[0]
            if bs < cur:
                done.append(tuple(s[bs:cur] for s in state))
                state = tuple(s[:bs] for s in state)
            state = step(steps[t], state)
            outs[t] = state[0]
        if done:
            done.append(state)
            done.reverse()
            state = tuple(_ops.cat([d[k] for d in done], 0) for k in range(len(state)))
    else:
        # Backwards in time the batch grows: a sequence joins at its last step with its
        # initial state.
        last = batch_sizes[-1]
        state = state0 if last == state0[0].shape[0] else tuple(s[:last] for s in state0)
        for t in range(n - 1, -1, -1):
            bs = batch_sizes[t]
            cur = state[0].shape[0]
            if bs > cur:
                state = tuple(_ops.cat([s, s0[cur:bs]], 0) for s, s0 in zip(state, state0))
            state = step(steps[t], state)
            outs[t] = state[0]
    if dense == "onednn":
        return lstm_layer_steps(outs), state
    if dense is not None:
        return _ops.stack(outs, 0), state
    return (_ops.cat(outs, 0) if n > 1 else outs[0]), state


def rnn(
    mode: str,
    data: Tensor,
    batch_sizes: Sequence[int],
    hx: Sequence[Tensor],
    weights: Sequence[Tensor | None],
    num_layers: int,
    bidirectional: bool,
    dropout: float = 0.0,
    training: bool = False,
    dense: str | None = None,
) -> tuple[Tensor, tuple[Tensor, ...]]:
    """A stack of recurrent layers over packed rows.

    Args:
        mode: ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``.
        data: (N, input_size) rows, step t owning ``batch_sizes[t]`` consecutive rows.
        batch_sizes: non-increasing positive ints summing to N.
        hx: the initial states, each (num_layers * num_directions, batch_sizes[0], *): ``(h0,)``
            or, for the LSTM, ``(h0, c0)``.
        weights: per layer and direction, ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` flattened, with
            None for absent biases and projection.
        dropout: probability of zeroing each output of every layer but the last (training
            only).
        dense: None for packed rows; for a dense input (every ``batch_sizes[t]`` equal),
            ``"stack"`` or ``"onednn"``: each layer's outputs are its steps' stacked along a
            new time dim, (T, B, *), as PyTorch builds them, so the output's ``grad_fn`` is
            PyTorch's: ``StackBackward0`` (its generic loop), ``MkldnnRnnLayerBackward0``
            (``"onednn"``, its oneDNN LSTM layer), ``CatBackward0`` when bidirectional.

    Returns:
        The last layer's packed outputs (N, num_directions * H_out) ((T, B, *) with
        ``dense``) and the final states, each
        (num_layers * num_directions, B, *), in the order of ``hx``.
    """
    batch_sizes = [int(b) for b in batch_sizes]
    dirs = 2 if bidirectional else 1
    per_state = [_ops.unbind(s, 0) for s in hx]
    finals: list[list[Tensor]] = [[] for _ in hx]
    x = data
    for layer in range(num_layers):
        outs = []
        if x.ndim == 3:  # a dense layer's (T, B, *) output as the next layer's rows
            x = _ops.reshape(x, (x.shape[0] * x.shape[1], x.shape[2]))
        for d in range(dirs):
            k = layer * dirs + d
            w = tuple(weights[5 * k : 5 * k + 5])
            out, state = _direction(
                mode, x, batch_sizes, tuple(s[k] for s in per_state), w, d == 1, dense
            )
            outs.append(out)
            for lst, s in zip(finals, state):
                lst.append(s)
        x = _ops.cat(outs, outs[0].ndim - 1) if dirs == 2 else outs[0]
        if dropout and training and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    return x, tuple(_ops.stack(lst, 0) for lst in finals)


_PROJ_WARNED: list[bool] = []


def dense_kind(mode: str, proj: bool, data: Tensor, stacklevel: int) -> str:
    """How PyTorch's CPU build joins a dense layer's steps (see ``_rnn_functional.rnn``): its
    oneDNN LSTM layer for a float32 LSTM without projections (``torch.backends.mkldnn.enabled``),
    a stack otherwise; with a projection it warns, once per process as PyTorch does, that
    oneDNN is not used (``stacklevel`` names the frame that called the layer, as PyTorch's
    warning does)."""
    from chainrule._dtype import float32
    from chainrule.backends import mkldnn

    if mode != "LSTM" or data.dtype != float32 or data.device.type != "cpu":
        return "stack"
    if not mkldnn.enabled or data.numel() == 0:
        return "stack"
    if proj:
        if not _PROJ_WARNED:  # PyTorch's TORCH_WARN_ONCE: once per process
            _PROJ_WARNED.append(True)
            warnings.warn(
                "LSTM with projections is not supported with oneDNN. Using default implementation.",
                UserWarning,
                stacklevel=stacklevel,
            )
        return "stack"
    return "onednn"
