"""Time one workload with one library in this process; print a JSON line.

Run by bench/run.py as: python _worker.py LIB WORKLOAD REPEATS
"""

from __future__ import annotations

import json
import statistics
import sys
import time


def main() -> None:
    lib, name, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
    t0 = time.perf_counter()
    if lib == "torch":
        import torch as m

        m.set_num_threads(int(__import__("os").environ.get("OMP_NUM_THREADS", "1")))
    else:
        import chainrule as m
    import_s = time.perf_counter() - t0
    from workloads import WORKLOADS

    factory, div, unit = WORKLOADS[name]
    step, check = factory(m)
    for _ in range(3):
        step()
    times = []
    budget = time.perf_counter() + 10.0
    for _ in range(repeats):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
        if time.perf_counter() > budget:
            break
    scale = 1e6 if unit.startswith("us") else 1e3 if unit.startswith("ms") else 1.0
    vals = sorted(x * scale / div for x in times)
    q1, q3 = vals[len(vals) // 4], vals[(3 * len(vals)) // 4]
    print(json.dumps({
        "lib": lib, "workload": name, "unit": unit, "median": statistics.median(vals),
        "q1": q1, "q3": q3, "n": len(vals), "check": check(), "import_s": import_s,
    }))


if __name__ == "__main__":
    main()
