"""Collectives and point-to-point messages over a process group's MPI communicator.

Tensors travel as raw buffers: MPI reads from and writes into the tensor's own array (a
contiguous copy only when the tensor is not contiguous), and every tensor written to gets its
version bumped, as an in-place op would. Every call starts non-blocking MPI requests, cut into
chunks of at most ``_mpi.max_count`` elements, and waits on them through ``_work`` (timeouts:
see Note [collective timeouts]); with ``async_op=True`` it returns the :class:`Work` instead.

This file is long (about 580 lines) because it holds one small function per collective of
PyTorch's API; they share the helpers at the top and split into no smaller topic.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np

from chainrule._tensor import Tensor
from chainrule.distributed._group import ProcessGroup, resolve
from chainrule.distributed._mpi import ReduceOp, chunks, mpi, mpi_op, reduce_view
from chainrule.distributed._work import Work, wait_requests

__all__ = [
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "reduce_scatter",
    "gather",
    "scatter",
    "send",
    "recv",
    "isend",
    "irecv",
    "all_to_all_single",
    "barrier",
]


_A2A_TAG = 3  # on the side communicator, beside _work's query (1) and reply (2) tags


class _Buf:
    """The flat array MPI uses for tensor ``t``: a view of its data when contiguous, a copy
    otherwise. ``commit()`` writes a copy back and bumps the tensor's version."""

    def __init__(self, t: Any, what: str, arg: str = "tensor") -> None:
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: {arg} must be a Tensor, got {type(t).__name__}")
        data = t._data
        if not isinstance(data, np.ndarray):
            raise TypeError(f"{what}: {arg} must be a CPU tensor (MPI reads host memory)")
        self.t = t
        self.copied = not data.flags.c_contiguous
        self.flat = np.ascontiguousarray(data).reshape(-1)

    def commit(self) -> None:
        if self.copied:
            self.t._data[...] = self.flat.reshape(self.t._data.shape)
        self.t._bump_version()


def _begin(group: Any, what: str) -> tuple[ProcessGroup | None, int, float]:
    pg = resolve(group, what)
    if pg is None:
        return None, 0, 0.0
    return pg, pg._enter(what), time.monotonic() + pg._timeout_s


def _end(
    pg: ProcessGroup,
    what: str,
    seq: int,
    deadline: float,
    reqs: list[Any],
    finish: Callable[[], Any] | None,
    async_op: bool,
    result: Any = None,
) -> Work | None:
    work = Work(reqs, finish, pg, what, seq, deadline, result)
    if async_op:
        return work
    work.wait()
    return None


def _same_dtype(what: str, a: Tensor, b: Tensor) -> None:
    if a._data.dtype != b._data.dtype:
        raise ValueError(
            f"{what}: the tensors must have the same dtype, got {a.dtype} and {b.dtype}"
        )


def _avg_finish(buf: _Buf, op: ReduceOp, size: int) -> Callable[[], None]:
    def finish() -> None:
        if op is ReduceOp.AVG:
            buf.flat /= size
        buf.commit()

    return finish


