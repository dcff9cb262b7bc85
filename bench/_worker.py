"""Time one workload with one library in this process; print a JSON line.

Run by bench/run.py as: python _worker.py LIB WORKLOAD REPEATS
"""

from __future__ import annotations

import json
import resource
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

    w = WORKLOADS[name]
    div, unit = w.divisor, w.unit
    step, check = w.make(m)
    checked = check()
    for _ in range(w.warmup):
        step()
    times = []
    cpu = []  # process CPU time: what a step costs when other jobs share the cores
    budget = time.perf_counter() + 10.0
    for _ in range(min(repeats, w.repeats)):
        t = time.perf_counter()
        c = time.process_time()
        value = step()
        times.append(value if w.reports_value else time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        value = None  # free the step's result (a loaded checkpoint) before the next one
        if time.perf_counter() > budget:
            break
    scale = 1e6 if unit.startswith("us") else 1e3 if unit.startswith("ms") else 1.0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    vals = sorted(x if w.reports_value else x * scale / div for x in times)
    q1, q3 = vals[len(vals) // 4], vals[(3 * len(vals)) // 4]
    print(
        json.dumps(
            {
                "lib": lib,
                "workload": name,
                "unit": unit,
                "median": statistics.median(vals),
                "q1": q1,
                "q3": q3,
                "n": len(vals),
                "check": checked,
                "import_s": import_s,
                "peak_rss_mb": rss_mb,
                "cpu_median": statistics.median(x * scale / div for x in cpu),
            }
        )
    )


if __name__ == "__main__":
    main()
