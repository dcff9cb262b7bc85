"""A job that goes wrong on one rank, as argv[1] says: ``raise`` (an exception),
``skip`` (the rank skips a collective and then works outside MPI), ``mismatch`` (the rank
calls a different collective) or ``kill`` (the rank is killed by SIGKILL)."""

from __future__ import annotations

import datetime
import os
import signal
import sys
import time

import numpy as np

import chainrule as torch
import chainrule.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=2))
R, N = dist.get_rank(), dist.get_world_size()
bad = N - 1
t = torch.from_numpy(np.ones(5))
dist.all_reduce(t)
if R == bad:
    print(f"FAULT_AT {time.time():.3f}", flush=True)
    if mode == "raise":
        raise ValueError(f"boom on rank {R}")
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "skip":
        time.sleep(30)  # busy outside chainrule.distributed: it never answers
    if mode == "mismatch":
        dist.broadcast(torch.from_numpy(np.zeros(1, np.int64)), 0)
else:
    dist.all_reduce(t)
# The ranks that did nothing wrong would wait here forever without the fault handling.
dist.barrier()
time.sleep(30)
