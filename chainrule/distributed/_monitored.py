"""``monitored_barrier``: a barrier that says which ranks did not reach it (PyTorch's, as its
gloo backend runs it): rank 0 of the group waits for a message from every other rank, within
the timeout, then answers each; the others send and wait for rank 0's answer."""

from __future__ import annotations

import datetime
import time
from typing import Any

import numpy as np

from chainrule.distributed._group import _check_timeout, resolve
from chainrule.distributed._work import DistError, _pending_replies, wait_requests

__all__ = ["monitored_barrier"]

_TAG_IN, _TAG_OUT = 5, 6  # on the group's side communicator (see _work and _collectives)


def monitored_barrier(
    group: Any = None, timeout: datetime.timedelta | None = None, wait_all_ranks: bool = False
) -> None:
    """Wait until every rank of ``group`` has called ``monitored_barrier``; on rank 0, raise
    if some rank did not arrive within ``timeout`` (default: the group's), naming the first
    such rank, or all of them with ``wait_all_ranks=True``. Ranks are the group's. A rank
    other than 0 raises if rank 0 does not answer within the group's timeout (rank 0 failed,
    or raised for another rank; its log names the faulty one).

    Under the launcher, the exception on rank 0 aborts the whole job; if it is caught instead,
    the late ranks' messages are still on their way, so the group should not be used again.
    """
    pg = resolve(group, "monitored_barrier")
    if pg is None:
        return
    secs = _check_timeout(timeout, datetime.timedelta(seconds=pg._timeout_s)).total_seconds()
    me, n, side = pg.rank(), pg.size(), pg._side
    seq = pg._enter("monitored_barrier")
    token = np.zeros(1, np.uint8)
    if me != 0:
        send = side.Isend(token, 0, _TAG_IN)
        answer = np.zeros(1, np.uint8)
        recv = side.Irecv(answer, 0, _TAG_OUT)
        try:
            wait_requests([send, recv], None, "", seq, time.monotonic() + pg._timeout_s)
        except DistError:
            _pending_replies.append(send)
            recv.Cancel()
            raise DistError(
                f"Rank {me} successfully reached monitoredBarrier, but received errors while "
                "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank."
            ) from None
        return
    inbox = np.zeros((n, 1), np.uint8)
    recvs = {r: side.Irecv(inbox[r], r, _TAG_IN) for r in range(1, n)}
    deadline = time.monotonic() + secs
    failed: list[int] = []
    for r, req in recvs.items():
        try:
            wait_requests([req], None, "", seq, deadline)
        except DistError:
            failed.append(r)
            if not wait_all_ranks:
                break
    if failed:
        for r in recvs:
            if not recvs[r].Test():
                recvs[r].Cancel()
        ms = int(round(secs * 1000))
        if wait_all_ranks:
            ranks = ", ".join(str(r) for r in failed)
            raise DistError(f"[Rank 0]: Ranks {ranks} failed to pass monitoredBarrier in {ms} ms")
        raise DistError(f"[Rank 0]: Rank {failed[0]} failed to pass monitoredBarrier in {ms} ms")
    outs = [side.Isend(token, r, _TAG_OUT) for r in range(1, n)]
    wait_requests(outs, pg, "monitored_barrier", seq, time.monotonic() + pg._timeout_s)
