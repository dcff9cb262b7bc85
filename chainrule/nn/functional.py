"""``chainrule.nn.functional``: the maths of neural-network layers, composed from ops."""

from __future__ import annotations

__all__: list[str] = []
