"""The error that ``compile(..., fullgraph=True)`` raises at a graph break."""

from __future__ import annotations

__all__ = ["Unsupported"]


class Unsupported(RuntimeError):
    """A graph break under ``fullgraph=True``, as ``torch._dynamo.exc.Unsupported``; the message
    names the cause and the user's line."""
