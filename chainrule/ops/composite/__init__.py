"""Functions of torch's namespace composed from chainrule's differentiable ops, one module per
group:

- ``products``: fused multiply-adds (addcmul, addcdiv, addr, addbmm) and products (tensordot,
  inner, ger, chain_matmul, matrix_power, trace, vander);
- ``statistics``: distances (cdist, dist, renorm), integrals and statistics (trapezoid/trapz,
  cumulative_trapezoid, cov, corrcoef, diff, nansum, nanmean, aminmax);
- ``elementwise``: hypot, sinc, heaviside, copysign, logaddexp, logaddexp2, logcumsumexp, exp2,
  deg2rad, rad2deg, positive, sgn, signbit, isposinf, isneginf, isreal;
- ``selections``: nonzero, argwhere, take, isin, bincount, histc, tril_indices, triu_indices.

Gradients come from the composed ops (``create_graph`` works); the recorded nodes are theirs,
not one node named after the composite. Non-differentiable results (indices, counts, masks) are
computed on the array backend directly.
"""

from __future__ import annotations

from chainrule.ops.composite.elementwise import (
    copysign,
    deg2rad,
    exp2,
    heaviside,
    hypot,
    isneginf,
    isposinf,
    isreal,
    logaddexp,
    logaddexp2,
    logcumsumexp,
    positive,
    rad2deg,
    sgn,
    signbit,
    sinc,
)
from chainrule.ops.composite.products import (
    addbmm,
    addcdiv,
    addcmul,
    addr,
    chain_matmul,
    ger,
    inner,
    matrix_power,
    tensordot,
    trace,
    vander,
)
from chainrule.ops.composite.selections import (
    argwhere,
    bincount,
    histc,
    isin,
    nonzero,
    take,
    tril_indices,
    triu_indices,
)
from chainrule.ops.composite.statistics import (
    aminmax,
    cdist,
    corrcoef,
    cov,
    cumulative_trapezoid,
    diff,
    dist,
    nanmean,
    nansum,
    renorm,
    trapezoid,
    trapz,
)

__all__ = [
    "addcmul",
    "addcdiv",
    "addr",
    "addbmm",
    "tensordot",
    "inner",
    "ger",
    "chain_matmul",
    "matrix_power",
    "trace",
    "vander",
    "cdist",
    "dist",
    "renorm",
    "trapezoid",
    "trapz",
    "cumulative_trapezoid",
    "cov",
    "corrcoef",
    "diff",
    "nansum",
    "nanmean",
    "aminmax",
    "hypot",
    "sinc",
    "heaviside",
    "copysign",
    "logaddexp",
    "logaddexp2",
    "logcumsumexp",
    "exp2",
    "deg2rad",
    "rad2deg",
    "positive",
    "sgn",
    "signbit",
    "isposinf",
    "isneginf",
    "isreal",
    "nonzero",
    "argwhere",
    "take",
    "isin",
    "bincount",
    "histc",
    "tril_indices",
    "triu_indices",
]
