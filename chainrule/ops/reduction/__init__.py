"""The reduction family (reductions and scans), one module per group:

- ``sums``: sum, mean, sum_to_size, prod, logsumexp;
- ``extrema``: max, min, amax, amin, argmax, argmin;
- ``moments``: var, std, var_mean, std_mean;
- ``norms``: norm (and ``vector_norm_impl``, torch.linalg's);
- ``scans``: cumsum, cumprod;
- ``logical``: all, any, count_nonzero.

``dim`` is normalized by the public wrapper into a sorted tuple of non-negative dims, or None
for all dims (see ops/_broadcast.py ``normalize_dims``). Every VJP is written with ``ns``
(Note [ns]) so that double backward works.
"""

from __future__ import annotations

from chainrule.ops.reduction.extrema import (
    amax,
    amin,
    argmax,
    argmin,
    max,
    min,
)
from chainrule.ops.reduction.logical import (
    all,
    any,
    count_nonzero,
)
from chainrule.ops.reduction.moments import (
    std,
    std_mean,
    var,
    var_mean,
)
from chainrule.ops.reduction.norms import (
    norm,
)
from chainrule.ops.reduction.norms import vector_norm_impl as vector_norm_impl
from chainrule.ops.reduction.scans import (
    cumprod,
    cumsum,
)
from chainrule.ops.reduction.sums import (
    logsumexp,
    mean,
    prod,
    sum,
    sum_to_size,
)

__all__ = [
    "sum",
    "mean",
    "sum_to_size",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "norm",
    "logsumexp",
    "cumsum",
    "cumprod",
    "all",
    "any",
    "count_nonzero",
]
