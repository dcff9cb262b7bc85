"""``torch.special``: special functions, with PyTorch's names and gradients.

The differentiable primitives are registered ops in chainrule/ops/special.py; the rest are
compositions of ops (``ndtr``, ``multigammaln``, ``softmax``...).
"""

from __future__ import annotations

import math
from typing import Any

from chainrule._tensor import Tensor
from chainrule.ops import special as _s
from chainrule.ops._complex_guard import refuses_complex
from chainrule.ops.composite import exp2, sinc  # one place per function: torch.sinc's
from chainrule.ops.nn import log_softmax as _log_softmax
from chainrule.ops.nn import softmax as _softmax
from chainrule.ops.reduction import logsumexp as _logsumexp
from chainrule.ops.special import (
    digamma,
    entr,
    erfcx,
    erfinv,
    i0,
    i0e,
    i1,
    i1e,
    log_ndtr,
    logit,
    ndtri,
    polygamma,
    xlog1py,
    xlogy,
)
from chainrule.ops.special_functions import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    common_args,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    multi_dim_common,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
    spherical_bessel_j0,
    zeta,
)
from chainrule.ops.unary import erf, erfc, expm1, log1p, round, sigmoid

__all__ = [
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "sinc",
    "softmax",
    "xlog1py",
    "xlogy",
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "spherical_bessel_j0",
    "zeta",
    "Tensor",
    "common_args",
    "multi_dim_common",
]


gammaln = _s.lgamma
psi = digamma
expit = sigmoid
gammainc = _s.igamma
gammaincc = _s.igammac

_SQRT1_2 = 1 / math.sqrt(2)


@refuses_complex("ndtr", 1)
def ndtr(input: Any) -> Any:
    """The standard normal CDF, Phi(x) = erfc(-x / sqrt 2) / 2."""
    return erfc(input * -_SQRT1_2) * 0.5


def multigammaln(input: Any, p: int) -> Any:
    """Multivariate log-gamma of dimension ``p`` (``torch.mvlgamma``)."""
    return _s.mvlgamma(input, p)


def softmax(input: Any, dim: int, *, dtype: Any = None) -> Any:
    """``torch.special.softmax``: softmax over ``dim``."""
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input: Any, dim: int, *, dtype: Any = None) -> Any:
    """``torch.special.log_softmax``: log of the softmax over ``dim``."""
    return _log_softmax(input, dim, dtype=dtype)


def logsumexp(input: Any, dim: Any, keepdim: bool = False) -> Any:
    """``torch.special.logsumexp``: log sum exp over ``dim``."""
    return _logsumexp(input, dim, keepdim)
