"""utils.data: datasets, random_split, DataLoader and default_collate."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
import torch

import chainrule
from chainrule.utils.data import (
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)


def _ds(n=10):
    x = chainrule.arange(n * 2.0).reshape(n, 2)
    y = chainrule.arange(n)
    return TensorDataset(x, y)


def test_tensor_dataset():
    ds = _ds()
    assert len(ds) == 10
    x, y = ds[3]
    np.testing.assert_array_equal(x.numpy(), [6.0, 7.0])
    assert y.item() == 3
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(chainrule.zeros(3), chainrule.zeros(4))


def test_dataloader_sequential_batches_and_drop_last():
    ds = _ds()
    batches = list(DataLoader(ds, batch_size=4))
    assert [tuple(b[0].shape) for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert len(DataLoader(ds, batch_size=4)) == 3
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    assert [b[1].tolist() for b in DataLoader(ds, batch_size=4, drop_last=True)] == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
    ]
    assert batches[0][1].dtype == chainrule.int64


def test_dataloader_shuffle_generator():
    ds = _ds(20)

    def order(seed):
        g = chainrule.Generator().manual_seed(seed)
        dl = DataLoader(ds, batch_size=5, shuffle=True, generator=g)
        return [b[1].tolist() for b in dl], [b[1].tolist() for b in dl]

    e1, e2 = order(0)
    assert sorted(sum(e1, [])) == list(range(20))
    assert e1 != e2  # a new permutation each epoch
    assert order(0) == (e1, e2)  # reproducible from the seed
    assert order(1)[0] != e1


def test_dataloader_collate_fn_and_unbatched():
    ds = _ds(4)
    dl = DataLoader(ds, batch_size=2, collate_fn=lambda batch: len(batch))
    assert list(dl) == [2, 2]
    items = list(DataLoader(ds, batch_size=None))
    assert len(items) == 4 and items[1][1].item() == 1
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0, 1], shuffle=True)


def test_default_collate_matches_torch():
    Point = namedtuple("Point", ["x", "y"])

    def samples(m):
        return [
            {
                "a": m.tensor([1.0, 2.0]) * i,
                "b": i,
                "c": 0.5 * i,
                "d": (i, np.float32(i)),
                "s": f"s{i}",
                "p": Point(i, m.tensor(i)),
                "f": bool(i % 2),
                "n": np.array([i, i]),
            }
            for i in range(3)
        ]

    a = default_collate(samples(chainrule))
    b = torch.utils.data.default_collate(samples(torch))
    assert list(a) == list(b)
    for k in ("a", "b", "c", "f", "n"):
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy(), err_msg=k)
        assert repr(a[k].dtype).split(".")[-1] == repr(b[k].dtype).split(".")[-1], k
    assert a["s"] == b["s"]
    assert isinstance(a["p"], Point) and a["p"].x.tolist() == [0, 1, 2]
    assert isinstance(a["d"], list) and a["d"][0].tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        default_collate([[1, 2], [1]])


def test_random_split_lengths_and_fractions():
    ds = _ds(10)
    g = chainrule.Generator().manual_seed(0)
    parts = random_split(ds, [3, 7], generator=g)
    assert [len(p) for p in parts] == [3, 7]
    idx = sorted(parts[0].indices + parts[1].indices)
    assert idx == list(range(10))
    parts2 = random_split(ds, [3, 7], generator=chainrule.Generator().manual_seed(0))
    assert parts2[0].indices == parts[0].indices
    fr = random_split(range(11), [0.5, 0.3, 0.2], generator=g)
    tf = torch.utils.data.random_split(range(11), [0.5, 0.3, 0.2])
    assert [len(p) for p in fr] == [len(p) for p in tf]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(ds, [3, 3])


def test_subset_and_custom_dataset():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return i * i

    sub = Subset(Squares(), [4, 1])
    assert len(sub) == 2 and sub[0] == 16
    assert [t.tolist() for t in DataLoader(sub, batch_size=2)] == [[16, 1]]
    cat = Squares() + Squares()
    assert len(cat) == 10 and cat[7] == 4
