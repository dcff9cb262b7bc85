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
    # torch.linalg.LinAlgError is torch._C._LinAlgError
    assert type(ce.value).__name__ == type(te.value).__name__.lstrip("_")
    assert str(ce.value) == str(te.value)


@pytest.mark.parametrize("f", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_torch(f: Callable[[Any], Any]) -> None:
    _raises(f)


# pinv, matrix_rank, cond ---------------------------------------------------------------------

MATS = [
    RNG.standard_normal((4, 3)),
    RNG.standard_normal((2, 3, 5)),
    RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)),
    np.array([[1.0, 2.0], [2.0, 4.0]]),
    RNG.standard_normal((3, 3)).astype(np.float32),
    np.zeros((2, 0, 3)),
]
MAT_IDS = ["tall", "batch_wide", "complex", "singular", "float32", "empty"]


def _both(f: Callable[[Any, Any], Any], a: np.ndarray, atol: float = 1e-9) -> None:
    atol = 1e-4 if a.dtype == np.float32 else atol
    _close(f(cr, cr.tensor(a)), f(torch, torch.tensor(a)), atol=atol)


@pytest.mark.parametrize("a", MATS, ids=MAT_IDS)
def test_pinv_and_matrix_rank_match_torch(a: np.ndarray) -> None:
    _both(lambda m, x: m.linalg.pinv(x), a)
    _both(lambda m, x: m.linalg.pinv(x, atol=0.5), a)
    _both(lambda m, x: m.linalg.pinv(x, atol=0.1, rtol=0.3), a)
    _both(lambda m, x: m.linalg.matrix_rank(x), a)
    _both(lambda m, x: m.linalg.matrix_rank(x, tol=1.0), a)
    _both(lambda m, x: m.linalg.matrix_rank(x, atol=0.5, rtol=0.1), a)
    if a.shape[-1] == a.shape[-2]:
        h = _herm(a)
        _both(lambda m, x: m.linalg.pinv(x, hermitian=True), h)
        _both(lambda m, x: m.linalg.matrix_rank(x, hermitian=True), h)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, float("inf"), -float("inf")])
@pytest.mark.parametrize("a", MATS, ids=MAT_IDS)
def test_cond_matches_torch(a: np.ndarray, p: Any) -> None:
    square = a.shape[-1] == a.shape[-2]
    if p not in (None, 2, -2) and not square and (isinstance(p, str) or a.size):
        _raises(lambda m: m.linalg.cond(m.tensor(a), p))
        return
    atol = 1e-3 if a.dtype == np.float32 else 1e-6
    c, t = cr.linalg.cond(cr.tensor(a), p), torch.linalg.cond(torch.tensor(a), p)
    assert c.dtype.name == str(t.dtype).split(".")[-1] and tuple(c.shape) == tuple(t.shape)
    if a is MATS[3]:
        # Singular: the smallest singular value (or the inverse) is rounding noise, whose size
        # depends on the LAPACK build and the CPU (4.8e16 here, 2.5e16 in torch on an AMD EPYC):
        # both must only be huge or infinite (tiny for p = -2, sigma_min / sigma_max).
        for v in (_np(c), _np(t)):
            assert (v < 1e-14).all() if p == -2 else (v > 1e14).all()
        return
    np.testing.assert_allclose(
        _np(c), _np(t), rtol=1e-4 if a.dtype == np.float32 else 1e-7, atol=atol
    )


def test_pinv_rank_cond_gradients() -> None:
    x = cr.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    w = cr.tensor(RNG.standard_normal((2, 3, 5)), requires_grad=True)
    s = cr.tensor(RNG.standard_normal((3, 3)), requires_grad=True)
    assert gradcheck(lambda x: cr.linalg.pinv(x), (x,))
    assert gradgradcheck(lambda x: cr.linalg.pinv(x), (x,))
    assert gradcheck(lambda x: cr.linalg.pinv(x), (w,))
    assert gradcheck(lambda x: cr.linalg.pinv(x + x.mT, hermitian=True), (s,))
    for p in (None, -2, "fro", "nuc", 1, float("inf")):
        assert gradcheck(lambda x, p=p: cr.linalg.cond(x, p), (s,))
    # against torch
    tx = torch.tensor(_np(x), requires_grad=True)
    (cr.linalg.pinv(x) ** 2).sum().backward()
    (torch.linalg.pinv(tx) ** 2).sum().backward()
    np.testing.assert_allclose(_np(x.grad), _np(tx.grad), atol=1e-10)
    r = cr.linalg.matrix_rank(x)
    assert not r.requires_grad and r.dtype == cr.int64


