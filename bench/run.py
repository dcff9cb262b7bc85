"""Run the benchmark workloads with chainrule and with PyTorch, each in its own process with
the same pinned thread count, and print medians, spread and the chainrule/PyTorch ratio.

Usage: python bench/run.py [--threads 1,2] [--repeats N] [--rounds R] [workload ...]
Results are also written to bench/results/latest.json. The default thread counts are 1, 2 and
``os.cpu_count()`` where that is larger; after the main table a scaling table gives, for each
workload run at several counts, each library's best-round time per count and its speedup over
one thread.

The two libraries' processes alternate ``--rounds`` times per workload and each library's
figure is its best round (lowest median): this VM shares its cores with other jobs, which slow
a whole process by up to half for seconds at a time, and a disturbed round is only ever slower.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from workloads import WORKLOADS  # noqa: E402


def run_one(lib: str, name: str, threads: int, repeats: int) -> dict:
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    # Older OpenBLAS workarounds slow a current NumPy; unset them for honest BLAS timing.
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    out = subprocess.run(
        [sys.executable, str(HERE / "_worker.py"), lib, name, str(repeats)],
        env=env,
        cwd=HERE,
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if r["unit"] == "MB":
        r["median"] = r["q1"] = r["q3"] = r["peak_rss_mb"]
    return r


def import_time(lib: str, n: int = 7) -> dict:
    """Median wall time of ``import lib`` in a fresh interpreter, with bytecode cached as in an
    installed package: the first import (which compiles) is discarded, and the cache goes to a
    temporary folder, so that an environment with PYTHONDONTWRITEBYTECODE (which would
    recompile chainrule on every import while torch's wheel ships compiled files) measures the
    same thing as a normal install."""
    import tempfile

    code = "import time; t = time.perf_counter(); import {0}; print(time.perf_counter() - t)"
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as cache:
        env["PYTHONPYCACHEPREFIX"] = cache
        runs = [
            float(
                subprocess.run(
                    [sys.executable, "-c", code.format(lib)],
                    capture_output=True,
                    text=True,
                    check=True,
                    env=env,
                ).stdout
            )
            for _ in range(n + 1)
        ]
    vals = sorted(runs[1:])
    return {
        "median": vals[n // 2],
        "q1": vals[n // 4],
        "q3": vals[(3 * n) // 4],
        "unit": "s",
        "check": 0.0,
    }


def _default_threads() -> str:
    """1 and 2 threads, and all the cores where there are more."""
    counts = [1, 2]
    if (os.cpu_count() or 1) > 2:
        counts.append(os.cpu_count() or 1)
    return ",".join(map(str, counts))


def scaling_table(rows: list[dict]) -> list[str]:
    """Lines of the scaling table: per workload timed at several thread counts, each library's
    best-round median per count, and its speedup over its own 1-thread figure."""
    by_name: dict[str, dict[int, dict]] = {}
    for r in rows:
        if r["threads"] > 0 and not r["chainrule"]["unit"].startswith("MB"):
            by_name.setdefault(r["workload"], {})[r["threads"]] = r
    lines = []
    for name, per in by_name.items():
        if len(per) < 2:
            continue
        counts = sorted(per)
        if not lines:
            lines.append(
                f"{'workload':<12} {'lib':<9} " + " ".join(f"{f'{c} thr':>16}" for c in counts)
            )
        for lib in ("chainrule", "torch"):
            base = per[counts[0]][lib]["median"] if counts[0] == 1 else None
            cells = []
            for c in counts:
                v = per[c][lib]["median"]
                sp = f" (x{base / v:.2f})" if base and v else ""
                cells.append(f"{v:.3g}{sp}")
            lines.append(f"{name:<12} {lib:<9} " + " ".join(f"{c:>16}" for c in cells))
        ratios = " ".join(f"{per[c]['ratio']:>16.2f}" for c in counts)
        lines.append(f"{name:<12} {'ratio':<9} {ratios}")
    return lines


def _fmt(r: dict) -> str:
    return f"{r['median']:.3g} [{r['q1']:.3g}-{r['q3']:.3g}] {r['unit']}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "workloads",
        nargs="*",
        default=list(WORKLOADS),
        help=f"any of {', '.join(WORKLOADS)}, import",
    )
    ap.add_argument("--threads", default=_default_threads())
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="alternating runs per library; the best round's median is reported",
    )
    args = ap.parse_args()
    rows = []
    print(
        f"{'workload':<12} {'thr':>3} {'chainrule':>22} {'torch':>22} {'ratio':>7}  "
        "check (cr / torch)"
    )
    for name in [w for w in args.workloads if w in WORKLOADS]:
        for th in (int(t) for t in args.threads.split(",")):
            runs: dict[str, list[dict]] = {"chainrule": [], "torch": []}
            for _ in range(max(1, args.rounds)):
                for lib in runs:
                    runs[lib].append(run_one(lib, name, th, args.repeats))
            c, t = (min(runs[lib], key=lambda r: r["median"]) for lib in runs)
            # A memory figure can be 0 (torch.save adds nothing above baseline).
            ratio = (
                c["median"] / t["median"] if t["median"] else float("inf") if c["median"] else 1.0
            )
            rows.append(
                {
                    "workload": name,
                    "threads": th,
                    "chainrule": c,
                    "torch": t,
                    "ratio": ratio,
                    "round_medians": {lib: [r["median"] for r in rs] for lib, rs in runs.items()},
                }
            )
            # CPU-time ratio of the best rounds by CPU time: steadier than wall time when
            # other jobs share the cores (a thread waiting for a core uses no CPU time).
            cc, ct = (
                min(runs[lib], key=lambda r: r.get("cpu_median", r["median"])) for lib in runs
            )
            cpu_ratio = cc.get("cpu_median", cc["median"]) / ct.get("cpu_median", ct["median"])
            rows[-1]["cpu_ratio"] = cpu_ratio
            print(
                f"{name:<12} {th:>3} {_fmt(c):>22} {_fmt(t):>22} {ratio:>7.2f}  "
                f"{c['check']:.6g} / {t['check']:.6g}  (CPU-time ratio {cpu_ratio:.2f})"
            )
    if "import" in args.workloads or args.workloads == list(WORKLOADS):
        c, t = import_time("chainrule"), import_time("torch")
        rows.append(
            {
                "workload": "import",
                "threads": 0,
                "chainrule": c,
                "torch": t,
                "ratio": c["median"] / t["median"],
            }
        )
        print(
            f"{'import':<12} {'-':>3} {c['median']:>18.3f} s {t['median']:>20.3f} s "
            f"{c['median'] / t['median']:>7.2f}"
        )
    table = scaling_table(rows)
    if table:
        print("\nscaling (best-round medians in each workload's unit; x: speedup over 1 thread)")
        print("\n".join(table))
    res = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "rows": rows,
    }
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "latest.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
