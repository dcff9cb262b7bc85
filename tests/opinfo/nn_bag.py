"""OpInfo rows for ``F.embedding_bag`` (chainrule/nn/_functional_bag.py, composed from
indexing, ``index_add`` and ``max``)."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _bag(m, idx, w, offsets=None, psw=None, **kw):
    return m.nn.functional.embedding_bag(idx, w, offsets, per_sample_weights=psw, **kw)


def _samples(rng):
    w = lambda: rng.uniform(-1, 1, (6, 3))  # noqa: E731
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 0, 1])
    off = np.array([0, 4, 4, 7])
    out = [Sample((idx, w(), off), {"mode": mode}, name=mode) for mode in ("sum", "mean", "max")]
    out += [
        Sample((idx, w(), off, rng.uniform(-2, 2, (9,))), {"mode": "sum"}, name="psw"),
        Sample((idx.reshape(3, 3), w()), {"mode": "mean"}, name="2d"),
        Sample((idx.reshape(3, 3), w()), {"mode": "max"}, name="2d_max"),
        Sample(
            (idx, w(), np.array([0, 2, 9])),
            {"mode": "sum", "include_last_offset": True},
            name="last_offset",
        ),
        Sample((idx, w(), off), {"mode": "mean", "padding_idx": 4}, name="padding_mean"),
        Sample((idx, w(), off), {"mode": "max", "padding_idx": 2}, name="padding_max"),
    ]
    return out


OPS = [OpInfo("embedding_bag", _bag, samples=_samples, covers=())]