# The *_ex variants ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a",
    [
        RNG.standard_normal((3, 3)),
        RNG.standard_normal((2, 4, 4)),
        np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]]),
        RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)),
    ],
    ids=["3x3", "batch", "one_singular", "complex"],
)
def test_inv_ex_solve_ex_match_torch(a: np.ndarray) -> None:
    ca, ta = cr.tensor(a), torch.tensor(a)
    c, t = cr.linalg.inv_ex(ca), torch.linalg.inv_ex(ta)
    assert repr(c).startswith("torch.return_types.linalg_inv_ex(") and c.inverse is c[0]
    _close(c.info, t.info)
    ok = _np(t.info) == 0  # the inverse of a singular matrix is unspecified
    np.testing.assert_allclose(_np(c.inverse)[ok], _np(t.inverse)[ok], atol=1e-10)
    b = RNG.standard_normal(a.shape[:-1]).astype(a.dtype)
    c2, t2 = cr.linalg.solve_ex(ca, cr.tensor(b)), torch.linalg.solve_ex(ta, torch.tensor(b))
    _close(c2.info, t2.info)
    np.testing.assert_allclose(_np(c2.result)[ok], _np(t2.result)[ok], atol=1e-10)
    if ok.all():
        b2 = RNG.standard_normal(a.shape).astype(a.dtype)
        _close(
            cr.linalg.solve_ex(ca, cr.tensor(b2), left=False)[0],
            torch.linalg.solve_ex(ta, torch.tensor(b2), left=False)[0],
        )


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize(
    "a",
    [
        _herm(RNG.standard_normal((3, 3))) + 8 * np.eye(3),
        np.stack([np.eye(3), -np.eye(3), np.diag([1.0, 1.0, -1.0])]),
        np.array([[4.0, 2.0], [2.0, -3.0]]),
        _herm(RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))) + 8 * np.eye(3),
    ],
    ids=["spd", "batch_not_pd", "not_pd", "complex"],
)
def test_cholesky_ex_matches_torch(a: np.ndarray, upper: bool) -> None:
    c = cr.linalg.cholesky_ex(cr.tensor(a), upper=upper)
    t = torch.linalg.cholesky_ex(torch.tensor(a), upper=upper)
    assert repr(c).startswith("torch.return_types.linalg_cholesky_ex(") and c.L is c[0]
    _close(c.info, t.info)
    _close(c.L, t.L)  # LAPACK's partial factor where info > 0


def test_ex_gradients() -> None:
    s = cr.tensor(RNG.standard_normal((2, 3, 3)), requires_grad=True)
    b = cr.tensor(RNG.standard_normal((2, 3, 2)), requires_grad=True)
    eye = cr.eye(3, dtype=cr.float64)
    assert gradcheck(lambda x: cr.linalg.inv_ex(x).inverse, (s,))
    assert gradcheck(lambda x, y: cr.linalg.solve_ex(x, y).result, (s, b))
    assert gradcheck(lambda x: cr.linalg.cholesky_ex(x @ x.mT + eye, upper=True).L, (s,))


# lstsq -------------------------------------------------------------------------------------

LSTSQ = [
    (RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))),
    (RNG.standard_normal((3, 5)), RNG.standard_normal((3, 2))),
    (RNG.standard_normal((2, 5, 3)), RNG.standard_normal((1, 5, 2))),
    (RNG.standard_normal((5, 3)), RNG.standard_normal(5)),
    (np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), RNG.standard_normal((3, 2))),
    (
        RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3)),
        RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2)),
    ),
    (
        RNG.standard_normal((5, 3)).astype(np.float32),
        RNG.standard_normal((5, 2)).astype(np.float32),
    ),
]


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize(
    "ab", LSTSQ, ids=["tall", "wide", "batch", "vector", "rank_def", "complex", "float32"]
)
def test_lstsq_matches_torch(ab: tuple[np.ndarray, np.ndarray], driver: str | None) -> None:
    a, b = ab
    if driver == "gels" and np.min(np.linalg.matrix_rank(a)) < min(a.shape[-2:]):
        return  # gels assumes full rank (PyTorch's result is then meaningless too)
    c = cr.linalg.lstsq(cr.tensor(a), cr.tensor(b), driver=driver)
    t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    assert repr(c).startswith("torch.return_types.linalg_lstsq(")
    atol = 1e-4 if a.dtype == np.float32 else 1e-9
    for x, y in zip(c, t):
        _close(x, y, atol=atol)
    if driver not in ("gelsd", "gelss"):
        return  # gelsy's rank from a condition estimate may differ between LAPACK builds
    _close(
        cr.linalg.lstsq(cr.tensor(a), cr.tensor(b), rcond=0.5, driver=driver)[0],
        torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), rcond=0.5, driver=driver)[0],
        atol=atol,
    )


