"""PyTorch's torch-level recurrent kernels and sampling/embedding kernels: ``torch.lstm``,
``torch.gru``, ``torch.rnn_tanh``, ``torch.rnn_relu`` (dense and packed overloads), the four
``*_cell`` steps, ``grid_sampler`` (integer mode codes), ``affine_grid_generator``,
``embedding_bag`` (its four outputs), ``embedding_renorm_`` and ``conv_tbc``.

Each is a thin adapter: the maths is that of ``chainrule.nn._rnn_functional`` (the layers' time
loop and cells) or of ``chainrule.nn.functional``, so values and gradients are theirs. What is
here is PyTorch's calling convention for these kernels (flat parameter tuples, integer codes,
the extra outputs). The normalisation and dropout kernels are in ``chainrule._nn_native_norm``.

The four cells are ``chainrule.nn._rnn_functional``'s own functions (same signatures as
PyTorch's). ``import chainrule`` does not load this module (chainrule/_lazy_names.py), so
loading ``chainrule.nn`` with it costs nothing at import.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule._tensor import Tensor
from chainrule.backends import backend_of
from chainrule.nn._rnn_functional import (  # the torch-level cells are nn's own
    gru_cell,
    lstm_cell,
    rnn_relu_cell,
    rnn_tanh_cell,
)

__all__ = [
    "lstm",
    "gru",
    "rnn_tanh",
    "rnn_relu",
    "lstm_cell",
    "gru_cell",
    "rnn_tanh_cell",
    "rnn_relu_cell",
    "grid_sampler",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "affine_grid_generator",
    "embedding_bag",
    "embedding_renorm_",
    "conv_tbc",
]

_DENSE = (
    "input",
    "hx",
    "params",
    "has_biases",
    "num_layers",
    "dropout",
    "train",
    "bidirectional",
    "batch_first",
)
_PACKED = (
    "data",
    "batch_sizes",
    "hx",
    "params",
    "has_biases",
    "num_layers",
    "dropout",
    "train",
    "bidirectional",
)


def _host(t: Tensor) -> np.ndarray:
    """``t``'s values on the host (a copy from a GPU): index structure is worked out there."""
    return backend_of(t._data).to_host(t._data)


def _ops() -> Any:
    from chainrule import ops

    return ops


def _rf() -> Any:
    from chainrule.nn import _rnn_functional

    return _rnn_functional


def _bind(name: str, mode: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pick the overload as PyTorch's argument parser does: the packed one when the second
    argument is the ``batch_sizes`` tensor (for the one-state cells, when the third is a
    tensor too, since the dense form's second argument is ``hx``)."""
    packed = "batch_sizes" in kwargs or "data" in kwargs
    if not packed and len(args) >= 2 and isinstance(args[1], Tensor):
        packed = mode == "LSTM" or (len(args) >= 3 and isinstance(args[2], Tensor))
    names = _PACKED if packed else _DENSE
    got: dict[str, Any] = dict(zip(names, args))
    got.update(kwargs)
    if len(args) > len(names) or set(got) != set(names):
        state = "tuple of Tensors hx" if mode == "LSTM" else "Tensor hx"
        common = "tuple of Tensors params, bool has_biases, int num_layers, float dropout, "
        common += "bool train, bool bidirectional"
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got "
            f"({', '.join(type(a).__name__ for a in args)}), but expected one of:\n"
            f" * (Tensor data, Tensor batch_sizes, {state}, {common})\n"
            f" * (Tensor input, {state}, {common}, bool batch_first)\n"
        )
    got["packed"] = packed
    return got


def _weights(mode: str, params: Any, has_biases: bool, layers: int, dirs: int, proj: bool) -> list:
    """PyTorch's flat ``params`` (per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr])
    as the five entries per layer and direction that ``_rnn_functional.rnn`` takes."""
    params = list(params)
    stride = 2 + 2 * bool(has_biases) + int(proj)
    if len(params) % stride:
        raise RuntimeError(
            f"MatrixRef: ArrayRef size {len(params)} not divisible by stride {stride}"
        )
    if len(params) // stride < layers * dirs:
        raise RuntimeError(
            f"{mode.lower()}: expected {layers * dirs * stride} parameters, got {len(params)}"
        )
    out: list[Tensor | None] = []
    for k in range(layers * dirs):
        group = params[k * stride : (k + 1) * stride]
        w_ih, w_hh = group[0], group[1]
        b_ih, b_hh = (group[2], group[3]) if has_biases else (None, None)
        out += [w_ih, w_hh, b_ih, b_hh, group[-1] if proj else None]
    return out


def _run(name: str, mode: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a = _bind(name, mode, args, kwargs)
    ops = _ops()
    hx = a["hx"]
    if mode == "LSTM":
        if len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        states = list(hx)
    else:
        states = [hx]
    for t in [*states, a["data"] if a["packed"] else a["input"]]:
        if t.ndim < (2 if a["packed"] and t is a["data"] else 3):
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{t.ndim}, {t.ndim - 1}], "
                "but got 2)"
            )
    proj = mode == "LSTM" and states[0].shape[2] != states[1].shape[2]
    layers, bidir = int(a["num_layers"]), bool(a["bidirectional"])
    weights = _weights(mode, a["params"], a["has_biases"], layers, 2 if bidir else 1, proj)
    if a["packed"]:
        data = a["data"]
        batch_sizes = [int(b) for b in _host(a["batch_sizes"]).reshape(-1)]
    else:
        x = a["input"]
        if a["batch_first"]:
            x = ops.transpose(x, 0, 1)
        steps, batch = x.shape[0], x.shape[1]
        data = ops.reshape(x, (steps * batch, x.shape[2]))
        batch_sizes = [batch] * steps
    dense = None if a["packed"] else _rf().dense_kind(mode, proj, data, 4)
    out, finals = _rf().rnn(
        mode,
        data,
        batch_sizes,
        states,
        weights,
        layers,
        bidir,
        float(a["dropout"]),
        a["train"],
        dense,
    )
    if not a["packed"] and a["batch_first"]:
        out = ops.transpose(out, 0, 1) if mode == "LSTM" else out.transpose_(0, 1)  # as nn's
    return (out, *finals)


