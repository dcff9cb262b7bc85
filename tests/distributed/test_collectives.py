"""Every collective against a NumPy reference on 2 and 4 ranks (jobs/collectives.py), plus
the single-process API (world of one, no launcher)."""

from __future__ import annotations

import re

import pytest

from tests.distributed._launch import launch, needs_mpi

pytestmark = needs_mpi


@pytest.mark.parametrize("nproc", [2, 4])
def test_collectives_match_numpy(nproc: int) -> None:
    r = launch("collectives.py", nproc, *(["quick"] if nproc == 4 else []))
    assert r.returncode == 0, r.out[-4000:]
    counts = re.findall(r"rank (\d+)/(\d+): (\d+) checks passed", r.out)
    assert sorted(int(c[0]) for c in counts) == list(range(nproc)), r.out[-4000:]
    # new_group (sorted ranks, timeout, backend, use_local_synchronization, errors) and every
    # kind of collective on a sub-group, monitored_barrier included.
    assert r.out.count(f"/{nproc}: subgroups done") == nproc, r.out[-4000:]
    # Every dtype x op x size, whole and split into 3-element messages.
    assert all(int(c[2]) > (1000 if nproc == 2 else 300) for c in counts), counts
