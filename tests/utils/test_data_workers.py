"""DataLoader with worker processes, IterableDataset, and the extra samplers and datasets,
checked against single-process loading and against PyTorch."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import chainrule as cr
from chainrule.utils.data import (
    ChainDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    StackDataset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    get_worker_info,
)

torch = pytest.importorskip("torch")

# 3 workers exceed a 2-CPU machine, where chainrule (as PyTorch) warns; that warning is tested
# in test_dataloader_worker_check.py and is machine-dependent here
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")


class Squares(Dataset):
    def __len__(self):
        return 11

    def __getitem__(self, i):
        return {"x": np.full(2, i, dtype=np.float32), "i": i, "name": f"s{i}"}


class Shards(IterableDataset):
    def __init__(self, n=10):
        self.n = n

    def __iter__(self):
        w = get_worker_info()
        return iter(range(self.n) if w is None else range(w.id, self.n, w.num_workers))

    def __len__(self):
        return self.n


class WhoAmI(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        w = get_worker_info()
        return [os.getpid(), -1 if w is None else w.id, int(cr.randint(0, 10**6, ()).item())]


class Fails(Dataset):
    def __init__(self, how):
        self.how = how

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            if self.how == "raise":
                raise ValueError("boom at index 2")
            if self.how == "exit":
                os._exit(3)
            time.sleep(5)
        return i


def _flat(batches):
    return [(b["x"].tolist(), b["i"].tolist(), b["name"]) for b in batches]


def test_workers_give_the_single_process_batches_in_order():
    ds = Squares()
    single = _flat(DataLoader(ds, batch_size=3))
    for w in (1, 2, 3):
        assert _flat(DataLoader(ds, batch_size=3, num_workers=w, prefetch_factor=1)) == single
    tds = TensorDataset(cr.arange(9.0).reshape(9, 1), cr.arange(9))
    got = [(a.tolist(), b.tolist()) for a, b in DataLoader(tds, batch_size=4, num_workers=2)]
    assert got == [(a.tolist(), b.tolist()) for a, b in DataLoader(tds, batch_size=4)]
    unbatched = list(DataLoader(tds, batch_size=None, num_workers=2))
    assert [b.item() for _, b in unbatched] == list(range(9))


def test_iterable_dataset_order_as_torch():
    for workers in (0, 1, 2):
        ours = [b.tolist() for b in DataLoader(Shards(), batch_size=3, num_workers=workers)]

        class TShards(torch.utils.data.IterableDataset):
            def __iter__(self):
                w = torch.utils.data.get_worker_info()
                return iter(range(10) if w is None else range(w.id, 10, w.num_workers))

        theirs = [
            b.tolist()
            for b in torch.utils.data.DataLoader(TShards(), batch_size=3, num_workers=workers)
        ]
        assert ours == theirs, workers
    assert [b.tolist() for b in DataLoader(Shards(7), batch_size=3, drop_last=True)] == [
        [0, 1, 2],
        [3, 4, 5],
    ]
    assert len(DataLoader(Shards(7), batch_size=3)) == 3


def test_worker_info_seeds_and_init_fn():
    def init(wid):
        info = get_worker_info()
        assert info is not None and info.id == wid and info.num_workers == 2
        assert isinstance(info.dataset, WhoAmI)

    rows = list(
        DataLoader(
            WhoAmI(),
            batch_size=None,
            num_workers=2,
            worker_init_fn=init,
            generator=cr.Generator().manual_seed(3),
        )
    )
    pids = {int(r[0]) for r in rows}
    assert len(pids) == 2 and os.getpid() not in pids
    assert sorted({int(r[1]) for r in rows}) == [0, 1]
    again = list(
        DataLoader(
            WhoAmI(), batch_size=None, num_workers=2, generator=cr.Generator().manual_seed(3)
        )
    )
    # Same base seed -> same per-worker random streams; the two workers' streams differ.
    assert [int(r[2]) for r in rows] == [int(r[2]) for r in again]
    assert int(rows[0][2]) != int(rows[1][2])
    assert get_worker_info() is None


def test_exception_in_worker_is_raised_with_its_traceback():
    with pytest.raises(ValueError) as info:
        list(DataLoader(Fails("raise"), batch_size=1, num_workers=2))
    msg = str(info.value)
    assert "Caught ValueError in DataLoader worker process 0" in msg
    assert "boom at index 2" in msg and "Traceback" in msg


def test_dead_worker_and_timeout_are_clear_errors():
    with pytest.raises(
        RuntimeError,
        match=r"DataLoader worker \(pid\(s\) \d+\) exited "
        "unexpectedly",
    ):
        list(DataLoader(Fails("exit"), batch_size=1, num_workers=2))
    t = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(DataLoader(Fails("sleep"), batch_size=1, num_workers=1, timeout=0.5))
    assert time.monotonic() - t < 4.5


def test_workers_end_with_the_epoch_unless_persistent():
    loader = DataLoader(Squares(), batch_size=4, num_workers=2)
    it = iter(loader)
    next(it)
    list(it)
    assert loader._workers is None
    keep = DataLoader(WhoAmI(), batch_size=None, num_workers=2, persistent_workers=True)
    pids1 = {int(r[0]) for r in keep}
    pids2 = {int(r[0]) for r in keep}
    assert pids1 == pids2 and len(pids1) == 2
    procs = keep._workers.procs
    keep._workers.shutdown()
    assert not any(p.is_alive() for p in procs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_workers": -1},
        {"timeout": -1},
        {"prefetch_factor": 2},
        {"persistent_workers": True},
    ],
)
def test_argument_errors_as_torch(kwargs):
    with pytest.raises(ValueError) as ours:
        DataLoader(Squares(), **kwargs)
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DataLoader(list(range(3)), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_iterable_dataset_argument_errors_as_torch():
    class T(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    for kw in ({"shuffle": True},):
        with pytest.raises(ValueError) as ours:
            DataLoader(Shards(), **kw)
        with pytest.raises(ValueError) as theirs:
            torch.utils.data.DataLoader(T(), **kw)
        assert str(ours.value) == str(theirs.value)


def test_random_sampler_with_replacement_is_lazy():
    s = RandomSampler(range(5), replacement=True, num_samples=10**10)
    it = iter(s)
    first = [next(it) for _ in range(100)]
    assert len(s) == 10**10 and all(0 <= i < 5 for i in first)


def test_weighted_and_subset_samplers():
    g = cr.Generator().manual_seed(0)
    draws = list(WeightedRandomSampler([0.1, 0.0, 0.9], 4000, generator=g))
    counts = np.bincount(draws, minlength=3) / 4000
    assert counts[1] == 0 and abs(counts[2] - 0.9) < 0.03
    assert sorted(WeightedRandomSampler([1, 1, 1], 3, replacement=False)) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        list(WeightedRandomSampler([1, 0, 0], 2, replacement=False))
    for bad in (0, 1.5):
        with pytest.raises(ValueError) as ours:
            WeightedRandomSampler([1.0], bad)
        with pytest.raises(ValueError) as theirs:
            torch.utils.data.WeightedRandomSampler([1.0], bad)
        assert str(ours.value) == str(theirs.value)
    assert sorted(SubsetRandomSampler([4, 7, 9])) == [4, 7, 9]


def test_chain_and_stack_datasets_as_torch():
    ours = list(ChainDataset([Shards(3), Shards(2)]))
    assert ours == [0, 1, 2, 0, 1] and list(Shards(2) + Shards(1)) == [0, 1, 0]
    st = StackDataset(a=[1, 2], b=["x", "y"])
    ref = torch.utils.data.StackDataset(a=[1, 2], b=["x", "y"])
    assert st[1] == ref[1] and len(st) == len(ref)
    assert StackDataset([1, 2], [3, 4])[0] == (1, 3)
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset([1], [1, 2])
