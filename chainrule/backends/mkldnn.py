"""``torch.backends.mkldnn``'s flags (oneDNN). chainrule's CPU kernels are NumPy's, so the flag
is kept for programs that set it and changes nothing."""

from __future__ import annotations

__all__ = ["enabled", "is_available"]

enabled: bool = True


def is_available() -> bool:
    """False: chainrule does not use oneDNN."""
    return False
