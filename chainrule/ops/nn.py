"""Ops of the nn family."""

from __future__ import annotations

__all__: list[str] = []
