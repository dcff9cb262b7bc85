"""``AdaptiveLogSoftmaxWithLoss``: the efficient softmax approximation of Grave et al. (2016).

Frequent classes (below ``cutoffs[0]``) are scored by a head layer that also scores one
"cluster" token per tail cluster; a class in cluster i has log-probability
log p(cluster i | x) + log p(class | cluster i, x), the second from a low-rank tail projection
of width in_features // div_value^(i+1).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Sequence

import numpy as np

from chainrule import ops as _ops
from chainrule._tensor import Tensor, _new_tensor
from chainrule.nn import functional as F
from chainrule.nn.modules.container import ModuleList, Sequential
from chainrule.nn.modules.linear import Linear
from chainrule.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: ``forward(input, target)`` returns (output, loss), where output[n]
    is the log-probability of target[n] and loss the mean of -output. ``log_prob`` gives the
    full (N, n_classes) log-probabilities and ``predict`` their argmax."""

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            width = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, width, bias=False, dtype=dtype),
                    Linear(width, size, bias=False, dtype=dtype),
                )
            )

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for seq in self.tail:
            for lin in seq:
                lin.reset_parameters()

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:
        td = target.ndim
        if td == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input.ndim != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found "
                    f"inputs with size {list(input.shape)}"
                )
        elif td == 0:
            if input.ndim != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found "
                    f"inputs with size {list(input.shape)}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        x = input if td else _ops.unsqueeze(input, 0)
        t = np.asanyarray(target._data).astype(np.int64).reshape(-1)
        n = t.shape[0]
        if n and (t.min() < 0 or t.max() >= self.n_classes):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but "
                f"values in range [{t.min()}, {t.max()}] were found. "
            )
        # Column of the head's log-softmax each row reads: its class, or its cluster token.
        head_col = t.copy()
        out = _new_tensor(np.zeros(n, dtype=x._data.dtype))
        for i in range(self.n_clusters):
            lo, hi = self.cutoffs[i], self.cutoffs[i + 1]
            rows = np.nonzero((t >= lo) & (t < hi))[0]
            if rows.size == 0:
                continue
            head_col[rows] = self.shortlist_size + i
            rows_t = _new_tensor(rows)
            lp = F.log_softmax(self.tail[i](x[rows_t]), 1)
            local = _ops.gather(lp, 1, _new_tensor((t[rows] - lo).reshape(-1, 1)))
            out = _ops.index_add(out, 0, rows_t, _ops.reshape(local, (-1,)))
        head_lp = F.log_softmax(self.head(x), 1)
        out = out + _ops.reshape(
            _ops.gather(head_lp, 1, _new_tensor(head_col.reshape(-1, 1))), (-1,)
        )
        loss = _ops.mean(-out)
        if not td:
            out = _ops.reshape(out, ())
        return _ASMoutput(out, loss)

    def _full_log_prob(self, x: Tensor, head_out: Tensor) -> Tensor:
        head_lp = F.log_softmax(head_out, 1)
        parts = [head_lp[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            c = self.shortlist_size + i
            parts.append(F.log_softmax(self.tail[i](x), 1) + head_lp[:, c : c + 1])
        return _ops.cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """log p(class | x) for every class: (N, n_classes), or (n_classes,) unbatched."""
        x = input if input.ndim == 2 else _ops.unsqueeze(input, 0)
        out = self._full_log_prob(x, self.head(x))
        return out if input.ndim == 2 else _ops.reshape(out, (self.n_classes,))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (argmax of ``log_prob``)."""
        return _ops.argmax(self.log_prob(input), -1)
