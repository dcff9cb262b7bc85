"""Smoke test of the VAE example: a couple of epochs on the bundled digits; the ELBO is finite
and improves, and the PNG is written."""

from __future__ import annotations

import math
import pathlib
import sys

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

VAE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "vae"


@pytest.fixture(scope="module")
def vae():
    sys.path.insert(0, str(VAE))
    import vae as mod

    yield mod
    sys.path.remove(str(VAE))


def test_vae_trains_and_writes_png(vae, tmp_path, capsys):
    res = vae.main(["--epochs", "2", "--out", str(tmp_path)])
    h = res["history"]
    assert all(math.isfinite(r["test_elbo"]) for r in h)
    # an untrained decoder scores about 64 log(1/2) = -44.4 nats per digit
    assert h[-1]["test_elbo"] > h[0]["test_elbo"] and h[-1]["test_elbo"] > -40
    assert res["png"].stat().st_size > 0
    assert "held-out ELBO" in capsys.readouterr().out


def test_vae_compiled_matches_eager(vae, tmp_path):
    eager = vae.main(["--epochs", "3", "--out", str(tmp_path / "e")])["history"]
    compiled = vae.main(["--epochs", "3", "--out", str(tmp_path / "c"), "--compile"])["history"]
    assert compiled == eager  # the same floats: replays are bit-identical
