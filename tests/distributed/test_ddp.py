"""DistributedDataParallel and SyncBatchNorm on 2 and 4 ranks (jobs/ddp.py): the same
parameters as one process with the whole batch, identical across ranks, and the DDP
features (no_sync, unused parameters, bucket views, overlap, state dict)."""

from __future__ import annotations

import pytest

from tests.distributed._launch import launch, needs_mpi

pytestmark = needs_mpi

_EQUIVALENCE = [
    "OK mlp matches one process after 5 steps, parameters identical across ranks",
    "OK cnn_sync matches one process after 5 steps, parameters identical across ranks",
    "OK cnn matches one process after 5 steps, parameters identical across ranks",
]
_FEATURES = [
    "OK no_sync accumulates locally, the next backward averages the sum",
    "OK two forwards before one backward are reduced once",
    "OK find_unused_parameters: globally unused grads untouched, partly used averaged",
    "OK unused parameter without find_unused_parameters: PyTorch's error at the next forward",
    "OK gradient_as_bucket_view: grads are bucket views, same training",
    "OK bucket rebuild: ready order [[1, 0], [5, 4], [3, 2]], bucket 0 launched before",
    "OK static_graph: unused found once, first all-reduce delayed, rebuilt at the third",
    "OK state_dict keys carry the module. prefix",
]


def test_ddp_two_ranks_matches_one_process_and_features() -> None:
    r = launch("ddp.py", 2, "full", limit=120)
    assert r.returncode == 0, r.out[-4000:]
    for line in _EQUIVALENCE + _FEATURES + ["OK ddp job on 2 ranks done"]:
        assert line in r.out, (line, r.out[-4000:])


@pytest.mark.slow
def test_ddp_four_ranks_matches_one_process() -> None:
    r = launch("ddp.py", 4, limit=120)
    assert r.returncode == 0, r.out[-4000:]
    for line in _EQUIVALENCE + ["OK ddp job on 4 ranks done"]:
        assert line in r.out, (line, r.out[-4000:])


@pytest.mark.parametrize("nproc", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_srgan_shared_graph_step_matches_one_process(nproc: int) -> None:
    r = launch("srgan_step.py", nproc, limit=150)
    assert r.returncode == 0, r.out[-4000:]
    assert f"OK srgan step on {nproc} ranks matches one process" in r.out, r.out[-4000:]
