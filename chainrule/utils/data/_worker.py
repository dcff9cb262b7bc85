"""DataLoader worker processes: the loop each worker runs, ``get_worker_info``, and how batches
cross the process boundary.

Note [tensors across processes]: chainrule's Tensors refuse to be pickled (checkpoints go
through safetensors), so a worker sends its batch as a structure in which every Tensor is
replaced by a ``_WireTensor`` holding its array; the main process puts Tensors back. Arrays
travel through multiprocessing's pickling (one copy, as PyTorch's CPU workers without shared
memory); nothing else about the structure changes (dicts, namedtuples, lists keep their types).
"""

from __future__ import annotations

import collections.abc
import queue
import random
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: its ``id`` (0 to ``num_workers - 1``),
    ``num_workers``, the ``seed`` its generators were seeded with, and its copy of
    ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_INFO: list[WorkerInfo | None] = [None]


def get_worker_info() -> WorkerInfo | None:
    """The current worker's :class:`WorkerInfo`, or None in the main process."""
    return _INFO[0]


class _WireTensor:
    """A Tensor's array and ``requires_grad`` flag, as sent between processes."""

    __slots__ = ("array", "requires_grad")

    def __init__(self, array: Any, requires_grad: bool) -> None:
        self.array = array
        self.requires_grad = requires_grad


def to_wire(obj: Any) -> Any:
    """``obj`` with each Tensor replaced by a ``_WireTensor`` (Note [tensors across processes])."""
    from chainrule._tensor import Tensor

    if isinstance(obj, Tensor):
        return _WireTensor(np.ascontiguousarray(obj.detach().numpy()), obj.requires_grad)
    return _map(obj, to_wire)


def from_wire(obj: Any) -> Any:
    """Undo :func:`to_wire`."""
    if isinstance(obj, _WireTensor):
        from chainrule._creation import from_numpy

        t = from_numpy(obj.array)
        return t.requires_grad_() if obj.requires_grad else t
    return _map(obj, from_wire)


def _map(obj: Any, f: Any) -> Any:
    if isinstance(obj, (str, bytes)) or obj is None:
        return obj
    if isinstance(obj, collections.abc.Mapping):
        try:
            return type(obj)({k: f(v) for k, v in obj.items()})  # type: ignore[call-arg]
        except TypeError:
            return {k: f(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(f(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(f(v) for v in obj)
    return obj


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback text."""

    def __init__(self, exc: BaseException, where: str) -> None:
        self.exc_type = type(exc)
        self.msg = f"Caught {type(exc).__name__} {where}.\nOriginal " + "".join(
            traceback.format_exception(type(exc), exc, exc.__traceback__)
        )

    def reraise(self) -> None:
        """Raise the exception again, with the worker's traceback in its message."""
        try:
            err = self.exc_type(self.msg)
        except Exception:  # noqa: BLE001 - an exception type that takes other arguments
            err = RuntimeError(self.msg)
        if self.exc_type is KeyError:
            err = KeyError(self.msg)
        raise err


class _IterableEnd:
    """Sent by a worker whose IterableDataset iterator is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


def _next_batch(
    it: Any, collate_fn: Any, auto_collation: bool, batch_size: int | None, drop_last: bool
) -> Any:
    """The next batch of an IterableDataset's iterator (StopIteration when there is none)."""
    if not auto_collation:
        return collate_fn(next(it))
    items = []
    for _ in range(batch_size or 1):
        try:
            items.append(next(it))
        except StopIteration:
            break
    if not items or (drop_last and len(items) < (batch_size or 1)):
        raise StopIteration
    return collate_fn(items)


def worker_loop(
    dataset: Any,
    index_queue: Any,
    result_queue: Any,
    collate_fn: Any,
    auto_collation: bool,
    iterable: bool,
    batch_size: int | None,
    drop_last: bool,
    seed: int,
    worker_init_fn: Any,
    worker_id: int,
    num_workers: int,
    done_event: Any,
) -> None:
    """A worker: take ``(task, indices)`` from ``index_queue``, send ``(task, batch)`` back.

    ``None`` on the index queue ends the worker. For an IterableDataset a task carries no
    indices: the worker sends the next batch of its own iterator, or ``_IterableEnd`` once.
    """
    from chainrule import _random

    random.seed(seed)
    _random.manual_seed(seed)
    np.random.seed(seed % 2**32)
    _INFO[0] = WorkerInfo(worker_id, num_workers, seed, dataset)
    init_error = None
    try:
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
        it = iter(dataset) if iterable else None
    except Exception as exc:  # noqa: BLE001 - reported to the main process
        init_error = ExceptionWrapper(exc, f"in DataLoader worker process {worker_id}")
    exhausted = False
    while not done_event.is_set():
        try:
            task = index_queue.get(timeout=0.1)
        except queue.Empty:
            continue
        if task is None:
            break
        task_id, indices = task
        if init_error is not None:
            result_queue.put((task_id, init_error))
            init_error = None
            exhausted = iterable
            continue
        if exhausted:
            result_queue.put((task_id, _IterableEnd(worker_id)))
            continue
        try:
            if iterable:
                data = _next_batch(it, collate_fn, auto_collation, batch_size, drop_last)
            elif auto_collation:
                getitems = getattr(dataset, "__getitems__", None)
                samples = getitems(indices) if getitems else [dataset[i] for i in indices]
                data = collate_fn(samples)
            else:
                data = collate_fn(dataset[indices])
            result_queue.put((task_id, to_wire(data)))
        except StopIteration:
            exhausted = True
            result_queue.put((task_id, _IterableEnd(worker_id)))
        except Exception as exc:  # noqa: BLE001 - re-raised in the main process
            result_queue.put(
                (task_id, ExceptionWrapper(exc, f"in DataLoader worker process {worker_id}"))
            )
    result_queue.cancel_join_thread()
