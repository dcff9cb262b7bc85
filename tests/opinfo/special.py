"""OpInfo rows for chainrule/ops/special.py (references: scipy.special)."""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from tests.opinfo.core import OpInfo, Sample, binary_samples, elementwise


def _pos_pair(rng: np.random.Generator) -> list[Sample]:
    # igamma(a, x): a > 0 is not differentiated (PyTorch has no derivative there), x > 0 is.
    return [
        Sample(
            (rng.uniform(0.5, 4, (2, 3)), rng.uniform(0.1, 5, (2, 3))), name="same", no_grad=(0,)
        ),
        Sample(
            (rng.uniform(0.5, 4, (3,)), rng.uniform(0.1, 5, (2, 3))), name="bcast", no_grad=(0,)
        ),
    ]


def _xlogy_samples(rng: np.random.Generator) -> list[Sample]:
    a = rng.uniform(-2, 2, (2, 3))
    a[0, 1] = 0.0  # the x == 0 branch: value 0, gradient in x log(y)... masked to 0
    return binary_samples(low=-2, high=2, low_b=0.2, high_b=4, scalar=2.5)(rng) + [
        Sample((a, rng.uniform(0.2, 4, (2, 3))), name="zero_x"),
    ]


OPS = [
    OpInfo(
        "lgamma", lambda m, x: m.lgamma(x), ref=sc.gammaln, samples=elementwise(low=0.2, high=6)
    ),
    OpInfo(
        "lgamma_neg",
        lambda m, x: x.lgamma(),
        ref=sc.gammaln,
        covers=(),
        samples=elementwise(low=-2.8, high=-2.2, shapes=((4,),), transposed=False),
    ),
    OpInfo("digamma", lambda m, x: m.digamma(x), ref=sc.psi, samples=elementwise(low=0.2, high=6)),
    OpInfo(
        "polygamma",
        lambda m, x, n: m.polygamma(n, x),
        ref=lambda x, n: sc.polygamma(n, x).astype(x.dtype),
        samples=lambda rng: [
            Sample((rng.uniform(0.3, 5, (2, 3)), n), name=f"n={n}") for n in (0, 1, 2, 3)
        ],
    ),
    OpInfo(
        "erfinv", lambda m, x: m.erfinv(x), ref=sc.erfinv, samples=elementwise(low=-0.95, high=0.95)
    ),
    OpInfo("erfcx", lambda m, x: m.special.erfcx(x), ref=sc.erfcx, samples=elementwise()),
    OpInfo(
        "ndtri",
        lambda m, x: m.special.ndtri(x),
        ref=sc.ndtri,
        samples=elementwise(low=0.03, high=0.97),
    ),
    OpInfo(
        "log_ndtr",
        lambda m, x: m.special.log_ndtr(x),
        ref=sc.log_ndtr,
        samples=elementwise(low=-8, high=4),
    ),
    OpInfo(
        "entr", lambda m, x: m.special.entr(x), ref=sc.entr, samples=elementwise(low=0.1, high=4)
    ),
    OpInfo("i0", lambda m, x: m.i0(x), ref=sc.i0, samples=elementwise()),
    OpInfo("i0e", lambda m, x: m.special.i0e(x), ref=sc.i0e, samples=elementwise()),
    OpInfo("i1", lambda m, x: m.special.i1(x), ref=sc.i1, samples=elementwise()),
    OpInfo("i1e", lambda m, x: m.special.i1e(x), ref=sc.i1e, samples=elementwise()),
    OpInfo("xlogy", lambda m, a, b: m.xlogy(a, b), ref=sc.xlogy, samples=_xlogy_samples),
    OpInfo(
        "xlog1py",
        lambda m, a, b: m.special.xlog1py(a, b),
        ref=sc.xlog1py,
        samples=binary_samples(low=-2, high=2, low_b=-0.5, high_b=3, scalar=0.5),
    ),
    OpInfo("igamma", lambda m, a, x: m.special.gammainc(a, x), ref=sc.gammainc, samples=_pos_pair),
    OpInfo(
        "igammac", lambda m, a, x: m.special.gammaincc(a, x), ref=sc.gammaincc, samples=_pos_pair
    ),
]
