"""A job that goes wrong on one rank, as argv[1] says: ``raise`` (an exception),
``skip`` (the rank skips a collective and then works outside MPI), ``mismatch`` (the rank
calls a different collective), ``kill`` (the rank is killed by SIGKILL), ``init`` (the rank
never calls init_process_group), ``newgroup`` (it never calls new_group), ``subgroup`` (it
skips a collective of a sub-group with a 1 s timeout) or ``monitored`` (ranks 1 and 2 never
reach a monitored_barrier)."""

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
one_s = datetime.timedelta(seconds=1)
if mode == "init" and os.environ["RANK"] != "0":
    print(f"FAULT_AT {time.time():.3f}", flush=True)
    time.sleep(30)
dist.init_process_group("mpi", timeout=one_s if mode == "init" else 2 * one_s)
R, N = dist.get_rank(), dist.get_world_size()
bad = N - 1
if mode == "newgroup":
    if R == bad:
        print(f"FAULT_AT {time.time():.3f}", flush=True)
        time.sleep(30)
    dist.new_group([0, bad], timeout=one_s)
if mode == "subgroup":
    sub = dist.new_group([1, 2], timeout=one_s)
    if R == 2:
        print(f"FAULT_AT {time.time():.3f}", flush=True)
        time.sleep(30)
    if R == 1:
        dist.all_reduce(torch.from_numpy(np.ones(3)), group=sub)
if mode == "monitored":
    if R > 0:
        print(f"FAULT_AT {time.time():.3f}", flush=True)
        time.sleep(30)
    dist.monitored_barrier(timeout=one_s, wait_all_ranks=True)
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
