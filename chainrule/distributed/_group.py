"""Process groups: the default (world) group made by ``init_process_group``, and ``new_group``.

A :class:`ProcessGroup` wraps an MPI communicator. The ranks in the public API are global
(ranks of the default group), as in PyTorch; each group maps them to its own ranks.
"""

from __future__ import annotations

import datetime
import os
import time
import zlib
from typing import Any, ClassVar, Sequence

import numpy as np

from chainrule.distributed import _work
from chainrule.distributed._mpi import mpi

__all__ = [
    "ProcessGroup",
    "GroupMember",
    "Backend",
    "init_process_group",
    "is_initialized",
    "destroy_process_group",
    "get_rank",
    "get_world_size",
    "new_group",
    "get_backend",
    "get_default_backend_for_device",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "default_pg_timeout",
    "get_node_local_rank",
    "group",
]

#: PyTorch's default collective timeout.
default_pg_timeout = datetime.timedelta(minutes=30)


class Backend(str):
    """Backend names. Every backend runs over MPI; ``"gloo"`` is accepted as a name for it so
    that CPU scripts written for PyTorch run unchanged."""

    MPI = "mpi"
    GLOO = "gloo"
    UNDEFINED = "undefined"

    #: The backend ``get_default_backend_for_device`` names for a device type. PyTorch names
    #: "nccl" for "cuda"; here every backend is MPI, so "cuda" gets "mpi", which
    #: ``init_process_group`` accepts.
    default_device_backend_map: ClassVar[dict[str, str]] = {"cpu": GLOO, "cuda": MPI}

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        low = name.lower()
        if low not in ("mpi", "gloo"):
            raise ValueError(
                f"Invalid backend: '{name}'. chainrule.distributed runs over MPI: use "
                "backend='mpi' (or 'gloo', which runs over MPI too)"
            )
        return str.__new__(cls, low)


class ProcessGroup:
    """A set of ranks that run collectives together, over one MPI communicator (plus a
    duplicate for the timeout side channel; see Note [collective timeouts])."""

    def __init__(
        self,
        comm: Any,
        global_ranks: list[int],
        timeout: datetime.timedelta,
        name: str,
        is_world: bool = False,
    ) -> None:
        self._comm = comm
        self._side = comm.Dup()
        self._global_ranks = global_ranks
        self._group_rank = {g: i for i, g in enumerate(global_ranks)}
        self._timeout_s = timeout.total_seconds()
        self._name = name
        self._is_world = is_world
        self._seq = 0
        self._names: list[str] = []
        _work._live_groups.append(self)

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return self._comm.Get_size()

    def name(self) -> str:
        return "mpi"

    def _enter(self, what: str) -> int:
        """Count one more collective entered by this rank; returns its number."""
        self._seq += 1
        # Only the latest name is reported to other ranks; a short history is kept for errors.
        self._names.append(what)
        if len(self._names) > 16:
            del self._names[:-16]
        return self._seq

    def _to_group_rank(self, global_rank: int, what: str) -> int:
        if not isinstance(global_rank, int) or isinstance(global_rank, bool):
            raise TypeError(f"{what}: rank must be an int, got {type(global_rank).__name__}")
        try:
            return self._group_rank[global_rank]
        except KeyError:
            raise ValueError(
                f"{what}: global rank {global_rank} is not part of the group "
                f"(its ranks: {self._global_ranks})"
            ) from None

    def _free(self) -> None:
        if self in _work._live_groups:
            _work._live_groups.remove(self)
        MPI = mpi()
        if not MPI.Is_finalized():
            self._side.Free()
            if not self._is_world:
                self._comm.Free()

    def __repr__(self) -> str:
        return f"ProcessGroup(mpi, ranks={self._global_ranks})"