def test_lstsq_gradients() -> None:
    for sa, sb in [((5, 3), (5, 2)), ((3, 5), (3,)), ((2, 4, 3), (1, 4, 2))]:
        a = cr.tensor(RNG.standard_normal(sa), requires_grad=True)
        b = cr.tensor(RNG.standard_normal(sb), requires_grad=True)
        assert gradcheck(lambda a, b: cr.linalg.lstsq(a, b, driver="gelsd").solution, (a, b))
    a = cr.tensor(RNG.standard_normal((5, 3)), requires_grad=True)
    b = cr.tensor(RNG.standard_normal((5, 2)), requires_grad=True)
    assert gradgradcheck(lambda a, b: cr.linalg.lstsq(a, b)[0], (a, b))
    ta, tb = (torch.tensor(_np(v), requires_grad=True) for v in (a, b))
    (cr.linalg.lstsq(a, b).solution ** 2).sum().backward()
    (torch.linalg.lstsq(ta, tb).solution ** 2).sum().backward()
    np.testing.assert_allclose(_np(a.grad), _np(ta.grad), atol=1e-10)
    np.testing.assert_allclose(_np(b.grad), _np(tb.grad), atol=1e-10)


# matrix_power, vander, cross, diagonal, tensorinv, tensorsolve --------------------------------

_T6 = np.eye(6) + 0.1 * np.arange(36.0).reshape(6, 6) / 36

SPELLINGS: list[Callable[[Any], Any]] = [
    lambda m: m.linalg.matrix_power(m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64), -2),
    lambda m: m.linalg.matrix_power(m.tensor(_T6.reshape(4, 3, 3)), 3),
    lambda m: m.linalg.vander(m.tensor([1.0, 2.0, 3.0])),
    lambda m: m.linalg.vander(m.tensor([[1.0, 2.0], [3.0, 4.0]]), N=4),
    lambda m: m.linalg.vander(m.tensor([1, 2, 3], dtype=m.int32)),
    lambda m: m.linalg.vander(m.tensor(2.0), N=3),
    lambda m: m.linalg.vander(m.tensor([1 + 1j, 2.0])),
    lambda m: m.linalg.cross(m.tensor([[1.0, 2, 3]]), m.tensor([[4.0, 5, 6], [7, 8, 9]])),
    lambda m: m.linalg.cross(m.ones(3, 2), m.ones(3, 2) * 2, dim=0),
    lambda m: m.linalg.diagonal(m.arange(24.0).reshape(2, 3, 4), offset=1),
    lambda m: m.linalg.diagonal(m.arange(24.0).reshape(2, 3, 4), dim1=0, dim2=2, offset=-1),
    lambda m: m.linalg.tensorinv(m.tensor(_T6.reshape(6, 2, 3)), ind=1),
    lambda m: m.linalg.tensorinv(m.tensor(_T6.reshape(2, 3, 2, 3))),
    lambda m: m.linalg.tensorsolve(m.tensor(_T6.reshape(2, 3, 6)), m.ones(2, 3, dtype=m.float64)),
    lambda m: m.linalg.tensorsolve(
        m.tensor(_T6.reshape(6, 2, 3)), m.ones(2, 3, dtype=m.float64), dims=(0,)
    ),
]


@pytest.mark.parametrize("f", SPELLINGS, ids=range(len(SPELLINGS)))
def test_spellings_match_torch(f: Callable[[Any], Any]) -> None:
    _close(f(cr), f(torch))


def test_spelling_gradients() -> None:
    x = cr.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    y = cr.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    a = cr.tensor(_T6.reshape(6, 2, 3), requires_grad=True)
    b = cr.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    assert gradcheck(lambda x: cr.linalg.vander(x, N=4), (x,))
    assert gradcheck(lambda x, y: cr.linalg.cross(x, y), (x, y))
    assert gradcheck(lambda x: cr.linalg.diagonal(x, offset=1), (x,))
    assert gradcheck(lambda a: cr.linalg.tensorinv(a, ind=1), (a,))
    assert gradcheck(lambda a, b: cr.linalg.tensorsolve(a.permute(1, 2, 0), b), (a, b))


