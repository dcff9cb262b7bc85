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


ARGS = ["--patch", "16", "--batch", "2", "--channels", "4", "--blocks", "1", "--eval-size", "32",
        "--ckpt-every", "2"]


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

    res2 = srgan.main(ARGS + ["--pretrain-steps", "2", "--steps", "4", "--out", str(out),
                              "--resume"])
    text = capsys.readouterr().out
    assert "resumed from" in text and "2 adversarial steps done" in text
    state = chainrule.load(str(out / "checkpoint.safetensors"))
    assert state["done_adv"] == 4 and len(state["history"]["d_loss"]) == 4
    assert math.isfinite(res2["mean"]["sr_psnr"])
