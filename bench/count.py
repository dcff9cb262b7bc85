"""Count work per step of a workload instead of timing it (timings on a shared VM move by more
than the few per cent a change is worth).

    python bench/count.py bytecodes WORKLOAD [STEPS]      Python bytecode instructions per
                                                          step, by function (sys.settrace)
    python bench/count.py instructions WORKLOAD [STEPS]   machine instructions per step
                                                          (valgrind --tool=callgrind)

Both run chainrule. ``instructions`` runs the workload under callgrind twice, with 0 and with
STEPS steps after the same warm-up, and divides the difference by STEPS: repeatable to about
0.2 % on this machine. For op_chain, divide by 201 for figures per op. A compiled row named
with the suffix ``:plain`` (``mlp_step_compiled:plain``) replays without tier two's fusion
(docs/compile.md).
"""

from __future__ import annotations

import collections
import os
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def _make(name: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(HERE))
    from workloads import WORKLOADS

    import chainrule

    if name.endswith(":plain"):  # a compiled row with the plain replay (no fusion)
        from chainrule._compile import fusion

        fusion.FUSE[0] = False
        name = name[: -len(":plain")]

    step, _ = WORKLOADS[name].make(chainrule)
    for _ in range(5):  # warm up: first-use work (generated code, caches) is not counted
        step()
    return step


def bytecodes(name: str, steps: int) -> None:
    step = _make(name)
    counts: collections.Counter[tuple[str, str]] = collections.Counter()

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        frame.f_trace_opcodes = True
        if event == "opcode":
            co = frame.f_code
            counts[(os.path.basename(co.co_filename), co.co_name)] += 1
        return tracer

    sys.settrace(tracer)
    for _ in range(steps):
        step()
    sys.settrace(None)
    total = sum(counts.values())
    print(f"{name}: {total / steps:.0f} bytecodes per step")
    for (f, fn), n in counts.most_common(20):
        print(f"{n / steps:10.1f}  {f}:{fn}")


def _child(name: str, steps: int) -> None:
    step = _make(name)
    for _ in range(steps):
        step()


def instructions(name: str, steps: int) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")

    def run(n: int) -> int:
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=/dev/null",
                sys.executable,
                __file__,
                "_child",
                name,
                str(n),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        m = re.search(r"Collected : (\d+)", out)
        if m is None:
            raise RuntimeError(f"no callgrind total in:\n{out[-2000:]}")
        return int(m.group(1))

    base, full = run(0), run(steps)
    print(f"{name}: {(full - base) / steps:.0f} machine instructions per step")


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[1] not in ("bytecodes", "instructions", "_child"):
        sys.exit(__doc__)
    mode, name = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    {"bytecodes": bytecodes, "instructions": instructions, "_child": _child}[mode](name, steps)


if __name__ == "__main__":
    main()
