"""``DistributedSampler``: each rank's share of a dataset's indices, the same sequences as
PyTorch's for the same seed and epoch."""

from __future__ import annotations

import math
from typing import Iterator, Sized

import numpy as np

from chainrule.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


def torch_randperm(n: int, seed: int) -> np.ndarray:
    """The permutation ``torch.randperm(n, generator=torch.Generator().manual_seed(seed))``
    gives on the CPU: a Fisher-Yates shuffle, r[i] swapped with r[i + u_i % (n - i)], with u_i
    the 32-bit outputs of MT19937 seeded as PyTorch seeds it (the low 32 bits of ``seed``)."""
    if n >= (2**32 - 1) // 20:
        # PyTorch draws 64-bit numbers for such sizes, a path not reproduced here.
        raise ValueError(
            f"DistributedSampler: shuffling {n} indices (>= 2**32 / 20) is not supported"
        )
    bits = np.random.MT19937(0)
    bits._legacy_seeding(seed & 0xFFFFFFFF)
    draws = bits.random_raw(max(n - 1, 0)).astype(np.uint64)
    z = (draws % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64) + np.arange(n - 1)
    r = np.arange(n, dtype=np.int64)
    # The swaps depend on each other, so they run one by one (lists are fastest for that).
    lst = r.tolist()
    for i, j in enumerate(z.tolist()):
        lst[i], lst[j] = lst[j], lst[i]
    return np.asarray(lst, dtype=np.int64)


class DistributedSampler(Sampler):
    """The indices of ``dataset`` for rank ``rank`` of ``num_replicas``: the whole index list
    (shuffled with seed ``seed + epoch`` when ``shuffle``) padded by repeating its start to a
    multiple of ``num_replicas`` (or cut to one, with ``drop_last``), then every
    ``num_replicas``-th index from position ``rank``. Call ``set_epoch`` before each epoch so
    that each gets a new order.

    ``num_replicas``/``rank`` default to the default process group's size and rank.
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            import chainrule.distributed as dist

            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = torch_randperm(n, self.seed + self.epoch).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size
        own = indices[self.rank : self.total_size : self.num_replicas]
        assert len(own) == self.num_samples
        return iter(own)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``seed + epoch`` for the next shuffle (call it at the start of each epoch)."""
        self.epoch = epoch
