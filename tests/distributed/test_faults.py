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
    # Whichever rank times out first aborts the job: ranks 0 and 1 name rank 2, which called
    # broadcast; rank 2 names them.
    assert (
        "ranks that did not arrive: [2] (rank 2 called broadcast as collective #2 instead)" in r.out
        or "ranks that did not arrive: [0, 1]" in r.out
    ), r.out[-3000:]


def test_a_killed_rank_ends_the_job() -> None:
    r = launch("faults.py", 2, "kill", limit=60)
    end = time.time()
    assert r.returncode != 0
    assert end - _fault_time(r.out) < 10, r.out[-3000:]


def _timed_out(mode: str, nproc: int, message: str, within: float) -> None:
    r = launch("faults.py", nproc, mode, limit=60)
    end = time.time()
    assert r.returncode != 0
    assert message in r.out, r.out[-3000:]
    assert end - _fault_time(r.out) < within, r.out[-3000:]


def test_init_process_group_times_out_for_a_rank_that_never_calls_it() -> None:
    _timed_out(
        "init",
        2,
        "DistTimeoutError: init_process_group timed out after 1 s on rank 0: not every one of "
        "the 2 processes that MPI started has called it",
        12,
    )


def test_new_group_honours_its_timeout_and_names_the_missing_rank() -> None:
    _timed_out(
        "newgroup",
        2,
        "DistTimeoutError: new_group (collective #1 in the default process group) timed out "
        "after 1 s on rank 0; ranks that did not arrive: [1]",
        12,
    )


def test_a_sub_group_collective_times_out_after_the_groups_timeout() -> None:
    _timed_out(
        "subgroup",
        3,
        "DistTimeoutError: all_reduce (collective #1 in process group 1) timed out after 1 s "
        "on rank 1; ranks that did not arrive: [2]",
        12,
    )


def test_monitored_barrier_names_every_rank_that_did_not_arrive() -> None:
    _timed_out(
        "monitored",
        3,
        "DistError: [Rank 0]: Ranks 1, 2 failed to pass monitoredBarrier in 1000 ms",
        12,
    )