class GroupMember:
    """``GroupMember.WORLD`` (the default group once initialised) and ``NON_GROUP_MEMBER``
    (what ``new_group`` returns on a rank outside the new group)."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


group = GroupMember

_world: dict[str, Any] = {"pg": None, "backend": None, "groups": []}


def _env_int(*names: str) -> int | None:
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            try:
                return int(v)
            except ValueError:
                raise ValueError(f"environment variable {n}={v!r} is not an integer") from None
    return None


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: datetime.timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Join the default process group: every process that MPI started (``mpirun``, or
    ``python -m chainrule.distributed.run``), or this process alone when started plainly.

    ``rank``/``world_size`` (or the ``RANK``/``WORLD_SIZE`` environment variables) are
    checked against MPI's, which decide. ``timeout`` (default 30 min) bounds every collective.

    Differs from torch: MPI does the rendezvous, so ``init_method`` (``env://``, ``tcp://``,
    ``file://``) and ``store`` are accepted and not used; ``backend`` may be ``"mpi"`` or
    ``"gloo"`` (both run over MPI).
    """
    if _world["pg"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend if backend is not None else "mpi")
    timeout = _check_timeout(timeout, default_pg_timeout)
    if init_method is not None and not isinstance(init_method, str):
        raise TypeError(f"init_method must be a str, got {type(init_method).__name__}")
    MPI = mpi()
    comm = MPI.COMM_WORLD
    mpi_rank, mpi_size = comm.Get_rank(), comm.Get_size()
    want_size = world_size if world_size != -1 else _env_int("WORLD_SIZE")
    want_rank = rank if rank != -1 else _env_int("RANK")
    if want_size is not None and want_size != mpi_size:
        raise ValueError(
            f"init_process_group: world_size is {want_size} but MPI started {mpi_size} "
            "process(es); launch with `python -m chainrule.distributed.run --nproc-per-node "
            f"{want_size} script.py` (or mpirun -n {want_size})"
        )
    if want_rank is not None and want_rank != mpi_rank:
        raise ValueError(
            f"init_process_group: rank is {want_rank} but MPI gave this process rank "
            f"{mpi_rank}; let the launcher set RANK"
        )
    # A stray ERRORS_ARE_FATAL would kill the job without a Python traceback.
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    # Every rank must arrive within ``timeout`` before the (blocking) duplicate for the side
    # channel; there is no group yet to ask who is missing.
    secs = timeout.total_seconds()
    try:
        _work.wait_requests([comm.Ibarrier()], None, "", 0, time.monotonic() + secs)
    except _work.DistTimeoutError:
        raise _work.DistTimeoutError(
            f"init_process_group timed out after {secs:g} s on rank {mpi_rank}: not every one "
            f"of the {mpi_size} processes that MPI started has called it"
        ) from None
    pg = ProcessGroup(comm, list(range(mpi_size)), timeout, group_name or "0", is_world=True)
    _world.update(pg=pg, backend=name, groups=[pg])
    GroupMember.WORLD = pg


def is_initialized() -> bool:
    """Whether the default process group has been initialised."""
    return _world["pg"] is not None


def _default_pg(what: str = "") -> ProcessGroup:
    pg = _world["pg"]
    if pg is None:
        raise ValueError(
            "Default process group has not been initialized, please make sure to call "
            "init_process_group."
        )
    return pg


def resolve(group: Any, what: str) -> ProcessGroup | None:
    """The group a call runs on (None: this rank is not a member, the call does nothing)."""
    if group is None or group is GroupMember.WORLD:
        return _default_pg(what)
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"{what}: group must be a ProcessGroup, got {type(group).__name__}")
    _default_pg(what)
    return group


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Free ``group`` (default: every group, and leave the default group)."""
    if group is None or group is GroupMember.WORLD:
        for g in _world["groups"]:
            g._free()
        _world.update(pg=None, backend=None, groups=[])
        GroupMember.WORLD = None
        return
    if isinstance(group, ProcessGroup):
        group._free()
        if group in _world["groups"]:
            _world["groups"].remove(group)


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (default: the default group); -1 outside it."""
    pg = resolve(group, "get_rank")
    return -1 if pg is None else pg.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of ranks in ``group`` (default: the default group); -1 outside it."""
    pg = resolve(group, "get_world_size")
    return -1 if pg is None else pg.size()


def get_default_backend_for_device(device: Any) -> str:
    """The backend name ``init_process_group`` should get for tensors on ``device`` (a
    ``device`` or a string): "gloo" for the CPU, "mpi" for CUDA (see
    ``Backend.default_device_backend_map``)."""
    from chainrule._device import device as device_cls

    device_str = device.type if isinstance(device, device_cls) else device_cls(device).type
    backend = Backend.default_device_backend_map.get(device_str)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


def get_backend(group: ProcessGroup | None = None) -> str:
    """The backend name given to ``init_process_group`` ("mpi" or "gloo")."""
    resolve(group, "get_backend")
    return str(_world["backend"])


def get_process_group_ranks(group: ProcessGroup) -> list[int]:
    """The global ranks of ``group``, in group-rank order."""
    pg = resolve(group, "get_process_group_ranks")
    if pg is None:
        raise ValueError("get_process_group_ranks: this rank is not part of the group")
    return list(pg._global_ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of ``group_rank`` in ``group``."""
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank in ``group`` of ``global_rank``."""
    pg = resolve(group, "get_group_rank")
    if pg is None:
        raise ValueError("get_group_rank: this rank is not part of the group")
    return pg._to_group_rank(global_rank, "get_group_rank")


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """``LOCAL_RANK`` (set by the launcher), or MPI's local rank, or ``fallback_rank``."""
    v = _env_int("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID")
    if v is not None:
        return v
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment; pass fallback_rank or start the job with "
        "python -m chainrule.distributed.run"
    )


