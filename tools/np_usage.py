"""Count the NumPy calls in chainrule's op and layer code that make or read host arrays.

    python tools/np_usage.py [PATH ...]

For each file under the given paths (default: chainrule/ops, chainrule/nn, chainrule/autograd,
chainrule/_tensor.py), prints the lines that mention ``np.`` and, of those, the lines whose
``np.`` call makes or reads a host array (``asarray``, ``array``, ``zeros``/``ones``/``empty``/
``full``/``arange``/``eye``/..., ``ufunc.at``, ``random``, ``lib.``, ``copyto``, ...): on a
CUDA tensor such a call either fails (CuPy refuses implicit host conversion) or moves data to
the host. Dtype names, ``np.inf`` and ufuncs applied to device arrays (which dispatch to CuPy)
are harmless and counted only in the first figure. docs/gpu.md keeps the table.
"""

from __future__ import annotations

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT = ["chainrule/ops", "chainrule/nn", "chainrule/autograd", "chainrule/_tensor.py"]
HOST = re.compile(
    r"np\.(asarray|array|ascontiguousarray|asfortranarray|zeros|ones|empty|full|arange|eye|"
    r"identity|linspace|logspace|tri|indices|meshgrid|zeros_like|ones_like|empty_like|"
    r"full_like|concatenate|stack|frombuffer|fromiter|copyto|random|lib\.|"
    r"(add|multiply|maximum|minimum|subtract)\.at)\b"
)


def count(path: pathlib.Path) -> tuple[int, int]:
    lines = [ln for ln in path.read_text().splitlines() if "np." in ln]
    return len(lines), sum(1 for ln in lines if HOST.search(ln))


def main(argv: list[str]) -> None:
    files: list[pathlib.Path] = []
    for p in argv or DEFAULT:
        q = ROOT / p
        files.extend(sorted(q.rglob("*.py")) if q.is_dir() else [q])
    rows = [(f.relative_to(ROOT / "chainrule"), *count(f)) for f in files]
    rows = [r for r in rows if r[1]]
    rows.sort(key=lambda r: (-r[2], -r[1], str(r[0])))
    total = [0, 0]
    for name, all_, host in rows:
        total[0] += all_
        total[1] += host
        print(f"{host:4d} {all_:4d}  {name}")
    print(f"{total[1]:4d} {total[0]:4d}  total ({len(rows)} files)")


if __name__ == "__main__":
    main(sys.argv[1:])
