"""Tensor methods by op family, as mixin classes that ``Tensor`` inherits.

Each file owns the methods of one family (written out, one line each, calling ``_ops``, the op
table of ``chainrule/_dispatch.py`` that ``chainrule.ops`` fills when imported), so that adding
an op touches its family's files only. These modules import nothing above ``_dispatch``.
"""

from __future__ import annotations

from chainrule._methods import (
    composite,
    elementwise,
    indexing,
    inplace,
    linalg,
    names,
    nn,
    reduction,
    shape,
    sorting,
    special,
    spectral,
    stochastic,
    storage,
    surface,
)

FAMILIES = (
    elementwise,
    reduction,
    shape,
    indexing,
    linalg,
    nn,
    inplace,
    sorting,
    composite,
    special,
    spectral,
    stochastic,
    surface,
    storage,
    names,
)
