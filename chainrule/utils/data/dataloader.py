"""``DataLoader`` (in the main process, or with worker processes) and ``default_collate``.

Why this file is over 400 lines: the loader's argument checks follow PyTorch's one by one, and
its two iteration paths (one process, worker processes) share its state; one topic.
"""

from __future__ import annotations

import collections.abc
import multiprocessing
import os
import queue
import time
import warnings
from typing import Any, Callable, Iterator

import numpy as np

from chainrule._tensor import Tensor
from chainrule.backends import cuda_available
from chainrule.utils.data import _worker
from chainrule.utils.data.dataset import IterableDataset
from chainrule.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]

_COLLATE_ERR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays into tensors, recursing into mappings and sequences (no batching)."""
    from chainrule._creation import as_tensor

    if isinstance(data, np.ndarray) and data.dtype.kind not in "OUS":
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})  # type: ignore
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(d) for d in data)
    return data


def default_collate(batch: list[Any]) -> Any:
    """Stack a list of samples into a batch, as PyTorch's default collate:
    tensors and NumPy arrays are stacked along a new dim 0; Python floats become a float64
    tensor, ints an int64 tensor, bools a bool tensor; strings stay a list; dicts collate
    per key; tuples and lists (all of one length) collate per position (namedtuples keep
    their type)."""
    from chainrule import _creation, _dtype
    from chainrule import ops as _ops

    elem = batch[0]
    if isinstance(elem, Tensor):
        return _ops.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OUS":
            raise TypeError(_COLLATE_ERR.format(elem.dtype))
        return default_collate([_creation.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        return _creation.as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return _creation.tensor(batch, dtype=_dtype.bool)
    if isinstance(elem, float):
        return _creation.tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):
        return _creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(_COLLATE_ERR.format(type(elem)))


class DataLoader:
    """Iterate over ``dataset`` in batches.

    ``batch_size`` samples per batch (``None``: one unbatched sample at a time), in order or
    shuffled (a fresh permutation each epoch, from ``generator`` if given), the last short
    batch dropped with ``drop_last``; ``collate_fn`` builds a batch from a list of samples
    (default: ``default_collate``). ``sampler`` or ``batch_sampler`` replace the index order.
    An ``IterableDataset`` is batched from its iterator.

    With ``num_workers > 0`` batches are made in that many worker processes
    (``multiprocessing``; ``multiprocessing_context`` picks the start method), at most
    ``prefetch_factor`` (default 2) batches ahead per worker, and yielded in order. Each worker
    seeds Python's, NumPy's and chainrule's generators with ``base_seed + worker_id``, then runs
    ``worker_init_fn(worker_id)``; ``get_worker_info()`` tells code in a worker which it is.
    An exception in a worker is raised again in the main process, naming the worker and
    carrying its traceback; ``timeout`` bounds the wait for a batch; ``persistent_workers``
    keeps the workers between epochs. ``pin_memory`` is accepted and changes nothing on the CPU.
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Any = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        prefetch_factor = _check_workers(num_workers, timeout, prefetch_factor, persistent_workers)
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if not iterable:
            if sampler is None:
                sampler = (
                    RandomSampler(dataset, generator=generator)
                    if shuffle
                    else SequentialSampler(dataset)
                )
            if batch_size is not None and batch_sampler is None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.generator = generator
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self._iterable = iterable
        self._auto_collation = batch_sampler is not None or (iterable and batch_size is not None)
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._workers: _WorkerPool | None = None
        self.check_worker_number_rationality()

    def check_worker_number_rationality(self) -> None:
        """Warn (PyTorch's text) when ``num_workers`` exceeds the CPUs this process may use:
        ``len(os.sched_getaffinity(0))`` where the platform has it (so cpusets count), else
        ``os.cpu_count()``. Called from the constructor and for each new worker pool."""
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        suggest = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        if suggest is None:
            detail = (
                "DataLoader is not able to compute a suggested max number of worker in "
                "current system."
            )
        else:
            note = "" if cpuset_checked else " (`cpuset` is not taken into account)"
            detail = (
                f"Our suggested max number of worker in current system is {suggest}{note}, "
                "which is smaller than what this DataLoader is going to create."
            )
        warnings.warn(
            f"This DataLoader will create {self.num_workers} worker processes in total. "
            f"{detail} Please be aware that excessive worker creation might get DataLoader "
            "running slow or even freeze, lower the worker number to avoid potential "
            "slowness/freeze if necessary.",
            stacklevel=2,
        )

    def __iter__(self) -> Iterator[Any]:
        if self.pin_memory and not cuda_available():
            # PyTorch's warning, from the same place (each new iterator)
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=2,
            )
        if self.num_workers > 0:
            # PyTorch checks again whenever it makes a new multiprocessing iterator, which a
            # persistent loader does only while it has no live workers
            if not self.persistent_workers or self._workers is None or not self._workers.alive:
                self.check_worker_number_rationality()
            return self._multi_process_iter()
        return self._single_process_iter()

    def _single_process_iter(self) -> Iterator[Any]:
        if self._iterable:
            it = iter(self.dataset)
            if not self._auto_collation:
                for item in it:
                    yield self.collate_fn(item)
                return
            size = self.batch_size
            assert size is not None  # an iterable dataset is auto-collated when it has one
            while True:
                batch = []
                for item in it:
                    batch.append(item)
                    if len(batch) == size:
                        break
                if not batch or (self.drop_last and len(batch) < size):
                    return
                yield self.collate_fn(batch)
                if len(batch) < size:
                    return
        if self.batch_sampler is None:
            for idx in self._indices():
                yield self.collate_fn(self.dataset[idx])
            return
        getitems = getattr(self.dataset, "__getitems__", None)
        for indices in self.batch_sampler:
            if getitems is not None:
                samples = getitems(indices)
            else:
                samples = [self.dataset[i] for i in indices]
            yield self.collate_fn(samples)

    def _multi_process_iter(self) -> Iterator[Any]:
        pool = self._workers
        if pool is None or not pool.alive:
            pool = _WorkerPool(self)
            if self.persistent_workers:
                self._workers = pool
        try:
            yield from pool.epoch(self)
        finally:
            if not self.persistent_workers:
                pool.shutdown()

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self._indices())

    def _indices(self) -> Any:
        """What a map-style dataset is read by: its batch sampler, else its sampler (it has
        one of the two; an iterable dataset has neither)."""
        source = self.batch_sampler if self.batch_sampler is not None else self.sampler
        assert source is not None
        return source

    def __del__(self) -> None:
        pool = getattr(self, "_workers", None)
        if pool is not None:
            pool.shutdown()


