"""Run every example program under examples/seeds/ in turn (what `make demo` does)."""

from __future__ import annotations

import pathlib
import runpy
import sys

HERE = pathlib.Path(__file__).resolve().parent


def main() -> int:
    progs = sorted((HERE / "seeds").glob("*.py"))
    for p in progs:
        print(f"=== examples/seeds/{p.name} ===")
        runpy.run_path(str(p), run_name="__main__")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
