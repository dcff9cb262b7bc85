"""Transforms: invertible (or not) maps with log-Jacobians, used by TransformedDistribution and
constraint_registry. PyTorch's ``torch.distributions.transforms`` API: ``__call__``, ``inv``,
``log_abs_det_jacobian``, ``domain``/``codomain``, ``bijective``, ``sign``, caching
(``cache_size`` 0 or 1), ``forward_shape``/``inverse_shape``. One module per group:

- ``base``: Transform, its inverse, ComposeTransform and identity_transform;
- ``structural``: IndependentTransform, ReshapeTransform;
- ``elementwise``: Exp, Power, Sigmoid, Softplus, Tanh, Abs, Affine and
  CumulativeDistribution transforms;
- ``simplex``: Softmax, StickBreaking and LowerCholesky transforms.
"""

from __future__ import annotations

from chainrule.distributions.transforms.base import (
    ComposeTransform,
    Transform,
    identity_transform,
)
from chainrule.distributions.transforms.elementwise import (
    AbsTransform,
    AffineTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
)
from chainrule.distributions.transforms.simplex import (
    LowerCholeskyTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)
from chainrule.distributions.transforms.structural import (
    IndependentTransform,
    ReshapeTransform,
)

__all__ = [
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
    "SoftplusTransform",
    "TanhTransform",
    "SoftmaxTransform",
    "StickBreakingTransform",
    "Transform",
    "identity_transform",
]
