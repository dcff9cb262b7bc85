"""OpInfo rows for chainrule/ops/linalg.py."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _mm_samples(rng):
    u = lambda *s: rng.uniform(-1, 1, s)  # noqa: E731
    return [
        Sample((u(2, 3), u(3, 4)), name="2d"),
        Sample((u(3), u(3)), name="dot"),
        Sample((u(2, 3), u(3)), name="mv"),
        Sample((u(3), u(3, 2)), name="vm"),
        Sample((u(2, 2, 3), u(3, 4)), name="batch_a"),
        Sample((u(3), u(2, 3, 4)), name="v_batch"),
        Sample((u(2, 1, 2, 3), u(3, 3, 2)), name="bcast"),
    ]


OPS = [
    OpInfo("matmul", lambda m, a, b: a @ b, ref=np.matmul, samples=_mm_samples),
]
