"""Per-kernel time of the convolution kernels at one and at two threads, as a workload's step
calls them: ``python bench/conv_threads.py [workload] [repeats] [min_flops ...]``.

``PARTS_PER_THREAD=k`` in the environment sets ``_conv_kernels.PARTS_PER_THREAD``.

One step of the workload (default srgan_step) is run with the conv kernels wrapped, which
records each top-level kernel call (module, function, arguments); each distinct call is then
replayed on its recorded arrays, alternating one thread (serial) and two threads with
``_conv_kernels.PARALLEL_MIN_FLOPS`` at each given value, ``repeats`` times each (default 50),
and the best wall time and process CPU time of each are printed, with the step's total (each
call's best times its count). Run it on a quiet machine: wall times under load say little
(process CPU then shows the cost of splitting, not its gain). Used for the figures in
bench/README.md, "Convolutions on both cores".
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import numpy as np  # noqa: E402

import chainrule  # noqa: E402
from chainrule.backends import _threads  # noqa: E402
from chainrule.ops import (  # noqa: E402
    _conv_inputgrad,
    _conv_kernels,
    _conv_rowphase,
    _conv_wgrad,
    _conv_windows,
    conv,
)

KERNELS = [
    (_conv_rowphase, ["conv_rowphase", "weight_rowphase", "transpose_rowphase"]),
    (_conv_inputgrad, ["transpose_shifted", "transpose_strided"]),
    (_conv_wgrad, ["weight_shifted_t", "weight_rowfold_t"]),
    (
        _conv_windows,
        ["conv_sample_windows", "conv_pointwise", "weight_pointwise", "weight_sample_windows"],
    ),
    (_conv_kernels, ["_conv_rowfold", "_weight_rowfold"]),
    (
        conv,
        [
            "_conv_shifted",
            "_conv_sample_cols",
            "_weight_sample_cols",
            "_weight_shifted",
            "_transpose_phased",
            "_weight_phased",
        ],
    ),
]


def record(workload: str) -> list[tuple[Any, str, tuple, dict]]:
    from workloads import WORKLOADS

    step, _ = WORKLOADS[workload].make(chainrule)
    step()
    calls: list[tuple[Any, str, tuple, dict]] = []
    depth = [0]
    saved = []

    def wrap(mod: Any, name: str) -> None:
        real = getattr(mod, name)
        saved.append((mod, name, real))

        def f(*a: Any, **k: Any) -> Any:
            top = depth[0] == 0
            depth[0] += 1
            try:
                return real(*a, **k)
            finally:
                depth[0] -= 1
                if top:
                    args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in a[1:])
                    calls.append((mod, name, args, k))

        setattr(mod, name, f)

    for mod, names in KERNELS:
        for name in names:
            wrap(mod, name)
    try:
        step()
    finally:
        for mod, name, real in saved:
            setattr(mod, name, real)
    return calls


def _key(mod: Any, name: str, args: tuple) -> str:
    shapes = [x.shape if isinstance(x, np.ndarray) else x for x in args]
    return f"{mod.__name__.rsplit('.', 1)[-1]}.{name}{tuple(shapes)}"


def best(fn: Any, args: tuple, kwargs: dict, threads: int, min_flops: float) -> tuple[float, float]:
    _threads._state["count"] = threads
    _conv_kernels.PARALLEL_MIN_FLOPS = min_flops
    with _threads.one_blas_thread():
        t, c = time.perf_counter(), time.process_time()
        fn(np, *args, **kwargs)
        return time.perf_counter() - t, time.process_time() - c


def main() -> None:
    workload = sys.argv[1] if len(sys.argv) > 1 else "srgan_step"
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    flops = [float(v) for v in sys.argv[3:]] or [_conv_kernels.PARALLEL_MIN_FLOPS]
    if os.environ.get("PARTS_PER_THREAD"):
        _conv_kernels.PARTS_PER_THREAD = int(os.environ["PARTS_PER_THREAD"])
    calls = record(workload)
    counts = Counter(_key(m, n, a) for m, n, a, _ in calls)
    first = {}
    for m, n, a, k in calls:
        first.setdefault(_key(m, n, a), (getattr(m, n), a, k))
    configs = [(1, 0.0)] + [(2, f) for f in flops]
    totals = [[0.0, 0.0] for _ in configs]
    print(f"{workload}: {len(calls)} kernel calls, {len(first)} distinct; load {os.getloadavg()}")
    print(
        "ms, best of",
        repeats,
        "(wall / process CPU); columns: 1 thread, then 2 threads at",
        ", ".join(f"PARALLEL_MIN_FLOPS={f:g}" for f in flops),
    )
    for key, (fn, a, k) in first.items():
        res = [[1e9, 1e9] for _ in configs]
        for _ in range(repeats):
            for i, (t, f) in enumerate(configs):
                w, c = best(fn, a, k, t, f)
                res[i][0] = min(res[i][0], w)
                res[i][1] = min(res[i][1], c)
        for i in range(len(configs)):
            totals[i][0] += res[i][0] * counts[key]
            totals[i][1] += res[i][1] * counts[key]
        cells = "  ".join(f"{w * 1e3:6.3f}/{c * 1e3:6.3f}" for w, c in res)
        print(f"{counts[key]:3d}x {key[:100]}\n      {cells}")
    cells = "  ".join(f"{w * 1e3:7.2f}/{c * 1e3:7.2f}" for w, c in totals)
    print(f"per step: {cells}")


if __name__ == "__main__":
    main()
