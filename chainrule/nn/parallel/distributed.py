"""``DistributedDataParallel``: data parallelism over ``chainrule.distributed`` process groups.

Each rank holds a replica of the module and a shard of the batch. At construction the replicas
are made equal (parameters and buffers broadcast from rank 0). During backward, each
parameter's post-accumulate-grad hook copies its gradient into a flat bucket; once every
gradient of a bucket is in, the bucket's all-reduce (an average) is started without waiting,
so communication overlaps the rest of backward. Buckets hold parameters in reverse order (the
order backward produces gradients), the first bucket small (1 MiB) so that communication starts
early, the others ``bucket_cap_mb``. When the last bucket is launched, every bucket is waited
for and the averaged gradients written into ``.grad``: the gradients are the gradient of the
mean of the ranks' losses, the same on every rank.

DDP runs its collectives on its own duplicate of the process group's communicator, so they
never interleave with the user's collectives (or SyncBatchNorm's) on that group.

This file is long (about 480 lines) because the reducer (buckets, readiness, unused-parameter
search, finalisation) is one state machine that reads best in one place.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import numpy as np

import chainrule.distributed as dist
from chainrule import _creation
from chainrule._tensor import Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.distributed._group import ProcessGroup, resolve
from chainrule.distributed._mpi import mpi
from chainrule.nn.modules.module import Module

__all__ = ["DistributedDataParallel", "GradBucket"]

# PyTorch's other keyword arguments: accepted at their defaults only.
_TORCH_ONLY = {
    "delay_all_reduce_named_params",
    "param_to_hook_all_reduce",
    "mixed_precision",
    "device_mesh",
    "skip_all_reduce_unused_params",
    "bucket_cap_mb_list",
    "batched_grad_copy",
    "forward_sync_buffers",
}
_FIRST_BUCKET_BYTES = 1024 * 1024  # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
_MB = 1024 * 1024

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}\n In addition, "
    "you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to "
    "print out information about which particular parameters did not receive gradient on "
    "this rank as part of this error"
)


class GradBucket:
    """One bucket as a communication hook sees it (``torch.distributed.GradBucket``): the
    flat ``buffer()`` of its gradients, which ``parameters()`` they belong to."""

    def __init__(self, bucket: _Bucket, is_last: bool) -> None:
        self._b = bucket
        self._is_last = is_last

    def index(self) -> int:
        return self._b.index

    def buffer(self) -> Tensor:
        return self._b.tensor

    def gradients(self) -> list[Tensor]:
        return [_creation.from_numpy(v) for v in self._b.views]

    def parameters(self) -> list[Tensor]:
        return list(self._b.params)

    def is_last(self) -> bool:
        return self._is_last

    def set_buffer(self, tensor: Tensor) -> None:
        self._b.flat[...] = tensor._data.reshape(-1)


class _Bucket:
    """A flat array holding the gradients of ``params`` (views ``views`` into it)."""

    def __init__(self, index: int, params: list[Tensor], indices: list[int]) -> None:
        self.index = index
        self.params = params
        self.indices = indices
        dtype = params[0]._data.dtype
        self.flat = np.zeros(sum(p.numel() for p in params), dtype)
        self.tensor = _creation.from_numpy(self.flat)
        self.views: list[np.ndarray] = []
        off = 0
        for p in params:
            n = p.numel()
            self.views.append(self.flat[off : off + n].reshape(p._data.shape))
            off += n
        self.pending = len(params)
        self.ready = [False] * len(params)
        self.work: Any = None


def _bucket_assignment(params: list[Tensor], cap_bytes: int) -> list[list[int]]:
    """Indices into ``params`` (already in reverse order) grouped into buckets per dtype: the
    first bucket of each dtype up to 1 MiB, the others up to ``cap_bytes``."""
    open_: dict[Any, tuple[list[int], int, int]] = {}  # dtype -> (indices, bytes, limit)
    done: list[list[int]] = []
    for i, p in enumerate(params):
        key = p._data.dtype
        idx, size, limit = open_.get(key, ([], 0, min(_FIRST_BUCKET_BYTES, cap_bytes)))
        idx.append(i)
        size += p._data.nbytes
        if size >= limit:
            done.append(idx)
            idx, size, limit = [], 0, cap_bytes
        open_[key] = (idx, size, limit)
    done.extend(idx for idx, _, _ in open_.values() if idx)
    # Launch order: by the position of each bucket's first parameter (reverse model order).
    return sorted(done, key=lambda b: b[0])


class DistributedDataParallel(Module):
    """Synchronous data parallelism: wrap the model, give each rank its shard of the batch
    (``utils.data.DistributedSampler``), and ``backward()`` leaves every rank with the same
    averaged gradients, so the same optimizer step keeps the replicas identical.

    Args:
        module: the model; its state dict appears under ``module.``.
        broadcast_buffers: broadcast rank 0's buffers (BatchNorm statistics) before every
            forward (default True).
        process_group: the group to average over (default: the default group).
        bucket_cap_mb: bucket size in MiB (default 25); the first bucket is 1 MiB.
        find_unused_parameters: find, after each forward, the parameters the output does not
            depend on, so that their buckets need not wait for them. Without it, a parameter
            that gets no gradient leaves the reduction unfinished, and the next forward raises
            PyTorch's "Expected to have finished reduction" error.
        gradient_as_bucket_view: make ``.grad`` views of the buckets (saves a copy each way).
        init_sync: broadcast parameters and buffers from rank 0 at construction.

    Differs from torch: ``device_ids``/``output_device``/``dim`` have no effect (CPU only);
    buckets keep their construction order (PyTorch rebuilds them after the first iteration
    in the order gradients arrived); ``static_graph`` is accepted and changes nothing.
    """

    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool | None = True,
        init_sync: bool = True,
        process_group: ProcessGroup | None = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        for k, v in kwargs.items():
            if k not in _TORCH_ONLY:
                raise TypeError(
                    f"DistributedDataParallel.__init__() got an unexpected keyword argument '{k}'"
                )
            if v not in (None, False):
                raise ValueError(f"DistributedDataParallel: {k} is not supported by chainrule")
        pg = resolve(process_group, "DistributedDataParallel")
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not part of process_group")
        params: list[Tensor] = []
        seen: set[int] = set()
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient."
            )
        self.module = module
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.gradient_as_bucket_view = bool(gradient_as_bucket_view)
        self.static_graph = bool(static_graph)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        self.bucket_bytes_cap = int(cap * _MB)
        # Plain attributes set through object.__setattr__ stay out of Module's registries.
        object.__setattr__(self, "process_group", pg)
        object.__setattr__(self, "_pg", _duplicate(pg))
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_param_index", {id(p): i for i, p in enumerate(params)})
        self._verify_same_model()
        if init_sync:
            self._broadcast_coalesced(list(params) + list(self._buffers_to_sync()))
        rev = params[::-1]
        buckets = []
        where: dict[int, tuple[int, int]] = {}
        for bi, idx in enumerate(_bucket_assignment(rev, self.bucket_bytes_cap)):
            ps = [rev[i] for i in idx]
            b = _Bucket(bi, ps, [len(params) - 1 - i for i in idx])
            buckets.append(b)
            for k, p in enumerate(ps):
                where[id(p)] = (bi, k)
        object.__setattr__(self, "_buckets", buckets)
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_comm_hook", None)
        object.__setattr__(self, "_expect", False)
        object.__setattr__(self, "_started", False)
        object.__setattr__(self, "_next_launch", 0)
        object.__setattr__(self, "_locally_used", np.zeros(len(params), np.uint8))
        object.__setattr__(self, "_launch_log", [])
        handles = [p.register_post_accumulate_grad_hook(self._on_grad) for p in params]
        object.__setattr__(self, "_hook_handles", handles)

    # -- construction -------------------------------------------------------------------------

    def _buffers_to_sync(self) -> Iterator[Tensor]:
        for b in self.module.buffers():
            if b is not None:
                yield b

    def _verify_same_model(self) -> None:
        """Every rank must wrap the same architecture: compare parameter shapes and dtypes."""
        mine = [(tuple(p.shape), str(p._data.dtype)) for p in self._params]
        everyone: list[Any] = [None] * self._pg.size()
        dist.all_gather_object(everyone, mine, group=self._pg)
        for r, theirs in enumerate(everyone):
            if len(theirs) != len(mine):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {self._pg.rank()} has "
                    f"{len(mine)} params, while rank {r} has inconsistent {len(theirs)} params."
                )
            for i, (a, b) in enumerate(zip(mine, theirs)):
                if a != b:
                    raise RuntimeError(
                        f"DDP expects same model across all ranks, but parameter {i} has "
                        f"shape/dtype {a} on rank {self._pg.rank()} and {b} on rank {r}."
                    )

    def _broadcast_coalesced(self, tensors: list[Tensor]) -> None:
        """Broadcast ``tensors`` from the group's first rank, packed into one flat array per
        dtype (one message each instead of one per tensor)."""
        if self._pg.size() == 1:
            return
        by_dtype: dict[Any, list[Tensor]] = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        src = self._pg._global_ranks[0]
        for dtype, ts in by_dtype.items():
            flat = np.concatenate([t._data.reshape(-1) for t in ts]) if ts else None
            packed = _creation.from_numpy(flat)
            dist.broadcast(packed, src, group=self._pg)
            off = 0
            for t in ts:
                n = t._data.size
                t._data[...] = flat[off : off + n].reshape(t._data.shape)
                t._bump_version()
                off += n

    # -- forward --------------------------------------------------------------------------------

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        grad_on = _grad_mode.is_grad_enabled()
        # As in PyTorch, only a backward that delivered some gradients but not all leaves the
        # reduction unfinished; a second forward before any backward just starts over.
        if self._expect and grad_on and self._started:
            missing = [
                str(b.indices[k])
                for b in self._buckets
                for k in range(len(b.params))
                if not b.ready[k]
            ]
            raise RuntimeError(
                _UNFINISHED.format(rank=self._pg.rank(), indices=" ".join(sorted(missing, key=int)))
            )
        if self.broadcast_buffers and self.require_forward_param_sync:
            bufs = list(self._buffers_to_sync())
            if bufs:
                self._broadcast_coalesced(bufs)
        out = self.module(*inputs, **kwargs)
        if grad_on and self.require_backward_grad_sync:
            self._prepare_for_backward(out)
        return out

    def _prepare_for_backward(self, out: Any) -> None:
        object.__setattr__(self, "_expect", True)
        object.__setattr__(self, "_started", False)
        object.__setattr__(self, "_next_launch", 0)
        self._launch_log.clear()
        self._locally_used[:] = 0
        for b in self._buckets:
            b.pending = len(b.params)
            b.ready = [False] * len(b.params)
            b.work = None
        if self.find_unused_parameters:
            used = _reachable_leaves(out)
            for p in self._params:
                if id(p) not in used:
                    bi, k = self._where[id(p)]
                    self._buckets[bi].views[k][...] = 0
                    self._mark_ready(bi, k)

    # -- backward: hooks, launches, finalisation ----------------------------------------------

    def _on_grad(self, p: Tensor) -> None:
        if not self._expect:
            return  # backward outside a synced DDP forward (no_sync, or a plain module call)
        object.__setattr__(self, "_started", True)
        bi, k = self._where[id(p)]
        b = self._buckets[bi]
        if b.ready[k]:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of "
                "the following reasons: 1) Use of a module parameter outside the `forward` "
                "function. 2) Reused parameters in multiple reentrant backward passes. "
                f"Parameter at index {b.indices[k]} has been marked as ready twice."
            )
        view = b.views[k]
        g = p.grad
        if g is not None and g._data.__array_interface__["data"][0] != view.ctypes.data:
            view[...] = g._data
        self._locally_used[self._param_index[id(p)]] = 1
        self._mark_ready(bi, k)
        # Drive the MPI progress of buckets already in flight (MPI progresses in MPI calls).
        for other in self._buckets[: self._next_launch]:
            w = other.work
            if w is not None:
                w.is_completed() if isinstance(w, dist.Work) else w.done()

    def _mark_ready(self, bi: int, k: int) -> None:
        b = self._buckets[bi]
        b.ready[k] = True
        b.pending -= 1
        while (
            self._next_launch < len(self._buckets) and not self._buckets[self._next_launch].pending
        ):
            self._launch(self._buckets[self._next_launch])
            object.__setattr__(self, "_next_launch", self._next_launch + 1)
        if self._next_launch == len(self._buckets) and self._expect:
            self._finalize()

    def _launch(self, b: _Bucket) -> None:
        self._launch_log.append(b.index)
        if self._comm_hook is not None:
            state, hook = self._comm_hook
            b.work = hook(state, GradBucket(b, b.index == len(self._buckets) - 1))
        else:
            b.work = dist.all_reduce(b.tensor, dist.ReduceOp.AVG, group=self._pg, async_op=True)

    def _finalize(self) -> None:
        object.__setattr__(self, "_expect", False)
        for b in self._buckets:
            res = b.work.wait()  # a Work (True), or a comm hook's future (the reduced buffer)
            if isinstance(res, (list, tuple)) and res:
                res = res[0]
            if isinstance(res, Tensor) and res._data is not b.flat:
                b.flat[...] = res._data.reshape(-1)
            b.work = None
        globally_used = None
        if self.find_unused_parameters:
            used = _creation.from_numpy(self._locally_used.copy())
            dist.all_reduce(used, dist.ReduceOp.MAX, group=self._pg)
            globally_used = used._data
        for b in self._buckets:
            for p, view, i in zip(b.params, b.views, b.indices):
                if globally_used is not None and not globally_used[i]:
                    continue  # no rank used it: its .grad stays as it was, as in PyTorch
                self._write_grad(p, view)

    def _write_grad(self, p: Tensor, view: np.ndarray) -> None:
        g = p.grad
        if self.gradient_as_bucket_view:
            if g is None or g._data.__array_interface__["data"][0] != view.ctypes.data:
                p.grad = _creation.from_numpy(view)
            else:
                g._bump_version()
        elif g is None:
            p.grad = _creation.from_numpy(view.copy())
        else:
            g._data[...] = view
            g._bump_version()

    # -- public API -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, backward accumulates gradients locally without communicating; the first
        backward after it averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state: Any, hook: Callable[[Any, GradBucket], Any]) -> None:
        """Replace the bucket all-reduce by ``hook(state, bucket)``, which starts the
        communication and returns a future (``.wait()`` -> the reduced flat tensor)."""
        if self._comm_hook is not None:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once."
            )
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        object.__setattr__(self, "_comm_hook", (state, hook))

    def extra_repr(self) -> str:
        return ""


def _duplicate(pg: ProcessGroup) -> ProcessGroup:
    """A group of the same ranks over a duplicate communicator (collective over ``pg``)."""
    import datetime

    MPI = mpi()
    comm = pg._comm.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    return ProcessGroup(
        comm, list(pg._global_ranks), datetime.timedelta(seconds=pg._timeout_s), f"{pg._name}-ddp"
    )


def _reachable_leaves(out: Any) -> set[int]:
    """ids of the leaves whose gradients ``out``'s graph leads to (through ``grad_fn`` and
    ``next_functions``, to each AccumulateGrad's ``variable``)."""
    stack = []
    for t in _tensors_in(out):
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
        elif t.requires_grad:
            stack.append(("leaf", t))
    seen: set[int] = set()
    leaves: set[int] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            leaves.add(id(node[1]))
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            leaves.add(id(var))
        for nxt, _ in getattr(node, "next_functions", ()):
            if nxt is not None:
                stack.append(nxt)
    return leaves


def _tensors_in(obj: Any) -> Iterator[Tensor]:
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors_in(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors_in(v)
