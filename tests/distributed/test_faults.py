"""Faults end the job instead of hanging it: an exception on a rank (its traceback shown), a
rank that skips a collective (the timeout error names it), a killed rank."""

from __future__ import annotations

import re
import time

import pytest

from tests.distributed._launch import launch, needs_mpi

pytestmark = needs_mpi


def _fault_time(out: str) -> float:
    m = re.search(r"FAULT_AT (\d+\.\d+)", out)
    assert m, out[-3000:]
    return float(m.group(1))


def test_exception_on_one_rank_aborts_the_job_with_its_traceback() -> None:
    r = launch("faults.py", 3, "raise", limit=60)
    end = time.time()
    assert r.returncode != 0
    assert "ValueError: boom on rank 2" in r.out
    assert 'faults.py", line' in r.out  # the rank's own traceback
    assert end - _fault_time(r.out) < 10, r.out[-3000:]


def test_a_skipped_collective_times_out_naming_the_missing_rank() -> None:
    r = launch("faults.py", 2, "skip", limit=60)
    end = time.time()
    assert r.returncode != 0
    assert (
        "DistTimeoutError: all_reduce (collective #2 in the default process group) timed "
        "out after 2 s on rank 0; ranks that did not arrive: [1] (rank 1 did not answer" in r.out
    ), r.out[-3000:]
    assert end - _fault_time(r.out) < 15


@pytest.mark.slow
def test_a_mismatched_collective_names_what_the_other_rank_called() -> None:
    r = launch("faults.py", 3, "mismatch", limit=60)
    assert r.returncode != 0
    assert "ranks that did not arrive: [2]" in r.out, r.out[-3000:]


def test_a_killed_rank_ends_the_job() -> None:
    r = launch("faults.py", 2, "kill", limit=60)
    end = time.time()
    assert r.returncode != 0
    assert end - _fault_time(r.out) < 10, r.out[-3000:]
