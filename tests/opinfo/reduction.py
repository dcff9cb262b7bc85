"""OpInfo rows for chainrule/ops/reduction.py."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample, reductions


def _np_red(f):
    def ref(x, dim=None, keepdim=False):
        return f(x, axis=tuple(dim) if isinstance(dim, (list, tuple)) else dim, keepdims=keepdim)
    return ref


OPS = [
    OpInfo("sum", lambda m, x, **kw: m.sum(x, **kw), ref=_np_red(np.sum), samples=reductions()),
    OpInfo("mean", lambda m, x, **kw: x.mean(**kw), ref=_np_red(np.mean), samples=reductions()),
    OpInfo("sum_to_size", lambda m, x: x.sum_to_size(1, 3), ref=lambda x: x.sum(0, keepdims=True),
           samples=lambda rng: [Sample((rng.uniform(-1, 1, (4, 3)),))]),
]
