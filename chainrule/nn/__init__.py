"""Neural-network building blocks: ``functional`` (the maths) and, later, modules."""

from __future__ import annotations

from chainrule.nn import functional

__all__ = ["functional"]
