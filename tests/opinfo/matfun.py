"""OpInfo rows for chainrule/ops/matfun.py (matrix_exp: values and gradients vs PyTorch,
gradcheck and gradgradcheck in float64)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from tests.opinfo.core import OpInfo, Sample


def _samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rng.uniform(-1, 1, (3, 3)),), name="small"),
        Sample((rng.uniform(-3, 3, (4, 4)),), name="scaled"),  # norm above theta_13: squaring
        Sample((rng.uniform(-1, 1, (2, 3, 3)),), name="batch"),
        Sample((np.array([[0.0, 1.0], [0.0, 0.0]]),), name="nilpotent"),
        Sample((rng.uniform(-1, 1, (1, 1)),), name="1x1"),
    ]


def _ref(a: np.ndarray) -> np.ndarray:
    if a.ndim == 2:
        return scipy.linalg.expm(a.astype(np.float64)).astype(a.dtype)
    return np.stack([_ref(m) for m in a])


OPS = [
    OpInfo(
        "matrix_exp", lambda m, a: m.matrix_exp(a), ref=_ref, samples=_samples, atol=1e-4, rtol=1e-4
    ),
    OpInfo(
        "matrix_exp_method",
        lambda m, a: a.matrix_exp(),
        covers=(),
        samples=lambda rng: [Sample((rng.uniform(-1, 1, (2, 2)),))],
    ),
]


def _qr_call(m, a, **k):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch.qr is deprecated, in both
        return tuple(m.qr(a, **k))


def _qr_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rng.uniform(-1, 1, (4, 3)),), name="tall"),
        Sample((rng.uniform(-1, 1, (3, 3)),), name="square"),
        Sample((rng.uniform(-1, 1, (2, 4)),), name="wide"),
        Sample((rng.uniform(-1, 1, (2, 5, 3)),), name="batch"),
        Sample((rng.uniform(-1, 1, (3, 3)),), {"some": False}, name="complete_square"),
        Sample((rng.uniform(-1, 1, (2, 4)),), {"some": False}, name="complete_wide"),
    ]


OPS.append(OpInfo("linalg_qr", _qr_call, samples=_qr_samples))