def all_reduce(
    tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Work | None:
    """Reduce ``tensor`` over the group with ``op``, in place on every rank."""
    buf = _Buf(tensor, "all_reduce")
    view, rop = reduce_view(buf.flat, op, "all_reduce")
    pg, seq, dl = _begin(group, "all_reduce")
    if pg is None:
        return None
    MPI, mop = mpi(), mpi_op(rop)
    reqs = [pg._comm.Iallreduce(MPI.IN_PLACE, view[s:e], mop) for s, e in chunks(view.size)]
    return _end(
        pg, "all_reduce", seq, dl, reqs, _avg_finish(buf, op, pg.size()), async_op, [tensor]
    )


def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Copy ``tensor`` from rank ``src`` (a global rank) into ``tensor`` on every rank."""
    buf = _Buf(tensor, "broadcast")
    pg, seq, dl = _begin(group, "broadcast")
    if pg is None:
        return None
    root = _root(pg, src, group_src, "broadcast", "src")
    reqs = [pg._comm.Ibcast(buf.flat[s:e], root=root) for s, e in chunks(buf.flat.size)]
    return _end(pg, "broadcast", seq, dl, reqs, buf.commit, async_op, [tensor])


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, what: str, arg: str) -> int:
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"{what}: group_{arg} {group_rank} is out of range")
        return group_rank
    if rank is None:
        raise ValueError(f"{what}: {arg} must be given")
    return pg._to_group_rank(rank, what)


def reduce(
    tensor: Tensor,
    dst: int | None = None,
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Reduce ``tensor`` over the group into ``tensor`` on rank ``dst``; other ranks' tensors
    are left unchanged."""
    buf = _Buf(tensor, "reduce")
    view, rop = reduce_view(buf.flat, op, "reduce")
    pg, seq, dl = _begin(group, "reduce")
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "reduce", "dst")
    MPI, mop = mpi(), mpi_op(rop)
    me = pg.rank()
    reqs = []
    for s, e in chunks(view.size):
        if me == root:
            reqs.append(pg._comm.Ireduce(MPI.IN_PLACE, view[s:e], mop, root=root))
        else:
            reqs.append(pg._comm.Ireduce(view[s:e], None, mop, root=root))
    finish = _avg_finish(buf, op, pg.size()) if me == root else None
    return _end(pg, "reduce", seq, dl, reqs, finish, async_op, [tensor])


def _gather_blocks(
    pg: ProcessGroup, send: np.ndarray, out: np.ndarray, root: int | None
) -> tuple[list[Any], Callable[[], None] | None]:
    """(All)gather equal blocks ``send`` of every rank into ``out`` (shape (size, n)), in
    chunks; a chunked gather lands in a scratch array that is copied into place after."""
    n = send.size
    pieces = list(chunks(n))
    comm = pg._comm
    if len(pieces) == 1:
        if root is None:
            return [comm.Iallgather(send, out)], None
        return [comm.Igather(send, out if pg.rank() == root else None, root=root)], None
    reqs, scratch = [], []
    for s, e in pieces:
        tmp = np.empty((pg.size(), e - s), out.dtype)
        scratch.append((s, e, tmp))
        src = send[s:e]  # a contiguous view of the caller's buffer, which outlives the requests
        if root is None:
            reqs.append(comm.Iallgather(src, tmp))
        else:
            reqs.append(comm.Igather(src, tmp if pg.rank() == root else None, root=root))

    def finish() -> None:
        for s, e, tmp in scratch:
            out[:, s:e] = tmp

    return reqs, finish


def all_gather_into_tensor(
    output_tensor: Tensor, input_tensor: Tensor, group: Any = None, async_op: bool = False
) -> Work | None:
    """Concatenate every rank's ``input_tensor`` (rank order) into ``output_tensor``, of
    ``world_size`` times its elements (a stack or a concatenation along dim 0)."""
    what = "all_gather_into_tensor"
    ibuf, obuf = (
        _Buf(input_tensor, what, "input_tensor"),
        _Buf(output_tensor, what, "output_tensor"),
    )
    _same_dtype(what, output_tensor, input_tensor)
    pg, seq, dl = _begin(group, what)
    if pg is None:
        return None
    if obuf.flat.size != pg.size() * ibuf.flat.size:
        raise ValueError(
            f"{what}: output tensor size must be equal to world_size times input tensor size "
            f"({obuf.flat.size} != {pg.size()} * {ibuf.flat.size})"
        )
    out = obuf.flat.reshape(pg.size(), ibuf.flat.size)
    reqs, fin = _gather_blocks(pg, ibuf.flat, out, None)

    def finish() -> None:
        if fin is not None:
            fin()
        obuf.commit()

    return _end(pg, what, seq, dl, reqs, finish, async_op, [output_tensor])


