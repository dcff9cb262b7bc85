"""kl_divergence for every registered pair against PyTorch's (values and gradients), the
dispatch rules, and Monte Carlo agreement for the pairs of different families."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
import chainrule.distributions as CD
from chainrule.distributions.kl import _KL_REGISTRY

torch = pytest.importorskip("torch")
TD = torch.distributions

R = np.random.default_rng(0)
P = lambda *s, lo=0.5, hi=3.0: R.uniform(lo, hi, s)  # noqa: E731
X = lambda *s: R.normal(size=s)  # noqa: E731


def _sx(*s: int) -> np.ndarray:
    p = R.uniform(0.1, 1, s)
    return p / p.sum(-1, keepdims=True)


def _spd(*b: int) -> np.ndarray:
    m = R.normal(size=b + (3, 3))
    return m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)


def _tril(*b: int) -> np.ndarray:
    return np.tril(R.normal(size=b + (3, 3)), -1) + 1.5 * np.eye(3)


# (p constructor, p params, q constructor, q params) per registered pair
PAIRS: dict[tuple[str, str], tuple[Callable[..., Any], tuple, Callable[..., Any], tuple]] = {
    ("Bernoulli", "Bernoulli"): (
        lambda D, a: D.Bernoulli(a),
        (P(3, lo=0.1, hi=0.9),),
        lambda D, a: D.Bernoulli(a),
        (P(3, lo=0.1, hi=0.9),),
    ),
    ("Beta", "Beta"): (
        lambda D, a, b: D.Beta(a, b),
        (P(3), P(3)),
        lambda D, a, b: D.Beta(a, b),
        (P(3), P(3)),
    ),
    ("Binomial", "Binomial"): (
        lambda D, a: D.Binomial(5, a),
        (P(3, lo=0.1, hi=0.9),),
        lambda D, a: D.Binomial(5, a),
        (P(3, lo=0.1, hi=0.9),),
    ),
    ("Categorical", "Categorical"): (
        lambda D, a: D.Categorical(a),
        (_sx(2, 4),),
        lambda D, a: D.Categorical(a),
        (_sx(2, 4),),
    ),
    ("OneHotCategorical", "OneHotCategorical"): (
        lambda D, a: D.OneHotCategorical(a),
        (_sx(2, 4),),
        lambda D, a: D.OneHotCategorical(a),
        (_sx(2, 4),),
    ),
    ("Cauchy", "Cauchy"): (
        lambda D, a, b: D.Cauchy(a, b),
        (X(3), P(3)),
        lambda D, a, b: D.Cauchy(a, b),
        (X(3), P(3)),
    ),
    ("Dirichlet", "Dirichlet"): (
        lambda D, a: D.Dirichlet(a),
        (P(2, 3),),
        lambda D, a: D.Dirichlet(a),
        (P(2, 3),),
    ),
    ("Exponential", "Exponential"): (
        lambda D, a: D.Exponential(a),
        (P(3),),
        lambda D, a: D.Exponential(a),
        (P(3),),
    ),
    ("Gamma", "Gamma"): (
        lambda D, a, b: D.Gamma(a, b),
        (P(3), P(3)),
        lambda D, a, b: D.Gamma(a, b),
        (P(3), P(3)),
    ),
    ("Geometric", "Geometric"): (
        lambda D, a: D.Geometric(a),
        (P(3, lo=0.1, hi=0.9),),
        lambda D, a: D.Geometric(a),
        (P(3, lo=0.1, hi=0.9),),
    ),
    ("Gumbel", "Gumbel"): (
        lambda D, a, b: D.Gumbel(a, b),
        (X(3), P(3)),
        lambda D, a, b: D.Gumbel(a, b),
        (X(3), P(3)),
    ),
    ("Normal", "Normal"): (
        lambda D, a, b: D.Normal(a, b),
        (X(3), P(3)),
        lambda D, a, b: D.Normal(a, b),
        (X(3), P(3)),
    ),
    ("HalfNormal", "HalfNormal"): (
        lambda D, a: D.HalfNormal(a),
        (P(3),),
        lambda D, a: D.HalfNormal(a),
        (P(3),),
    ),
    ("Laplace", "Laplace"): (
        lambda D, a, b: D.Laplace(a, b),
        (X(3), P(3)),
        lambda D, a, b: D.Laplace(a, b),
        (X(3), P(3)),
    ),
    ("Pareto", "Pareto"): (
        lambda D, a, b: D.Pareto(a, b),
        (P(3, lo=1, hi=2), P(3)),
        lambda D, a, b: D.Pareto(a, b),
        (P(3, lo=0.5, hi=1), P(3)),
    ),
    ("Poisson", "Poisson"): (
        lambda D, a: D.Poisson(a),
        (P(3),),
        lambda D, a: D.Poisson(a),
        (P(3),),
    ),
    ("TransformedDistribution", "TransformedDistribution"): (
        lambda D, a, b: D.LogNormal(a, b),
        (X(3), P(3)),
        lambda D, a, b: D.LogNormal(a, b),
        (X(3), P(3)),
    ),
    ("Uniform", "Uniform"): (
        lambda D, a, b: D.Uniform(a, a + b),
        (X(3), P(3)),
        lambda D, a, b: D.Uniform(a - b, a + 2 * b),
        (X(3), P(3)),
    ),
    ("Independent", "Independent"): (
        lambda D, a, b: D.Independent(D.Normal(a, b), 1),
        (X(2, 3), P(2, 3)),
        lambda D, a, b: D.Independent(D.Normal(a, b), 1),
        (X(2, 3), P(2, 3)),
    ),
    ("MultivariateNormal", "MultivariateNormal"): (
        lambda D, a, c: D.MultivariateNormal(a, covariance_matrix=c),
        (X(2, 3), _spd(2)),
        lambda D, a, c: D.MultivariateNormal(a, scale_tril=c),
        (X(3), _tril(1)),
    ),
    ("Uniform", "Normal"): (
        lambda D, a, b: D.Uniform(a, a + b),
        (X(3), P(3)),
        lambda D, a, b: D.Normal(a, b),
        (X(3), P(3)),
    ),
    ("Exponential", "Normal"): (
        lambda D, a: D.Exponential(a),
        (P(3),),
        lambda D, a, b: D.Normal(a, b),
        (X(3), P(3)),
    ),
    ("Exponential", "Gamma"): (
        lambda D, a: D.Exponential(a),
        (P(3),),
        lambda D, a, b: D.Gamma(a, b),
        (P(3), P(3)),
    ),
    ("Laplace", "Normal"): (
        lambda D, a, b: D.Laplace(a, b),
        (X(3), P(3)),
        lambda D, a, b: D.Normal(a, b),
        (X(3), P(3)),
    ),
    ("Normal", "Laplace"): (
        lambda D, a, b: D.Normal(a, b),
        (X(3), P(3)),
        lambda D, a, b: D.Laplace(a, b),
        (X(3), P(3)),
    ),
    ("Beta", "Uniform"): (
        lambda D, a, b: D.Beta(a, b),
        (P(3), P(3)),
        lambda D, a, b: D.Uniform(a - 1, b + 1),
        (P(3, lo=0, hi=1), P(3, lo=0, hi=1)),
    ),
}


def test_every_registered_pair_has_a_case() -> None:
    registered = {(a.__name__, b.__name__) for a, b in _KL_REGISTRY}
    assert registered == set(PAIRS)


def _build(m: Any, ctor: Callable[..., Any], params: tuple) -> tuple[Any, list[Any]]:
    D = CD if m is cr else TD
    ts = [m.tensor(p, dtype=m.float64, requires_grad=True) for p in params]
    return ctor(D, *ts), ts


@pytest.mark.parametrize("pair", sorted(PAIRS), ids=lambda p: f"{p[0]}-{p[1]}")
def test_kl_matches_torch(pair: tuple[str, str]) -> None:
    cp, pp, cq, pq = PAIRS[pair]
    p_c, a_c = _build(cr, cp, pp)
    q_c, b_c = _build(cr, cq, pq)
    p_t, a_t = _build(torch, cp, pp)
    q_t, b_t = _build(torch, cq, pq)
    kc = CD.kl_divergence(p_c, q_c)
    kt = TD.kl_divergence(p_t, q_t)
    np.testing.assert_allclose(kc.detach().numpy(), kt.detach().numpy(), rtol=1e-9, atol=1e-10)
    finite = np.isfinite(kt.detach().numpy())
    if not finite.all():
        return
    gc = cr.autograd.grad(kc.sum(), a_c + b_c, allow_unused=True)
    gt = torch.autograd.grad(kt.sum(), a_t + b_t, allow_unused=True)
    for x, y in zip(gc, gt):
        if y is None:
            assert x is None or not np.any(x.numpy())
        else:
            # gradients go through trigamma, where PyTorch is off by up to ~3e-10
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-8, atol=1e-9)


def test_kl_infinite_where_the_support_is_not_covered() -> None:
    p = CD.Uniform(cr.tensor([0.0, 0.0]), cr.tensor([1.0, 2.0]))
    q = CD.Uniform(cr.tensor([0.0, 0.5]), cr.tensor([2.0, 3.0]))
    kl = CD.kl_divergence(p, q).numpy()
    assert kl[1] == np.inf and np.isclose(kl[0], np.log(2))


def test_unregistered_pair_raises_as_torch() -> None:
    with pytest.raises(
        NotImplementedError,
        match="No KL\\(p \\|\\| q\\) is implemented for p type Poisson and q type Normal",
    ):
        CD.kl_divergence(CD.Poisson(1.0), CD.Normal(0.0, 1.0))


def test_register_kl_dispatch_prefers_the_most_specific_pair() -> None:
    class MyNormal(CD.Normal):
        pass

    calls = []

    @CD.register_kl(MyNormal, CD.Normal)
    def _kl(p: Any, q: Any) -> Any:
        calls.append(1)
        return cr.zeros(())

    try:
        CD.kl_divergence(MyNormal(0.0, 1.0), CD.Normal(0.0, 1.0))
        CD.kl_divergence(CD.Normal(0.0, 1.0), MyNormal(0.0, 1.0))  # Normal-Normal, not ours
        assert calls == [1]
    finally:
        del _KL_REGISTRY[MyNormal, CD.Normal]
        CD.kl.__dict__["_KL_MEMOIZE"].clear()
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        CD.register_kl(int, CD.Normal)


@pytest.mark.parametrize("pair", [p for p in PAIRS if p[0] != p[1]], ids=lambda p: "-".join(p))
def test_cross_family_kl_agrees_with_monte_carlo(pair: tuple[str, str]) -> None:
    cp, pp, cq, pq = PAIRS[pair]
    p, _ = _build(cr, cp, pp)
    q, _ = _build(cr, cq, pq)
    cr.manual_seed(0)
    x = p.sample((100_000,))
    lr = (p.log_prob(x) - q.log_prob(x)).detach().numpy()
    se = lr.std(0) / np.sqrt(len(lr))
    kl = CD.kl_divergence(p, q).detach().numpy()
    assert np.all(np.abs(lr.mean(0) - kl) < 5 * se + 1e-9)
