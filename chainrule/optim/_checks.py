"""Argument checks shared by the optimizers' constructors."""

from __future__ import annotations

__all__ = ["check_nonnegative"]


def check_nonnegative(*settings: tuple[str, float]) -> None:
    """Each ``(label, value)`` must satisfy ``0 <= value`` (NaN fails); the first that does not
    raises PyTorch's ``ValueError("Invalid <label>: <value>")``."""
    for label, value in settings:
        if not 0.0 <= value:
            raise ValueError(f"Invalid {label}: {value}")
