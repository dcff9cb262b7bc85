"""``torch.cuda.amp``: the deprecated CUDA spellings of ``autocast`` and ``GradScaler``."""

from __future__ import annotations

from typing import Any

from chainrule.amp import GradScaler as _GradScaler
from chainrule.amp import autocast as _autocast
from chainrule.amp import custom_bwd, custom_fwd

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_autocast):
    """``torch.cuda.amp.autocast(...)`` is ``torch.autocast('cuda', ...)``."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``torch.cuda.amp.GradScaler(...)`` is ``torch.amp.GradScaler('cuda', ...)``."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )
