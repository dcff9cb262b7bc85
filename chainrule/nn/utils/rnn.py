"""``chainrule.nn.utils.rnn``: padding and packing variable-length sequences.

A ``PackedSequence`` holds the rows of a batch of sequences sorted by decreasing length and laid
out time step by time step: step t owns the next ``batch_sizes[t]`` rows of ``data``, one per
sequence still running. Every conversion here (pad, pack, unpack) is one gather with a constant
integer index, so gradients flow through all of them (the gather's VJP scatters them back).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Iterable, Sequence

import numpy as np

from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]

_PackedSequenceBase = namedtuple(
    "PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"]
)


def _long(a: Any) -> Tensor:
    return _creation.tensor(np.asarray(a, dtype=np.int64))


def _ints(t: Any) -> np.ndarray:
    return np.asarray(t._data if isinstance(t, Tensor) else t, dtype=np.int64)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse permutation ``inv`` with ``inv[permutation[i]] = i`` (None stays None)."""
    if permutation is None:
        return None
    p = _ints(permutation)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size, dtype=np.int64)
    return _long(inv)


class PackedSequence(_PackedSequenceBase):
    """A batch of variable-length sequences packed time step by time step (see the module
    docstring); ``sorted_indices[j]`` is the original batch index of sorted position j and
    ``unsorted_indices`` its inverse (both None when the batch was already sorted).

    Build one with ``pack_padded_sequence`` or ``pack_sequence`` rather than by hand.
    """

    __slots__ = ()

    def __new__(
        cls,
        data: Any,
        batch_sizes: Any = None,
        sorted_indices: Any = None,
        unsorted_indices: Any = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes)), as torch accepts
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise TypeError(
                    "PackedSequence: expected data and batch_sizes, or a (data, batch_sizes) pair"
                )
            data, batch_sizes = data
        if not isinstance(batch_sizes, Tensor):
            batch_sizes = _long(batch_sizes)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)``; the index tensors follow data's device, ``batch_sizes`` stays on
        the CPU (as in PyTorch). Returns self when data is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        dev = data.device
        si = None if self.sorted_indices is None else self.sorted_indices.to(dev)
        ui = None if self.unsorted_indices is None else self.unsorted_indices.to(dev)
        return type(self)(data, self.batch_sizes, si, ui)

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``to("cuda")``."""
        return self.to("cuda", *args, **kwargs)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``to("cpu")``."""
        return self.to("cpu", *args, **kwargs)

    def _dtype(self, name: str) -> PackedSequence:
        from chainrule import _dtype

        return self.to(getattr(_dtype, name))

    def double(self) -> PackedSequence:
        """``data`` as float64."""
        return self._dtype("float64")

    def float(self) -> PackedSequence:
        """``data`` as float32."""
        return self._dtype("float32")

    def half(self) -> PackedSequence:
        """``data`` as float16."""
        return self._dtype("float16")

    def long(self) -> PackedSequence:
        """``data`` as int64."""
        return self._dtype("int64")

    def int(self) -> PackedSequence:
        """``data`` as int32."""
        return self._dtype("int32")

    def short(self) -> PackedSequence:
        """``data`` as int16."""
        return self._dtype("int16")

    def char(self) -> PackedSequence:
        """``data`` as int8."""
        return self._dtype("int8")

    def byte(self) -> PackedSequence:
        """``data`` as uint8."""
        return self._dtype("uint8")

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a GPU."""
        return bool(self.data.is_cuda)

    def is_pinned(self) -> bool:
        """Always False: there is no pinned host memory here."""
        return False

    def pin_memory(self) -> PackedSequence:
        """Returns self (no pinned memory here)."""
        return self


def _check_lengths(lengths: Any) -> np.ndarray:
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1 or lengths.is_cuda:
            raise RuntimeError(
                "'lengths' argument should be a 1D CPU int64 tensor, but got "
                f"{lengths.ndim}D {lengths.device.type} Long tensor"
            )
        return _ints(lengths)
    arr = np.asarray(lengths)
    if arr.ndim != 1:
        raise RuntimeError(
            "'lengths' argument should be a 1D CPU int64 tensor, but got "
            f"{arr.ndim}D cpu Long tensor"
        )
    return arr.astype(np.int64)


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) whose sequence b has
    ``lengths[b]`` valid steps.

    With ``enforce_sorted`` the lengths must be non-increasing; otherwise the batch is sorted
    by decreasing length (stably) and the permutation kept in ``sorted_indices``.

    Raises:
        RuntimeError: unsorted lengths with ``enforce_sorted``, a length <= 0 or longer than
            the input, or as many lengths as batch entries.
    """
    lens = _check_lengths(lengths)
    if enforce_sorted:
        if lens.size > 1 and np.any(lens[1:] > lens[:-1]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability."
            )
        order = None
    else:
        order = np.argsort(-lens, kind="stable")
    t_dim, b_dim = (1, 0) if batch_first else (0, 1)
    T, B = input.shape[t_dim], input.shape[b_dim]
    if lens.size != B:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got "
            f"{lens.size} (batch_size={B})"
        )
    if lens.size and lens.min() <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an "
            "element in 'lengths' that is <= 0"
        )
    sorted_lens = lens if order is None else lens[order]
    if sorted_lens.size and sorted_lens[0] > T:
        raise RuntimeError(
            f"pack_padded_sequence: a length ({int(sorted_lens[0])}) exceeds "
            f"the input's sequence length ({T})"
        )
    steps = int(sorted_lens[0]) if sorted_lens.size else 0
    batch_sizes = (sorted_lens[None, :] > np.arange(steps)[:, None]).sum(1)
    src = np.arange(B) if order is None else order
    # Row (t, j) of the packed data is input[t, src[j]]: one gather from the flattened input.
    t_idx = np.repeat(np.arange(steps), batch_sizes)
    j_idx = np.concatenate([np.arange(b) for b in batch_sizes]) if steps else t_idx
    b_idx = src[j_idx]
    flat = t_idx * B + b_idx if not batch_first else b_idx * T + t_idx
    rest = tuple(input.shape[2:])
    data = _ops.reshape(input, (T * B,) + rest)[flat]
    si = None if order is None else _long(order)
    return PackedSequence(data, _long(batch_sizes), si, invert_permutation(si))


