"""OpInfo rows for chainrule/ops/prelu.py (PReLU as one op), reached through
``F.prelu`` with a shared slope and with one slope per channel, against PyTorch's."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _away_from_zero(rng, shape):
    x = rng.uniform(0.2, 2.0, shape)
    return x * rng.choice([-1.0, 1.0], shape)


def _samples(rng):
    return [
        Sample((_away_from_zero(rng, (3, 4, 5)), rng.uniform(0.1, 0.5, (4,))), name="per_channel"),
        Sample((_away_from_zero(rng, (2, 3, 2, 2)), rng.uniform(-0.5, 0.5, (1,))), name="shared"),
        Sample((_away_from_zero(rng, (6,)), np.array([0.25])), name="1d"),
    ]


OPS = [
    OpInfo(
        "prelu_kernel",
        lambda m, x, w: m.nn.functional.prelu(x, w),
        samples=_samples,
    ),
]
