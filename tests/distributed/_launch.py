"""Run a job of tests/distributed/jobs/ through the launcher, under a wall-clock limit, and
kill whatever is left of it afterwards (its own process group)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

JOBS = Path(__file__).parent / "jobs"
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    returncode: int
    out: str
    seconds: float


def have_mpi() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return os.path.exists(os.path.join(os.path.dirname(sys.executable), "mpirun")) or bool(
        __import__("shutil").which("mpirun")
    )


needs_mpi = pytest.mark.skipif(not have_mpi(), reason="needs mpi4py and mpirun (.[mpi] extra)")


def launch(
    job: str, nproc: int, *args: str, limit: float = 90.0, launcher_args: tuple[str, ...] = ()
) -> Result:
    """Run ``jobs/<job>`` on ``nproc`` ranks; returns its exit status, joined output and
    duration. Past ``limit`` seconds the whole job is killed and the test fails."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[v] = "1"
    cmd = [
        sys.executable,
        "-m",
        "chainrule.distributed.run",
        "--nproc-per-node",
        str(nproc),
        *launcher_args,
        str(JOBS / job),
        *args,
    ]
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{job} on {nproc} ranks did not finish in {limit} s:\n{out[-4000:]}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return Result(proc.returncode, out, time.monotonic() - t0)