def lstm(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.lstm``: a stack of LSTM layers, returning ``(output, h_n, c_n)``.

    Dense: ``lstm(input, (h0, c0), params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)`` with input (T, B, I) ((B, T, I) with ``batch_first``).
    Packed: ``lstm(data, batch_sizes, (h0, c0), params, has_biases, num_layers, dropout, train,
    bidirectional)`` over a ``PackedSequence``'s rows. ``params`` per layer and direction:
    w_ih, w_hh, then b_ih, b_hh with ``has_biases``, then w_hr when h0's last size differs
    from c0's (``proj_size``). The equations are those of ``nn.LSTM``:
    [i, f, g, o] = x W_ih^T + b_ih + h W_hh^T + b_hh; c' = s(f) c + s(i) tanh(g);
    h' = s(o) tanh(c') (times W_hr^T with a projection)."""
    out, h, c = _run("lstm", "LSTM", args, kwargs)
    return out, h, c


def gru(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``torch.gru``: ``(output, h_n)`` of a stack of GRU layers (overloads and ``params`` as
    :func:`lstm`, one state ``hx``): [r, z] = s(x W_i^T + b_i + h W_h^T + b_h),
    n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn)), h' = (1 - z) n + z h."""
    out, h = _run("gru", "GRU", args, kwargs)
    return out, h


