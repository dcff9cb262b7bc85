"""``DistributedDataParallel``: data parallelism over ``chainrule.distributed`` process groups.

Each rank holds a replica of the module and a shard of the batch. At construction the replicas
are made equal (parameters and buffers broadcast from rank 0). During backward, each
parameter's post-accumulate-grad hook copies its gradient into a flat bucket; once every
gradient of a bucket is in, the bucket's all-reduce (an average) is started without waiting,
so communication overlaps the rest of backward. When the last bucket is launched, every bucket
is waited for and the averaged gradients written into ``.grad``: the gradients are the gradient
of the mean of the ranks' losses, the same on every rank.

Note [bucket rebuild] (as PyTorch's Reducer): at construction the buckets follow the reverse
parameter order; without ``find_unused_parameters`` (or with ``static_graph``) that first
layout is a single bucket. The first backward that communicates records the order in which the
gradients became ready; the next forward (with grad enabled) rebuilds the buckets once in that
order, the first bucket 1 MiB (with the default ``bucket_cap_mb``) and the others
``bucket_cap_mb``, and rank 0's layout is broadcast so that every rank launches the same
buckets. With ``find_unused_parameters`` (and no static graph) the buckets are never rebuilt.
With ``static_graph`` the first iteration counts the hooks of each parameter and delays every
all-reduce to the end of its backward (an engine final callback queued when backward reaches
the outputs, Note [static graph sink]), finding the unused parameters once; the second
iteration records the ready order and the third forward rebuilds.

DDP runs its collectives on its own duplicate of the process group's communicator, so they
never interleave with the user's collectives (or SyncBatchNorm's) on that group.

This file is long (about 590 lines) because the reducer (buckets, readiness, rebuilding,
unused-parameter search, static graph, finalisation) is one state machine that reads best in
one place.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Any, Callable, Iterator

import numpy as np

import chainrule.distributed as dist
from chainrule import _creation
from chainrule._tensor import Tensor
from chainrule.autograd import grad_mode as _grad_mode
from chainrule.distributed._group import ProcessGroup, resolve
from chainrule.nn.modules.module import Module
from chainrule.nn.parallel._buckets import (
    Bucket,
    GradBucket,
    bucket_assignment,
    duplicate,
    reachable_leaves,
)
from chainrule.nn.parallel._sink import through_sink

__all__ = ["DistributedDataParallel", "GradBucket"]

# PyTorch's other keyword arguments: accepted at their defaults only.
_TORCH_ONLY = {
    "delay_all_reduce_named_params",
    "param_to_hook_all_reduce",
    "mixed_precision",
    "device_mesh",
    "skip_all_reduce_unused_params",
    "batched_grad_copy",
    "forward_sync_buffers",
}
_FIRST_BUCKET_BYTES = dist._DEFAULT_FIRST_BUCKET_BYTES
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


class DistributedDataParallel(Module):
    """Synchronous data parallelism: wrap the model, give each rank its shard of the batch
    (``utils.data.DistributedSampler``), and ``backward()`` leaves every rank with the same
    averaged gradients, so the same optimizer step keeps the replicas identical.

    Args:
        module: the model; its state dict appears under ``module.``.
        broadcast_buffers: broadcast rank 0's buffers (BatchNorm statistics) before every
            forward (default True).
        process_group: the group to average over (default: the default group).
        bucket_cap_mb: bucket size in MiB (default 25, the first bucket after the rebuild
            then 1 MiB; an explicit value is every bucket's limit). See Note [bucket rebuild].
        bucket_cap_mb_list: one limit per bucket in MiB, the last for every later bucket
            (overrides ``bucket_cap_mb``; ``bucket_bytes_cap`` is the largest): used for the
            layout at construction, even without ``find_unused_parameters``, and for the
            rebuild, as torch 2.13's.
        find_unused_parameters: find, after each forward, the parameters the output does not
            depend on, so that their buckets need not wait for them. Without it, a parameter
            that gets no gradient leaves the reduction unfinished, and the next forward raises
            PyTorch's "Expected to have finished reduction" error.
        gradient_as_bucket_view: make ``.grad`` views of the buckets (saves a copy each way).
        static_graph: the set of used parameters and the order of their gradients is the same
            every iteration: unused parameters are found once, in the first iteration (whose
            all-reduces wait for the end of its backward), and the buckets are rebuilt once.
        init_sync: broadcast parameters and buffers from rank 0 at construction.

    Differs from torch: ``device_ids``/``output_device``/``dim`` have no effect (CPU only).
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
        bucket_cap_mb_list: list[float] | None = None,
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
        self.static_graph = False
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        # torch's _BucketCapacityConfig: a list of per-bucket caps overrides bucket_cap_mb (the
        # largest is bucket_bytes_cap); the small first bucket only with the default cap.
        default = bucket_cap_mb is None and not bucket_cap_mb_list
        cap = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        per_bucket = [int(c * _MB) for c in bucket_cap_mb_list or ()]
        if per_bucket:
            cap = max(float(c) for c in bucket_cap_mb_list or ())
        self.bucket_bytes_cap = int(cap * _MB)
        first = _FIRST_BUCKET_BYTES if default else self.bucket_bytes_cap
        n = len(params)
        # Plain attributes set through object.__setattr__ stay out of Module's registries.
        for name, value in (
            ("process_group", pg),
            ("_pg", duplicate(pg)),
            ("_params", params),
            ("_param_index", {id(p): i for i, p in enumerate(params)}),
            ("_first_bucket_bytes", first),
            ("_per_bucket_bytes", per_bucket),
            ("_comm_hook", None),
            ("_expect", False),  # a synced forward awaits its backward
            ("_started", False),  # some hook of that backward has fired
            ("_next_launch", 0),
            ("_launch_log", []),
            ("_locally_used", np.zeros(n, np.uint8)),
            ("_globally_used", None),  # static graph: found in the first iteration
            ("_unused", []),  # parameters marked ready at the first hook
            ("_marked_unused", False),
            ("_num_iterations", 0),
            ("_num_bwd_calls", 0),  # synced backward passes in which some hook fired
            ("_has_rebuilt_buckets", False),
            ("_rebuilt_order", []),  # gradient-ready order recorded for the rebuild
            ("_ready_order", []),  # of the backward now running
            ("_prev_ready_order", []),  # of the latest finished one (logging data)
            ("_hook_counts", np.zeros(n, np.int64)),  # static graph: hooks per parameter
            ("_hook_counts_left", np.zeros(n, np.int64)),
            ("_static_graph_delay_allreduce_enqueued", False),
            ("_initial_bucket_sizes", []),
        ):
            object.__setattr__(self, name, value)
        self._verify_same_model()
        if init_sync:
            self._broadcast_coalesced(list(params) + list(self._buffers_to_sync()))
        # torch: a single first bucket unless unused parameters are searched (the parameters'
        # order need not be backward's; the rebuild fixes it after the first iteration), or
        # the caller gave one cap per bucket.
        if per_bucket:
            limits = per_bucket
        elif static_graph or not self.find_unused_parameters:
            limits = [sys.maxsize]
        elif first < self.bucket_bytes_cap:
            limits = [first, self.bucket_bytes_cap]
        else:
            limits = [self.bucket_bytes_cap]
        self._init_buckets(bucket_assignment(params, limits)[::-1])
        object.__setattr__(self, "_initial_bucket_sizes", [b.flat.nbytes for b in self._buckets])
        handles = [p.register_post_accumulate_grad_hook(self._on_grad) for p in params]
        object.__setattr__(self, "_hook_handles", handles)
        if static_graph:
            self._set_static_graph()

    # -- construction -------------------------------------------------------------------------

    def _init_buckets(self, assignment: list[list[int]]) -> None:
        """Make the buckets (launch order) from lists of parameter indices. With
        ``gradient_as_bucket_view``, gradients already there move into the new buckets."""
        buckets = []
        where: list[tuple[int, int]] = [(0, 0)] * len(self._params)
        for bi, idx in enumerate(assignment):
            b = Bucket(bi, [self._params[i] for i in idx], list(idx))
            buckets.append(b)
            for k, i in enumerate(idx):
                where[i] = (bi, k)
                g = self._params[i].grad
                if self.gradient_as_bucket_view and g is not None:
                    b.views[k][...] = g._data
                    self._params[i].grad = _creation.from_numpy(b.views[k])
        object.__setattr__(self, "_buckets", buckets)
        object.__setattr__(self, "_where", where)

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

    def _static_first(self) -> bool:
        # torch's Reducer counts backward passes from their first gradient hook
        # (num_bwd_calls_), not forwards: a forward never backpropagated does not count.
        return self.static_graph and self._num_bwd_calls == 1

    def _static_after_first(self) -> bool:
        return self.static_graph and self._num_bwd_calls > 1

    def _dynamic_find_unused(self) -> bool:
        return not self.static_graph and self.find_unused_parameters

    def _should_rebuild(self) -> bool:
        return (self.static_graph or not self.find_unused_parameters) and not (
            self._has_rebuilt_buckets
        )

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
        if grad_on and self.require_backward_grad_sync:
            object.__setattr__(self, "_num_iterations", self._num_iterations + 1)
        if grad_on:
            self._rebuild_buckets()
        if self.broadcast_buffers and self.require_forward_param_sync:
            bufs = list(self._buffers_to_sync())
            if bufs:
                self._broadcast_coalesced(bufs)
        out = self.module(*inputs, **kwargs)
        if grad_on and self.require_backward_grad_sync:
            self._prepare_for_backward(out)
            if self.static_graph and not self._static_graph_delay_allreduce_enqueued:
                out = through_sink(self, out)  # Note [static graph sink]
        return out

    def _rebuild_buckets(self) -> bool:
        """Rebuild the buckets once, in the recorded gradient-ready order (Note [bucket
        rebuild]); rank 0's layout is broadcast to every rank. Returns whether it rebuilt."""
        order = self._rebuilt_order
        if not self._should_rebuild() or not order:
            return False
        if len(order) != len(self._params):
            raise RuntimeError(
                "rebuilt parameter indices size is not same as original model parameters "
                f"size.Original model param size is: {len(self._params)} versus rebuilt params "
                f"size of: {len(order)}"
            )
        limits = self._per_bucket_bytes or [self._first_bucket_bytes, self.bucket_bytes_cap]
        assignment = bucket_assignment([self._params[i] for i in order], limits, list(order))
        assignment = self._sync_bucket_indices(assignment)
        object.__setattr__(self, "_has_rebuilt_buckets", True)
        order.clear()
        self._init_buckets(assignment)
        return True

    def _sync_bucket_indices(self, assignment: list[list[int]]) -> list[list[int]]:
        """Rank 0's bucket layout on every rank (one broadcast: the indices, the number of
        buckets and their sizes; the ranks' ready orders may differ)."""
        if self._pg.size() == 1:
            return assignment
        n = len(self._params)
        packed = np.zeros(2 * n + 1, np.int64)
        packed[:n] = [i for b in assignment for i in b]
        packed[n] = len(assignment)
        packed[n + 1 : n + 1 + len(assignment)] = [len(b) for b in assignment]
        dist.broadcast(_creation.from_numpy(packed), self._pg._global_ranks[0], group=self._pg)
        out, off = [], 0
        for size in packed[n + 1 : n + 1 + int(packed[n])]:
            out.append([int(i) for i in packed[off : off + size]])
            off += int(size)
        return out

    def _prepare_for_backward(self, out: Any) -> None:
        object.__setattr__(self, "_expect", True)
        object.__setattr__(self, "_started", False)
        object.__setattr__(self, "_next_launch", 0)
        object.__setattr__(self, "_marked_unused", False)
        self._launch_log.clear()
        self._ready_order.clear()
        for b in self._buckets:
            b.pending = len(b.params)
            b.ready = [False] * len(b.params)
            b.work = None
        if self.static_graph:
            self._hook_counts_left[:] = self._hook_counts
        if self._dynamic_find_unused():
            used = reachable_leaves(out)
            object.__setattr__(
                self, "_unused", [i for i, p in enumerate(self._params) if id(p) not in used]
            )

    # -- backward: hooks, launches, finalisation ----------------------------------------------

    def _on_grad(self, p: Tensor) -> None:
        i = self._param_index[id(p)]
        if self._expect and not self._started:  # the first hook of this backward
            object.__setattr__(self, "_num_bwd_calls", self._num_bwd_calls + 1)
        if self._dynamic_find_unused() or self._static_first():
            if p.grad is not None:
                self._locally_used[i] = 1
        if self._static_first():
            self._hook_counts[i] += 1
            if self._expect:
                object.__setattr__(self, "_started", True)
            return  # all-reduced at the end of backward (_DDPSink queued _delay_all_reduce)
        if not self._expect:
            return  # backward outside a synced DDP forward (no_sync, or a plain module call)
        object.__setattr__(self, "_started", True)
        self._ready_order.append(i)
        if not self._marked_unused:
            # As torch: unused parameters are marked ready at the first hook, not in forward,
            # since the output may never be backpropagated.
            object.__setattr__(self, "_marked_unused", True)
            for j in self._unused:
                self._mark_ready(j)
        if self._static_after_first():
            if self._hook_counts_left[i] <= 0:
                raise RuntimeError(
                    "Your training graph has changed in this iteration, e.g., one parameter "
                    "is unused in first iteration, but then got used in the second iteration. "
                    "this is not compatible with static_graph set to True."
                )
            self._hook_counts_left[i] -= 1
            if self._hook_counts_left[i]:
                return
        if self._should_rebuild():
            self._rebuilt_order.append(i)
        self._mark_ready(i)
        # Drive the MPI progress of buckets already in flight (MPI progresses in MPI calls).
        for other in self._buckets[: self._next_launch]:
            w = other.work
            if w is not None:
                w.is_completed() if isinstance(w, dist.Work) else w.done()

    def _copy_grad(self, i: int) -> None:
        """Copy parameter ``i``'s gradient into its bucket view (zeros when it has none)."""
        bi, k = self._where[i]
        view = self._buckets[bi].views[k]
        g = self._params[i].grad
        if g is None:
            view[...] = 0
        elif g._data.__array_interface__["data"][0] != view.ctypes.data:
            view[...] = g._data

    def _mark_ready(self, i: int) -> None:
        bi, k = self._where[i]
        b = self._buckets[bi]
        if b.ready[k]:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of "
                "the following reasons: 1) Use of a module parameter outside the `forward` "
                "function. 2) Reused parameters in multiple reentrant backward passes. "
                f"Parameter at index {i} has been marked as ready twice."
            )
        self._copy_grad(i)
        b.ready[k] = True
        b.pending -= 1
        while (
            self._next_launch < len(self._buckets) and not self._buckets[self._next_launch].pending
        ):
            self._launch(self._buckets[self._next_launch])
            object.__setattr__(self, "_next_launch", self._next_launch + 1)
        if self._next_launch == len(self._buckets) and self._expect:
            self._finalize()

    def _delay_all_reduce(self) -> None:
        """Static graph, first iteration, at the end of backward: the parameters no hook
        reached are the unused ones for good; every bucket is launched, then finalised."""
        if not self._expect:
            return
        object.__setattr__(self, "_unused", [i for i, c in enumerate(self._hook_counts) if not c])
        for i in range(len(self._params)):
            self._copy_grad(i)
        for b in self._buckets:
            b.ready = [True] * len(b.params)
            b.pending = 0
        for b in self._buckets:
            self._launch(b)
        object.__setattr__(self, "_next_launch", len(self._buckets))
        self._finalize()

    def _launch(self, b: Bucket) -> None:
        self._launch_log.append(b.index)
        if self._comm_hook is not None:
            state, hook = self._comm_hook
            b.work = hook(state, GradBucket(b, b.index == len(self._buckets) - 1))
        else:
            b.work = dist.all_reduce(b.tensor, dist.ReduceOp.AVG, group=self._pg, async_op=True)

    def _finalize(self) -> None:
        object.__setattr__(self, "_expect", False)
        object.__setattr__(self, "_prev_ready_order", list(self._ready_order))
        if self._static_after_first() and self._should_rebuild():
            self._rebuilt_order.extend(self._unused)  # torch: unused ones go last
        for b in self._buckets:
            res = b.work.wait()  # a Work (True), or a comm hook's future (the reduced buffer)
            if isinstance(res, (list, tuple)) and res:
                res = res[0]
            if isinstance(res, Tensor) and res._data is not b.flat:
                b.flat[...] = res._data.reshape(-1)
            b.work = None
        globally_used = self._globally_used
        if self._dynamic_find_unused() or self._static_first():
            used = _creation.from_numpy(self._locally_used.copy())
            dist.all_reduce(used, dist.ReduceOp.MAX, group=self._pg)
            globally_used = used._data
            self._locally_used[:] = 0
            if self.static_graph:
                object.__setattr__(self, "_globally_used", globally_used)
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

    def _set_static_graph(self) -> None:
        """Declare the graph static (PyTorch's private API, as ``static_graph=True``): call it
        before the first iteration."""
        if self.static_graph:
            warnings.warn(
                "You've set static_graph to be True, no need to set it again.", stacklevel=2
            )
            return
        self.static_graph = True
        object.__setattr__(self, "_static_graph_delay_allreduce_enqueued", False)
        if self.find_unused_parameters:
            warnings.warn(
                "You passed find_unused_parameters=true to DistributedDataParallel, "
                "`_set_static_graph` will detect unused parameters automatically, so "
                "you do not need to set find_unused_parameters=true, just be sure these "
                "unused parameters will not change during training loop while calling "
                "`_set_static_graph`.",
                stacklevel=2,
            )

    def _get_ddp_logging_data(self) -> dict[str, Any]:
        """The bucket part of PyTorch's DDP logging data: ``bucket_sizes`` (bytes, launch
        order, at construction), ``rebuilt_bucket_sizes`` and
        ``rebuilt_per_bucket_param_indices`` (once rebuilt),
        ``prev_iteration_grad_ready_order_indices`` (the latest backward), and the flags."""
        data: dict[str, Any] = {
            "bucket_sizes": ", ".join(str(n) for n in self._initial_bucket_sizes),
            "bucket_cap_bytes": self.bucket_bytes_cap,
            "find_unused_parameters": int(self.find_unused_parameters),
            "gradient_as_bucket_view": int(self.gradient_as_bucket_view),
            "has_rebuilt_buckets": int(self._has_rebuilt_buckets),
            "static_graph": int(self.static_graph),
        }
        if self._prev_ready_order:
            data["prev_iteration_grad_ready_order_indices"] = ", ".join(
                str(i) for i in self._prev_ready_order
            )
        if self._has_rebuilt_buckets:
            data["rebuilt_bucket_sizes"] = ", ".join(str(b.flat.nbytes) for b in self._buckets)
            data["rebuilt_per_bucket_param_indices"] = ", ".join(
                " ".join(str(i) for i in b.indices) for b in self._buckets
            )
        return data

    def extra_repr(self) -> str:
        return ""
