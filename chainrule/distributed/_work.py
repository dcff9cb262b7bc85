"""Waiting on MPI requests with a deadline, and the side channel that names missing ranks.

Note [collective timeouts]: every collective is started as a non-blocking MPI call and then
polled (``Testall``) until it completes or its group's ``timeout`` passes. Each group counts the
collectives its rank has entered (``seq``) and remembers their names. On a timeout, the waiting
rank asks every other rank of the group, over a duplicate communicator (the side channel), how
far it has got; any rank that is itself waiting in this module answers from its poll loop. A
rank that has not entered the same collective, or does not answer (it is computing, hung or
gone), is named in the error. MPI itself carries all of this: there is no other transport.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

from chainrule.distributed._mpi import mpi

if TYPE_CHECKING:
    from chainrule.distributed._group import ProcessGroup

__all__ = ["Work", "Future", "wait_requests", "DistTimeoutError", "DistError"]

_QUERY, _REPLY = 1, 2


class DistError(RuntimeError):
    """An error of a distributed operation (``torch.distributed.DistError``)."""


class DistTimeoutError(DistError):
    """A collective or point-to-point operation did not complete within the group's timeout."""


# Groups whose side channel the poll loop serves (the world group and every new_group).
_live_groups: list[ProcessGroup] = []
# Replies still being sent; kept so that their buffers live until MPI is done with them.
_pending_replies: list[Any] = []


def serve_queries() -> None:
    """Answer other ranks' "how far have you got" queries on every live group."""
    MPI = mpi()
    for g in _live_groups:
        side = g._side
        st = MPI.Status()
        while side.Iprobe(source=MPI.ANY_SOURCE, tag=_QUERY, status=st):
            side.recv(source=st.Get_source(), tag=_QUERY)
            state = (g._seq, g._names[-1] if g._names else None)
            _pending_replies.append(side.isend(state, dest=st.Get_source(), tag=_REPLY))
    if _pending_replies:
        _pending_replies[:] = [r for r in _pending_replies if not r.Test()]


def wait_requests(
    reqs: Sequence[Any],
    group: ProcessGroup | None,
    what: str,
    seq: int,
    deadline: float,
    statuses: list[Any] | None = None,
    secs: float | None = None,
) -> None:
    """Poll ``reqs`` until all complete; past ``deadline``, raise the timeout error (which
    names ``secs`` as the timeout, the group's by default).

    The loop spins briefly, then yields the core (ranks often outnumber cores, and a peer
    needs the CPU to progress), and after a few milliseconds sleeps with a growing pause (up to
    1 ms), so that long waits cost no CPU."""
    MPI = mpi()
    reqs = list(reqs)
    spins = 0
    start = time.monotonic()
    while not (MPI.Request.Testall(reqs, statuses) if statuses else MPI.Request.Testall(reqs)):
        spins += 1
        if spins & 15 == 0:
            serve_queries()
            now = time.monotonic()
            if now > deadline:
                raise _timeout_error(group, what, seq, deadline, secs)
            if now - start > 5e-3:
                time.sleep(min(1e-3, (now - start) / 20))
                continue
        if spins > 20:
            _yield()


_yield = getattr(__import__("os"), "sched_yield", lambda: time.sleep(0))


