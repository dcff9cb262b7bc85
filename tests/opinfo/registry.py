"""Collects the OpInfo rows from every table file in tests/opinfo/."""

from __future__ import annotations

import importlib
import pkgutil

from tests.opinfo.core import OpInfo

# Registered ops exercised through another row rather than a row of their own.
INDIRECT: dict[str, str] = {
    "to_device": "needs a GPU backend: tests/cuda/test_modules_on_cuda.py (gradcheck and "
    "gradgradcheck through cuda and back), and every row of tests/ops/test_opinfo_cuda.py",
    # identity forwards carrying implicit reparameterization gradients (not finite differences)
    "gamma_reparam": "tests/distributions/test_sampling.py (against SciPy and PyTorch)",
    "dirichlet_reparam": "tests/distributions/test_sampling.py (against PyTorch)",
}


def all_rows() -> list[OpInfo]:
    import tests.opinfo as pkg

    rows: list[OpInfo] = []
    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name in ("core", "registry") or mod.name.startswith("test_"):
            continue
        m = importlib.import_module(f"tests.opinfo.{mod.name}")
        rows.extend(getattr(m, "OPS", []))
    return rows
