"""Smoke test of the SRGAN example: a few steps on tiny patches; finite losses, resumable
checkpoints, PNG panels and the loss plot written."""

from __future__ import annotations

import math
import pathlib
import sys

import pytest

pytest.importorskip("skimage")
pytest.importorskip("matplotlib")
pytest.importorskip("tqdm")

SRGAN = pathlib.Path(__file__).resolve().parents[2] / "examples" / "srgan"


@pytest.fixture(scope="module")
def srgan():
    sys.path.insert(0, str(SRGAN))
    import srgan as mod

    yield mod
    sys.path.remove(str(SRGAN))


ARGS = [
    "--patch",
    "16",
    "--batch",
    "2",
    "--channels",
    "4",
    "--blocks",
    "1",
    "--eval-size",
    "32",
    "--ckpt-every",
    "2",
]


def test_srgan_runs_resumes_and_writes_outputs(srgan, tmp_path, capsys):
    out = tmp_path / "run"
    res = srgan.main(ARGS + ["--pretrain-steps", "2", "--steps", "2", "--out", str(out)])
    for r in res["images"]:
        assert all(math.isfinite(r[k]) for k in r if k != "name")
    for name in ("coffee", "camera", "coins"):
        assert (out / f"{name}.png").stat().st_size > 0
    assert (out / "losses.png").stat().st_size > 0
    assert (out / "checkpoint.safetensors").exists()

    import chainrule

    state = chainrule.load(str(out / "checkpoint.safetensors"))
    assert state["done_pre"] == 2 and state["done_adv"] == 2
    assert all(math.isfinite(v) for v in state["history"]["d_loss"] + state["history"]["g_loss"])

    res2 = srgan.main(
        ARGS + ["--pretrain-steps", "2", "--steps", "4", "--out", str(out), "--resume"]
    )
    text = capsys.readouterr().out
    assert "resumed from" in text and "2 adversarial steps done" in text
    state = chainrule.load(str(out / "checkpoint.safetensors"))
    assert state["done_adv"] == 4 and len(state["history"]["d_loss"]) == 4
    assert math.isfinite(res2["mean"]["sr_psnr"])


@pytest.mark.slow
def test_srgan_data_parallel_two_processes(tmp_path):
    """--nproc 2 relaunches the demo through chainrule.distributed.run; rank 0 writes the
    outputs."""
    import os
    import subprocess

    pytest.importorskip("mpi4py")
    out = tmp_path / "dp"
    root = SRGAN.parents[1]
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1")
    r = subprocess.run(
        [
            sys.executable,
            str(SRGAN / "srgan.py"),
            *ARGS,
            "--batch",
            "4",
            "--pretrain-steps",
            "2",
            "--steps",
            "2",
            "--nproc",
            "2",
            "--out",
            str(out),
        ],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "on 2 process(es)" in r.stdout
    assert (out / "checkpoint.safetensors").exists() and (out / "losses.png").exists()
