"""Data-parallel scaling with DistributedDataParallel on 1 and 2 ranks, chainrule (over MPI)
against PyTorch DDP (gloo), 1 BLAS thread per rank, for two workloads:

- ``mlp``: one MLP training step (784-512-512-10, float32, global batch 256, SGD), plus the
  all-reduce time of one 25 MB bucket, chainrule's ``all_reduce`` against mpi4py's blocking
  ``Allreduce`` (the MPI library's own figure);
- ``srgan``: one adversarial training step of the ``make demo`` model (examples/srgan with its
  defaults: scale 2, 24 channels, 2 residual blocks, global batch 8 of 32x32 patches, Adam):
  G forward, the D update (backward with ``inputs=`` D's parameters, as ``srgan.py --nproc``
  does), then the G update through D and the perceptual loss, both networks wrapped in DDP.

    python bench/ddp_scaling.py [--steps 30] [--ranks 1,2] [--workloads mlp,srgan]

Prints a table and writes ``bench/results/ddp_scaling.json``. Throughput is samples per second
over all ranks (the global batch over the median step time); "scaling" is that throughput
over the same library's on one rank; "DDP overhead" is the DDP step time on one rank minus the
plain module's step time (bucket copies and the hooks: what DDP adds besides the network).
Recorded, not asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
GLOBAL_BATCH = 256
SRGAN_BATCH = 8  # examples/srgan/srgan.py's default --batch


def _mlp(m):
    nn = m.nn
    m.manual_seed(0)
    return nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
    )


def _mlp_data(m, rank: int, world: int):
    """This rank's share of the MLP's global batch: (local batch, inputs, labels)."""
    local = GLOBAL_BATCH // world
    rng = np.random.default_rng(rank)
    x = m.from_numpy(rng.standard_normal((local, 784)).astype(np.float32))
    y = m.from_numpy(rng.integers(0, 10, local))
    return local, x, y


def _mlp_timed(m, model, x, y, steps: int, barrier) -> float:
    """Median seconds of one SGD step of ``model``, after 3 untimed ones."""
    opt = m.optim.SGD(model.parameters(), lr=0.01)
    times = []
    for _ in range(steps + 3):
        barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        m.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    return float(np.median(times[3:]))


def _srgan_timer(m, dist, rank: int, world: int, steps: int):
    """Median seconds of one SRGAN demo step on this rank, with DDP and (one rank) without."""
    sys.path.insert(0, str(HERE))
    from workloads import _srgan_models

    mods = _srgan_models(m)
    local = SRGAN_BATCH // world
    rng = np.random.default_rng(rank)
    hr_np = rng.uniform(0, 1, (local, 3, 32, 32)).astype(np.float32)
    lr_np = hr_np.reshape(local, 3, 16, 2, 16, 2).mean(axis=(3, 5))
    bic_np = np.repeat(np.repeat(lr_np, 2, axis=2), 2, axis=3)
    lr, bic, hr = (m.from_numpy(a.copy()) for a in (lr_np, bic_np, hr_np))

    def timed(ddp: bool) -> float:
        m.manual_seed(0)
        barrier = (dist or _NoBarrier).barrier
        plainG, plainD = mods.Generator(2, 24, 2), mods.Discriminator(24)
        criterion = mods.GeneratorLoss()
        DDP = m.nn.parallel.DistributedDataParallel
        netG, netD = (DDP(plainG), DDP(plainD)) if ddp else (plainG, plainD)
        optG = m.optim.Adam(netG.parameters(), lr=1e-4)
        optD = m.optim.Adam(netD.parameters(), lr=1e-4)
        times = []
        for _ in range(steps + 3):
            barrier()
            t0 = time.perf_counter()
            fake = netG(lr, bic)
            netD.zero_grad()
            d_loss = 1 - netD(hr).mean() + netD(fake).mean()
            d_loss.backward(retain_graph=True, inputs=list(plainD.parameters()))
            optD.step()
            netG.zero_grad()
            criterion(plainD(fake).mean(), fake, hr).backward()
            optG.step()
            times.append(time.perf_counter() - t0)
        return float(np.median(times[3:]))

    if dist is None:  # an independent process (the ceiling): the plain step only
        return float("nan"), timed(False)
    t_ddp = timed(True)
    return t_ddp, (timed(False) if world == 1 else float("nan"))


class _NoBarrier:
    """Stands in for the process group in an independent process: the first barrier waits
    for the common start time (``start_at``, wall clock), so that the processes' steps run at
    the same time, not one process's while the other still imports; later ones return."""

    start_at = 0.0
    window = [float("inf"), 0.0]  # wall-clock span of the timed steps

    @classmethod
    def barrier(cls) -> None:
        now = time.time()
        if cls.start_at > now:
            time.sleep(cls.start_at - now)
        cls.start_at = 0.0
        cls.window[0] = min(cls.window[0], time.time())


