"""chainrule.multiprocessing against torch.multiprocessing: the standard module's names, the
sharing strategies, and spawn/start_processes with their results and failures."""

from __future__ import annotations

import multiprocessing
import sys
from typing import Any

import pytest

import chainrule.multiprocessing as cmp

tmp: Any = pytest.importorskip("torch.multiprocessing")


def _ok(i: int, q: object) -> None:
    q.put(i * 10)  # pyright: ignore[reportAttributeAccessIssue]


def _raises(i: int) -> None:
    if i == 1:
        raise ValueError("rank one fails")


def _exits(i: int) -> None:
    if i == 1:
        sys.exit(3)


def test_standard_names_and_sharing_strategies() -> None:
    assert cmp.Process is multiprocessing.Process
    assert cmp.get_context is multiprocessing.get_context
    assert cmp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert cmp.get_sharing_strategy() == tmp.get_sharing_strategy()
    with pytest.raises(AssertionError) as theirs:
        tmp.set_sharing_strategy("shm")
    with pytest.raises(AssertionError) as ours:
        cmp.set_sharing_strategy("shm")
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        cmp.nope  # noqa: B018


def test_start_processes_runs_fn_with_its_index() -> None:
    q = multiprocessing.get_context("fork").SimpleQueue()
    assert cmp.start_processes(_ok, (q,), nprocs=3, start_method="fork") is None
    assert sorted(q.get() for _ in range(3)) == [0, 10, 20]


@pytest.mark.parametrize("fn", [_raises, _exits])
def test_a_failing_process_raises_torchs_exception(fn: object) -> None:
    with pytest.raises((tmp.ProcessRaisedException, tmp.ProcessExitedException)) as theirs:
        tmp.start_processes(fn, nprocs=2, start_method="fork")  # pyright: ignore[reportArgumentType]
    with pytest.raises((cmp.ProcessRaisedException, cmp.ProcessExitedException)) as ours:
        cmp.start_processes(fn, nprocs=2, start_method="fork")  # pyright: ignore[reportArgumentType]
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert ours.value.error_index == theirs.value.error_index == 1
    if fn is _exits:
        assert str(ours.value) == str(theirs.value) == "process 1 terminated with exit code 3"
        assert isinstance(ours.value, cmp.ProcessExitedException) and ours.value.exit_code == 3
    else:
        head = "\n\n-- Process 1 terminated with the following error:\nTraceback"
        assert str(ours.value).startswith(head) and str(theirs.value).startswith(head)
        assert str(ours.value).endswith("ValueError: rank one fails\n")


def test_spawn_join_false_gives_a_context() -> None:
    ctx = cmp.start_processes(_raises, nprocs=1, join=False, start_method="fork")
    assert isinstance(ctx, cmp.ProcessContext) and len(ctx.pids()) == 1
    while not ctx.join():
        pass
