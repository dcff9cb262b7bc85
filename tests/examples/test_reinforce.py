"""Smoke test of the REINFORCE example: a few CartPole episodes run, the policy takes gradient
steps, and the learning curve PNG is written."""

from __future__ import annotations

import pathlib
import sys

import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("matplotlib")

REINFORCE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "reinforce"


@pytest.fixture(scope="module")
def reinforce():
    sys.path.insert(0, str(REINFORCE))
    import reinforce as mod

    yield mod
    sys.path.remove(str(REINFORCE))


def test_reinforce_runs_and_writes_curve(reinforce, tmp_path, capsys):
    res = reinforce.main(["--episodes", "6", "--log-every", "3", "--out", str(tmp_path)])
    assert len(res["returns"]) == 6 and all(r >= 8 for r in res["returns"])
    assert res["solved_at"] is None
    assert res["png"].stat().st_size > 0
    assert "average of last 100" in capsys.readouterr().out


def test_returns_are_discounted_and_normalized(reinforce):
    import numpy as np

    g = reinforce.discounted_returns([1.0, 1.0, 1.0], 0.5)
    raw = np.array([1.75, 1.5, 1.0])
    np.testing.assert_allclose(g, (raw - raw.mean()) / raw.std(), rtol=1e-5)


def test_reinforce_compiled_matches_eager(reinforce, tmp_path):
    args = ["--episodes", "5", "--log-every", "5"]
    eager = reinforce.main(args + ["--out", str(tmp_path / "e")])["returns"]
    compiled = reinforce.main(args + ["--out", str(tmp_path / "c"), "--compile"])["returns"]
    assert compiled == eager
