"""``torch.distributions`` for chainrule: parametrizable probability distributions with
``sample``/``rsample``/``log_prob``, constraints and transforms, and ``kl_divergence``.

Everything is written with chainrule's differentiable Tensor ops, so ``log_prob`` (score-function
estimators) and ``rsample`` (pathwise estimators) carry gradients to the parameters::

    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    loss = -m.log_prob(action) * reward
    loss.backward()
"""

from __future__ import annotations

from chainrule.distributions import constraints, transforms
from chainrule.distributions.bernoulli import Bernoulli
from chainrule.distributions.beta import Beta
from chainrule.distributions.binomial import Binomial
from chainrule.distributions.categorical import Categorical
from chainrule.distributions.cauchy import Cauchy
from chainrule.distributions.chi2 import Chi2
from chainrule.distributions.constraint_registry import biject_to, transform_to
from chainrule.distributions.continuous_bernoulli import ContinuousBernoulli
from chainrule.distributions.dirichlet import Dirichlet
from chainrule.distributions.distribution import Distribution
from chainrule.distributions.exp_family import ExponentialFamily
from chainrule.distributions.exponential import Exponential
from chainrule.distributions.gamma import Gamma
from chainrule.distributions.geometric import Geometric
from chainrule.distributions.gumbel import Gumbel
from chainrule.distributions.half_cauchy import HalfCauchy
from chainrule.distributions.half_normal import HalfNormal
from chainrule.distributions.independent import Independent
from chainrule.distributions.kl import kl_divergence, register_kl
from chainrule.distributions.laplace import Laplace
from chainrule.distributions.lkj_cholesky import LKJCholesky
from chainrule.distributions.log_normal import LogNormal
from chainrule.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from chainrule.distributions.mixture_same_family import MixtureSameFamily
from chainrule.distributions.multinomial import Multinomial
from chainrule.distributions.multivariate_normal import MultivariateNormal
from chainrule.distributions.negative_binomial import NegativeBinomial
from chainrule.distributions.normal import Normal
from chainrule.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from chainrule.distributions.pareto import Pareto
from chainrule.distributions.poisson import Poisson
from chainrule.distributions.relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from chainrule.distributions.relaxed_categorical import (
    ExpRelaxedCategorical,
    RelaxedOneHotCategorical,
)
from chainrule.distributions.studentT import StudentT
from chainrule.distributions.transformed_distribution import TransformedDistribution
from chainrule.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from chainrule.distributions.uniform import Uniform
from chainrule.distributions.von_mises import VonMises
from chainrule.distributions.weibull import Weibull

__all__ = [
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExponentialFamily",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "Laplace",
    "LogNormal",
    "Multinomial",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "StudentT",
    "TransformedDistribution",
    "Uniform",
    "Weibull",
    "ContinuousBernoulli",
    "LowRankMultivariateNormal",
    "MixtureSameFamily",
    "MultivariateNormal",
    "LogitRelaxedBernoulli",
    "RelaxedBernoulli",
    "ExpRelaxedCategorical",
    "RelaxedOneHotCategorical",
    "VonMises",
    "LKJCholesky",
    "biject_to",
    "constraints",
    "kl_divergence",
    "register_kl",
    "transform_to",
    "transforms",
    "AbsTransform",
    "AffineTransform",
    "ComposeTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "identity_transform",
]
