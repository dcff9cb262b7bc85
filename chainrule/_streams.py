"""``torch.Stream`` and ``torch.Event`` with PyTorch's CPU semantics.

On the CPU, work runs in program order, so there is one stream (``stream_id`` 0, device index
-1): ``query()`` is True, ``synchronize()`` and ``wait_event`` return at once. The CPU backend
has no events: ``Event.record``, ``Stream.wait_stream`` and ``Stream.record_event`` raise
``RuntimeError: cpu backend doesn't support events.`` as PyTorch's do, ``Event.query``,
``Event.wait`` and ``Event.synchronize`` succeed (nothing is pending), and ``elapsed_time``
raises PyTorch's ``ValueError``. Another device type fails as on a PyTorch
build without it.
"""

from __future__ import annotations

from typing import Any

from chainrule._device import device as _device

__all__ = ["Stream", "Event"]

_NO_EVENTS = "cpu backend doesn't support events."


def _cpu(dev: Any) -> Any:
    d = _device("cpu" if dev is None else dev)
    if d.type != "cpu":
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    return d


class Stream:
    """An ordered queue of work on a device; the CPU has the one stream."""

    def __init__(self, device: Any = None, *, priority: int = 0) -> None:
        self.device = _cpu(device)
        self.device_index = -1
        self.stream_id = 0
        self.device_type = 0  # c10::DeviceType::CPU

    def query(self) -> bool:
        """True: all work on the CPU stream has completed when control returns."""
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work: done already."""

    def wait_event(self, event: Event) -> None:
        """Make later work wait for ``event``: nothing to wait for on the CPU."""

    def wait_stream(self, stream: Stream) -> None:
        raise RuntimeError(_NO_EVENTS)

    def record_event(self, event: Event | None = None) -> Event:
        raise RuntimeError(_NO_EVENTS)

    def is_capturing(self) -> bool:
        return False

    @property
    def native_handle(self) -> int:
        return 0

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (other.device, other.stream_id) == (
            self.device,
            self.stream_id,
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return "torch.Stream device_type=cpu, device_index=-1, stream_id=0"


class Event:
    """A marker in a stream; ``enable_timing`` asks it to record a time stamp."""

    def __init__(
        self,
        device: Any = None,
        *,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
    ) -> None:
        self.device = _cpu(device)
        self.enable_timing = bool(enable_timing)
        self.event_id = 0

    def record(self, stream: Stream | None = None) -> None:
        raise RuntimeError(_NO_EVENTS)

    def wait(self, stream: Stream | None = None) -> None:
        """Make ``stream``'s later work wait for the event: nothing to wait for on the CPU."""

    def query(self) -> bool:
        """True: no work is pending on the CPU."""
        return True

    def synchronize(self) -> None:
        """Wait for the event: it is complete."""

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between two recorded events (CPU events can never be recorded)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self) -> Any:
        raise RuntimeError(_NO_EVENTS)

    @classmethod
    def from_ipc_handle(cls, device: Any, ipc_handle: Any) -> Event:
        raise RuntimeError(_NO_EVENTS)

    def __repr__(self) -> str:
        flag = 1 if self.enable_timing else 0
        return f"torch.Event device_type=cpu, device_index=-1, event_flag={flag}, event_id=0"
