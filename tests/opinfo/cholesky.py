"""OpInfo rows for chainrule/ops/cholesky.py."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _spd_chol(m, x):  # type: ignore[no-untyped-def]
    # a symmetric positive-definite input built from any square x, so that finite differences
    # of x stay inside the domain
    n = x.shape[-1]
    return m.linalg.cholesky(x @ x.transpose(-1, -2) + n * m.eye(n, dtype=x.dtype, device=x.device))


def _ref_chol(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    return np.linalg.cholesky(x @ np.swapaxes(x, -1, -2) + n * np.eye(n, dtype=x.dtype))


def _tri_samples(rng: np.random.Generator) -> list[Sample]:
    out = []
    for upper in (False, True):
        for left in (True, False):
            for unit in (False, True):
                a = rng.normal(size=(2, 3, 3)) + 3 * np.eye(3)  # well conditioned
                b = rng.normal(size=(2, 3, 2) if left else (2, 2, 3))
                out.append(
                    Sample(
                        (a, b),
                        {"upper": upper, "left": left, "unitriangular": unit},
                        name=f"upper={upper},left={left},unit={unit}",
                    )
                )
    out.append(
        Sample(
            (rng.normal(size=(4, 4)) + 4 * np.eye(4), rng.normal(size=(2, 4, 1))),
            {"upper": False},
            name="broadcast",
        )
    )
    return out


def _ref_tri(
    a: np.ndarray, b: np.ndarray, upper: bool, left: bool = True, unitriangular: bool = False
) -> np.ndarray:
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        idx = np.arange(a.shape[-1])
        t = t.copy()
        t[..., idx, idx] = 1
    if left:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


OPS = [
    OpInfo(
        "linalg_cholesky",
        _spd_chol,
        ref=_ref_chol,
        samples=lambda rng: [
            Sample((rng.normal(size=(3, 3)),), name="3x3"),
            Sample((rng.normal(size=(2, 4, 4)),), name="batch"),
        ],
    ),
    OpInfo(
        "linalg_solve_triangular",
        lambda m, a, b, **kw: m.linalg.solve_triangular(a, b, **kw),
        ref=_ref_tri,
        samples=_tri_samples,
    ),
]