def all_gather(
    tensor_list: list[Tensor], tensor: Tensor, group: Any = None, async_op: bool = False
) -> Work | None:
    """Fill ``tensor_list[r]`` with rank r's ``tensor``, on every rank."""
    ibuf = _Buf(tensor, "all_gather")
    pg, seq, dl = _begin(group, "all_gather")
    if pg is None:
        return None
    _check_list(tensor_list, pg.size(), tensor, "all_gather", "tensor_list")
    out = np.empty((pg.size(), ibuf.flat.size), ibuf.flat.dtype)
    reqs, fin = _gather_blocks(pg, ibuf.flat, out, None)
    return _end(
        pg, "all_gather", seq, dl, reqs, _scatter_rows(out, tensor_list, fin), async_op, tensor_list
    )


def _check_list(lst: Any, size: int, like: Tensor, what: str, arg: str) -> None:
    if not isinstance(lst, (list, tuple)) or len(lst) != size:
        raise ValueError(
            f"{what}: {arg} must be a list of world_size ({size}) tensors, got "
            f"{len(lst) if isinstance(lst, (list, tuple)) else type(lst).__name__}"
        )
    for t in lst:
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: {arg} must hold Tensors, got {type(t).__name__}")
        if t.numel() != like.numel() or t._data.dtype != like._data.dtype:
            raise ValueError(
                f"{what}: every tensor of {arg} must match the input's size and dtype "
                f"({tuple(like.shape)}, {like.dtype}), got {tuple(t.shape)}, {t.dtype}"
            )


def _scatter_rows(
    out: np.ndarray, tensors: Sequence[Tensor], fin: Callable[[], None] | None
) -> Callable[[], None]:
    def finish() -> None:
        if fin is not None:
            fin()
        for row, t in zip(out, tensors):
            t._data[...] = row.reshape(t._data.shape)
            t._bump_version()

    return finish


