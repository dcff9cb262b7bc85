"""Fail if any two modules of ``chainrule`` import each other, directly or through others.

    python tools/import_cycles.py

Builds the import graph with grimp (imports inside functions count; those under
``if TYPE_CHECKING:`` do not, as they never run), finds its strongly connected components
(Tarjan) and prints each cycle's modules. Exits 1 if there is any cycle, else 0.
"""

from __future__ import annotations

import itertools
import pathlib
import sys

import grimp

# This checkout's chainrule, not an installed one.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


def cycles(package: str = "chainrule") -> list[list[str]]:
    """The strongly connected components of more than one module, largest first."""
    g = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=True)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = itertools.count()

    def visit(v: str) -> None:
        index[v] = low[v] = next(counter)
        stack.append(v)
        on.add(v)
        for w in g.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for m in sorted(g.modules):
        if m not in index:
            visit(m)
    return sorted(out, key=len, reverse=True)


def main() -> int:
    import chainrule

    print(f"chainrule at {pathlib.Path(chainrule.__file__).parent}")
    found = cycles()
    for comp in found:
        print(f"cycle of {len(comp)} modules: {', '.join(comp)}")
    print(f"{len(found)} import cycle(s) in chainrule")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