def independent(
    lib: str, steps: int, workload: str, rank: int, world: int, start_at: float
) -> None:
    """The ceiling: the plain step (no DDP, no process group) on ``1/world`` of the global
    batch, in one of ``world`` processes started together. Their summed throughput is what
    ``world`` ranks could reach on this machine if communication and DDP cost nothing."""
    if lib == "torch":
        import torch as m

        m.set_num_threads(1)
    else:
        import chainrule as m
    _NoBarrier.start_at = start_at
    if workload == "srgan":
        _, t = _srgan_timer(m, None, rank, world, steps)
        local = SRGAN_BATCH // world
    else:
        local, x, y = _mlp_data(m, rank, world)
        t = _mlp_timed(m, _mlp(m), x, y, steps, _NoBarrier.barrier)
    window = [_NoBarrier.window[0], time.time()]
    row = {"step_ms": t * 1e3, "samples_per_s": local / t, "window": window}
    print("RESULT " + json.dumps(row), flush=True)


def worker(lib: str, steps: int, workload: str = "mlp") -> None:
    if lib == "torch":
        import torch as m
        import torch.distributed as dist

        m.set_num_threads(1)
        dist.init_process_group("gloo")
    else:
        import chainrule as m
        import chainrule.distributed as dist

        dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if workload == "srgan":
        t_ddp, t_plain = _srgan_timer(m, dist, rank, world, steps)
        if rank == 0:
            row = {
                "workload": "srgan",
                "lib": lib,
                "ranks": world,
                "step_ms": t_ddp * 1e3,
                "plain_step_ms": t_plain * 1e3,
                "samples_per_s": SRGAN_BATCH / t_ddp,
            }
            print("RESULT " + json.dumps(row), flush=True)
        dist.destroy_process_group()
        return
    local, x, y = _mlp_data(m, rank, world)
    ddp = m.nn.parallel.DistributedDataParallel(_mlp(m))
    t_ddp = _mlp_timed(m, ddp, x, y, steps, dist.barrier)
    t_plain = _mlp_timed(m, _mlp(m), x, y, steps, dist.barrier) if world == 1 else float("nan")
    # One 25 MB bucket's all-reduce.
    buf = np.ones(25 * 1024 * 1024 // 4, np.float32)
    t = m.from_numpy(buf.copy())
    ar = []
    for _ in range(8):
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(t)
        ar.append(time.perf_counter() - t0)
    mpi_ref = float("nan")
    if lib == "chainrule":
        from mpi4py import MPI

        out = np.empty_like(buf)
        ref = []
        for _ in range(8):
            MPI.COMM_WORLD.Barrier()
            t0 = time.perf_counter()
            MPI.COMM_WORLD.Allreduce(buf, out)
            ref.append(time.perf_counter() - t0)
        mpi_ref = float(np.median(ref[2:]))
    if rank == 0:
        print(
            "RESULT "
            + json.dumps(
                {
                    "workload": "mlp",
                    "lib": lib,
                    "ranks": world,
                    "step_ms": t_ddp * 1e3,
                    "plain_step_ms": t_plain * 1e3,
                    "samples_per_s": GLOBAL_BATCH / t_ddp,
                    "allreduce_25MB_ms": float(np.median(ar[2:])) * 1e3,
                    "mpi_allreduce_25MB_ms": mpi_ref * 1e3,
                }
            ),
            flush=True,
        )
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(lib: str, ranks: int, steps: int, workload: str = "mlp") -> dict:
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    me = [str(HERE / "ddp_scaling.py"), "--worker", lib, "--steps", str(steps)]
    me += ["--workloads", workload]
    if lib == "chainrule":
        cmd = [
            sys.executable,
            "-m",
            "chainrule.distributed.run",
            "--nproc-per-node",
            str(ranks),
            *me,
        ]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600).stdout
    else:
        port = str(_free_port())
        procs = [
            subprocess.Popen(
                [sys.executable, *me],
                stdout=subprocess.PIPE,
                text=True,
                env=dict(
                    env,
                    RANK=str(r),
                    WORLD_SIZE=str(ranks),
                    MASTER_ADDR="127.0.0.1",
                    MASTER_PORT=port,
                ),
            )
            for r in range(ranks)
        ]
        out = "".join(p.communicate(timeout=600)[0] for p in procs)
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def run_independent(lib: str, ranks: int, steps: int, workload: str) -> dict:
    """``ranks`` independent processes at once (``independent``): their summed throughput."""
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    me = [sys.executable, str(HERE / "ddp_scaling.py"), "--worker", lib, "--steps", str(steps)]
    me += ["--workloads", workload, "--independent", str(ranks)]
    me += ["--start-at", str(time.time() + 8.0)]  # after every process has imported
    procs = [
        subprocess.Popen(me + ["--rank", str(r)], stdout=subprocess.PIPE, text=True, env=env)
        for r in range(ranks)
    ]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    res = [
        json.loads(ln[len("RESULT ") :])
        for o in outs
        for ln in o.splitlines()
        if ln.startswith("RESULT ")
    ]
    # The share of the shortest process's timed span during which all of them were timing.
    lo, hi = max(r["window"][0] for r in res), min(r["window"][1] for r in res)
    shortest = min(r["window"][1] - r["window"][0] for r in res)
    return {
        "workload": workload,
        "lib": lib,
        "ranks": ranks,
        "independent": True,
        "overlap": max(0.0, hi - lo) / shortest if shortest > 0 else 0.0,
        "step_ms": max(r["step_ms"] for r in res),
        "samples_per_s": sum(r["samples_per_s"] for r in res),
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--worker", default=None)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--srgan-steps", type=int, default=10)
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--workloads", default="mlp,srgan")
    p.add_argument("--independent", type=int, default=0)
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--start-at", type=float, default=0.0)
    p.add_argument(
        "--ceiling",
        action="store_true",
        help="also time N independent processes (no DDP, no communication) on B/N each",
    )
    a = p.parse_args()
    if a.worker and a.independent:
        independent(a.worker, a.steps, a.workloads, a.rank, a.independent, a.start_at)
        return
    if a.worker:
        worker(a.worker, a.steps, a.workloads)
        return
    rows = [
        run(lib, int(n), a.srgan_steps if w == "srgan" else a.steps, w)
        for w in a.workloads.split(",")
        for n in a.ranks.split(",")
        for lib in ("chainrule", "torch")
    ]
    if a.ceiling:
        rows += [
            run_independent(lib, int(n), a.srgan_steps if w == "srgan" else a.steps, w)
            for w in a.workloads.split(",")
            for n in a.ranks.split(",")
            if int(n) > 1
            for lib in ("chainrule", "torch")
        ]
    one = {(r["workload"], r["lib"]): r["samples_per_s"] for r in rows if r["ranks"] == 1}
    for r in rows:
        base = one.get((r["workload"], r["lib"]))
        r["scaling"] = r["samples_per_s"] / base if base else float("nan")
    print(
        f"{'workload':<8} {'library':<10} {'ranks':>5} {'step ms':>8} {'samples/s':>10} "
        f"{'scaling':>8} {'DDP overhead ms':>16} {'25MB allreduce ms':>18} {'MPI Allreduce ms':>17}"
    )
    for r in rows:
        if r.get("independent"):
            print(
                f"{r['workload']:<8} {r['lib']:<10} {r['ranks']:>5} {r['step_ms']:>8.2f} "
                f"{r['samples_per_s']:>10.1f} {r['scaling']:>7.2f}x  (independent processes, "
                f"no DDP: the machine's ceiling; timed together {r['overlap']:.0%})"
            )
            continue
        over = r["step_ms"] - r["plain_step_ms"]
        ar = r.get("allreduce_25MB_ms", float("nan"))
        ref = r.get("mpi_allreduce_25MB_ms", float("nan"))
        print(
            f"{r['workload']:<8} {r['lib']:<10} {r['ranks']:>5} {r['step_ms']:>8.2f} "
            f"{r['samples_per_s']:>10.1f} {r['scaling']:>7.2f}x {over:>16.2f} {ar:>18.2f} "
            f"{ref:>17.2f}"
        )
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "ddp_scaling.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
