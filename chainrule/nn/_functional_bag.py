"""``F.embedding_bag``: sums, means or maxima of bags of embedding rows, without building the
per-entry embeddings tensor as a user-visible intermediate.

A bag is a run of ``input`` between consecutive ``offsets`` (or a row of a 2-d ``input``).
``sum`` / ``mean`` gather the rows and add them into their bags with one ``index_add``; ``max``
lays the bags out as a padded (bags, longest bag, dim) block and reduces it. Entries equal to
``padding_idx`` are left out of every bag (and of the mean's count); an empty bag gives zeros.
Everything is composed from differentiable ops, so gradients (and double backward) reach
``weight`` and ``per_sample_weights``.
"""

from __future__ import annotations

import numpy as np

from chainrule import _kinds
from chainrule import ops as _ops
from chainrule._creation import full, ones_like, tensor, zeros
from chainrule._dispatch import upper as _upper
from chainrule._tensor import Tensor
from chainrule.autograd.grad_mode import no_grad
from chainrule.backends import backend_of
from chainrule.ops.composite_node import composite

__all__ = ["embedding_bag"]


def _host(t: Tensor) -> np.ndarray:
    """``t``'s values on the host (a copy from a GPU)."""
    return backend_of(t._data).to_host(t._data)


def _index_dtype_check(t: Tensor, argno: int, what: str) -> None:
    if not _kinds.is_integral(t._data):
        raise RuntimeError(
            f"Expected tensor for argument #{argno} '{what}' to have one of the following "
            f"scalar types: Long, Int; but got {t.type()} instead (while checking arguments "
            "for embedding_bag)"
        )


