"""LU, QR-mode, Householder and low-rank functions against PyTorch: values of the parts the
op table cannot express (pivots, info, rectangular and complex forward), warnings, errors
and the randomized low-rank SVD (ops/factorizations.py, ops/lowrank.py, linalg.py)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)


def _np(t: Any) -> np.ndarray:
    return np.asarray(t._data) if hasattr(t, "_data") else t.detach().resolve_conj().numpy()


@pytest.mark.parametrize(
    "a",
    [
        RNG.standard_normal((4, 4)),
        RNG.standard_normal((5, 3)),
        RNG.standard_normal((3, 5)),
        RNG.standard_normal((2, 3, 4, 4)),
        RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)),
        np.array([[1.0, 2.0], [2.0, 4.0]]),
        np.zeros((0, 3, 3)),
    ],
    ids=["square", "tall", "wide", "batch", "complex", "singular", "empty"],
)
def test_lu_factor_ex_and_unpack_match_torch(a: np.ndarray) -> None:
    c = cr.linalg.lu_factor_ex(cr.tensor(a))
    t = torch.linalg.lu_factor_ex(torch.tensor(a))
    for x, y in zip(c, t):
        assert x.dtype.name == str(y.dtype).split(".")[-1]
        np.testing.assert_allclose(_np(x), _np(y), atol=1e-12)
    for x, y in zip(cr.lu_unpack(c.LU, c.pivots), torch.lu_unpack(t.LU, t.pivots)):
        np.testing.assert_allclose(_np(x), _np(y), atol=1e-12)
    for x, y in zip(cr.linalg.lu(cr.tensor(a)), torch.linalg.lu(torch.tensor(a))):
        np.testing.assert_allclose(_np(x), _np(y), atol=1e-12)


def test_return_types_have_fields_and_reprs() -> None:
    a = RNG.standard_normal((3, 3))
    c, t = cr.linalg.lu_factor(cr.tensor(a)), torch.linalg.lu_factor(torch.tensor(a))
    assert repr(c).split("(")[0] == repr(t).split("(")[0] == "torch.return_types.linalg_lu_factor"
    assert c.LU is c[0] and c.pivots is c[1]
    p = cr.linalg.lu(cr.tensor(a))
    assert p.P is p[0] and p.L is p[1] and p.U is p[2]
    q = cr.linalg.qr(cr.tensor(a))
    assert repr(q).startswith("torch.return_types.linalg_qr(") and q.Q is q[0]
    g = cr.geqrf(cr.tensor(a))
    assert g.a is g[0] and g.tau is g[1]


def test_unpack_flags() -> None:
    a = cr.tensor(RNG.standard_normal((3, 3)))
    LU, piv = cr.linalg.lu_factor(a)
    P, L, U = cr.lu_unpack(LU, piv, unpack_data=False)
    tP, tL, tU = torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(_np(a))), unpack_data=False)
    assert tuple(L.shape) == tuple(tL.shape) and tuple(U.shape) == tuple(tU.shape)
    np.testing.assert_allclose(_np(P), _np(tP))
    P, L, U = cr.lu_unpack(LU, piv, unpack_pivots=False)
    assert tuple(P.shape) == (0,)


def test_deprecated_forms_warn_and_match() -> None:
    a = RNG.standard_normal((3, 3))
    b = RNG.standard_normal((3, 2))
    out = []
    for m in (cr, torch):
        with pytest.warns(UserWarning, match="torch.lu is deprecated"):
            LU, piv, info = m.lu(m.tensor(a), get_infos=True)
        with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
            x = m.lu_solve(m.tensor(b), LU, piv)
        out.append((LU, piv, info, x))
    for x, y in zip(*out):
        np.testing.assert_allclose(_np(x), _np(y), atol=1e-12)


def test_tensor_methods() -> None:
    a = RNG.standard_normal((4, 3))
    b = RNG.standard_normal((4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ca, ta = cr.tensor(a), torch.tensor(a)
        sq = cr.tensor(a[:3]), torch.tensor(a[:3])
        pairs = [
            (sq[0].lu()[0], sq[1].lu()[0]),
            (cr.tensor(b[:3]).lu_solve(*sq[0].lu()), torch.tensor(b[:3]).lu_solve(*sq[1].lu())),
            (ca.geqrf()[0], ta.geqrf()[0]),
            (ca.orgqr(ca.geqrf()[1]), ta.orgqr(ta.geqrf()[1])),
            (ca.ormqr(ca.geqrf()[1], cr.tensor(b)), ta.ormqr(ta.geqrf()[1], torch.tensor(b))),
            (ca.qr()[1], ta.qr()[1]),
            (sq[0].matrix_exp(), sq[1].matrix_exp()),
        ]
    for c, t in pairs:
        np.testing.assert_allclose(_np(c), _np(t), atol=1e-10)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.linalg.lu_factor(m.tensor([[1.0, 2.0], [2.0, 4.0]])),
        lambda m: m.linalg.lu_factor(m.ones(3)),
        lambda m: m.linalg.lu(m.ones(3)),
        lambda m: m.linalg.lu_factor_ex(m.zeros(2, 2, 2), check_errors=True),
        lambda m: m.lu_unpack(m.eye(2), m.ones(2)),
        lambda m: m.linalg.lu_factor(m.ones(2, 2, dtype=m.int64)),
        lambda m: m.linalg.lu_factor(m.eye(2), pivot=False),
        lambda m: m.linalg.lu_factor_ex(m.zeros(2, 2), check_errors=True),
        lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.eye(3)), m.ones(2, 1)),
        lambda m: m.linalg.qr(m.eye(2), mode="bad"),
        lambda m: m.linalg.qr(m.ones(3)),
        lambda m: m.linalg.householder_product(m.ones(2, 3), m.ones(2)),
        lambda m: m.linalg.householder_product(m.ones(3, 2), m.ones(3)),
        lambda m: m.linalg.matrix_exp(m.ones(2, 3)),
        lambda m: m.pca_lowrank(m.ones(3, 3), q=4),
        lambda m: m.pca_lowrank(m.ones(3, 3), niter=-1),
    ],
)
def test_errors_match_torch(call: Any) -> None:
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(Exception) as ce:
        call(cr)
    assert type(ce.value) is type(te.value)
    assert str(te.value).splitlines()[0] == str(ce.value).splitlines()[0]


def test_batched_singular_message() -> None:
    a = np.stack([np.eye(2), np.zeros((2, 2))])
    with pytest.raises(RuntimeError) as te:
        torch.linalg.lu_factor(torch.tensor(a))
    with pytest.raises(RuntimeError) as ce:
        cr.linalg.lu_factor(cr.tensor(a))
    assert str(ce.value) == str(te.value)


def test_qr_mode_r_has_no_gradient() -> None:
    for m in (cr, torch):
        a = m.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
        q, r = m.linalg.qr(a, mode="r")
        assert tuple(q.shape) == (0,)
        with pytest.raises(RuntimeError, match="which is not computed when mode='r'"):
            r.sum().backward()


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 1, 3), (2, 3, 1)])
def test_lu_gradient_of_rectangular_matches_torch(shape: tuple[int, ...]) -> None:
    a = RNG.standard_normal(shape)
    grads = []
    for m in (cr, torch):
        x = m.tensor(a, requires_grad=True)
        p, low, up = m.linalg.lu(x)
        lu = m.linalg.lu_factor(x)[0]
        ((low * 1.5).sum() + (up**2).sum() + (lu * lu.sin()).sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_gradcheck_lu_paths() -> None:
    a = cr.tensor(RNG.standard_normal((3, 3)) + 2 * np.eye(3), requires_grad=True)
    b = cr.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    assert gradcheck(
        lambda a, b: cr.linalg.lu_solve(*cr.linalg.lu_factor(a), b, adjoint=True), (a, b)
    )
    assert gradcheck(lambda a: tuple(cr.linalg.lu(a))[1:], (a,))


def _low_rank(m: int, n: int, k: int) -> np.ndarray:
    return RNG.standard_normal((m, k)) @ RNG.standard_normal((k, n))


@pytest.mark.parametrize("shape", [(20, 8), (8, 20)])
def test_svd_lowrank_recovers_a_low_rank_matrix(shape: tuple[int, int]) -> None:
    a = _low_rank(*shape, 3)
    cr.manual_seed(0)
    U, S, V = cr.svd_lowrank(cr.tensor(a), q=5)
    assert tuple(U.shape) == (shape[0], 5) and tuple(V.shape) == (shape[1], 5)
    np.testing.assert_allclose(_np(S)[:3], np.linalg.svd(a, compute_uv=False)[:3], rtol=1e-10)
    np.testing.assert_allclose(_np((U * S) @ V.mT), a, atol=1e-10)
    tU, tS, tV = torch.svd_lowrank(torch.tensor(a), q=5)
    np.testing.assert_allclose(_np(S)[:3], _np(tS)[:3], rtol=1e-10)


def test_pca_lowrank_matches_torch_on_low_rank_data() -> None:
    a = _low_rank(30, 6, 2) + RNG.standard_normal(6)
    c = cr.pca_lowrank(cr.tensor(a), q=3)
    t = torch.pca_lowrank(torch.tensor(a), q=3)
    np.testing.assert_allclose(_np(c[1])[:2], _np(t[1])[:2], rtol=1e-10)
    # The principal directions agree up to sign.
    dots = np.abs(np.sum(_np(c[2])[:, :2] * _np(t[2])[:, :2], axis=0))
    np.testing.assert_allclose(dots, 1.0, rtol=1e-9)
    nc = cr.pca_lowrank(cr.tensor(a), q=3, center=False)[1]
    nt = torch.pca_lowrank(torch.tensor(a), q=3, center=False)[1]
    assert abs(float(nc[0]) - float(nt[0])) < 1e-6 * float(nt[0])


def test_svd_lowrank_gradcheck_with_a_fixed_seed() -> None:
    a = cr.tensor(_low_rank(6, 4, 2), requires_grad=True)

    def f(x: Any) -> Any:
        cr.manual_seed(1)
        U, S, V = cr.svd_lowrank(x, q=2, niter=1)
        return (U * S) @ V.mT

    assert gradcheck(f, (a,))
