"""``ctc_loss``: connectionist temporal classification, as a differentiable composition.

The forward (alpha) recursion over time runs on the extended label sequence (a blank between
and around the labels), batched over N, in log space with ``logsumexp``; impossible paths use
a large finite negative number instead of -inf so that ``logsumexp`` stays differentiable.
The gradient is therefore the true gradient of the loss with respect to ``log_probs``. (PyTorch
returns exp(log_probs) - posterior, a form that agrees with it once composed with
``log_softmax``, the usual input; see the tests.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.backends import backend_of
from chainrule.nn._functional._device import on_input_device

__all__ = ["ctc_loss"]

_NEG = -1e30  # "log 0" that stays finite (fits float32)


def _lengths(v: Any, n: int) -> np.ndarray:
    a = backend_of(v._data).to_host(v._data) if isinstance(v, Tensor) else np.asarray(v)
    a = a.astype(np.int64).reshape(-1)
    if a.shape[0] != n:
        raise RuntimeError(
            f"Expected tensor to have size {n} at dimension 0, but got size {a.shape[0]}"
        )
    return a


@on_input_device
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """-log sum over the alignments of ``targets`` to ``log_probs`` (T, N, C) of the product
    of their per-step probabilities. ``targets`` is (N, S) padded or the 1-D concatenation of
    the targets; ``reduction='mean'`` divides each loss by its target length, then averages.
    Infinite losses (no alignment) become 0 with ``zero_infinity``."""
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = _ops.unsqueeze(log_probs, 1)
        targets = _ops.unsqueeze(targets, 0) if targets.ndim == 1 else targets
    t_max, n, c = log_probs.shape
    # The alignment structure is built on the host (targets and lengths read there); the
    # recursion runs on log_probs' device.
    be = backend_of(log_probs._data)
    where = be.device_index(log_probs._data)

    def _dev(a: Any) -> Tensor:
        return _new_tensor(be.from_host(np.asarray(a), where))

    if blank < 0 or blank >= c:
        raise RuntimeError("blank must be in label range")
    il = _lengths(input_lengths, n)
    tl = _lengths(target_lengths, n)
    if np.any(il > t_max):
        raise RuntimeError(
            f"Expected input_lengths to have value at most {t_max}, but got "
            f"value {int(il.max())} (while checking arguments for "
            "ctc_loss_allocate_outputs)"
        )
    tg = backend_of(targets._data).to_host(targets._data).astype(np.int64)
    s_max = int(tl.max()) if n else 0
    lab = np.full((n, max(s_max, 1)), blank, np.int64)
    if tg.ndim == 2:
        if tg.shape[1] < s_max:
            raise RuntimeError(
                f"Expected tensor to have size at least {s_max} at dimension 1, but got size "
                f"{tg.shape[1]} for argument #2 'targets' (while checking arguments for "
                "ctc_loss_allocate_outputs)"
            )
        for i in range(n):
            lab[i, : tl[i]] = tg[i, : tl[i]]
    else:
        offs = np.concatenate([[0], np.cumsum(tl)])
        for i in range(n):
            lab[i, : tl[i]] = tg[offs[i] : offs[i + 1]]
    big_l = 2 * max(s_max, 1) + 1
    ext = np.full((n, big_l), blank, np.int64)
    ext[:, 1::2] = lab
    pos = np.arange(big_l)
    valid = pos[None, :] < (2 * tl + 1)[:, None]
    skip = np.zeros((n, big_l), bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    skip &= valid
    dt = log_probs._data.dtype
    neg = _dev(np.full((n, 1), _NEG, dt))
    neg2 = _dev(np.full((n, 2), _NEG, dt))
    skip_t = _dev(skip)
    valid_t = _dev(valid)
    ext_t = _dev(ext)
    negs = _dev(np.full((n, big_l), _NEG, dt))

    init = np.zeros((n, big_l), bool)
    init[:, 0] = True
    init[:, 1] = tl > 0
    emit = _ops.gather(log_probs[0], 1, ext_t)
    alpha = _ops.where(_dev(init & valid), emit, negs)
    for t in range(1, t_max):
        emit = _ops.gather(log_probs[t], 1, ext_t)
        a1 = _ops.cat([neg, alpha[:, :-1]], 1)
        a2 = _ops.where(skip_t, _ops.cat([neg2, alpha[:, :-2]], 1), negs)
        new = _ops.logsumexp(_ops.stack([alpha, a1, a2], 0), 0) + emit
        new = _ops.where(valid_t, new, negs)
        live = _dev((t < il)[:, None])
        alpha = _ops.where(live, new, alpha)
    last = 2 * tl  # index of the final blank; the final label sits just before it
    rows = np.arange(n)
    end = _ops.stack(
        [
            alpha[_dev(rows), _dev(last)],
            _ops.where(
                _dev(tl > 0),
                alpha[_dev(rows), _dev(np.maximum(last - 1, 0))],
                _dev(np.full(n, _NEG, dt)),
            ),
        ],
        0,
    )
    loss = -_ops.logsumexp(end, 0)
    impossible = be.to_host(loss._data) > -_NEG / 2
    if np.any(impossible):
        fill = 0.0 if zero_infinity else np.inf
        loss = _ops.where(_dev(impossible), _dev(np.full(n, fill, dt)), loss)
    if unbatched:
        loss = _ops.reshape(loss, ())
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _ops.sum(loss)
    if reduction == "mean":
        denom = _dev(np.maximum(tl, 1).astype(dt).reshape(loss.shape))
        return _ops.mean(loss / denom)
    raise ValueError(f"{reduction} is not a valid value for reduction")
