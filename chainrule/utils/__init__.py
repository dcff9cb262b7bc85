"""Small utilities shared across chainrule; ``chainrule.utils.data`` loads on first use."""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    # Lazy, because _tensor imports utils.hooks and utils.data imports _tensor.
    if name in ("data", "dlpack", "checkpoint", "tensorboard"):
        return importlib.import_module(f"chainrule.utils.{name}")
    if name == "swap_tensors":
        from chainrule.utils._swap import swap_tensors

        return swap_tensors
    raise AttributeError(f"module 'chainrule.utils' has no attribute {name!r}")
