"""``dir(chainrule)`` lists the names loaded on first use too (tab completion, ``dir(torch)``
checks in programs), without loading them."""

from __future__ import annotations

import subprocess
import sys


def test_dir_lists_lazy_names_without_importing_them():
    code = (
        "import sys, chainrule; d = dir(chainrule); "
        "print(all(n in d for n in ('nn', 'fft', 'optim', 'linalg', 'uint1', 'complex32', "
        "'tensor', 'Tensor')), 'chainrule.nn' in sys.modules, d == sorted(d))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "False", "True"], out.stderr
