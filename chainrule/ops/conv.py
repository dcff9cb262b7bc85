"""Ops of the conv family."""

from __future__ import annotations

__all__: list[str] = []
