"""``import chainrule`` maps the torch-level topic modules' names without importing them."""

from __future__ import annotations

import importlib
import subprocess
import sys

import chainrule
from chainrule import _lazy_names


def test_lazy_names_match_the_modules_all() -> None:
    # chainrule/_lazy_names.py is generated (tools/lazy_names.py): stale when a module's
    # __all__ changed without regenerating it.
    for mod, names in _lazy_names.NAMES.items():
        assert tuple(importlib.import_module(mod).__all__) == names, mod


def test_every_listed_name_resolves_to_its_module() -> None:
    for mod, names in _lazy_names.NAMES.items():
        module = importlib.import_module(mod)
        for n in names:
            assert getattr(chainrule, n) is getattr(module, n), (mod, n)


def test_topic_modules_load_on_first_use() -> None:
    code = (
        "import sys, chainrule\n"
        "mods = [m for m in %r if m in sys.modules]\n"
        "assert not mods, mods\n"
        "chainrule.lobpcg\n"
        "assert 'chainrule._lobpcg' in sys.modules\n"
    ) % (list(_lazy_names.NAMES),)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
