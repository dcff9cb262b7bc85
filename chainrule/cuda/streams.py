"""``torch.cuda.Stream``, ``Event`` and the ``stream(s)`` context, over the CUDA backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from chainrule.backends import cuda_available, get_backend
from chainrule.cuda._devindex import _index

if TYPE_CHECKING:
    from chainrule.backends.cupy_backend import CupyBackend

__all__ = ["Stream", "Event", "stream", "current_stream", "default_stream"]


def _cuda() -> CupyBackend:
    """The CUDA backend: CuPy's, the one backend with streams and events."""
    return cast("CupyBackend", get_backend("cuda"))


class Stream:
    """A queue of GPU work, as ``torch.cuda.Stream(device=None, priority=0)``.

    Work issued inside ``with chainrule.cuda.stream(s):`` goes to ``s``; ``priority`` is
    accepted and not used (CuPy streams have none).
    """

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        if not cuda_available():
            raise RuntimeError(
                "torch.cuda.Stream requires CUDA support (chainrule: it needs CuPy and a "
                "visible GPU)"
            )
        self._be = _cuda()
        self._native = kwargs.pop("_native", None)
        if kwargs:
            raise TypeError(f"Stream() got unexpected keyword arguments {sorted(kwargs)}")
        self.device_index = self._be.check_device(_index(device))
        if self._native is None:
            self._native = self._be.new_stream(self.device_index, priority)
        self.priority = priority

    @classmethod
    def _wrap(cls, native: Any, device_index: int) -> Stream:
        return cls(device_index, _native=native)

    @property
    def device(self) -> Any:
        from chainrule._device import device

        return device("cuda", self.device_index)

    @property
    def cuda_stream(self) -> int:
        """The native stream handle (0 for the default stream)."""
        return int(self._native.ptr)

    def query(self) -> bool:
        """Whether all work submitted to this stream has finished."""
        return self._be.stream_query(self._native)

    def synchronize(self) -> None:
        """Wait for all work submitted to this stream."""
        self._be.stream_synchronize(self._native)

    def wait_event(self, event: Event) -> None:
        """Make later work on this stream wait until ``event`` has happened."""
        self._be.stream_wait_event(self._native, event._native)

    def wait_stream(self, stream: Stream) -> None:
        """Make later work on this stream wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one when None) on this stream and return it."""
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self) -> str:
        return (
            f"<chainrule.cuda.Stream device=cuda:{self.device_index} "
            f"cuda_stream={self.cuda_stream:#x}>"
        )


class Event:
    """A marker in a stream, as ``torch.cuda.Event(enable_timing=False, blocking=False)``.

    ``elapsed_time(end)`` gives the milliseconds between two recorded timing events.
    """

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        if not cuda_available():
            raise RuntimeError(
                "Tried to instantiate dummy base class Event (chainrule: torch.cuda.Event needs "
                "CuPy and a visible GPU)"
            )
        self._be = _cuda()
        self.enable_timing = enable_timing
        self._native = self._be.new_event(enable_timing, blocking)
        self._recorded = False

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream`` (default: the current stream)."""
        self._be.event_record(self._native, None if stream is None else stream._native)
        self._recorded = True

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work on ``stream`` (default: the current one) wait for this event."""
        (stream or current_stream()).wait_event(self)

    def query(self) -> bool:
        """Whether the work recorded before this event has finished."""
        return self._be.event_query(self._native)

    def synchronize(self) -> None:
        """Wait until the event has happened."""
        self._be.event_synchronize(self._native)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event`` (both recorded, with timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return self._be.event_elapsed_ms(self._native, end_event._native)


def current_stream(device: Any = None) -> Stream:
    """The stream work is queued on for ``device`` (default: the current GPU)."""
    be = _cuda()
    idx = be.check_device(_index(device))
    return Stream._wrap(be.current_stream(idx), idx)


def default_stream(device: Any = None) -> Stream:
    """The default (null) stream of ``device``."""
    be = _cuda()
    idx = be.check_device(_index(device))
    return Stream._wrap(be.default_stream(idx), idx)


class stream:
    """Context manager that queues work on ``s``; ``stream(None)`` does nothing (as PyTorch)."""

    def __init__(self, s: Stream | None) -> None:
        self.s = s
        self._ctx: Any = None

    def __enter__(self) -> Stream | None:
        if self.s is not None:
            self._ctx = self.s._be.use_stream(self.s._native)
            self._ctx.__enter__()
        return self.s

    def __exit__(self, *exc: Any) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
            self._ctx = None