def gather(
    tensor: Tensor,
    gather_list: list[Tensor] | None = None,
    dst: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Collect every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (default 0)."""
    ibuf = _Buf(tensor, "gather")
    pg, seq, dl = _begin(group, "gather")
    if pg is None:
        return None
    root = _root(pg, 0 if dst is None and group_dst is None else dst, group_dst, "gather", "dst")
    is_root = pg.rank() == root
    if is_root:
        _check_list(gather_list, pg.size(), tensor, "gather", "gather_list")
    elif gather_list:
        raise ValueError(
            "gather: Argument ``gather_list`` must NOT be specified on non-destination ranks."
        )
    out = np.empty((pg.size(), ibuf.flat.size), ibuf.flat.dtype)
    reqs, fin = _gather_blocks(pg, ibuf.flat, out, root)
    finish = _scatter_rows(out, gather_list, fin) if is_root else None
    return _end(pg, "gather", seq, dl, reqs, finish, async_op, gather_list)


def scatter(
    tensor: Tensor,
    scatter_list: list[Tensor] | None = None,
    src: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Copy ``scatter_list[r]`` of rank ``src`` (default 0) into ``tensor`` on rank r."""
    obuf = _Buf(tensor, "scatter")
    pg, seq, dl = _begin(group, "scatter")
    if pg is None:
        return None
    root = _root(pg, 0 if src is None and group_src is None else src, group_src, "scatter", "src")
    n = obuf.flat.size
    send = None
    if pg.rank() == root:
        _check_list(scatter_list, pg.size(), tensor, "scatter", "scatter_list")
        send = np.stack([np.ascontiguousarray(t._data).reshape(-1) for t in scatter_list])
    elif scatter_list:
        raise ValueError(
            "scatter: Argument ``scatter_list`` must NOT be specified on non-source ranks."
        )
    # The chunks' send buffers must outlive the requests: the finish callback holds them.
    parts = [None if send is None else np.ascontiguousarray(send[:, s:e]) for s, e in chunks(n)]
    reqs = [
        pg._comm.Iscatter(part, obuf.flat[s:e], root=root) for part, (s, e) in zip(parts, chunks(n))
    ]

    def finish() -> None:
        parts.clear()
        obuf.commit()

    return _end(pg, "scatter", seq, dl, reqs, finish, async_op, [tensor])


def reduce_scatter_tensor(
    output: Tensor,
    input: Tensor,
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce ``input`` (``world_size`` blocks) over the group; rank r gets block r of the
    result in ``output``."""
    what = "reduce_scatter_tensor"
    obuf, ibuf = _Buf(output, what, "output"), _Buf(input, what, "input")
    _same_dtype(what, output, input)
    view, rop = reduce_view(obuf.flat, op, what)
    pg, seq, dl = _begin(group, what)
    if pg is None:
        return None
    n = obuf.flat.size
    if ibuf.flat.size != pg.size() * n:
        raise ValueError(
            f"{what}: input tensor must be the same size as output size times world size "
            f"({ibuf.flat.size} != {pg.size()} * {n})"
        )
    src = ibuf.flat.view(view.dtype).reshape(pg.size(), n)
    mop = mpi_op(rop)
    # The chunks' send buffers must outlive the requests: the finish callback holds them.
    parts = [src if (s, e) == (0, n) else np.ascontiguousarray(src[:, s:e]) for s, e in chunks(n)]
    reqs = [
        pg._comm.Ireduce_scatter_block(part, view[s:e], mop)
        for part, (s, e) in zip(parts, chunks(n))
    ]
    avg = _avg_finish(obuf, op, pg.size())

    def finish() -> None:
        parts.clear()
        avg()

    return _end(pg, what, seq, dl, reqs, finish, async_op, [output])


def reduce_scatter(
    output: Tensor,
    input_list: list[Tensor],
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce ``input_list`` elementwise over the group; rank r gets the r-th result."""
    pg = resolve(group, "reduce_scatter")
    if pg is None:
        return None
    _check_list(input_list, pg.size(), output, "reduce_scatter", "input_list")
    from chainrule.ops import stack

    flat = stack([t.detach().reshape(-1) for t in input_list])
    return reduce_scatter_tensor(output, flat, op, group, async_op)


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    """Wait until every rank of the group has called ``barrier``."""
    pg, seq, dl = _begin(group, "barrier")
    if pg is None:
        return None
    return _end(pg, "barrier", seq, dl, [pg._comm.Ibarrier()], None, async_op)


def all_to_all_single(
    output: Tensor,
    input: Tensor,
    output_split_sizes: Sequence[int] | None = None,
    input_split_sizes: Sequence[int] | None = None,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Rank r sends the j-th split of ``input`` (along dim 0) to rank j, and receives rank
    j's r-th split into the j-th split of ``output``; splits are equal when sizes are None."""
    what = "all_to_all_single"
    obuf, ibuf = _Buf(output, what, "output"), _Buf(input, what, "input")
    _same_dtype(what, output, input)
    pg, seq, dl = _begin(group, what)
    if pg is None:
        return None
    size = pg.size()
    row_o = output[0].numel() if output.ndim and output.shape[0] else _row(output)
    row_i = input[0].numel() if input.ndim and input.shape[0] else _row(input)
    scount = _splits(input_split_sizes, input, size, what, "input") * row_i
    rcount = _splits(output_split_sizes, output, size, what, "output") * row_o
    sdis = np.concatenate([[0], np.cumsum(scount)[:-1]]).astype(np.int64)
    rdis = np.concatenate([[0], np.cumsum(rcount)[:-1]]).astype(np.int64)
    # One message (in chunks) per pair of ranks, rather than MPI_Alltoallv: whether the int
    # counts of one Alltoallv call overflow depends on every rank's sizes, which no rank knows
    # alone. The messages go over the side communicator on their own tag, so they cannot match
    # a user's send/recv; MPI keeps messages of one pair and tag in order.
    side = pg._side
    reqs = []
    for j in range(size):
        for s, e in chunks(int(rcount[j])):
            if e > s:
                reqs.append(side.Irecv(obuf.flat[rdis[j] + s : rdis[j] + e], j, _A2A_TAG))
    for j in range(size):
        for s, e in chunks(int(scount[j])):
            if e > s:
                reqs.append(side.Isend(ibuf.flat[sdis[j] + s : sdis[j] + e], j, _A2A_TAG))
    return _end(pg, what, seq, dl, reqs, obuf.commit, async_op, [output])


def _row(t: Tensor) -> int:
    n = 1
    for d in t.shape[1:]:
        n *= d
    return n


def _splits(sizes: Sequence[int] | None, t: Tensor, size: int, what: str, arg: str) -> np.ndarray:
    n0 = t.shape[0] if t.ndim else 1
    if sizes is None or len(sizes) == 0:
        if n0 % size:
            raise ValueError(
                f"{what}: {arg} dim 0 ({n0}) is not divisible by the world size ({size}); "
                f"give {arg}_split_sizes"
            )
        return np.full(size, n0 // size, np.int64)
    arr = np.asarray(list(sizes), np.int64)
    if arr.size != size or arr.sum() != n0 or (arr < 0).any():
        raise ValueError(
            f"{what}: {arg}_split_sizes {list(sizes)} must have {size} non-negative entries "
            f"summing to dim 0 ({n0})"
        )
    return arr


def _p2p_peer(
    pg: ProcessGroup, rank: int | None, group_rank: int | None, what: str, arg: str
) -> int:
    peer = _root(pg, rank, group_rank, what, arg)
    if peer == pg.rank():
        raise ValueError(f"Invalid {arg}_rank: a rank cannot {what} to or from itself")
    return peer


def isend(
    tensor: Tensor,
    dst: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> Work | None:
    """Start sending ``tensor`` to rank ``dst``; returns a Work."""
    buf = _Buf(tensor, "isend")
    pg = resolve(group, "isend")
    if pg is None:
        return None
    peer = _p2p_peer(pg, dst, group_dst, "send", "dst")
    src = buf.flat
    reqs = [pg._comm.Isend(src[s:e], peer, tag) for s, e in chunks(src.size)]
    return Work(
        reqs, None, pg, f"send to rank {dst}", pg._seq, time.monotonic() + pg._timeout_s, [tensor]
    )


def irecv(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_src: int | None = None,
) -> Work | None:
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None)."""
    buf = _Buf(tensor, "irecv")
    pg = resolve(group, "irecv")
    if pg is None:
        return None
    MPI = mpi()
    anyone = src is None and group_src is None
    peer = MPI.ANY_SOURCE if anyone else _p2p_peer(pg, src, group_src, "recv", "src")
    what = f"recv from rank {'any' if anyone else pg._global_ranks[peer]}"
    return _RecvWork(pg, buf, peer, tag, what, [tensor])


class _RecvWork(Work):
    """A receive in chunks: the first chunk names the sender (``src=None``); the rest come from
    that rank (MPI keeps messages between two ranks in order). ``wait()`` sets ``source``, the
    sender's global rank."""

    def __init__(
        self, pg: ProcessGroup, buf: _Buf, peer: int, tag: int, what: str, result: Any
    ) -> None:
        self._pieces = list(chunks(buf.flat.size))
        s, e = self._pieces[0]
        first = pg._comm.Irecv(buf.flat[s:e], peer, tag)
        super().__init__([first], None, pg, what, pg._seq, time.monotonic() + pg._timeout_s, result)
        self._buf, self._tag = buf, tag
        self.source = -1

    def wait(self, timeout: Any = None) -> bool:
        if self._done:
            return True
        pg = self._group
        assert pg is not None
        status = mpi().Status()
        wait_requests(self._reqs, pg, self._what, self._seq, self._deadline, [status])
        sender = status.Get_source()
        reqs = [pg._comm.Irecv(self._buf.flat[s:e], sender, self._tag) for s, e in self._pieces[1:]]
        wait_requests(reqs, pg, self._what, self._seq, self._deadline)
        self._buf.commit()
        self._done = True
        self.source = pg._global_ranks[sender]
        return True


def send(
    tensor: Tensor,
    dst: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> None:
    """Send ``tensor`` to rank ``dst`` (returns once the buffer may be reused)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_src: int | None = None,
) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns the sender's
    rank (-1 outside the group)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.source