# Seconds between checks that every worker is still alive while waiting for a batch.
_STATUS_CHECK_S = 1.0


class _WorkerPool:
    """The worker processes of one DataLoader, their queues, and the in-order reassembly."""

    def __init__(self, loader: DataLoader) -> None:
        from chainrule._random import rng_of

        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self.n = loader.num_workers
        self.base_seed = int(rng_of(loader.generator).integers(0, 2**62))
        self.result_queue = ctx.Queue()
        self.done = ctx.Event()
        self.index_queues = []
        self.procs = []
        for wid in range(self.n):
            iq = ctx.Queue()
            p = ctx.Process(
                target=_worker.worker_loop,
                args=(
                    loader.dataset,
                    iq,
                    self.result_queue,
                    loader.collate_fn,
                    loader._auto_collation,
                    loader._iterable,
                    loader.batch_size,
                    loader.drop_last,
                    self.base_seed + wid,
                    loader.worker_init_fn,
                    wid,
                    self.n,
                    self.done,
                ),
                daemon=True,
            )
            p.start()
            self.index_queues.append(iq)
            self.procs.append(p)
        self.alive = True
        self.task_id = 0

    def epoch(self, loader: DataLoader) -> Iterator[Any]:
        """One pass over the data: tasks sent ``prefetch_factor`` per worker ahead, results
        yielded in task order."""
        iterable = loader._iterable
        tasks: Iterator[Any] = iter(()) if iterable else iter(loader._indices())
        active = list(range(self.n))  # workers with data left (all, for map-style)
        outstanding: dict[int, int] = {}  # task id -> worker
        done_results: dict[int, Any] = {}
        order: list[int] = []
        rr = 0
        exhausted = False

        def send() -> bool:
            nonlocal rr, exhausted
            if exhausted or not active:
                return False
            if iterable:
                wid = active[rr % len(active)]
                rr += 1
                payload = None
            else:
                try:
                    payload = next(tasks)
                except StopIteration:
                    exhausted = True
                    return False
                wid = active[rr % len(active)]
                rr += 1
            tid = self.task_id
            self.task_id += 1
            self.index_queues[wid].put((tid, payload))
            outstanding[tid] = wid
            order.append(tid)
            return True

        prefetch = loader.prefetch_factor
        assert prefetch is not None  # 2 by default with workers (_check_workers)
        for _ in range(prefetch * self.n):
            if not send():
                break
        while order:
            tid = order[0]
            while tid not in done_results:
                got_id, data = self._get(loader.timeout)
                done_results[got_id] = data
            order.pop(0)
            data = done_results.pop(tid)
            wid = outstanding.pop(tid)
            if isinstance(data, _worker._IterableEnd):
                if wid in active:
                    active.remove(wid)
                continue
            if isinstance(data, _worker.ExceptionWrapper):
                self.shutdown()
                data.reraise()
            send()
            yield _worker.from_wire(data)

    def _get(self, timeout: float) -> Any:
        deadline = time.monotonic() + timeout if timeout > 0 else None
        while True:
            wait = _STATUS_CHECK_S
            if deadline is not None:
                wait = min(wait, max(deadline - time.monotonic(), 0.0))
            try:
                return self.result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            dead = [p for p in self.procs if not p.is_alive()]
            if dead:
                pids = ", ".join(str(p.pid) for p in dead)
                codes = ", ".join(str(p.exitcode) for p in dead)
                self.shutdown()
                raise RuntimeError(
                    f"DataLoader worker (pid(s) {pids}) exited unexpectedly (exit code(s) {codes})"
                )
            if deadline is not None and time.monotonic() >= deadline:
                self.shutdown()
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds")

    def shutdown(self) -> None:
        """Stop the workers (ask, then wait briefly, then terminate) and close the queues."""
        if not self.alive:
            return
        self.alive = False
        self.done.set()
        for q in self.index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for p in self.procs:
            p.join(timeout=2.0)
            if p.is_alive():
                p.terminate()
                p.join(timeout=1.0)
        for q in [*self.index_queues, self.result_queue]:
            q.cancel_join_thread()
            q.close()


def _check_workers(
    num_workers: int, timeout: float, prefetch_factor: int | None, persistent_workers: bool
) -> int | None:
    """PyTorch's checks of the worker options; the prefetch factor (2 by default with
    workers)."""
    if num_workers < 0:
        raise ValueError(
            "num_workers option should be non-negative; use num_workers=0 to disable "
            "multiprocessing."
        )
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError(
            "prefetch_factor option could only be specified in multiprocessing.let "
            "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
        )
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _check_iterable_options(shuffle: Any, sampler: Any, batch_sampler: Any) -> None:
    """An IterableDataset takes no shuffle, sampler or batch_sampler."""
    if shuffle not in (None, False):
        raise ValueError(
            "DataLoader with IterableDataset: expected unspecified shuffle option, but "
            f"got shuffle={shuffle}"
        )
    if sampler is not None:
        raise ValueError(
            "DataLoader with IterableDataset: expected unspecified sampler option, but "
            f"got sampler={sampler}"
        )
    if batch_sampler is not None:
        raise ValueError(
            "DataLoader with IterableDataset: expected unspecified batch_sampler "
            f"option, but got batch_sampler={batch_sampler}"
        )