def rnn_tanh(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``torch.rnn_tanh``: ``(output, h_n)`` of Elman layers,
    h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (overloads as :func:`gru`)."""
    out, h = _run("rnn_tanh", "RNN_TANH", args, kwargs)
    return out, h


def rnn_relu(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``torch.rnn_relu``: as :func:`rnn_tanh` with relu for tanh."""
    out, h = _run("rnn_relu", "RNN_RELU", args, kwargs)
    return out, h


# grid_sampler's integer codes (PyTorch's GridSamplerInterpolation / GridSamplerPadding).
_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def _grid_sample(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    from chainrule.nn import functional as F

    if interpolation_mode not in _INTERP:
        raise RuntimeError(f"grid_sampler(): unknown interpolation mode {interpolation_mode}")
    if padding_mode not in _PADDING:
        raise RuntimeError(f"grid_sampler(): unknown padding mode {padding_mode}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    return F.grid_sample(
        input, grid, _INTERP[interpolation_mode], _PADDING[padding_mode], bool(align_corners)
    )


def grid_sampler(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``torch.grid_sampler``: ``F.grid_sample`` with PyTorch's integer codes,
    ``interpolation_mode`` 0 bilinear, 1 nearest, 2 bicubic and ``padding_mode`` 0 zeros,
    1 border, 2 reflection; 4-d or 5-d input."""
    if input.ndim == 5 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


def _dims_check(input: Tensor, grid: Tensor, nd: int) -> None:
    if input.ndim != nd or grid.ndim != nd:
        raise RuntimeError(
            f"grid_sampler(): expected {nd}D input and grid with same number of dimensions, "
            f"but got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}"
        )


def grid_sampler_2d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``torch.grid_sampler_2d``: :func:`grid_sampler` on (N, C, H, W) input."""
    _dims_check(input, grid, 4)
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``torch.grid_sampler_3d``: :func:`grid_sampler` on (N, C, D, H, W) input (bilinear or
    nearest)."""
    _dims_check(input, grid, 5)
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta: Tensor, size: Any, align_corners: bool) -> Tensor:
    """``torch.affine_grid_generator``: the grid of ``F.affine_grid``,
    grid[n, ..., :] = theta[n] @ (x, y[, z], 1) over the normalized output coordinates."""
    from chainrule.nn import functional as F

    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    return F.affine_grid(theta, list(size), bool(align_corners))


_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(
    weight: Tensor,
    indices: Tensor,
    offsets: Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``torch.embedding_bag``: ``(output, offset2bag, bag_size, max_indices)``.

    ``output`` is ``F.embedding_bag`` with ``mode`` 0 sum, 1 mean, 2 max. The other three are
    the index bookkeeping of PyTorch's CPU kernel: ``offset2bag[j]`` is the bag of entry j
    (empty for a float32 sum without ``padding_idx``, PyTorch's fast path);
    ``bag_size[b]`` the count of non-padding entries (zeros in sum mode); ``max_indices`` the
    row of ``weight`` that gave each maximum ((bags, dim), max mode), ``bag_size`` again in
    mean mode, and zeros in sum mode. Entries past ``offsets[-1]`` with
    ``include_last_offset`` are left out, as in ``F.embedding_bag``.
    """
    from chainrule import _creation
    from chainrule.nn import functional as F

    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    pad = None if padding_idx is None or padding_idx < 0 else int(padding_idx)
    out = F.embedding_bag(
        indices,
        weight,
        offsets,
        scale_grad_by_freq=scale_grad_by_freq,
        mode=_BAG_MODES[mode],
        sparse=sparse,
        per_sample_weights=per_sample_weights,
        include_last_offset=include_last_offset,
        padding_idx=pad,
    )
    idx = _host(indices).reshape(-1).astype(np.int64)
    starts = _host(offsets).reshape(-1).astype(np.int64)
    end = idx.size
    if include_last_offset:
        starts, end = starts[:-1], int(starts[-1])
    n_bags = starts.size
    pos = np.arange(idx.size)
    bag = np.clip(np.searchsorted(starts, pos, side="right") - 1, 0, max(n_bags - 1, 0))
    keep = pos < end
    if pad is not None:
        keep &= idx != pad
    dev = weight.device

    def long(a: Any) -> Tensor:
        return _creation.tensor(np.asarray(a, np.int64), device=dev)

    if mode == 0:
        fast = padding_idx is None and weight._data.dtype == np.float32
        o2b = long(np.zeros(0) if fast else bag)
        zeros = long(np.zeros(n_bags))
        return out, o2b, zeros, long(np.zeros(n_bags))
    sizes = np.bincount(bag[keep], minlength=n_bags)[:n_bags]
    if mode == 1:
        return out, long(bag), long(sizes), long(sizes)
    vals = _host(weight.detach())
    dim = vals.shape[1]
    arg = np.zeros((n_bags, dim), np.int64)
    for b in range(n_bags):
        rows = idx[keep & (bag == b)]
        if rows.size:
            arg[b] = rows[np.argmax(vals[rows], axis=0)]
    return out, long(bag), long(sizes), long(arg)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    """``torch.embedding_renorm_``: scale in place each row of ``input`` named in ``indices``
    whose ``norm_type``-norm exceeds ``max_norm`` by max_norm / (norm + 1e-7); returns
    ``input``. Not differentiable (PyTorch has no derivative for it)."""
    from chainrule import _kinds
    from chainrule.autograd import grad_mode
    from chainrule.nn import _functional_bag

    if not _kinds.is_integral(indices._data):
        raise RuntimeError(
            "Expected tensor for argument #2 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {indices.type()} instead (while checking arguments "
            "for embedding_renorm_)"
        )
    if input.requires_grad and input.grad_fn is None and grad_mode.is_grad_enabled():
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    idx = _host(indices).reshape(-1).astype(np.int64)
    n = input.shape[0]
    bad = idx[(idx < 0) | (idx >= n)]
    if bad.size:
        raise IndexError(
            f"select(): index {int(bad[0])} out of range for tensor of size "
            f"{list(input.shape)} at dimension 0"
        )
    _functional_bag._renorm_rows_(input, idx, float(max_norm), float(norm_type))
    return input


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """``torch.conv_tbc``: see ``nn.functional.conv_tbc``."""
    from chainrule.nn import functional as F

    return F.conv_tbc(input, weight, bias, pad)
