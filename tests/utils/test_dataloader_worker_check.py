"""DataLoader.check_worker_number_rationality against PyTorch's: the warning's text, and that it
fires at construction and again when iterating with workers."""

import os
import warnings

import pytest
import torch

from chainrule.utils import data as cdata


class _DS:
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return i


def _caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message) for x in w if "worker processes in total" in str(x.message)]


@pytest.fixture
def one_cpu(monkeypatch):
    if hasattr(os, "sched_getaffinity"):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    else:
        monkeypatch.setattr(os, "cpu_count", lambda: 1)


@pytest.mark.parametrize("workers", [2, 5])
def test_warning_text_at_construction(one_cpu, workers):
    got = _caught(lambda: cdata.DataLoader(_DS(), num_workers=workers))
    want = _caught(lambda: torch.utils.data.DataLoader(_DS(), num_workers=workers))
    assert len(want) == 1
    assert got == want


def test_direct_call_and_iter(one_cpu):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = cdata.DataLoader(_DS(), num_workers=2)
        t = torch.utils.data.DataLoader(_DS(), num_workers=2)
    assert _caught(c.check_worker_number_rationality) == _caught(t.check_worker_number_rationality)
    # a new multiprocessing iterator checks again (iter() alone: no worker is started here)
    assert len(_caught(lambda: iter(c))) == 1


def test_no_warning_within_cpus(monkeypatch):
    if hasattr(os, "sched_getaffinity"):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    else:
        monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert _caught(lambda: cdata.DataLoader(_DS(), num_workers=8)) == []
    assert _caught(lambda: torch.utils.data.DataLoader(_DS(), num_workers=8)) == []
    assert _caught(lambda: cdata.DataLoader(_DS(), num_workers=0)) == []


def test_unknown_cpu_count(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    got = _caught(lambda: cdata.DataLoader(_DS(), num_workers=1))
    want = _caught(lambda: torch.utils.data.DataLoader(_DS(), num_workers=1))
    assert len(want) == 1 and got == want
