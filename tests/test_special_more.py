"""torch.special's Bessel and Airy functions, Hurwitz zeta and orthogonal polynomials
(chainrule/ops/special_functions.py) against torch 2.13: values over wide ranges (0, negative,
inf, nan, large), float32 and float64, integer inputs, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.special as S
from chainrule.autograd import gradcheck

torch = pytest.importorskip("torch")

UNARY = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
]
POLY = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]

_EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, 1e-8, 7.9, 8.0, 8.1, 30.0, 1e3, 1e10, 1e30]
_EDGE += [-v for v in _EDGE] + [np.inf, -np.inf, np.nan, 0.25, -0.25, 0.75, 2.0, 3.5]
X_WIDE = np.concatenate([np.array(_EDGE), np.linspace(-50, 50, 401), np.logspace(-6, 2.5, 60)])


def _close(a: cr.Tensor, b: torch.Tensor, rtol: float, atol: float = 0.0) -> None:
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_values(name: str, dtype: str) -> None:
    x = X_WIDE.astype(dtype)
    got = getattr(S, name)(cr.tensor(x))
    want = getattr(torch.special, name)(torch.tensor(x))
    # J, Y and Ai are PyTorch's kernels ported; the I and K functions are SciPy's (Cephes)
    # (float32: PyTorch's compiled kernels contract a * b + c into fused multiply-adds, a few
    # ulps apart from NumPy's separate roundings)
    rtol, atol = (1e-5, 1e-8) if dtype == "float32" else (1e-13, 1e-300)
    _close(got, want, rtol, atol)
    assert not got.requires_grad


@pytest.mark.parametrize("name", UNARY)
def test_unary_integer_and_errors(name: str) -> None:
    xi = np.array([-3, -1, 0, 1, 2, 5, 40])
    rtol = 2e-6
    _close(
        getattr(S, name)(cr.tensor(xi)), getattr(torch.special, name)(torch.tensor(xi)), rtol, 2e-6
    )
    b = np.array([True, False])
    _close(
        getattr(S, name)(cr.tensor(b)), getattr(torch.special, name)(torch.tensor(b)), rtol, 2e-6
    )
    for d in ("float16", "bfloat16", "complex64"):
        with pytest.raises(NotImplementedError) as w:
            getattr(torch.special, name)(torch.ones(2, dtype=getattr(torch, d)))
        with pytest.raises(NotImplementedError) as g:
            getattr(S, name)(cr.ones(2, dtype=getattr(cr, d)))
        assert str(g.value) == str(w.value)
    with pytest.raises(TypeError) as w:
        getattr(torch.special, name)(0.5)
    with pytest.raises(TypeError) as g:
        getattr(S, name)(0.5)
    assert str(g.value) == str(w.value)


@pytest.mark.parametrize("name", UNARY + POLY + ["zeta"])
def test_no_grad_like_torch(name: str) -> None:
    # torch 2.13 records nothing for these (zeta excepted): the output does not require grad.
    x = cr.tensor([0.3, 0.6], dtype=cr.float64, requires_grad=True)
    tx = torch.tensor([0.3, 0.6], dtype=torch.float64, requires_grad=True)
    if name in UNARY:
        got, want = getattr(S, name)(x), getattr(torch.special, name)(tx)
    elif name in POLY:
        got, want = getattr(S, name)(x, 3), getattr(torch.special, name)(tx, 3)
    else:
        got, want = S.zeta(x + 2, x), torch.special.zeta(tx + 2, tx)
    assert got.requires_grad == want.requires_grad
    if not want.requires_grad:
        with pytest.raises(RuntimeError, match="does not require grad"):
            got.sum().backward()


N_WIDE = [-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 20, 50]
X_POLY = np.concatenate(
    [
        np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.25, 0.75, 2.0, -2.0, 1.5, -3.0]),
        np.array([1e-7, 1 - 1e-7, -1 + 1e-7, 10.0, -10.0, 1e3, -1e3, 1e30, np.inf, -np.inf]),
        np.linspace(-1.2, 1.2, 49),
    ]
)  # no nan x: PyTorch's CPU recurrences return uninitialised values there (1.47e26...)


@pytest.mark.parametrize("name", POLY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polynomial_values(name: str, dtype: str) -> None:
    x = X_POLY.astype(dtype)
    if dtype == "float32":  # 2x - 1 at 1 ulp from -1: acosf's last bit decides the value
        x = x[(np.abs(x - 1e-7) > 1e-8) & (np.abs(np.abs(x) - 1) > 1e-6) | (np.abs(x) == 1)]
    x = x[:, None]
    n = np.array(N_WIDE)[None, :]
    got = getattr(S, name)(cr.tensor(x), cr.tensor(n))
    want = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n))
    if dtype == "float32":
        # Where the recurrence overflows at its last step, PyTorch's fused multiply-add gives
        # +-inf and NumPy's separate products inf - inf = nan: both overflow.
        g, w = got.numpy(), want.numpy()
        over = np.isinf(w) & np.isnan(g)
        assert not (np.isnan(w) & ~np.isnan(g)).any()
        got = cr.tensor(np.where(over, w, g))
    # the trigonometric forms go through cos/acos, whose last bits differ between libms
    rtol, atol = (2e-4, 1e-4) if dtype == "float32" else (1e-9, 1e-9)
    _close(got, want, rtol, atol)
    # a Python int degree, and the recurrence cases exactly
    for k in (0, 1, 2, 5):
        g = getattr(S, name)(cr.tensor(x[:, 0]), k)
        w = getattr(torch.special, name)(torch.tensor(x[:, 0]), k)
        _close(g, w, rtol, atol)


@pytest.mark.parametrize("name", POLY)
def test_polynomial_degrees_and_promotion(name: str) -> None:
    x = torch.tensor([0.3, 0.8, 1.7, -0.6])
    # non-integer n truncates toward zero, negative n gives 0, huge/inf/nan n: INT64_MIN (0)
    n = [2.5, 2.0, -1.0, -0.5, 3.9, np.nan, np.inf]
    for v in n:
        g = getattr(S, name)(cr.tensor(x.numpy()), cr.tensor([v] * 4))
        w = getattr(torch.special, name)(x, torch.tensor([v] * 4))
        _close(g, w, 1e-5)
    for v in (2.5, -1, 3):
        _close(getattr(S, name)(cr.tensor(x.numpy()), v), getattr(torch.special, name)(x, v), 1e-5)
    # integer x, Python-number x, float64 n with float32 x
    _close(
        getattr(S, name)(cr.tensor([1, 2, 0]), 3),
        getattr(torch.special, name)(torch.tensor([1, 2, 0]), 3),
        1e-6,
    )
    _close(
        getattr(S, name)(0.5, cr.tensor([3, 4])),
        getattr(torch.special, name)(0.5, torch.tensor([3, 4])),
        1e-6,
    )
    _close(
        getattr(S, name)(cr.tensor([0.5, 0.2]), cr.tensor([3.0, 4.0], dtype=cr.float64)),
        getattr(torch.special, name)(
            torch.tensor([0.5, 0.2]), torch.tensor([3.0, 4.0], dtype=torch.float64)
        ),
        1e-12,
    )
    with pytest.raises(TypeError):
        getattr(torch.special, name)(0.5, 3)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        getattr(S, name)(0.5, 3)
    with pytest.raises(NotImplementedError) as w:
        getattr(torch.special, name)(torch.ones(2, dtype=torch.float16), 2)
    with pytest.raises(NotImplementedError) as g:
        getattr(S, name)(cr.ones(2, dtype=cr.float16), 2)
    assert str(g.value) == str(w.value)


def test_zeta_values() -> None:
    xs = np.array([1.0, 0.5, 1.5, 2.0, 3.0, 4.5, 10.0, 50.0, np.inf, np.nan, -1.0, -2.0])
    qs = np.array([0.0, -1.0, -1.5, -2.5, 0.5, 1.0, 2.0, 1e-3, 10.0, 1e6, np.inf, np.nan])
    for dtype in ("float32", "float64"):
        x = xs.astype(dtype)[:, None]
        q = qs.astype(dtype)[None, :]
        got = S.zeta(cr.tensor(x), cr.tensor(q))
        want = torch.special.zeta(torch.tensor(x), torch.tensor(q))
        _close(got, want, 1e-6 if dtype == "float32" else 1e-12)
    # a Python number on either side, integer tensors promoted
    _close(S.zeta(2, cr.tensor([1.0, 2.0])), torch.special.zeta(2, torch.tensor([1.0, 2.0])), 1e-6)
    _close(
        S.zeta(cr.tensor([2.0, 3.0]), 2.0), torch.special.zeta(torch.tensor([2.0, 3.0]), 2.0), 1e-6
    )
    _close(
        S.zeta(cr.tensor([2, 3]), cr.tensor([1, 2])),
        torch.special.zeta(torch.tensor([2, 3]), torch.tensor([1, 2])),
        1e-6,
    )
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        S.zeta(2, 3)
    with pytest.raises(NotImplementedError) as w:
        torch.special.zeta(torch.ones(2, dtype=torch.float16), 2.0)
    with pytest.raises(NotImplementedError) as g:
        S.zeta(cr.ones(2, dtype=cr.float16), 2.0)
    assert str(g.value) == str(w.value)


def test_zeta_gradients() -> None:
    x = np.array([2.5, 3.5, 4.0])
    q = np.array([0.5, 1.5, 3.0])
    cq = cr.tensor(q, requires_grad=True)
    tq = torch.tensor(q, requires_grad=True)
    S.zeta(cr.tensor(x), cq).sum().backward()
    torch.special.zeta(torch.tensor(x), tq).sum().backward()
    assert cq.grad is not None and tq.grad is not None
    np.testing.assert_allclose(cq.grad.numpy(), tq.grad.numpy(), rtol=1e-12)
    assert gradcheck(lambda q: S.zeta(cr.tensor(x), q), (cr.tensor(q, requires_grad=True),))
    assert gradcheck(lambda q: S.zeta(3.0, q), (cr.tensor(q, requires_grad=True),))
    # the node names of PyTorch's three overloads
    for f in (
        lambda m, t: m.special.zeta(m.tensor(x), t),
        lambda m, t: m.special.zeta(3.0, t),
        lambda m, t: m.special.zeta(t + 2, 1.5),
    ):
        g = f(cr, cr.tensor(q, requires_grad=True)).grad_fn
        w = f(torch, torch.tensor(q, requires_grad=True)).grad_fn
        assert g.name() == w.name()
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        S.zeta(cr.tensor(x, requires_grad=True), 1.5).sum().backward()
    # the derivative in x: PyTorch raises at backward
    cx = cr.tensor(x, requires_grad=True)
    with pytest.raises(NotImplementedError) as g:
        S.zeta(cx, cr.tensor(q)).sum().backward()
    tx = torch.tensor(x, requires_grad=True)
    with pytest.raises(NotImplementedError) as w:
        torch.special.zeta(tx, torch.tensor(q)).sum().backward()
    assert str(g.value) == str(w.value)


def test_names_like_torch() -> None:
    assert S.Tensor is cr.Tensor
    assert S.common_args == torch.special.common_args
    assert S.multi_dim_common == torch.special.multi_dim_common
    for name in [*UNARY, *POLY, "zeta"]:
        assert name in S.__all__
        assert hasattr(cr, name) == hasattr(torch, name)
        assert hasattr(cr.Tensor, name) == hasattr(torch.Tensor, name)


def test_out_argument() -> None:
    out = cr.empty(3)
    r = S.bessel_j0(cr.tensor([0.0, 1.0, 2.0]), out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), torch.special.bessel_j0(torch.tensor([0.0, 1.0, 2.0])))
    out = cr.empty(2)
    S.legendre_polynomial_p(cr.tensor([0.5, 0.2]), 3, out=out)
    np.testing.assert_allclose(
        out.numpy(), torch.special.legendre_polynomial_p(torch.tensor([0.5, 0.2]), 3)
    )
