"""``torch.nn.parameter``: ``Parameter`` (``nn/_parameter.py``) and the lazy modules' tensors,
``UninitializedParameter`` / ``UninitializedBuffer`` (``nn/_uninitialized.py``, which builds on
``Parameter``: this face imports both so that neither imports the other's home)."""

from __future__ import annotations

from chainrule.nn._parameter import Parameter
from chainrule.nn._uninitialized import UninitializedBuffer, UninitializedParameter

__all__ = ["Parameter", "UninitializedBuffer", "UninitializedParameter"]
