"""Measure backward through one long chain of ops: time per op should stay flat as the chain
grows (the engine is iterative and linear). Run:
``.venv/bin/python bench/chain_length.py [--no-gc] [lengths...]`` (chainrule only; the deep_*
workloads of bench/run.py compare with PyTorch).

With the cycle collector on, Python's own full collections (which scan every live node) add a
per-op cost that grows with the graph's size; ``--no-gc`` shows the engine alone."""

from __future__ import annotations

import sys
import time

import chainrule as cr


def measure(n: int) -> tuple[float, float]:
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    t0 = time.perf_counter()
    y = x
    for _ in range(n):
        y = y * 1.0000001
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    del y
    return t1 - t0, t2 - t1


if __name__ == "__main__":
    import gc

    if "--no-gc" in sys.argv:  # isolates the engine from the cycle collector's full passes
        sys.argv.remove("--no-gc")
        gc.disable()
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000, 1_000_000]
    for n in sizes:
        f, b = measure(n)
        print(
            f"{n:>9} ops: forward {f:7.2f} s ({f / n * 1e6:5.2f} us/op), "
            f"backward {b:7.2f} s ({b / n * 1e6:5.2f} us/op)"
        )
