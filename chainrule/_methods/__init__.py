"""Tensor methods by op family, as mixin classes that ``Tensor`` inherits.

Each file owns the methods of one family (written out, one line each, calling ``_ops``), so
that adding an op touches its family's files only. ``_ops`` is bound by ``_tensor.py`` once
``chainrule.ops`` has been imported (the two import each other).
"""

from __future__ import annotations

from typing import Any

from chainrule._methods import elementwise, indexing, inplace, linalg, nn, reduction, shape
from chainrule._methods import composite, sorting, special, stochastic, surface
from chainrule._methods import names

FAMILIES = (elementwise, reduction, shape, indexing, linalg, nn, inplace, sorting, composite,
            special, stochastic, surface, names)


def bind(ops: Any) -> None:
    """Give every mixin module its reference to ``chainrule.ops``."""
    for m in FAMILIES:
        m._ops = ops
