"""The parts that need no launcher: a world of one (a plain ``python`` subprocess, so that
MPI never starts inside the test process), DistributedSampler against PyTorch's, the
launcher's command line, and a torch-style script run by the launcher with --torch."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from chainrule.utils.data import DistributedSampler
from chainrule.utils.data.distributed import torch_randperm
from tests.distributed._launch import JOBS, ROOT, launch, needs_mpi

torch = pytest.importorskip("torch")


@needs_mpi
def test_world_of_one_without_launcher() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    env.pop("WORLD_SIZE", None)
    env.pop("RANK", None)
    r = subprocess.run(
        [sys.executable, str(JOBS / "single.py")],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    for line in (
        "OK world-size mismatch",
        "OK collectives on a world of one",
        "OK SyncBatchNorm on one rank is BatchNorm",
        "OK DDP on one rank",
        "OK single done",
    ):
        assert line in r.stdout, r.stdout + r.stderr


@needs_mpi
def test_launcher_runs_a_torch_script_with_torchrun_variables() -> None:
    r = launch("torch_env.py", 2, launcher_args=("--torch",), limit=60)
    assert r.returncode == 0, r.out[-3000:]
    assert "OK rank 0 of 2: 24.0" in r.out and "OK rank 1 of 2: 24.0" in r.out, r.out[-3000:]


@needs_mpi
def test_launcher_command_line() -> None:
    from chainrule.distributed.run import build_command

    cmd, env = build_command(["--nproc-per-node", "2", "--hosts", "a,b", "train.py", "--lr", "1"])
    assert cmd[1:3] == ["-n", "4"]
    assert cmd[-8:] == [
        sys.executable,
        "-m",
        "mpi4py",
        "-m",
        "chainrule.distributed._worker",
        "train.py",
        "--lr",
        "1",
    ]
    if "--oversubscribe" in cmd:  # Open MPI
        assert cmd[cmd.index("--host") + 1] == "a:2,b:2"
        assert "PYTHONPATH" in [cmd[i + 1] for i, c in enumerate(cmd) if c == "-x"]
        if os.geteuid() == 0:
            assert env["OMPI_ALLOW_RUN_AS_ROOT"] == "1"
    with pytest.raises(SystemExit, match="--node-rank 0"):
        build_command(["--node-rank", "1", "train.py"])
    with pytest.raises(SystemExit, match="does not match"):
        build_command(["--nnodes", "3", "--hosts", "a,b", "train.py"])


@needs_mpi
def test_launcher_sets_torchruns_master_addr_and_port() -> None:
    # torchrun scripts (pytorch/examples distributed/ddp) read MASTER_ADDR and MASTER_PORT.
    from chainrule.distributed.run import build_command

    _, env = build_command(["--nproc-per-node", "2", "train.py"])
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", "29500")
    _, env = build_command(["--hosts", "a,b", "train.py"])
    assert env["MASTER_ADDR"] == "a"
    cmd, env = build_command(["--master_addr", "h0", "--master-port", "1234", "train.py"])
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("h0", "1234")
    if "--oversubscribe" in cmd:  # Open MPI: exported to every rank
        assert {"MASTER_ADDR", "MASTER_PORT"} <= {
            cmd[i + 1] for i, c in enumerate(cmd) if c == "-x"
        }


@pytest.mark.parametrize("n", [0, 1, 2, 10, 97, 1000])
@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 + 5])
def test_randperm_is_torchs(n: int, seed: int) -> None:
    g = torch.Generator()
    g.manual_seed(seed)
    assert torch_randperm(n, seed).tolist() == torch.randperm(n, generator=g).tolist()


@pytest.mark.parametrize("n", [1, 7, 10, 12, 13])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("drop_last", [True, False])
def test_distributed_sampler_matches_torch(
    n: int, replicas: int, shuffle: bool, drop_last: bool
) -> None:
    from torch.utils.data import DistributedSampler as TorchSampler

    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle, seed=3, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle, seed=3, drop_last=drop_last)
        for epoch in (0, 1, 5):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs), (rank, epoch)
            assert len(ours) == len(theirs)


def test_distributed_sampler_errors() -> None:
    with pytest.raises(
        ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"
    ):
        DistributedSampler(range(10), num_replicas=3, rank=3)


@needs_mpi
def test_buckets_and_static_graph_match_torch_in_a_world_of_one() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    env.pop("WORLD_SIZE", None)
    env.pop("RANK", None)
    r = subprocess.run(
        [sys.executable, str(JOBS / "buckets_vs_torch.py")],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("OK buckets as torch") == 14, r.stdout + r.stderr
    assert r.stdout.count("OK static_graph launches as torch") == 4, r.stdout + r.stderr
    assert "OK buckets as torch: mlp {'bucket_cap_mb_list': [0.0001]}: 5 4, 3 2, 1 0" in r.stdout
    assert "OK buckets as torch: swap {'bucket_cap_mb': 0.0002}: 1 0 5 4, 3 2" in r.stdout
    for line in (
        "OK static_graph: a parameter unused in the first iteration may not be used later",
        "OK _set_static_graph warns as torch",
    ):
        assert line in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("dev", ["cpu", "cpu:0"])
def test_default_backend_for_device_matches_torch(dev: str) -> None:
    import torch.distributed as tdist

    import chainrule
    import chainrule.distributed as dist

    want = tdist.get_default_backend_for_device(dev)
    assert dist.get_default_backend_for_device(dev) == want == "gloo"
    assert dist.get_default_backend_for_device(chainrule.device(dev)) == want
    # CUDA: PyTorch's "nccl" is MPI here, a name init_process_group accepts.
    assert dist.get_default_backend_for_device("cuda:1") == "mpi"
    dist.Backend(dist.get_default_backend_for_device("cuda"))


def test_default_backend_for_device_errors_match_torch() -> None:
    import torch.distributed as tdist

    import chainrule.distributed as dist

    # pytorch/examples distributed/ddp passes torch.accelerator.current_accelerator(), which is
    # None on a machine without an accelerator.
    with pytest.raises(TypeError) as theirs:
        tdist.get_default_backend_for_device(None)
    with pytest.raises(TypeError) as ours:
        dist.get_default_backend_for_device(None)
    assert str(ours.value) == str(theirs.value)
