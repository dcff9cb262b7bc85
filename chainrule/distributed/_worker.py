"""What each rank of ``chainrule.distributed.run`` runs, under ``python -m mpi4py``: it sets
torchrun's environment variables from MPI's, then runs the user's script or module (with
``--torch``, with ``import torch`` resolved to chainrule)."""

from __future__ import annotations

import os
import runpy
import sys

__all__ = ["main"]


def _first(*names: str) -> str | None:
    for n in names:
        if os.environ.get(n):
            return os.environ[n]
    return None


def set_env() -> None:
    """RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK/NODE_RANK from the variables
    Open MPI (OMPI_COMM_WORLD_*) or MPICH (PMI_*, MPI_LOCAL*) set for each rank."""
    rank = _first("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")
    size = _first("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")
    local = _first("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID")
    local_size = _first(
        "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "CHAINRULE_LOCAL_WORLD_SIZE"
    )
    for name, value in (
        ("RANK", rank),
        ("WORLD_SIZE", size),
        ("LOCAL_RANK", local),
        ("LOCAL_WORLD_SIZE", local_size),
    ):
        if value is not None:
            os.environ[name] = value
    if rank is not None and local_size:
        node = str(int(rank) // max(1, int(local_size)))
        os.environ["GROUP_RANK"] = node
        os.environ["NODE_RANK"] = node


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    set_env()
    # MPI_Init waits for every process mpirun started (Open MPI's start-up exchange), with no
    # timeout of its own: it runs here, before the script, so that init_process_group's
    # timeout then covers a rank that is slow to reach it (it waits in a polled barrier).
    from chainrule.distributed._mpi import mpi

    mpi()
    torch_names = bool(args) and args[0] == "--torch"
    if torch_names:
        args = args[1:]
    if torch_names:
        from chainrule.__main__ import main as run_as_torch

        code = run_as_torch(args)
        if code:
            raise SystemExit(code)
        return
    if args and args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        return
    script = args[0]
    if not os.path.exists(script):
        raise SystemExit(f"chainrule.distributed.run: can't open file {script!r}")
    sys.argv = [script, *args[1:]]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
