"""OpInfo rows for chainrule/ops/linalg/eigh.py (gauge-invariant functions of the
eigenvectors, as PyTorch's own tests use) and the lstsq op of chainrule/ops/linalg/extra.py."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _eigh_inv(m, x, UPLO="L"):  # type: ignore[no-untyped-def]  # noqa: N803
    L, V = m.linalg.eigh(x + x.mT, UPLO=UPLO)  # noqa: N806
    return L, V * V


def _ref(x: np.ndarray, UPLO: str = "L") -> tuple[np.ndarray, np.ndarray]:  # noqa: N803
    L, V = np.linalg.eigh(x + np.swapaxes(x, -1, -2), UPLO=UPLO)  # noqa: N806
    return L, V * V


OPS = [
    OpInfo(
        "linalg_eigh",
        _eigh_inv,
        ref=_ref,
        samples=lambda rng: [
            Sample((rng.normal(size=(3, 3)),), name="3x3"),
            Sample((rng.normal(size=(2, 4, 4)),), {"UPLO": "U"}, name="batch_upper"),
        ],
    ),
    OpInfo(
        "linalg_lstsq",
        lambda m, a, b, **kw: m.linalg.lstsq(a, b, **kw).solution,
        ref=lambda a, b, **kw: np.linalg.lstsq(a, b, rcond=None)[0],
        samples=lambda rng: [
            Sample((rng.normal(size=(5, 3)), rng.normal(size=(5, 2))), name="tall"),
            Sample(
                (rng.normal(size=(3, 4)), rng.normal(size=(3, 2))), {"driver": "gelsd"}, name="wide"
            ),
        ],
    ),
]


def _eig_inv(m, x):  # type: ignore[no-untyped-def]
    L, V = m.linalg.eig(x)  # noqa: N806
    # real outputs (the table compares real values): L's parts and the phase-invariant |V|^2
    return L.real, L.imag, (V * V.conj()).real


def _eig_ref(x: np.ndarray) -> tuple[np.ndarray, ...]:
    L, V = np.linalg.eig(x)  # noqa: N806
    return L.real, L.imag, np.abs(V) ** 2


OPS.append(
    OpInfo(
        "linalg_eig",
        _eig_inv,
        ref=_eig_ref,
        samples=lambda rng: [
            Sample((rng.normal(size=(3, 3)),), name="3x3"),
            Sample((rng.normal(size=(2, 4, 4)),), name="batch"),
        ],
    )
)


def _ldl(m, a, b, hermitian=False):  # type: ignore[no-untyped-def]
    LD, piv, info = m.linalg.ldl_factor_ex(a, hermitian=hermitian)  # noqa: N806
    return LD, piv, info, m.linalg.ldl_solve(LD, piv, b, hermitian=hermitian)


OPS.append(
    OpInfo(
        "linalg_ldl_factor_ex",
        _ldl,
        covers=("linalg_ldl_factor_ex", "linalg_ldl_solve"),
        differentiable=False,  # PyTorch defines no derivative (tests/linalg/test_ldl.py)
        samples=lambda rng: [
            Sample((rng.normal(size=(4, 4)), rng.normal(size=(4, 2))), name="4x4"),
            Sample(
                (rng.normal(size=(2, 5, 5)), rng.normal(size=(5, 3))),
                {"hermitian": True},
                name="batch",
            ),
        ],
    )
)
