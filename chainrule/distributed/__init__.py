"""``chainrule.distributed``: PyTorch's ``torch.distributed`` API over MPI (mpi4py).

Start a job with ``python -m chainrule.distributed.run --nproc-per-node N script.py`` (or
``mpirun -n N python -m mpi4py script.py``); in the script, ``init_process_group()`` joins every
process MPI started. Tensors travel as raw buffers through MPI's non-blocking collectives;
every collective fails after the group's ``timeout`` with an error naming the ranks that did
not arrive, instead of hanging. mpi4py is imported on first use only.
"""

from __future__ import annotations

from chainrule.distributed._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from chainrule.distributed._group import (
    Backend,
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_default_backend_for_device,
    get_global_rank,
    get_group_rank,
    get_node_local_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    new_group,
)
from chainrule.distributed._monitored import monitored_barrier
from chainrule.distributed._mpi import ReduceOp
from chainrule.distributed._mpi import is_available as _mpi_available
from chainrule.distributed._objects import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from chainrule.distributed._work import DistError, DistTimeoutError, Future, Work

# DistributedDataParallel's first bucket with the default bucket_cap_mb (torch's name).
_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024

__all__ = [
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_gloo_available",
    "is_nccl_available",
    "init_process_group",
    "destroy_process_group",
    "get_rank",
    "get_world_size",
    "get_backend",
    "get_default_backend_for_device",
    "new_group",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_node_local_rank",
    "ReduceOp",
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "group",
    "Work",
    "Future",
    "DistError",
    "DistTimeoutError",
    "default_pg_timeout",
    "barrier",
    "monitored_barrier",
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "send",
    "recv",
    "isend",
    "irecv",
    "all_to_all_single",
    "broadcast_object_list",
    "all_gather_object",
    "gather_object",
    "scatter_object_list",
]


def is_available() -> bool:
    """Whether distributed support can run here: mpi4py is installed."""
    return _mpi_available()


def is_mpi_available() -> bool:
    """Whether the MPI backend is available (mpi4py is installed)."""
    return _mpi_available()


def is_gloo_available() -> bool:
    """True when MPI is: the name "gloo" runs over MPI here."""
    return _mpi_available()


def is_nccl_available() -> bool:
    """False: chainrule has no NCCL backend."""
    return False