def _timeout_error(
    group: ProcessGroup | None, what: str, seq: int, deadline: float, secs: float | None = None
) -> DistTimeoutError:
    if group is None:
        return DistTimeoutError(f"{what} timed out")
    MPI = mpi()
    me = group._comm.Get_rank()
    size = group._comm.Get_size()
    side = group._side
    secs = group._timeout_s if secs is None else secs
    asks = [side.isend(("query", seq), dest=r, tag=_QUERY) for r in range(size) if r != me]
    replies: dict[int, tuple[int, str | None]] = {}
    grace_end = time.monotonic() + min(5.0, max(0.5, secs / 10))
    st = MPI.Status()
    while len(replies) < size - 1 and time.monotonic() < grace_end:
        serve_queries()
        while side.Iprobe(source=MPI.ANY_SOURCE, tag=_REPLY, status=st):
            replies[st.Get_source()] = side.recv(source=st.Get_source(), tag=_REPLY)
        time.sleep(1e-3)
    # An unanswered query stays posted (its peer may be gone); the job ends with this error.
    _pending_replies.extend(asks)
    missing: list[int] = []
    notes: list[str] = []
    for r in range(size):
        if r == me:
            continue
        grank = group._global_ranks[r]
        if r not in replies:
            missing.append(grank)
            notes.append(f"rank {grank} did not answer (busy outside a collective, hung or dead)")
            continue
        their_seq, their_name = replies[r]
        if their_seq < seq:
            missing.append(grank)
            last = f"its last was #{their_seq} {their_name}" if their_seq else "none yet"
            notes.append(f"rank {grank} has entered {their_seq} collectives ({last})")
        elif their_seq == seq and their_name != what:
            missing.append(grank)
            notes.append(f"rank {grank} called {their_name} as collective #{seq} instead")
    gname = "the default process group" if group._is_world else f"process group {group._name}"
    head = (
        f"{what} (collective #{seq} in {gname}) timed out after {secs:g} s on rank "
        f"{group._global_ranks[me]}"
    )
    if missing:
        return DistTimeoutError(
            f"{head}; ranks that did not arrive: {missing} ({'; '.join(notes)}). Every rank of "
            "the group must call the same collectives in the same order."
        )
    return DistTimeoutError(f"{head}; every rank arrived, so the network or MPI is stalled")


class Work:
    """A started operation (``torch.distributed.Work``): ``wait()`` blocks until it is done
    (raising the timeout error past the group's timeout) and then writes the result into the
    output tensors."""

    def __init__(
        self,
        reqs: Sequence[Any],
        finish: Callable[[], Any] | None,
        group: ProcessGroup | None,
        what: str,
        seq: int,
        deadline: float,
        result: Any = None,
    ) -> None:
        self._reqs = list(reqs)
        self._finish = finish
        self._group = group
        self._what = what
        self._seq = seq
        self._deadline = deadline
        self._result = result
        self._done = False

    def is_completed(self) -> bool:
        """Whether the operation has finished (tests without blocking)."""
        if self._done:
            return True
        return bool(mpi().Request.Testall(self._reqs))

    def is_success(self) -> bool:
        """Whether it finished without error."""
        return self.is_completed()

    def wait(self, timeout: Any = None) -> bool:
        """Block until done, then finish writing the outputs. ``timeout`` (a ``timedelta`` or
        seconds) shortens the group's deadline for this wait."""
        if self._done:
            return True
        deadline = self._deadline
        if timeout is not None:
            secs = timeout.total_seconds() if hasattr(timeout, "total_seconds") else timeout
            deadline = min(deadline, time.monotonic() + float(secs))
        wait_requests(self._reqs, self._group, self._what, self._seq, deadline)
        self._done = True
        if self._finish is not None:
            self._finish()
            self._finish = None
        return True

    def result(self) -> Any:
        """The output tensors (after waiting)."""
        self.wait()
        return self._result

    def get_future(self) -> Future:
        """A future whose ``wait()`` waits for this work and returns its output tensors."""
        return Future(self)


class Future:
    """The future of a :class:`Work` (a small ``torch.futures.Future``): ``wait()`` returns
    its value, ``then(callback)`` chains ``callback(future)``."""

    def __init__(
        self, work: Work | None = None, *, thunk: Callable[[], Any] | None = None, value: Any = None
    ) -> None:
        if work is not None:
            thunk = work.result
        self._work = work
        self._thunk = thunk
        self._value = value

    def done(self) -> bool:
        """Whether the value is ready (tests the underlying work, driving its progress)."""
        if self._thunk is None:
            return True
        return self._work is not None and self._work.is_completed()

    def wait(self) -> Any:
        if self._thunk is not None:
            self._value = self._thunk()
            self._thunk = None
        return self._value

    def value(self) -> Any:
        return self.wait()

    def set_result(self, value: Any) -> None:
        self._thunk = None
        self._value = value

    def then(self, callback: Callable[[Future], Any]) -> Future:
        """A future of ``callback(self)``, run when it is waited on."""

        def run() -> Any:
            self.wait()
            return callback(self)

        return Future(thunk=run)
