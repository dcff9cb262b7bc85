"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and the single-step ``RNNCell``, ``LSTMCell``,
``GRUCell``, with PyTorch's parameter names, shapes, initialisation and input checks, so that
state dicts interchange with PyTorch's. The maths is in ``chainrule.nn._rnn_functional``.

Longer than 400 lines because it holds six public classes whose argument and shape checks
(with PyTorch's error texts) outweigh their forwards.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.nn import _rnn_functional as RF
from chainrule.nn import init
from chainrule.nn.modules.module import Module
from chainrule.nn.parameter import Parameter
from chainrule.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    """The shared body of ``RNN``, ``LSTM`` and ``GRU``: parameters and input handling.

    Parameters, per layer k and direction (suffix ``_reverse`` for the backward one):
    ``weight_ih_l{k}`` (G H, I_k), ``weight_hh_l{k}`` (G H, H_out), ``bias_ih_l{k}`` and
    ``bias_hh_l{k}`` (G H), and with ``proj_size`` ``weight_hr_l{k}`` (proj_size, H); G is the
    number of gates (1, 3 or 4), H_out is ``proj_size or hidden_size`` and I_k is
    ``input_size`` for the first layer, ``num_directions * H_out`` above it. All are drawn from
    U(-1/sqrt(H), 1/sqrt(H)).

    ``flatten_parameters()`` is a no-op (there is no fused weight buffer to compact).
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (
            not isinstance(dropout, numbers.Number)
            or not 0 <= dropout <= 1
            or isinstance(dropout, bool)
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the "
                "probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so "
                "non-zero dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                UserWarning,
                stacklevel=3,
            )
        for name, value in (
            ("input_size", input_size),
            ("hidden_size", hidden_size),
            ("num_layers", num_layers),
            ("proj_size", proj_size),
        ):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                in_size = input_size if layer == 0 else real_hidden * num_directions
                shapes = [
                    ("weight_ih", (gate_size, in_size)),
                    ("weight_hh", (gate_size, real_hidden)),
                ]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_creation.empty(shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Tensor | None]:
        """The parameters in ``_flat_weights_names`` order (read live, so that reassigning a
        parameter or ``Module.to`` is always reflected)."""
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters grouped per layer and direction, as ``_all_weights`` names them."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """No-op: kept for code written for cuDNN's fused weight buffer."""

    def reset_parameters(self) -> None:
        """Every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # Forward ----------------------------------------------------------------------------

    def _state_shapes(self, batch: int) -> list[tuple[int, ...]]:
        d = 2 if self.bidirectional else 1
        out = self.proj_size if self.proj_size > 0 else self.hidden_size
        shapes = [(self.num_layers * d, batch, out)]
        if self.mode == "LSTM":
            shapes.append((self.num_layers * d, batch, self.hidden_size))
        return shapes

    def _weights(self) -> list[Tensor | None]:
        """Five entries per layer and direction: w_ih, w_hh, b_ih, b_hh, w_hr (None where
        absent), as ``_rnn_functional.rnn`` takes them."""
        out: list[Tensor | None] = []
        for names in self._all_weights:
            got = {n.split("_l")[0]: getattr(self, n) for n in names}
            out += [
                got.get(k) for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")
            ]
        return out

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        """PyTorch's input checks: dtype equal to the weights', ``input.dim()`` 2 for packed
        data (``batch_sizes`` given) else 3, and ``input.size(-1) == input_size``."""
        w = self._flat_weights[0]
        if w is not None and input.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype "
                f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                f"model: model.to({input.dtype})"
            )
        expected_dim = 2 if batch_sizes is not None else 3
        if input.ndim != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.ndim}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.shape[-1]}"
            )

    def _mini_batch(self, input: Tensor, batch_sizes: Any) -> int:
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.shape[0] if self.batch_first else input.shape[1]

    def get_expected_hidden_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        """``(num_layers * num_directions, mini_batch, proj_size or hidden_size)``; the batch
        is ``batch_sizes[0]`` for packed data, else read from ``input`` (``batch_first``
        aware)."""
        d = 2 if self.bidirectional else 1
        out = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * d, self._mini_batch(input, batch_sizes), out)

    def check_hidden_size(
        self,
        hx: Tensor,
        expected_hidden_size: tuple[int, ...],
        msg: str = "Expected hidden size {}, got {}",
    ) -> None:
        """RuntimeError ``msg.format(expected, list(hx.size()))`` unless the shapes agree."""
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Tensor | None) -> None:
        """``check_input`` then the hidden state against ``get_expected_hidden_size``."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        """``hx.index_select(1, permutation)`` (the batch dim), or ``hx`` when None."""
        if permutation is None:
            return hx
        return _ops.index_select(hx, 1, permutation)

    def _given_states(self, hx: Any, batched: bool) -> Any:
        """The user's initial states as 3-D tensors (a Tensor, or ``(h_0, c_0)`` for the LSTM),
        with PyTorch's type and rank errors; unbatched states get their batch dim."""
        lstm = self.mode == "LSTM"
        if lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError("LSTM: expected hx to be a tuple (h_0, c_0) of two tensors")
            states = list(hx)
        else:
            if not isinstance(hx, Tensor):
                raise RuntimeError(
                    f"{type(self).__name__}: expected hx to be a Tensor, got {type(hx).__name__}"
                )
            states = [hx]
        want = 3 if batched else 2
        if any(s.ndim != want for s in states):
            kind = "batched 3-D" if batched else "unbatched 2-D"
            if lstm:
                got = ", ".join(f"{s.ndim}-D" for s in states)
                raise RuntimeError(
                    f"For {kind} input, hx and cx should also be {want}-D but got ({got}) tensors"
                )
            raise RuntimeError(
                f"For {kind} input, hx should also be {want}-D but got {states[0].ndim}-D tensor"
            )
        if not batched:
            states = [_ops.unsqueeze(s, 1) for s in states]
        return (states[0], states[1]) if lstm else states[0]

    def _checked_states(
        self,
        laid_out: Tensor,
        hx: Any,
        batch: int,
        batched: bool,
        bs_t: Tensor | None,
        sorted_indices: Tensor | None,
    ) -> Any:
        """The initial states (zeros when ``hx`` is None), reordered by ``permute_hidden`` and
        checked by ``check_forward_args`` in PyTorch's order."""
        lstm = self.mode == "LSTM"
        packed = bs_t is not None
        if hx is None:
            zeros = [
                _creation.zeros(s, dtype=laid_out.dtype, device=laid_out.device)
                for s in self._state_shapes(batch)
            ]
            hidden: Any = (zeros[0], zeros[1]) if lstm else zeros[0]
        else:
            hidden = self._given_states(hx, batched)
        # PyTorch's order: the LSTM checks unpacked states before reordering them. Its packed
        # path calls no check_forward_args (an override is not reached there); the default
        # checks still run, for a clearer error than PyTorch's kernel gives.
        if lstm and packed:
            if hx is not None:
                hidden = self.permute_hidden(hidden, sorted_indices)
            LSTM.check_forward_args(self, laid_out, hidden, bs_t)  # type: ignore[arg-type]
        elif lstm:
            self.check_forward_args(laid_out, hidden, bs_t)
            if hx is not None:
                hidden = self.permute_hidden(hidden, sorted_indices)
        else:
            if hx is not None:
                hidden = self.permute_hidden(hidden, sorted_indices)
            self.check_forward_args(laid_out, hidden, bs_t)
        return hidden

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        """Run the layers over ``input``: (T, B, input_size) (or (B, T, *) with
        ``batch_first``), (T, input_size) unbatched, or a ``PackedSequence``.

        Returns ``(output, h_n)`` (``(output, (h_n, c_n))`` for the LSTM): output (T, B,
        num_directions * H_out) (or packed like the input) holds the last layer's states at
        every step; h_n (num_layers * num_directions, B, H_out) the final states.

        As in PyTorch, the checks and the reordering of the states go through the module's
        own ``check_forward_args`` and ``permute_hidden`` (a subclass may override them),
        called with the input as the user laid it out (batch dim added when unbatched).
        """
        weights = self._weights()
        lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        if packed:
            data, bs_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in bs_t._data]
            batch = batch_sizes[0]
            batched = True
            laid_out: Tensor = data
        else:
            if input.ndim not in (2, 3):
                word = " tensor" if self.mode.startswith("RNN") else ""
                raise ValueError(
                    f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                    f"{input.ndim}D{word} instead"
                )
            bs_t = sorted_indices = unsorted_indices = None
            batched = input.ndim == 3
            laid_out = input if batched else _ops.unsqueeze(input, 0 if self.batch_first else 1)
            batch = laid_out.shape[0] if self.batch_first else laid_out.shape[1]
        hidden = self._checked_states(laid_out, hx, batch, batched, bs_t, sorted_indices)
        states = list(hidden) if lstm else [hidden]
        if not packed:
            x = laid_out
            if self.batch_first:
                x = _ops.transpose(x, 0, 1)
            steps = x.shape[0]
            if steps == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            data = _ops.reshape(x, (steps * batch, self.input_size))
            batch_sizes = [batch] * steps
        out, finals = RF.rnn(
            self.mode,
            data,
            batch_sizes,
            states,
            weights,
            self.num_layers,
            self.bidirectional,
            self.dropout,
            self.training,
            None if packed else RF.dense_kind(self.mode, self.proj_size > 0, data, 2),
        )
        final: Any = (finals[0], finals[1]) if lstm else finals[0]
        if packed:
            output: Any = PackedSequence(out, bs_t, sorted_indices, unsorted_indices)
            return output, self.permute_hidden(final, unsorted_indices)
        output = out
        if self.batch_first:
            # PyTorch's LSTM transposes its output, the GRU and RNN transpose it in place
            # (TransposeBackward1 as grad_fn); the output is a fresh tensor, not a view.
            output = _ops.transpose(output, 0, 1) if lstm else output.transpose_(0, 1)
        if not batched:
            output = _ops.squeeze(output, 0 if self.batch_first else 1)
            if lstm:
                final = (_ops.squeeze(final[0], 1), _ops.squeeze(final[1], 1))
            else:
                final = _ops.squeeze(final, 1)
        return output, self.permute_hidden(final, unsorted_indices)


