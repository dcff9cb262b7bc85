"""OpInfo rows for chainrule/ops/order_stats.py (values and gradients vs PyTorch, gradcheck in
float64)."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample
from tests.opinfo.scattering import _u


def _qs(rng, interpolation):
    return [
        Sample((_u(rng, 3, 5), 0.3), {"dim": 1, "interpolation": interpolation}, name="dim1"),
        Sample(
            (_u(rng, 4, 2), np.array([0.1, 0.25, 0.9])),
            {"dim": 0, "keepdim": True, "interpolation": interpolation},
            name="q_vec",
        ),
        Sample((_u(rng, 2, 3), 0.5), {"interpolation": interpolation}, name="all"),
    ]


def _nanq(rng):
    x = _u(rng, 3, 5)
    x[0, 1] = x[2, 3] = x[2, 0] = np.nan
    return [
        Sample((x, 0.4), {"dim": 1}, name="nan_rows"),
        Sample((x, np.array([0.2, 0.7])), {"dim": 1, "keepdim": True}, name="q_vec"),
    ]


OPS = [
    *[
        OpInfo(
            f"quantile_{i}",
            lambda m, x, q, **k: m.quantile(x, q, **k),
            covers=(),
            samples=lambda rng, i=i: _qs(rng, i),
        )
        for i in ("linear", "lower", "higher", "midpoint", "nearest")
    ],
    OpInfo(
        "nanquantile",
        lambda m, x, q, **k: x.nanquantile(q, **k),
        covers=(),
        samples=_nanq,
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpInfo(
        "histogram",
        lambda m, x, *b, **k: tuple(m.histogram(x, *b, **k)),
        covers=(),
        differentiable=False,
        samples=lambda rng: [
            Sample((_u(rng, 20),), {"bins": 5}, name="bins"),
            Sample(
                (_u(rng, 4, 5),),
                {"bins": 4, "range": (-1.0, 1.0), "density": True},
                name="range_density",
            ),
            Sample((_u(rng, 6), np.array([-2.0, -0.5, 0.0, 2.0])), name="edges"),
            Sample((_u(rng, 6),), {"bins": 3, "weight": None}, name="weightless"),
        ],
    ),
]