MORE_ERRORS: list[Callable[[Any], Any]] = [
    lambda m: m.linalg.pinv(m.ones(3)),
    lambda m: m.linalg.pinv(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.linalg.matrix_rank(m.ones(3)),
    lambda m: m.linalg.cond(m.ones(3)),
    lambda m: m.linalg.cond(m.eye(2), 3),
    lambda m: m.linalg.inv_ex(m.ones(2, 3)),
    lambda m: m.linalg.inv_ex(m.tensor([[1.0, 2.0], [2.0, 4.0]]), check_errors=True),
    lambda m: m.linalg.inv_ex(
        m.stack([m.eye(2), m.tensor([[1.0, 2.0], [2.0, 4.0]])]), check_errors=True
    ),
    lambda m: m.linalg.solve_ex(m.tensor([[1.0, 2.0], [2.0, 4.0]]), m.ones(2), check_errors=True),
    lambda m: m.linalg.cholesky_ex(m.ones(2, 3)),
    lambda m: m.linalg.cholesky_ex(-m.eye(3), check_errors=True),
    lambda m: m.linalg.cholesky_ex(m.stack([m.eye(2), -m.eye(2)]), check_errors=True),
    lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(5, 2), driver="foo"),
    lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(4, 2)),
    lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(4)),
    lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(5, 2, dtype=m.float64)),
    lambda m: m.linalg.lstsq(m.ones(3), m.ones(5)),
    lambda m: m.linalg.lstsq(m.ones(3, 3, dtype=m.int64), m.ones(3, 3, dtype=m.int64)),
    lambda m: m.linalg.matrix_power(m.ones(2, 3), 2),
    lambda m: m.linalg.vander(m.tensor([True, False])),
    lambda m: m.linalg.vander(m.tensor([1.0, 2.0]), N=1),
    lambda m: m.linalg.cross(m.ones(2, 4), m.ones(2, 4)),
    lambda m: m.linalg.tensorinv(m.ones(4, 2, 2), ind=0),
    lambda m: m.linalg.tensorinv(m.ones(4, 2, 3), ind=1),
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 5), m.ones(2, 3)),
]


@pytest.mark.parametrize("f", MORE_ERRORS, ids=range(len(MORE_ERRORS)))
def test_more_errors_match_torch(f: Callable[[Any], Any]) -> None:
    _raises(f)


# eig, eigvals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a",
    [
        RNG.standard_normal((4, 4)),
        RNG.standard_normal((2, 3, 3)),
        RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)),
        RNG.standard_normal((3, 3)).astype(np.float32),
        np.diag([1.0, 2.0, 3.0]),
        np.zeros((0, 2, 2)),
    ],
    ids=["real", "batch", "complex", "float32", "diagonal", "empty"],
)
def test_eig_matches_torch(a: np.ndarray) -> None:
    c, t = cr.linalg.eig(cr.tensor(a)), torch.linalg.eig(torch.tensor(a))
    assert repr(c).startswith("torch.return_types.linalg_eig(") and c.eigenvalues is c[0]
    atol = 1e-5 if a.dtype == np.float32 else 1e-10
    # LAPACK's geev order (the same build-independent algorithm): compare as is, then check
    # the vectors through A V = V diag(L) and their moduli (a phase per column is free)
    _close(c.eigenvalues, t.eigenvalues, atol=atol)
    _close(cr.linalg.eigvals(cr.tensor(a)), torch.linalg.eigvals(torch.tensor(a)), atol=atol)
    v, lam = _np(c.eigenvectors), _np(c.eigenvalues)
    assert c.eigenvectors.dtype.name == str(t.eigenvectors.dtype).split(".")[-1]
    np.testing.assert_allclose(a @ v, v * lam[..., None, :], atol=atol * 10)
    np.testing.assert_allclose(np.abs(v), np.abs(_np(t.eigenvectors)), atol=atol)


@pytest.mark.parametrize(
    "a",
    [RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))],
    ids=["real", "complex"],
)
def test_eig_gradients(a: np.ndarray) -> None:
    def f(x: Any) -> Any:
        L, V = cr.linalg.eig(x)  # noqa: N806
        return L, (V * V.conj()).real  # phase-invariant

    x = cr.tensor(a, requires_grad=True)
    assert gradcheck(f, (x,))
    assert gradcheck(lambda x: cr.linalg.eigvals(x), (x,))
    tx = torch.tensor(a, requires_grad=True)
    L, V = cr.linalg.eig(x)  # noqa: N806
    tL, tV = torch.linalg.eig(tx)  # noqa: N806
    (L.real * 2 + L.imag + (V * V.conj()).real.sum(-2)).sum().backward()
    (tL.real * 2 + tL.imag + (tV * tV.conj()).real.sum(-2)).sum().backward()
    np.testing.assert_allclose(_np(x.grad), _np(tx.grad), atol=1e-10)


EIG_ERRORS: list[Callable[[Any], Any]] = [
    lambda m: m.linalg.eig(m.ones(2, 3)),
    lambda m: m.linalg.eig(m.ones(3)),
    lambda m: m.linalg.eig(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.linalg.eigvals(m.ones(2, 3)),
]


@pytest.mark.parametrize("f", EIG_ERRORS, ids=range(len(EIG_ERRORS)))
def test_eig_errors_match_torch(f: Callable[[Any], Any]) -> None:
    _raises(f)
