"""``chainrule.distributed.nn``: collectives that autograd differentiates through."""

from __future__ import annotations

from chainrule.distributed.nn import functional

__all__ = ["functional"]
