"""Every distribution against torch.distributions on shared float64 parameters and values:
shapes, log_prob, cdf, icdf, mean, mode, variance, stddev, entropy, enumerate_support, and the
gradients of log_prob with respect to the parameters."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
import chainrule.distributions as CD

torch = pytest.importorskip("torch")
TD = torch.distributions

R = np.random.default_rng(0)


def _pos(*shape: int, lo: float = 0.5, hi: float = 3.0) -> np.ndarray:
    return R.uniform(lo, hi, shape)


def _real(*shape: int) -> np.ndarray:
    return R.normal(size=shape)


def _simplex(*shape: int) -> np.ndarray:
    p = R.uniform(0.1, 1, shape)
    return p / p.sum(-1, keepdims=True)


def _spd(*batch: int, n: int = 3) -> np.ndarray:
    m = R.normal(size=batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _tril(*batch: int, n: int = 3) -> np.ndarray:
    m = np.tril(R.normal(size=batch + (n, n)), -1)
    return m + np.eye(n) * R.uniform(0.5, 2, batch + (n, 1))


def _cb_probs() -> np.ndarray:
    return np.array([0.05, 0.3, 0.4995, 0.5003, 0.8])  # two inside the Taylor region


# name, constructor(D, *params) with D the distributions module, float parameters, whether
# parameters get gradients (False for integer-valued ones), extra kwargs
SPECS: list[tuple[str, Callable[..., Any], tuple[np.ndarray, ...]]] = [
    ("Normal", lambda D, a, b: D.Normal(a, b), (_real(3), _pos(3))),
    ("Normal_bcast", lambda D, a, b: D.Normal(a, b), (_real(2, 1), _pos(3))),
    ("Uniform", lambda D, a, b: D.Uniform(a, a + b), (_real(3), _pos(3))),
    ("Exponential", lambda D, a: D.Exponential(a), (_pos(4),)),
    ("Laplace", lambda D, a, b: D.Laplace(a, b), (_real(3), _pos(3))),
    ("Cauchy", lambda D, a, b: D.Cauchy(a, b), (_real(3), _pos(3))),
    ("Gumbel", lambda D, a, b: D.Gumbel(a, b), (_real(3), _pos(3))),
    ("HalfNormal", lambda D, b: D.HalfNormal(b), (_pos(3),)),
    ("HalfCauchy", lambda D, b: D.HalfCauchy(b), (_pos(3),)),
    ("LogNormal", lambda D, a, b: D.LogNormal(a, b), (_real(3), _pos(3, hi=1.0))),
    ("Weibull", lambda D, a, b: D.Weibull(a, b), (_pos(3), _pos(3, lo=1.2))),
    ("Pareto", lambda D, a, b: D.Pareto(a, b), (_pos(3), _pos(3, lo=2.5, hi=5))),
    ("Gamma", lambda D, a, b: D.Gamma(a, b), (_pos(3), _pos(3))),
    ("Chi2", lambda D, a: D.Chi2(a), (_pos(3, lo=1, hi=6),)),
    ("Beta", lambda D, a, b: D.Beta(a, b), (_pos(3), _pos(3))),
    (
        "StudentT",
        lambda D, a, b, c: D.StudentT(a, b, c),
        (_pos(3, lo=2.5, hi=6), _real(3), _pos(3)),
    ),
    ("Dirichlet", lambda D, a: D.Dirichlet(a), (_pos(2, 3),)),
    ("Bernoulli_probs", lambda D, p: D.Bernoulli(probs=p), (_pos(4, lo=0.1, hi=0.9),)),
    ("Bernoulli_logits", lambda D, lg: D.Bernoulli(logits=lg), (_real(4),)),
    ("Categorical_probs", lambda D, p: D.Categorical(probs=p), (_simplex(2, 4),)),
    ("Categorical_logits", lambda D, lg: D.Categorical(logits=lg), (_real(2, 4),)),
    ("OneHotCategorical", lambda D, p: D.OneHotCategorical(probs=p), (_simplex(2, 3),)),
    ("Poisson", lambda D, a: D.Poisson(a), (_pos(4, hi=6),)),
    ("Geometric", lambda D, p: D.Geometric(probs=p), (_pos(4, lo=0.2, hi=0.9),)),
    ("Geometric_logits", lambda D, lg: D.Geometric(logits=lg), (_real(4),)),
    ("Binomial", lambda D, p: D.Binomial(6, probs=p), (_pos(4, lo=0.1, hi=0.9),)),
    ("Binomial_logits", lambda D, lg: D.Binomial(5, logits=lg), (_real(3),)),
    ("NegativeBinomial", lambda D, p: D.NegativeBinomial(3.5, probs=p), (_pos(4, lo=0.1, hi=0.8),)),
    ("Multinomial", lambda D, p: D.Multinomial(5, probs=p), (_simplex(2, 3),)),
    ("Independent", lambda D, a, b: D.Independent(D.Normal(a, b), 1), (_real(2, 3), _pos(2, 3))),
    ("Expanded", lambda D, a, b: D.Gamma(a, b).expand((2, 3)), (_pos(3), _pos(3))),
    (
        "Transformed",
        lambda D, a, b: D.TransformedDistribution(
            D.Normal(a, b), [D.transforms.AffineTransform(1.0, 2.0), D.transforms.ExpTransform()]
        ),
        (_real(3), _pos(3)),
    ),
    (
        "Transformed_sigmoid",
        lambda D, a, b: D.TransformedDistribution(D.Normal(a, b), D.transforms.SigmoidTransform()),
        (_real(3), _pos(3)),
    ),
    (
        "Transformed_stickbreaking",
        lambda D, a, b: D.TransformedDistribution(
            D.Independent(D.Normal(a, b), 1), D.transforms.StickBreakingTransform()
        ),
        (_real(2, 3), _pos(2, 3, hi=1.0)),
    ),
    (
        "MultivariateNormal_cov",
        lambda D, a, c: D.MultivariateNormal(a, covariance_matrix=c),
        (_real(2, 3), _spd(2)),
    ),
    (
        "MultivariateNormal_prec",
        lambda D, a, c: D.MultivariateNormal(a, precision_matrix=c),
        (_real(3), _spd(2)),
    ),
    (
        "MultivariateNormal_tril",
        lambda D, a, c: D.MultivariateNormal(a, scale_tril=c),
        (_real(2, 3), _tril(1)),
    ),
    (
        "LowRankMultivariateNormal",
        lambda D, a, w, d: D.LowRankMultivariateNormal(a, w, d),
        (_real(2, 3), _real(2, 3, 2), _pos(2, 3)),
    ),
    (
        "MixtureSameFamily",
        lambda D, p, a, b: D.MixtureSameFamily(D.Categorical(p), D.Normal(a, b)),
        (_simplex(2, 3), _real(2, 3), _pos(2, 3)),
    ),
    (
        "MixtureSameFamily_event",
        lambda D, p, a, b: D.MixtureSameFamily(D.Categorical(p), D.Independent(D.Normal(a, b), 1)),
        (_simplex(3), _real(3, 2), _pos(3, 2)),
    ),
    (
        "RelaxedBernoulli",
        lambda D, t, p: D.RelaxedBernoulli(t, probs=p),
        (np.array(0.7), _pos(3, lo=0.1, hi=0.9)),
    ),
    (
        "RelaxedOneHotCategorical",
        lambda D, t, lg: D.RelaxedOneHotCategorical(t, logits=lg),
        (np.array(0.6), _real(2, 3)),
    ),
    ("VonMises", lambda D, a, k: D.VonMises(a, k), (_real(3), _pos(3, hi=8))),
    ("ContinuousBernoulli", lambda D, p: D.ContinuousBernoulli(probs=p), (_cb_probs(),)),
    ("LKJCholesky", lambda D, c: D.LKJCholesky(3, c), (_pos(2),)),
    ("LKJCholesky_4", lambda D, c: D.LKJCholesky(4, c), (np.array(0.7),)),
    ("ContinuousBernoulli_logits", lambda D, lg: D.ContinuousBernoulli(logits=lg), (_real(4),)),
]

# PyTorch computes log I0 of VonMises by a polynomial approximation (about 1e-7 relative);
# ours is SciPy's i0e.
RTOL = {"VonMises": 1e-5}

# Statistics that PyTorch does not define for a family raise NotImplementedError in both.
STATS = ("mean", "mode", "variance", "stddev")


def _make(spec: tuple[Any, ...], m: Any, requires_grad: bool = True) -> tuple[Any, list[Any]]:
    name, ctor, params = spec
    D = CD if m is cr else TD
    ts = [m.tensor(p, dtype=m.float64, requires_grad=requires_grad) for p in params]
    return ctor(D, *ts), ts


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _values(spec: tuple[Any, ...]) -> np.ndarray:
    dt, _ = _make(spec, torch, requires_grad=False)
    torch.manual_seed(0)
    return dt.sample((5,)).numpy()


def _both(f: Callable[[Any], Any], dc: Any, dt: Any) -> tuple[Any, Any] | None:
    """f on both distributions; None when PyTorch does not implement it (then ours must not
    either)."""
    try:
        t = f(dt)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            f(dc)
        return None
    return f(dc), t


def _close(c: Any, t: Any, rtol: float = 1e-9) -> None:
    assert tuple(c.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(c), _np(t), rtol=rtol, atol=1e-10, equal_nan=True)


IDS = [s[0] for s in SPECS]


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_shapes_and_statistics(spec: tuple[Any, ...]) -> None:
    dc, _ = _make(spec, cr)
    dt, _ = _make(spec, torch)
    assert tuple(dc.batch_shape) == tuple(dt.batch_shape)
    assert tuple(dc.event_shape) == tuple(dt.event_shape)
    assert dc.has_rsample == dt.has_rsample
    assert dc.has_enumerate_support == dt.has_enumerate_support
    assert type(dc.support).__name__ == type(dt.support).__name__
    if "tensor(" not in repr(dt.support):
        assert repr(dc.support) == repr(dt.support)
    for stat in STATS:
        r = _both(lambda d: getattr(d, stat), dc, dt)
        if r is not None:
            _close(*r, RTOL.get(spec[0], 1e-9))
    r = _both(lambda d: d.entropy(), dc, dt)
    if r is not None:
        # PyTorch's Multinomial entropy takes lgamma(n + 1) of an int64 tensor, in float32.
        _close(*r, rtol=1e-7 if spec[0] == "Multinomial" else 1e-9)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_log_prob_cdf_icdf_and_gradients(spec: tuple[Any, ...]) -> None:
    dc, pc = _make(spec, cr)
    dt, pt = _make(spec, torch)
    v = _values(spec)
    lc, lt = dc.log_prob(cr.tensor(v)), dt.log_prob(torch.tensor(v))
    rtol = RTOL.get(spec[0], 1e-9)
    _close(lc, lt, rtol)
    g = np.random.default_rng(1).uniform(-1, 1, tuple(lt.shape))
    gc = cr.autograd.grad(lc, pc, cr.tensor(g), allow_unused=True)
    gt = torch.autograd.grad(lt, pt, torch.tensor(g), allow_unused=True)
    for a, b in zip(gc, gt):
        if b is None:
            assert a is None or not np.any(_np(a))
        else:
            _close(a, b, rtol)
    r = _both(lambda d: d.cdf((cr if d is dc else torch).tensor(v)), dc, dt)
    if r is not None:
        _close(*r)
    u = np.random.default_rng(2).uniform(0.05, 0.95, v.shape)
    r = _both(lambda d: d.icdf((cr if d is dc else torch).tensor(u)), dc, dt)
    if r is not None:
        _close(*r)


@pytest.mark.parametrize(
    "spec",
    [
        s
        for s in SPECS
        if s[0]
        in ("Bernoulli_probs", "Categorical_logits", "OneHotCategorical", "Binomial", "Independent")
    ],
    ids=lambda s: s[0],
)
def test_enumerate_support(spec: tuple[Any, ...]) -> None:
    dc, _ = _make(spec, cr)
    dt, _ = _make(spec, torch)
    for expand in (True, False):
        r = _both(lambda d: d.enumerate_support(expand=expand), dc, dt)
        if r is not None:
            np.testing.assert_array_equal(_np(r[0]), _np(r[1]))
