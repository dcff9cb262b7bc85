"""``kl_divergence(p, q)`` and the ``register_kl`` registry it dispatches through.

Dispatch picks the most specific registered pair of (super)classes of ``type(p)`` and
``type(q)``, as PyTorch's does, warning when two candidates are equally specific.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import chainrule.nn.functional as F
from chainrule import _creation
from chainrule import ops as _ops
from chainrule._tensor import Tensor
from chainrule.distributions.bernoulli import Bernoulli
from chainrule.distributions.beta import Beta
from chainrule.distributions.binomial import Binomial
from chainrule.distributions.categorical import Categorical
from chainrule.distributions.cauchy import Cauchy
from chainrule.distributions.dirichlet import Dirichlet
from chainrule.distributions.distribution import Distribution
from chainrule.distributions.exponential import Exponential
from chainrule.distributions.gamma import Gamma
from chainrule.distributions.geometric import Geometric
from chainrule.distributions.gumbel import Gumbel
from chainrule.distributions.half_normal import HalfNormal
from chainrule.distributions.independent import Independent
from chainrule.distributions.laplace import Laplace
from chainrule.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from chainrule.distributions.normal import Normal
from chainrule.distributions.one_hot_categorical import OneHotCategorical
from chainrule.distributions.pareto import Pareto
from chainrule.distributions.poisson import Poisson
from chainrule.distributions.transformed_distribution import TransformedDistribution
from chainrule.distributions.uniform import Uniform
from chainrule.distributions.utils import _sum_rightmost, broadcast_shapes, euler_constant
from chainrule.linalg import solve_triangular

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY: dict[tuple[type, type], Callable[..., Any]] = {}
_KL_MEMOIZE: dict[tuple[type, type], Any] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable[..., Any]], Any]:
    """Decorator registering ``fn(p, q)`` as the KL divergence of the pair of types."""
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: Callable[..., Any]) -> Callable[..., Any]:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # reset since lookup order may have changed
        return fun

    return decorator


def _more_specific(a: tuple[type, ...], b: tuple[type, ...]) -> bool:
    # a precedes b when, in lexicographic order, a's classes are subclasses of b's
    for x, y in zip(a, b):
        if not issubclass(x, y):
            return False
        if x is not y:
            break
    return True


def _most_specific(matches: list[tuple[type, ...]]) -> tuple[type, ...]:
    best = matches[0]
    for m in matches[1:]:
        if _more_specific(m, best) and m != best:
            best = m
    return best


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    matches = [
        (sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)
    ]
    if not matches:
        return NotImplemented
    left_p, left_q = _most_specific(matches)
    right_q, right_p = _most_specific([(sq, sp) for sp, sq in matches])
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please "
            f"register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) = E_p[log p(x) - log q(x)], over the batch shape.

    Raises:
        NotImplementedError: when no pair of (super)classes of the two types is registered.
    """
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
            f"{q.__class__.__name__}"
        )
    return fun(p, q)


def _inf_where(cond: Tensor, t: Tensor) -> Tensor:
    return _ops.where(cond, _creation.full_like(t, math.inf), t)


def _zero_where(cond: Tensor, t: Tensor) -> Tensor:
    return _ops.where(cond, _creation.zeros_like(t), t)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Any, q: Any) -> Tensor:
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Any, q: Any) -> Tensor:
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    t5 = (sum_q - sum_p) * sum_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Any, q: Any) -> Tensor:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Any, q: Any) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    shape = tuple(t.shape)
    t = _inf_where((q.probs == 0).expand(shape), t)
    t = _zero_where((p.probs == 0).expand(shape), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: Any, q: Any) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Any, q: Any) -> Tensor:
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Any, q: Any) -> Tensor:
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Any, q: Any) -> Tensor:
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Any, q: Any) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Any, q: Any) -> Tensor:
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Any, q: Any) -> Tensor:
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Any, q: Any) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: Any, q: Any) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Any, q: Any) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Any, q: Any) -> Tensor:
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _inf_where(p.scale < q.scale, result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Any, q: Any) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: Any, q: Any) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Any, q: Any) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Any, q: Any) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


# Pairs of different families ----------------------------------------------------------------
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Any, q: Any) -> Tensor:
    # -log(h - l) + log(sigma sqrt(2 pi)) + E[(x - mu)**2] / (2 sigma**2)
    width = p.high - p.low
    second = width.pow(2) / 12 + ((p.high + p.low) / 2 - q.loc).pow(2)
    return -width.log() + q.scale.log() + _HALF_LOG_2PI + second / (2 * q.scale.pow(2))


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Any, q: Any) -> Tensor:
    # E_p[log p] = log(rate) - 1; E_p[(x - mu)**2] = 2/rate**2 - 2 mu/rate + mu**2
    second = 2 / p.rate.pow(2) - 2 * q.loc / p.rate + q.loc.pow(2)
    return p.rate.log() - 1 + q.scale.log() + _HALF_LOG_2PI + second / (2 * q.scale.pow(2))


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Any, q: Any) -> Tensor:
    # E_p[log x] = -euler - log(rate), E_p[x] = 1/rate
    a, b = q.concentration, q.rate
    return (
        p.rate.log()
        - 1
        - a * b.log()
        + (a - 1) * (euler_constant + p.rate.log())
        + b / p.rate
        + a.lgamma()
    )


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Any, q: Any) -> Tensor:
    # E_p[log p] = -log(2 b) - 1; E_p[(x - mu)**2] = 2 b**2 + (m - mu)**2
    second = 2 * p.scale.pow(2) + (p.loc - q.loc).pow(2)
    return -(2 * p.scale).log() - 1 + q.scale.log() + _HALF_LOG_2PI + second / (2 * q.scale.pow(2))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Any, q: Any) -> Tensor:
    # E_p|x - m| for x ~ N(mu, s**2): s sqrt(2/pi) e**(-d**2 / 2 s**2) + d erf(d / (s sqrt 2))
    d = p.loc - q.loc
    s = p.scale
    mean_abs = (
        s * math.sqrt(2 / math.pi) * (-(d.pow(2)) / (2 * s.pow(2))).exp()
        + d * (d / (s * math.sqrt(2))).erf()
    )
    return -s.log() - _HALF_LOG_2PI - 0.5 + (2 * q.scale).log() + mean_abs / q.scale


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Any, q: Any) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > 0) | (q.high < 1), result)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p: Any, q: Any) -> Tensor:
    # (tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - n) / 2 + log det Lq - log det Lp
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event "
            "shapes cannot be computed"
        )
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - Lp.diagonal(
        dim1=-2, dim2=-1
    ).log().sum(-1)
    n = p.event_shape[0]
    batch = tuple(broadcast_shapes(Lq.shape[:-2], Lp.shape[:-2]))
    x = solve_triangular(Lq.expand(batch + (n, n)), Lp.expand(batch + (n, n)), upper=False)
    term2 = x.pow(2).sum(-1).sum(-1)
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)
