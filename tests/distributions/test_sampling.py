"""Samples: shapes as PyTorch's, moments of 10^5 samples within 4 standard errors, two-sample KS
tests against PyTorch's samples, and the gradients of rsample (pathwise derivatives) checked
against the implicit derivative -(dF/dtheta) / p(x) of PyTorch's CDFs at the same points."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.stats

import chainrule as cr
from tests.distributions.test_against_torch import IDS, SPECS, _make, _np

torch = pytest.importorskip("torch")
TD_LKJ = torch.distributions.LKJCholesky

N = 100_000
HEAVY = {"Cauchy", "HalfCauchy"}  # no finite mean or variance
CIRCULAR = {"VonMises"}  # its mean and variance are circular statistics


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_sample_shapes_and_moments(spec: tuple[Any, ...]) -> None:
    dc, _ = _make(spec, cr, requires_grad=False)
    dt, _ = _make(spec, torch, requires_grad=False)
    cr.manual_seed(0)
    assert tuple(dc.sample().shape) == tuple(dt.sample().shape)
    assert tuple(dc.sample((2, 3)).shape) == tuple(dt.sample((2, 3)).shape)
    x = _np(dc.sample((N,)))
    assert x.dtype == np.float64 or x.dtype == np.int64
    assert bool(_np(dt.support.check(torch.tensor(x[:1000]))).all())
    skip = HEAVY | CIRCULAR | {"LogNormal"}
    if spec[0] in skip or spec[0].startswith("Transformed"):
        return
    try:
        mean, var = _np(dt.mean), _np(dt.variance)
    except NotImplementedError:
        return
    if spec[0].startswith("Categorical"):
        return
    mean = np.broadcast_to(mean, x.shape[1:])
    var = np.broadcast_to(var, x.shape[1:])
    se = np.sqrt(var / N)
    assert np.all(np.abs(x.mean(0) - mean) <= 4 * se + 1e-12), (x.mean(0), mean)
    m4 = ((x - x.mean(0)) ** 4).mean(0)
    se_var = np.sqrt(np.maximum(m4 - x.var(0) ** 2, 0) / N)
    assert np.all(np.abs(x.var(0) - var) <= 4 * se_var + 1e-12), (x.var(0), var)


KS = [
    "Normal",
    "Exponential",
    "Laplace",
    "Cauchy",
    "Gumbel",
    "HalfNormal",
    "LogNormal",
    "Weibull",
    "Pareto",
    "Gamma",
    "Beta",
    "StudentT",
    "Uniform",
    "Chi2",
    "HalfCauchy",
    "Transformed_sigmoid",
    "VonMises",
    "ContinuousBernoulli",
    "RelaxedBernoulli",
]


@pytest.mark.parametrize("spec", [s for s in SPECS if s[0] in KS], ids=lambda s: s[0])
def test_two_sample_ks_against_torch(spec: tuple[Any, ...]) -> None:
    dc, _ = _make(spec, cr, requires_grad=False)
    dt, _ = _make(spec, torch, requires_grad=False)
    cr.manual_seed(1)
    torch.manual_seed(1)
    xc = _np(dc.sample((4000,)))[:, 0]
    xt = dt.sample((4000,)).numpy()[:, 0]
    assert scipy.stats.ks_2samp(xc, xt).pvalue > 1e-4


# Univariate reparameterized families whose CDF PyTorch implements (directly or through its
# transforms): the pathwise derivative of a sample x is -(dF/dtheta)(x) / p(x).
IMPLICIT = [
    "Normal",
    "Normal_bcast",
    "Exponential",
    "Laplace",
    "Cauchy",
    "Uniform",
    "HalfNormal",
    "HalfCauchy",
    "LogNormal",
    "Transformed",
    "Transformed_sigmoid",
    "ContinuousBernoulli",
]


@pytest.mark.parametrize("spec", [s for s in SPECS if s[0] in IMPLICIT], ids=lambda s: s[0])
def test_rsample_gradient_is_the_implicit_derivative(spec: tuple[Any, ...]) -> None:
    dc, pc = _make(spec, cr)
    cr.manual_seed(3)
    x = dc.rsample((4,))
    grads = cr.autograd.grad(x.sum(), pc, allow_unused=True)
    # torch: F(x; theta) and p(x; theta) at our sample values; dF/dtheta summed over samples.
    dt, pt = _make(spec, torch)
    xt = torch.tensor(_np(x))
    cdf = dt.cdf(xt)
    pdf = dt.log_prob(xt).exp().detach()
    expected = torch.autograd.grad((-cdf / pdf).sum(), pt, allow_unused=True)
    for a, b in zip(grads, expected):
        np.testing.assert_allclose(_np(a), b.numpy(), rtol=1e-7, atol=1e-9)


def test_gamma_rsample_gradient_matches_torch_kernel() -> None:
    # PyTorch's _standard_gamma_grad is a fitted approximation; ours is exact to ~1e-10.
    alpha = np.array([0.05, 0.3, 1.0, 2.5, 9.0, 40.0])
    cr.manual_seed(0)
    a = cr.tensor(alpha, requires_grad=True)
    x = cr.distributions.Gamma(a, 1.0).rsample((50,))
    (g,) = cr.autograd.grad(x, [a], cr.ones_like(x))
    ta = torch.tensor(alpha).expand(50, 6)
    tg = torch._standard_gamma_grad(ta, torch.tensor(_np(x))).sum(0)
    np.testing.assert_allclose(_np(g), tg.numpy(), rtol=5e-3)


def test_gamma_rsample_gradient_against_inverse_cdf_differences() -> None:
    # With u = P(alpha, x) fixed, x(alpha) = gammaincinv(alpha, u): a central difference of
    # SciPy's inverse is an independent reference for dx/dalpha.
    from scipy.special import gammainc, gammaincinv

    from chainrule.ops.special import gamma_implicit_grad

    alpha = np.array([0.2, 1.0, 3.0, 30.0, 300.0])
    x = np.array([0.01, 0.7, 5.5, 25.0, 320.0])
    u = gammainc(alpha, x)
    h = 1e-6 * alpha
    fd = (gammaincinv(alpha + h, u) - gammaincinv(alpha - h, u)) / (2 * h)
    np.testing.assert_allclose(gamma_implicit_grad(alpha, x), fd, rtol=1e-6)


def test_beta_rsample_gradient_against_inverse_cdf_differences() -> None:
    # x(a) = betaincinv(a, b, u) with u fixed: an independent reference for dx/da (b fixed).
    from scipy.special import betainc, betaincinv

    from chainrule.ops.special import beta_implicit_grad

    a = np.array([0.3, 1.0, 2.5, 8.0, 50.0])
    b = np.array([2.0, 0.4, 3.0, 1.5, 60.0])
    x = np.array([0.05, 0.9, 0.4, 0.999, 0.45])
    u = betainc(a, b, x)
    h = 1e-6 * a
    fd = (betaincinv(a + h, b, u) - betaincinv(a - h, b, u)) / (2 * h)
    np.testing.assert_allclose(beta_implicit_grad(x, a, b), fd, rtol=1e-6)


@pytest.mark.parametrize("name", ["Beta", "Dirichlet"])
def test_beta_and_dirichlet_rsample_gradients_match_torch(name: str) -> None:
    # PyTorch's _dirichlet_grad approximates the same derivative to about 2e-3 relative.
    rng = np.random.default_rng(4)
    if name == "Beta":
        a, b = rng.uniform(0.5, 4, 3), rng.uniform(0.5, 4, 3)
        ca, cb = cr.tensor(a, requires_grad=True), cr.tensor(b, requires_grad=True)
        cr.manual_seed(0)
        x = cr.distributions.Beta(ca, cb).rsample((5,))
        g = np.random.default_rng(5).uniform(-1, 1, tuple(x.shape))
        got = cr.autograd.grad(x, [ca, cb], cr.tensor(g))
        # torch: Beta(a, b) sample x is Dirichlet([a, b]) sample [x, 1 - x]
        ta = torch.tensor(np.stack([a, b], -1)).expand(5, 3, 2)
        xx = torch.tensor(np.stack([_np(x), 1 - _np(x)], -1))
        d = torch._dirichlet_grad(xx, ta, ta.sum(-1, True).expand_as(ta))
        gt = torch.tensor(np.stack([g, np.zeros_like(g)], -1))
        full = (d * (gt - (xx * gt).sum(-1, True))).sum(0)
        np.testing.assert_allclose(_np(got[0]), full[..., 0].numpy(), rtol=5e-3, atol=1e-6)
        np.testing.assert_allclose(_np(got[1]), full[..., 1].numpy(), rtol=5e-3, atol=1e-6)
    else:
        a = rng.uniform(0.5, 4, (2, 4))
        ca = cr.tensor(a, requires_grad=True)
        cr.manual_seed(0)
        x = cr.distributions.Dirichlet(ca).rsample((3,))
        g = np.random.default_rng(5).uniform(-1, 1, tuple(x.shape))
        (got,) = cr.autograd.grad(x, [ca], cr.tensor(g))
        ta = torch.tensor(a).expand(3, 2, 4)
        xt = torch.tensor(_np(x))
        d = torch._dirichlet_grad(xt, ta, ta.sum(-1, True).expand_as(ta))
        gt = torch.tensor(g)
        exp = (d * (gt - (xt * gt).sum(-1, True))).sum(0)
        np.testing.assert_allclose(_np(got), exp.numpy(), rtol=5e-3, atol=1e-6)


def test_straight_through_and_relaxed_gradients_flow() -> None:
    p = cr.tensor([0.2, 0.3, 0.5], dtype=cr.float64, requires_grad=True)
    d = cr.distributions.OneHotCategoricalStraightThrough(probs=p)
    cr.manual_seed(0)
    s = d.rsample()
    assert sorted(_np(s).tolist()) == [0.0, 0.0, 1.0]
    w = cr.tensor([1.0, 2.0, 3.0], dtype=cr.float64)
    (g,) = cr.autograd.grad((s * w).sum(), [p])
    # the straight-through gradient is that of probs = p / p.sum()
    tp = torch.tensor(_np(p), requires_grad=True)
    (tg,) = torch.autograd.grad(((tp / tp.sum()) * torch.tensor(_np(w))).sum(), [tp])
    np.testing.assert_allclose(_np(g), tg.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dim,eta", [(3, 2.0), (4, 0.7)])
def test_lkj_correlations_match_theory_and_torch(dim: int, eta: float) -> None:
    # The first correlation of an LKJ(eta) matrix has (r + 1) / 2 ~ Beta(b, b), b = eta - 1 +
    # dim / 2; every correlation is compared with PyTorch's samples (a two-sample KS test).
    cr.manual_seed(0)
    torch.manual_seed(0)
    L = cr.distributions.LKJCholesky(dim, cr.tensor(eta, dtype=cr.float64)).sample((4000,))
    Lt = TD_LKJ(dim, torch.tensor(eta, dtype=torch.float64)).sample((4000,))
    C = (L @ L.transpose(-1, -2)).numpy()
    Ct = (Lt @ Lt.mT).numpy()
    np.testing.assert_allclose(np.diagonal(C, axis1=-2, axis2=-1), 1.0, atol=1e-12)
    b = eta - 1 + dim / 2
    assert scipy.stats.kstest((C[:, 1, 0] + 1) / 2, scipy.stats.beta(b, b).cdf).pvalue > 1e-4
    for i in range(1, dim):
        for j in range(i):
            assert scipy.stats.ks_2samp(C[:, i, j], Ct[:, i, j]).pvalue > 1e-4, (i, j)
