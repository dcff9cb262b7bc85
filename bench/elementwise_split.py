"""Split against serial for the pool-split elementwise kernels (backends/_chunked.py): forward +
backward of BatchNorm (training), PReLU and LeakyReLU at the SRGAN step's shapes, at 2 threads,
best wall time and best process CPU time of N calls, the threshold set so that every call
splits (``MIN_ELEMENTS = 0``) or none does. Run it on a quiet machine to choose
``_chunked.MIN_ELEMENTS``:

    PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/elementwise_split.py [N]
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable

import numpy as np

import chainrule as C
from chainrule.backends import _chunked, _threads


def best(f: Callable[[], Any], clock: Callable[[], float], n: int) -> float:
    b = float("inf")
    for _ in range(n):
        t = clock()
        f()
        b = min(b, clock() - t)
    return b * 1e6


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    _threads.set_threads(2)
    rng = np.random.default_rng(0)
    F = C.nn.functional
    print("shape, kernel: wall us serial / split, CPU us serial / split")
    for shape in [(8, 32, 16, 16), (8, 64, 16, 16), (8, 64, 8, 8), (8, 32, 32, 32)]:
        c = shape[1]
        x = C.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        g = C.tensor(rng.standard_normal(shape).astype(np.float32))
        w, b = C.ones(c, requires_grad=True), C.zeros(c, requires_grad=True)
        rm, rv = C.zeros(c), C.ones(c)
        a = C.tensor(np.array([0.25], np.float32), requires_grad=True)
        kernels = {
            "batch_norm": lambda: F.batch_norm(x, rm, rv, w, b, training=True).backward(g),
            "prelu": lambda: F.prelu(x, a).backward(g),
            "leaky_relu": lambda: F.leaky_relu(x, 0.2).backward(g),
        }
        for name, f in kernels.items():
            row = []
            for clock in (time.perf_counter, time.process_time):
                for threshold in (1 << 62, 0):
                    _chunked.MIN_ELEMENTS = threshold
                    row.append(best(f, clock, n))
            print(f"{shape} {name}: {row[0]:.0f} / {row[1]:.0f}, {row[2]:.0f} / {row[3]:.0f}")


if __name__ == "__main__":
    main()
