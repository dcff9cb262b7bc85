"""``torch.cpu``: the CPU as a device module (what ``torch.get_device_module("cpu")`` gives).

The CPU is always available, is one device, and runs work in program order on one stream, so
``synchronize`` returns at once; ``Stream`` and ``Event`` are ``torch.Stream``/``torch.Event``
with their CPU semantics (chainrule/_streams.py).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from chainrule._streams import Event, Stream

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "device_count",
    "is_available",
    "is_initialized",
    "set_device",
    "stream",
    "synchronize",
]

_STREAM = Stream()


def is_available() -> bool:
    """True: the CPU is always there."""
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    """1: the CPU counts as one device."""
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device: Any) -> None:
    """Select the device: there is only the CPU, so nothing changes."""


def synchronize(device: Any = None) -> None:
    """Wait for all work on the CPU: it is done when control returns."""


def current_stream(device: Any = None) -> Stream:
    """The CPU's one stream."""
    return _STREAM


class StreamContext(contextlib.AbstractContextManager):
    """Select a stream within a ``with`` block (the CPU has only the one)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __exit__(self, *exc: Any) -> None:
        return None


@contextlib.contextmanager
def stream(stream: Stream | None) -> Iterator[None]:
    """Run the block on ``stream`` (the CPU's work is always in program order)."""
    yield
