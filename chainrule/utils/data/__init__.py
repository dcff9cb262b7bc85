"""``chainrule.utils.data``: datasets, samplers and ``DataLoader``."""

from __future__ import annotations

from chainrule.utils.data._worker import WorkerInfo, get_worker_info
from chainrule.utils.data.dataloader import DataLoader, default_collate, default_convert
from chainrule.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from chainrule.utils.data.distributed import DistributedSampler
from chainrule.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "DataLoader",
    "default_collate",
    "default_convert",
    "Dataset",
    "TensorDataset",
    "Subset",
    "ConcatDataset",
    "random_split",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "BatchSampler",
    "IterableDataset",
    "ChainDataset",
    "StackDataset",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "get_worker_info",
    "WorkerInfo",
]
__all__ += ["DistributedSampler"]
