"""``DataLoader`` and ``default_collate`` (single process)."""

from __future__ import annotations

import collections.abc
from typing import Any, Callable, Iterator

import numpy as np

from chainrule._tensor import Tensor
from chainrule.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]

_COLLATE_ERR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
    "found {}"
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
    import chainrule

    elem = batch[0]
    if isinstance(elem, Tensor):
        return chainrule.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OUS":
            raise TypeError(_COLLATE_ERR.format(elem.dtype))
        return default_collate([chainrule.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        return chainrule.as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return chainrule.tensor(batch, dtype=chainrule.bool)
    if isinstance(elem, float):
        return chainrule.tensor(batch, dtype=chainrule.float64)
    if isinstance(elem, int):
        return chainrule.tensor(batch)
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

    Differs from torch: single process only (``num_workers`` must be 0); ``pin_memory`` is
    ignored.
    """

    def __init__(
        self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
        sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None, pin_memory: bool = False,
        drop_last: bool = False, timeout: float = 0, worker_init_fn: Any = None,
        multiprocessing_context: Any = None, generator: Any = None, *,
        prefetch_factor: int | None = None, persistent_workers: bool = False,
        pin_memory_device: str = "", in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if num_workers > 0:
            raise ValueError(
                "chainrule's DataLoader runs in the main process only; use num_workers=0"
            )
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
        if sampler is None:
            sampler = (
                RandomSampler(dataset, generator=generator) if shuffle
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
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator[Any]:
        if self.batch_sampler is None:
            for idx in self.sampler:
                yield self.collate_fn(self.dataset[idx])
            return
        getitems = getattr(self.dataset, "__getitems__", None)
        for indices in self.batch_sampler:
            if getitems is not None:
                samples = getitems(indices)
            else:
                samples = [self.dataset[i] for i in indices]
            yield self.collate_fn(samples)

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)