class RNN(RNNBase):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` with ``act`` tanh
    (default) or relu, over ``num_layers`` stacked layers.

    Args follow PyTorch: ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh',
    bias=True, batch_first=False, dropout=0.0, bidirectional=False)``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self_nl = args[3]
            args = args[:3] + args[4:]
        else:
            self_nl = kwargs.pop("nonlinearity", "tanh")
        if self_nl == "tanh":
            mode = "RNN_TANH"
        elif self_nl == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self_nl}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = self_nl


class LSTM(RNNBase):
    """Long short-term memory, PyTorch's equations (gates [i, f, g, o]):
    ``c_t = s(f) c_{t-1} + s(i) tanh(g)``, ``h_t = s(o) tanh(c_t)`` (times ``W_hr^T`` when
    ``proj_size > 0``), with the gates ``x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh``.
    ``forward(input, (h_0, c_0))`` returns ``(output, (h_n, c_n))``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(
        self, input: Tensor, batch_sizes: Tensor | None
    ) -> tuple[int, int, int]:
        """``(num_layers * num_directions, mini_batch, hidden_size)``: the cell state is
        never projected."""
        d = 2 if self.bidirectional else 1
        return (self.num_layers * d, self._mini_batch(input, batch_sizes), self.hidden_size)

    def check_forward_args(  # type: ignore[override]
        self, input: Tensor, hidden: tuple[Tensor, Tensor], batch_sizes: Tensor | None
    ) -> None:
        """``check_input``, then h_0 against the (projected) hidden size and c_0 against the
        cell size."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def permute_hidden(  # type: ignore[override]
        self, hx: tuple[Tensor, Tensor], permutation: Tensor | None
    ) -> tuple[Tensor, Tensor]:
        """Both states reordered along the batch dim, or ``hx`` when None."""
        if permutation is None:
            return hx
        return (
            _ops.index_select(hx[0], 1, permutation),
            _ops.index_select(hx[1], 1, permutation),
        )


class GRU(RNNBase):
    """Gated recurrent unit, PyTorch's equations (gates [r, z, n]):
    ``n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn))``, ``h' = (1 - z) n + z h``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """Shared body of the cells: ``weight_ih`` (G H, I), ``weight_hh`` (G H, H), ``bias_ih``
    and ``bias_hh`` (G H), all from U(-1/sqrt(H), 1/sqrt(H))."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(_creation.empty((g, input_size), dtype=dtype))
        self.weight_hh = Parameter(_creation.empty((g, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.empty((g,), dtype=dtype))
            self.bias_hh = Parameter(_creation.empty((g,), dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nl = getattr(self, "nonlinearity", "tanh")
        if nl != "tanh":
            s += f", nonlinearity={nl}"
        return s

    def reset_parameters(self) -> None:
        """Every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _prepare(self, input: Tensor, hx: Any, n_states: int) -> tuple[Tensor, list[Tensor], bool]:
        """Checks (PyTorch's texts) and the batch dim for an unbatched input; zero states
        when ``hx`` is None."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if hx is None:
            states = None
        elif n_states == 2:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError("lstm_cell expects two hidden states")
            states = list(hx)
        else:
            states = [hx]
        if states is not None and any(s.ndim not in (1, 2) for s in states):
            bad = next(s for s in states if s.ndim not in (1, 2))
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {bad.ndim}D instead")
        batched = input.ndim == 2
        if not batched:
            input = _ops.unsqueeze(input, 0)
            if states is not None:
                states = [_ops.unsqueeze(s, 0) for s in states]
        if states is None:
            z = (input.shape[0], self.hidden_size)
            states = [
                _creation.zeros(z, dtype=input.dtype, device=input.device) for _ in range(n_states)
            ]
        if input.shape[1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[1]} "
                f"expected {self.input_size}"
            )
        for k, s in enumerate(states):
            if input.shape[0] != s.shape[0]:
                raise RuntimeError(
                    f"Input batch size {input.shape[0]} doesn't match hidden{k} "
                    f"batch size {s.shape[0]}"
                )
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(
                    f"hidden{k} has inconsistent hidden_size: got {s.shape[1]}, "
                    f"expected {self.hidden_size}"
                )
        return input, states, batched


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``, act tanh or relu."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """``h'`` (B, H) from input (B, I) and hx (B, H) (or unbatched (I,), (H,))."""
        input, (h,), batched = self._prepare(input, hx, 1)
        if self.nonlinearity == "tanh":
            cell = RF.rnn_tanh_cell
        elif self.nonlinearity == "relu":
            cell = RF.rnn_relu_cell
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        out = cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else _ops.squeeze(out, 0)


class LSTMCell(RNNCellBase):
    """One LSTM step; ``forward(input, (h, c))`` returns ``(h', c')`` (see ``LSTM``)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        """``(h', c')`` (B, H) each, from input (B, I) and hx = (h, c) (or unbatched)."""
        input, (h, c), batched = self._prepare(input, hx, 2)
        h, c = RF.lstm_cell(
            input, (h, c), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh
        )
        if not batched:
            return _ops.squeeze(h, 0), _ops.squeeze(c, 0)
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step (see ``GRU``)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """``h'`` (B, H) from input (B, I) and hx (B, H) (or unbatched (I,), (H,))."""
        input, (h,), batched = self._prepare(input, hx, 1)
        out = RF.gru_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else _ops.squeeze(out, 0)
