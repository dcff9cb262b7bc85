"""``chainrule.amp``: ``torch.amp``'s ``autocast`` and ``GradScaler``."""

from __future__ import annotations

from chainrule.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from chainrule.amp.grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]
