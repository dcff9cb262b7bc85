"""``import chainrule`` leaves the cold parts unloaded (issue 13; docs/architecture-notes.md,
"Import time"). The set of modules is checked, never the time: speed is measured, not asserted.
"""

from __future__ import annotations

import subprocess
import sys

from chainrule import _lazy_names

# Modules that load on first use: third-party libraries (SciPy, numpy.random, ml_dtypes), the
# test framework, and chainrule's sub-namespaces and cold modules that `import chainrule` maps
# without importing (`_LAZY` in chainrule/__init__.py, `_dispatch.upper`, the topic modules of
# chainrule/_lazy_names.py).
DEFERRED = (
    "scipy",
    "numpy.random",
    "ml_dtypes",
    "unittest",
    "chainrule.nn",
    "chainrule.linalg",
    "chainrule.special",
    "chainrule.fft",
    "chainrule.sparse",
    "chainrule.optim",
    "chainrule.distributions",
    "chainrule.distributed",
    "chainrule.func",
    "chainrule.serialization",
    "chainrule.testing",
    "chainrule.viz",
    "chainrule._compile",
    "chainrule._linalg_legacy",
    "chainrule._layout",
    *_lazy_names.NAMES,
)


def _modules_after(code: str) -> set[str]:
    script = code + "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))\n"
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    return set(run.stdout.split())


def test_import_chainrule_leaves_the_deferred_modules_unloaded() -> None:
    mods = _modules_after("import chainrule")
    assert "chainrule.ops" in mods and "numpy" in mods
    assert sorted(m for m in DEFERRED if m in mods) == []


def test_deferred_modules_load_on_first_use() -> None:
    # The list is not vacuous: each sub-namespace does load when its attribute is read.
    mods = _modules_after(
        "import chainrule\nchainrule.nn, chainrule.linalg, chainrule.fft, chainrule.optim"
    )
    assert {"chainrule.nn", "chainrule.linalg", "chainrule.fft", "chainrule.optim"} <= mods