def _renorm_rows_(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Scale the rows ``idx`` of ``weight`` in place to norm at most ``max_norm`` (PyTorch's
    ``embedding_renorm_``: rows over the limit get factor max_norm / (norm + 1e-7))."""
    rows = np.unique(idx)
    if rows.size == 0:
        return
    with no_grad():
        r = tensor(rows, device=weight.device)
        w = weight[r]
        a = w.abs()
        if norm_type == float("inf"):
            norm = a.amax(1, keepdim=True)
        elif norm_type == 2:
            norm = (w * w).sum(1, keepdim=True).sqrt()
        else:
            norm = (a**norm_type).sum(1, keepdim=True) ** (1.0 / norm_type)
        scale = _ops.where(norm > max_norm, max_norm / (norm + 1e-7), ones_like(norm))
        weight[r] = w * scale


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """See ``_embedding_bag``. Recorded as PyTorch's one ``EmbeddingBagBackward0`` over weight
    (and the per-sample weights) unless ``sparse`` (Note [composite nodes] in
    chainrule/ops/composite_node.py)."""
    args = (max_norm, norm_type, scale_grad_by_freq, mode, sparse)
    rest = (include_last_offset, padding_idx)
    if sparse or not isinstance(weight, Tensor):
        return _embedding_bag(input, weight, offsets, *args, per_sample_weights, *rest)
    if max_norm is not None:
        # PyTorch renormalizes the rows in place before its one node: so here, by one forward
        # without a graph, whose result is dropped; the node then reads the renormalized table.
        with no_grad():
            _embedding_bag(input, weight, offsets, *args, per_sample_weights, *rest)
        args = (None, norm_type, scale_grad_by_freq, mode, sparse)
    # Sums and means are linear in the table (PyTorch saves neither it nor, for the table's
    # gradient, anything but the per-sample weights). A maximum is too, once the entries that
    # hold each bag's maxima are fixed: the first forward finds them and keeps them in `plan`
    # (PyTorch keeps the same indices), and every later run of the function gathers those
    # entries, so the table is not saved and may change in place before the backward.
    if per_sample_weights is None:
        plan: dict[str, np.ndarray] = {}
        return composite(
            "EmbeddingBagBackward0",
            lambda w: _embedding_bag(input, w, offsets, *args, None, *rest, plan=plan),
            (weight,),
            linear=True,
        )
    return composite(
        "EmbeddingBagBackward0",
        lambda w, p: _embedding_bag(input, w, offsets, *args, p, *rest),
        (weight, per_sample_weights),
        reads="bilinear",
    )


def _embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
    plan: dict[str, np.ndarray] | None = None,
) -> Tensor:
    """Reduce bags of rows of ``weight``: out[b] = reduce_{j in bag b} psw[j] * weight[input[j]].

    Args:
        input: indices, 1-d with ``offsets`` (bag b is ``input[offsets[b]:offsets[b+1]]``) or
            2-d (each row a bag; ``offsets`` must be None).
        weight: the (num_embeddings, dim) table.
        offsets: start of each bag (with ``include_last_offset``, the last entry is the end of
            the last bag).
        max_norm: rows used are first renormalized in place to norm <= max_norm.
        norm_type: the p of that norm.
        scale_grad_by_freq: scale each row's gradient by 1 / (its count in ``input``).
        mode: ``"sum"``, ``"mean"`` or ``"max"``.
        sparse: ``weight.grad`` is a sparse COO tensor (the looked-up rows).
        per_sample_weights: one weight per entry of ``input`` (``mode="sum"`` only).
        include_last_offset: see ``offsets``.
        padding_idx: entries with this index are left out of their bag.
        plan: for ``mode="max"``, where the entries holding the maxima are kept after the
            first call and read by later ones (the result is then linear in ``weight``).

    Returns:
        (number of bags, dim) tensor; an empty bag gives zeros.

    Differs from torch: with ``include_last_offset`` the last bag ends at ``offsets[-1]`` in
    every mode (PyTorch's CPU kernels disagree between modes when ``offsets[-1]`` is less than
    the input's length); ``scale_grad_by_freq`` divides each row's gradient by its count in
    ``input``, as ``F.embedding`` does (PyTorch's ``embedding_bag`` CPU kernel attributes the
    counts to the wrong rows).
    """
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    input, starts, end, per_sample_weights = _flat_bags(input, offsets, per_sample_weights)
    _check_mode(mode, scale_grad_by_freq, sparse, per_sample_weights is not None)
    num = weight.shape[0]
    padding_idx = _wrap_padding_idx(padding_idx, num)
    _index_dtype_check(input, 1, "indices")
    # The bags' structure is worked out on the host (the indices and offsets are read once);
    # the gathers and sums run on weight's device.
    dev = weight.device
    idx = _host(input).astype(np.int64)
    if starts is None:
        starts, end = _offset_starts(offsets, end, include_last_offset)
    bad = np.flatnonzero((idx < 0) | (idx >= num))
    if bad.size:
        j = int(bad[0])
        raise RuntimeError(
            f"Index {j} of input takes value {idx[j]} which is not in the valid range [0, {num})"
        )
    n_bags = starts.size
    pos = np.arange(idx.size)
    bag = np.searchsorted(starts, pos, side="right") - 1
    keep = (pos < end) & (bag >= 0)
    if padding_idx is not None:
        keep &= idx != padding_idx
    if max_norm is not None:
        _renorm_rows_(weight, idx[keep], max_norm, norm_type)
    kept = np.flatnonzero(keep)
    bag_k = bag[kept]
    idx_k = idx[kept]
    if sparse:  # weight.grad a sparse COO tensor (Note [sparse embedding gradients])
        rows = _upper.sparse_rows(weight, idx_k)
    else:
        rows = weight[tensor(idx_k, device=dev)]
    if scale_grad_by_freq:
        # The value is unchanged (rd + 0); only the gradient is scaled by 1 / count.
        counts = np.bincount(idx_k, minlength=num)[idx_k].astype(np.float64)
        s = tensor((1.0 / counts)[:, None], dtype=weight.dtype, device=dev)
        rd = rows.detach()
        rows = rd + (rows - rd) * s
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[tensor(kept, device=dev)].unsqueeze(1)
    dim = weight.shape[1]
    if mode in ("sum", "mean"):
        out = zeros(n_bags, dim, dtype=weight.dtype, device=dev).index_add(
            0, tensor(bag_k, device=dev), rows
        )
        if mode == "mean":
            count = np.maximum(np.bincount(bag_k, minlength=n_bags), 1)
            out = out / tensor(count[:, None].astype(np.float64), dtype=weight.dtype, device=dev)
        return out
    return _bag_max(rows, bag_k, n_bags, dim, weight, plan)


def _bag_max(
    rows: Tensor,
    bag_k: np.ndarray,
    n_bags: int,
    dim: int,
    weight: Tensor,
    plan: dict[str, np.ndarray] | None,
) -> Tensor:
    """Per-bag maximum over the kept rows (zeros for an empty bag). Which entry holds each
    (bag, column) maximum is found on the values (the rows placed in a padded (bags, longest
    bag, dim) block filled with -inf, its argmax along axis 1), or read from ``plan``; the
    result gathers those entries of ``rows``, so its gradient reaches them alone."""
    counts = np.bincount(bag_k, minlength=n_bags)
    longest = int(counts.max()) if counts.size else 0
    dev = weight.device
    if longest == 0:
        return zeros(n_bags, dim, dtype=weight.dtype, device=dev) + rows.sum() * 0
    if plan is not None and "entry" in plan:
        entry = plan["entry"]
    else:
        first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        slot = np.arange(bag_k.size) - first[bag_k]
        flat = bag_k * longest + slot
        with no_grad():
            block = full((n_bags * longest, dim), float("-inf"), dtype=weight.dtype, device=dev)
            block = block.index_put((tensor(flat, device=dev),), rows.detach())
            arg = _host(block.reshape(n_bags, longest, dim).max(1).indices)
        # An empty bag reads entry 0; its row is replaced by zeros below.
        entry = np.where((counts == 0)[:, None], 0, first[:, None] + arg)
        if plan is not None:
            plan["entry"] = entry
    cols = tensor(np.arange(dim)[None, :], device=dev)
    out = rows[tensor(entry, device=dev), cols]
    empty = tensor((counts == 0)[:, None], device=dev)
    return _ops.where(empty, zeros((), dtype=weight.dtype, device=dev), out)


def _flat_bags(
    input: Tensor, offsets: Tensor | None, per_sample_weights: Tensor | None
) -> tuple[Tensor, np.ndarray | None, int, Tensor | None]:
    """The input as one 1-d index list: a 2-d input's rows become bags of equal length (their
    starts returned, ``offsets`` must be None); a 1-d input keeps its ``offsets`` (starts None,
    read by :func:`_offset_starts`). Also returns where the last bag ends."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        n_bags, length = input.shape
        starts = (
            np.arange(0, n_bags * length, length, dtype=np.int64)
            if length
            else np.zeros(n_bags, np.int64)
        )
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        return input.reshape(-1), starts, n_bags * length, per_sample_weights
    if input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return input, None, input.shape[0], per_sample_weights
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")


def _check_mode(mode: str, scale_grad_by_freq: bool, sparse: bool, weighted: bool) -> None:
    """PyTorch's checks of ``mode`` against the options it does not combine with."""
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    if weighted and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )


