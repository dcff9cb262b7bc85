"""torch.linalg's eigh/eigvalsh, pinv, matrix_rank, cond, the *_ex variants and the
linalg spellings of matrix_power/vander/cross/diagonal/tensorinv/tensorsolve against PyTorch:
values (eigenvectors through gauge-invariant quantities), gradients (float64 gradcheck),
errors and batching."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(15)


def _np(t: Any) -> np.ndarray:
    if hasattr(t, "_data"):
        return np.asarray(t._data)
    return t.detach().resolve_conj().numpy()


def _close(c: Any, t: Any, atol: float = 1e-10) -> None:
    assert tuple(c.shape) == tuple(t.shape)
    assert c.dtype.name == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(c), _np(t), atol=atol, rtol=1e-7)


def _herm(a: np.ndarray) -> np.ndarray:
    return a + np.conj(np.swapaxes(a, -1, -2))


@pytest.mark.parametrize("uplo", ["L", "U", "u"])
@pytest.mark.parametrize(
    "a",
    [
        RNG.standard_normal((4, 4)),
        RNG.standard_normal((2, 3, 5, 5)),
        RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)),
        RNG.standard_normal((1, 1)),
        np.zeros((0, 3, 3)),
    ],
    ids=["real", "batch", "complex", "1x1", "empty"],
)
def test_eigh_matches_torch(a: np.ndarray, uplo: str) -> None:
    # a non-symmetric input: only the UPLO triangle is read
    c = cr.linalg.eigh(cr.tensor(a), UPLO=uplo)
    t = torch.linalg.eigh(torch.tensor(a), UPLO=uplo)
    _close(c.eigenvalues, t.eigenvalues)
    # V up to a sign/phase per column: |V| and the projectors V_k V_k^H agree
    assert c.eigenvectors.dtype.name == str(t.eigenvectors.dtype).split(".")[-1]
    cv, tv = _np(c.eigenvectors), _np(t.eigenvectors)
    np.testing.assert_allclose(np.abs(cv), np.abs(tv), atol=1e-10)
    proj = lambda v: v[..., :, None, :] * np.conj(v[..., None, :, :])  # noqa: E731
    np.testing.assert_allclose(proj(cv), proj(tv), atol=1e-10)
    _close(
        cr.linalg.eigvalsh(cr.tensor(a), UPLO=uplo),
        torch.linalg.eigvalsh(torch.tensor(a), UPLO=uplo),
    )
    assert repr(c).startswith("torch.return_types.linalg_eigh(")


def test_eigh_float32() -> None:
    a = RNG.standard_normal((3, 3)).astype(np.float32)
    c, t = cr.linalg.eigh(cr.tensor(a)), torch.linalg.eigh(torch.tensor(a))
    assert c[0].dtype == cr.float32 and c[1].dtype == cr.float32
    np.testing.assert_allclose(_np(c[0]), _np(t[0]), atol=1e-5)


def _eigh_invariant(m: Any) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        L, V = m.linalg.eigh(x + x.conj().mT)  # noqa: N806
        # gauge-invariant: the eigenvalues, |V|^2 and a projector
        p = V[..., :, :1] @ V[..., :, :1].conj().mT
        return L, (V * V.conj()).real, p

    return f


@pytest.mark.parametrize(
    "a",
    [
        RNG.standard_normal((4, 4)),
        RNG.standard_normal((2, 3, 3)),
        RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)),
    ],
    ids=["real", "batch", "complex"],
)
def test_eigh_gradients(a: np.ndarray) -> None:
    x = cr.tensor(a, requires_grad=True)
    f = _eigh_invariant(cr)
    assert gradcheck(f, (x,))
    if not np.iscomplexobj(a):
        assert gradgradcheck(f, (x,))
    assert gradcheck(lambda x: cr.linalg.eigvalsh(x + x.conj().mT, UPLO="U"), (x,))
    # against torch for a random cotangent (one triangle read: a non-symmetric input)
    outs = cr.linalg.eigh(x)
    tx = torch.tensor(a, requires_grad=True)
    touts = torch.linalg.eigh(tx)
    gl = RNG.standard_normal(tuple(outs[0].shape))
    l_c = (outs[0] * cr.tensor(gl)).sum() + (outs[1] * outs[1].conj()).real.sum(-2).sum()
    l_t = (touts[0] * torch.tensor(gl)).sum() + (touts[1] * touts[1].conj()).real.sum(-2).sum()
    l_c.backward()
    l_t.backward()
    np.testing.assert_allclose(_np(x.grad), _np(tx.grad), atol=1e-8)


ERRORS: list[Callable[[Any], Any]] = [
    lambda m: m.linalg.eigh(m.ones(2, 3)),
    lambda m: m.linalg.eigh(m.ones(3)),
    lambda m: m.linalg.eigh(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.linalg.eigh(m.ones(2, 2), UPLO="X"),
    lambda m: m.linalg.eigvalsh(m.ones(2, 3)),
    lambda m: m.linalg.eigh([[1.0]]),
]


def _raises(f: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as te:
        f(torch)
    with pytest.raises(Exception) as ce:
        f(cr)
    assert type(ce.value).__name__ == type(te.value).__name__
    assert str(ce.value) == str(te.value)


@pytest.mark.parametrize("f", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_torch(f: Callable[[Any], Any]) -> None:
    _raises(f)