def _packed_lengths(batch_sizes: np.ndarray) -> np.ndarray:
    """Length of each sorted position: the number of steps whose batch reaches it."""
    n = int(batch_sizes[0]) if batch_sizes.size else 0
    return (batch_sizes[None, :] > np.arange(n)[:, None]).sum(1).astype(np.int64)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Undo ``pack_padded_sequence``: ``(padded, lengths)`` with padded (T, B, *) (or
    (B, T, *)), in the original batch order, T = the longest length or ``total_length``.

    Raises:
        ValueError: ``total_length`` shorter than the longest sequence.
    """
    data = sequence.data
    bs = _ints(sequence.batch_sizes)
    steps = bs.size
    T = steps
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest "
                f"sequence in input, but got total_length={total_length} and max "
                f"sequence length being {steps}"
            )
        T = int(total_length)
    lens = _packed_lengths(bs)
    B = lens.size
    N = data.shape[0]
    offsets = np.concatenate([[0], np.cumsum(bs)[:-1]]).astype(np.int64)
    # idx[t, j]: the packed row of step t for sorted position j, or N (a padding row).
    idx = np.full((T, B), N, dtype=np.int64)
    for t in range(steps):
        idx[t, : bs[t]] = offsets[t] + np.arange(bs[t])
    if sequence.unsorted_indices is not None:
        ui = _ints(sequence.unsorted_indices)
        idx = idx[:, ui]
        lens = lens[ui]
    pad = _creation.full(
        (1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device
    )
    ext = _ops.cat([data, pad], 0)
    out = ext[idx.T if batch_first else idx]
    return out, _long(lens)


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences of shapes (L_i, *) into (max L, B, *) (or (B, max L, *)), filling the
    missing steps with ``padding_value`` after each sequence (``padding_side="right"``) or
    before it (``"left"``)."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    seqs = list(_ops.unbind(sequences, 0) if isinstance(sequences, Tensor) else sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    rest = tuple(seqs[0].shape[1:])
    for s in seqs[1:]:
        r = tuple(s.shape[1:])
        if r != rest:
            d = next((k for k in range(min(len(r), len(rest))) if r[k] != rest[k]), 0)
            a = rest[d] if d < len(rest) else 1
            b = r[d] if d < len(r) else 1
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b "
                f"({b}) at non-singleton dimension {d + 1}"
            )
    lens = np.array([s.shape[0] for s in seqs], dtype=np.int64)
    T, B = int(lens.max()), len(seqs)
    N = int(lens.sum())
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    t = np.arange(T)[:, None]
    shift = (T - lens)[None, :] if padding_side == "left" else np.zeros((1, B), np.int64)
    pos = t - shift  # step within each sequence
    idx = np.where((pos >= 0) & (pos < lens[None, :]), starts[None, :] + pos, N)
    flat = _ops.cat(seqs, 0)
    pad = _creation.full((1,) + rest, padding_value, dtype=flat.dtype, device=flat.device)
    ext = _ops.cat([flat, pad], 0)
    return ext[idx.T if batch_first else idx]


def unpad_sequence(
    padded_sequences: Tensor, lengths: Any, batch_first: bool = False
) -> list[Tensor]:
    """The inverse of ``pad_sequence`` (right padding): sequence b is the first
    ``lengths[b]`` steps of column b."""
    if not batch_first:
        padded_sequences = _ops.transpose(padded_sequences, 0, 1)
    lens = _check_lengths(lengths)
    return [padded_sequences[b][: int(n)] for b, n in enumerate(lens)]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """``pack_padded_sequence(pad_sequence(sequences), lengths)`` of sequences (L_i, *)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The inverse of ``pack_sequence``: the list of sequences (L_i, *), in the original
    order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