def _wrap_padding_idx(padding_idx: int | None, num: int) -> int | None:
    """``padding_idx`` checked against the table's ``num`` rows and made non-negative."""
    if padding_idx is None:
        return None
    if not -num <= padding_idx < num:
        raise RuntimeError(
            f"padding_idx must be within the number of embeddings, -{num} through "
            f"{num - 1}, but got {padding_idx}"
        )
    return padding_idx + num if padding_idx < 0 else padding_idx


def _offset_starts(
    offsets: Tensor | None, end: int, include_last_offset: bool
) -> tuple[np.ndarray, int]:
    """The bags' starts from ``offsets`` (checked as PyTorch does) and where the last bag ends
    (``offsets[-1]`` with ``include_last_offset``, else ``end``)."""
    assert offsets is not None  # _flat_bags requires them for a 1-d input
    # torch names the offsets "indices" here too.
    _index_dtype_check(offsets, 1, "indices")
    starts = _host(offsets).astype(np.int64)
    if starts.size and starts[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
            f"start from position 0. However, got {starts[0]}"
        )
    if starts.size and starts[-1] > end:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {end} but got "
            f"offsets[-1] of {starts[-1]}"
        )
    if np.any(np.diff(starts) < 0):
        raise RuntimeError("embedding_bag: offsets have to be non-decreasing")
    if include_last_offset:
        if starts.size == 0:
            raise RuntimeError(
                "embedding_bag: with include_last_offset=True, offsets must have at least "
                "one element"
            )
        return starts[:-1], int(starts[-1])
    return starts, end
