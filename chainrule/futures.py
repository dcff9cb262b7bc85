"""``torch.futures``: :class:`Future`, ``collect_all`` and ``wait_all`` (chainrule/_futures.py)."""

from __future__ import annotations

from chainrule._futures import Future, collect_all, wait_all

__all__ = ["Future", "collect_all", "wait_all"]
