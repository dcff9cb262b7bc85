"""Rows for ops/factorizations.py (the LU op and the compositions over it) and the
torch.linalg forms of qr and matrix_exp (chainrule/linalg.py)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _square(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rng.uniform(-1, 1, (3, 3)) + 2 * np.eye(3),), name="3x3"),
        Sample((rng.uniform(-1, 1, (2, 4, 4)),), name="batch"),
    ]


def _system(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample(
            (rng.uniform(-1, 1, (3, 3)) + 2 * np.eye(3), rng.uniform(-1, 1, (3, 2))), name="mat"
        ),
        Sample((rng.uniform(-1, 1, (2, 4, 4)), rng.uniform(-1, 1, (4, 1))), name="bcast"),
    ]


def _tall(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rng.uniform(-1, 1, (5, 3)),), name="5x3"),
        Sample((rng.uniform(-1, 1, (2, 4, 4)),)),
    ]


def _householder(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((rng.uniform(-1, 1, (5, 3)), rng.uniform(-1, 1, (3,))), name="5x3"),
        Sample((rng.uniform(-1, 1, (2, 4, 3)), rng.uniform(-1, 1, (2, 2))), name="batch_k2"),
    ]


def _quiet(f: Any) -> Any:
    def call(m: Any, *a: Any, **k: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch.lu and lu_solve are deprecated
            return f(m, *a, **k)

    return call


OPS = [
    OpInfo(
        "linalg_lu_factor_ex",
        lambda m, a: m.linalg.lu_factor_ex(a)[0],
        samples=_square,
    ),
    OpInfo("linalg_lu_factor", lambda m, a: m.linalg.lu_factor(a)[0], covers=(), samples=_square),
    OpInfo("linalg_lu", lambda m, a: tuple(m.linalg.lu(a)), covers=(), samples=_square),
    OpInfo(
        # PyTorch's wide and tall cases of linalg_lu_backward
        "linalg_lu_rectangular",
        lambda m, a: tuple(m.linalg.lu(a)) + (m.linalg.lu_factor(a)[0],),
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (3, 5)),), name="wide"),
            Sample((rng.uniform(-1, 1, (5, 3)),), name="tall"),
            Sample((rng.uniform(-1, 1, (2, 2, 4)),), name="wide_batch"),
            Sample((rng.uniform(-1, 1, (2, 4, 1)),), name="tall_one_column"),
        ],
    ),
    OpInfo(
        "lu_unpack",
        lambda m, a: tuple(m.lu_unpack(*m.linalg.lu_factor(a))),
        covers=(),
        samples=_square,
    ),
    OpInfo(
        "linalg_lu_solve",
        lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
        covers=(),
        samples=_system,
    ),
    OpInfo(
        "linalg_lu_solve_adjoint",
        lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, adjoint=True),
        covers=(),
        samples=_system,
    ),
    OpInfo(
        "linalg_lu_solve_right",
        lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b.mT, left=False),
        covers=(),
        samples=_system,
    ),
    OpInfo(
        "torch_lu_solve",
        _quiet(lambda m, a, b: m.lu_solve(b, *m.lu(a))),
        covers=(),
        samples=_system,
    ),
    OpInfo("linalg_qr_reduced", lambda m, a: tuple(m.linalg.qr(a)), covers=(), samples=_tall),
    OpInfo(
        "linalg_qr_complete",
        lambda m, a: tuple(m.linalg.qr(a, mode="complete")),
        covers=(),
        samples=lambda rng: [Sample((rng.uniform(-1, 1, (3, 5)),), name="wide")],
    ),
    OpInfo(
        "linalg_matrix_exp", lambda m, a: m.linalg.matrix_exp(a * 0.5), covers=(), samples=_square
    ),
    OpInfo(
        "householder_product",
        lambda m, a, t: m.linalg.householder_product(a, t),
        covers=(),
        samples=_householder,
    ),
    OpInfo(
        "ormqr",
        lambda m, a, t, c: m.ormqr(a, t, c, transpose=True),
        covers=(),
        samples=lambda rng: [
            Sample(
                (rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3,)), rng.uniform(-1, 1, (4, 2)))
            )
        ],
    ),
    OpInfo(
        "ormqr_right",
        lambda m, a, t, c: m.ormqr(a, t, c, left=False),
        covers=(),
        samples=lambda rng: [
            Sample(
                (rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3,)), rng.uniform(-1, 1, (2, 4)))
            )
        ],
    ),
]
