"""backends/_malloc.py: freed large arrays keep their memory in the process, so the next step
does not fault its pages in again (glibc only)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_GLIBC = bool(getattr(os, "confstr", lambda _: "")("CS_GNU_LIBC_VERSION") or "")

# Ten steps of the benchmark's CNN step (batch 32 of 28x28, two convs, SGD) after three
# warm-up steps: print the minor page faults of the ten and whether chainrule tuned malloc.
_PROBE = """
import resource, sys
sys.path.insert(0, sys.argv[1])
import chainrule
from chainrule.backends import _malloc
from workloads import WORKLOADS
step, _ = WORKLOADS["cnn_step"].make(chainrule)
for _ in range(3):
    step()
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0, _malloc.state["tuned"])
"""
_BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")


def _probe(**env: str) -> tuple[int, bool]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    e.pop("GLIBC_TUNABLES", None)
    e.pop("CHAINRULE_MALLOC_TUNING", None)
    e.update(env)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, _BENCH], env=e, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    faults, tuned = out.stdout.split()
    return int(faults), tuned == "True"


@pytest.mark.skipif(not _GLIBC, reason="mallopt's thresholds are glibc's")
def test_freed_arrays_do_not_fault_again() -> None:
    faults, tuned = _probe()
    assert tuned
    assert faults < 200  # measured 0; glibc's defaults: about 1,000 per step


@pytest.mark.skipif(not _GLIBC, reason="mallopt's thresholds are glibc's")
def test_opt_out_and_user_settings_are_respected() -> None:
    faults, tuned = _probe(CHAINRULE_MALLOC_TUNING="0")
    assert not tuned
    assert faults > 10 * 300  # glibc's defaults: about 1,000 per step (measured 2026-12-03)
    assert not _probe(MALLOC_MMAP_THRESHOLD_="131072")[1]
    assert not _probe(GLIBC_TUNABLES="glibc.malloc.trim_threshold=131072")[1]