def _check_timeout(
    timeout: datetime.timedelta | None, default: datetime.timedelta
) -> datetime.timedelta:
    if timeout is None:
        return default
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(
            f"Expected timeout argument to be of type datetime.timedelta, got "
            f"{type(timeout).__name__}"
        )
    return timeout


def arrive(pg: ProcessGroup, what: str, payload: int = 0, secs: float | None = None) -> list[int]:
    """Wait (with a deadline: ``secs``, default the group's timeout) until every rank of ``pg``
    has reached ``what``, gathering one integer from each. A blocking MPI call that follows (a
    communicator split or duplicate: MPI 3.1 has no non-blocking form of them) then cannot hang
    on a rank that never comes; the timeout error names the ranks that did not arrive."""
    secs = pg._timeout_s if secs is None else secs
    seq = pg._enter(what)
    mine = np.array([payload], np.int64)
    every = np.zeros(pg.size(), np.int64)
    req = pg._comm.Iallgather(mine, every)
    _work.wait_requests([req], pg, what, seq, time.monotonic() + secs, secs=secs)
    return [int(v) for v in every]


_NEW_GROUP_TAG = 4  # on the world's side communicator, beside _work's (1, 2) and all_to_all's (3)


def _arrive_members(world: ProcessGroup, members: list[int], secs: float) -> None:
    """``use_local_synchronization``: the members of a new group wait for each other only,
    by messages over the world's side communicator, with a deadline."""
    MPI = mpi()
    me = world.rank()
    others = [r for r in members if r != me]
    token = np.array([zlib.crc32(repr(members).encode())], np.int64)
    inbox = {r: np.zeros(1, np.int64) for r in others}
    recvs = {r: world._side.Irecv(inbox[r], r, _NEW_GROUP_TAG) for r in others}
    sends = [world._side.Isend(token, r, _NEW_GROUP_TAG) for r in others]
    deadline = time.monotonic() + secs
    try:
        _work.wait_requests(list(recvs.values()), None, "new_group", 0, deadline)
    except _work.DistTimeoutError:
        missing = [r for r, q in recvs.items() if not q.Test()]
        for r in missing:
            recvs[r].Cancel()
        _work._pending_replies.extend(sends)
        raise _work.DistTimeoutError(
            f"new_group(ranks={members}, use_local_synchronization=True) timed out after "
            f"{secs:g} s on rank {me}; ranks of the new group that did not arrive: {missing}"
        ) from None
    MPI.Request.Waitall(sends)
    differ = [r for r in others if inbox[r][0] != token[0]]
    if differ:
        raise ValueError(
            f"new_group: ranks {differ} passed other ranks than {members} (every member must "
            "pass the same list)"
        )


def new_group(
    ranks: Sequence[int] | None = None,
    timeout: datetime.timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
) -> Any:
    """A group of the given global ``ranks`` (default: all), for collectives among them only.

    Every rank of the default group must call it, in the same order, with the same ``ranks``
    (an MPI communicator split); with ``use_local_synchronization=True`` only the members do
    (MPI's ``Comm_create_group``). A rank outside ``ranks`` gets
    ``GroupMember.NON_GROUP_MEMBER``, on which collectives do nothing. Group ranks follow the
    sorted global ranks, as in PyTorch. ``timeout`` (default: the default group's) bounds the
    creation and every collective of the new group; ``backend`` may be "mpi" or "gloo", and
    ``pg_options`` is accepted and unused.
    """
    world = _default_pg("new_group")
    if backend is not None:
        Backend(backend)
    tmo = _check_timeout(timeout, datetime.timedelta(seconds=world._timeout_s))
    secs = tmo.total_seconds()
    size = world.size()
    members = list(range(size)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(members)) != len(members):
        raise ValueError(f"new_group: ranks must be unique, got {list(ranks or [])}")
    for r in members:
        if not 0 <= r < size:
            raise ValueError(f"new_group: rank {r} is out of range for a world of size {size}")
    MPI = mpi()
    me = world.rank()
    if use_local_synchronization:
        if me not in members:
            return GroupMember.NON_GROUP_MEMBER
        _arrive_members(world, members, secs)
        everyone = world._comm.Get_group()
        subset = everyone.Incl(members)
        comm = world._comm.Create_group(subset, _NEW_GROUP_TAG)
        subset.Free()
        everyone.Free()
    else:
        token = zlib.crc32(repr(members).encode())
        every = arrive(world, "new_group", token, secs)
        differ = [r for r, t in enumerate(every) if t != token]
        if differ:
            raise ValueError(
                f"new_group: ranks {differ} passed other ranks than {members} (every rank of the "
                "default group must pass the same list, or use use_local_synchronization=True)"
            )
        color = 0 if me in members else MPI.UNDEFINED
        comm = world._comm.Split(color, members.index(me) if me in members else 0)
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    pg = ProcessGroup(comm, members, tmo, group_desc or str(len(_world["groups"])))
    _world["groups"].append(pg)
    return pg
