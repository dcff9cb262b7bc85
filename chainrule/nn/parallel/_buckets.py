"""The pieces of DistributedDataParallel's reducer that hold no state of their own: the
buckets (flat gradient arrays and what a communication hook sees of them), PyTorch's bucket
assignment by size, the duplicate communicator, and the search for the leaves an output
reaches (``find_unused_parameters``)."""

from __future__ import annotations

import datetime
from typing import Any, Iterator

import numpy as np

from chainrule import _creation
from chainrule._tensor import Tensor
from chainrule.distributed._group import ProcessGroup, arrive
from chainrule.distributed._mpi import mpi

__all__ = ["GradBucket", "Bucket", "bucket_assignment", "duplicate", "reachable_leaves"]


class GradBucket:
    """One bucket as a communication hook sees it (``torch.distributed.GradBucket``): the
    flat ``buffer()`` of its gradients, which ``parameters()`` they belong to."""

    def __init__(self, bucket: Bucket, is_last: bool) -> None:
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


class Bucket:
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


def bucket_assignment(
    params: list[Tensor], limits: list[int], indices: list[int] | None = None
) -> list[list[int]]:
    """PyTorch's ``compute_bucket_assignment_by_size``: ``params`` grouped per dtype into
    buckets, each closed once it holds at least its limit in bytes (``limits[k]`` for the k-th
    bucket of a dtype, the last limit for the rest). A bucket holds ``indices[i]`` for
    ``params[i]`` (``i`` itself without ``indices``). Without ``indices`` the buckets are sorted
    by their smallest index; with them (a gradient-ready order) they keep that order."""
    open_: dict[Any, tuple[list[int], int]] = {}
    which_limit: dict[Any, int] = {}
    done: list[list[int]] = []
    for i, p in enumerate(params):
        key = p._data.dtype
        idx, size = open_.get(key, ([], 0))
        idx.append(i if indices is None else indices[i])
        size += p._data.nbytes
        k = which_limit.setdefault(key, 0)
        if size >= limits[k]:
            done.append(idx)
            idx, size = [], 0
            which_limit[key] = min(k + 1, len(limits) - 1)
        open_[key] = (idx, size)
    done.extend(idx for idx, _ in open_.values() if idx)
    if indices is None:
        done.sort(key=min)
    return done


def duplicate(pg: ProcessGroup) -> ProcessGroup:
    """A group of the same ranks over a duplicate communicator (collective over ``pg``)."""
    MPI = mpi()
    arrive(pg, "DistributedDataParallel")  # every rank is here: the blocking Dup cannot hang
    comm = pg._comm.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    return ProcessGroup(
        comm, list(pg._global_ranks), datetime.timedelta(seconds=pg._timeout_s), f"{pg._name}-ddp"
    )


def reachable_leaves(out: Any) -> set[int]:
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
