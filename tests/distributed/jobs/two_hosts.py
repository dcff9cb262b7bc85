"""Run on two "hosts" (network namespaces): every rank reports its host name, and an
all-reduce crosses the veth link over Open MPI's TCP transport."""

from __future__ import annotations

import socket

import numpy as np

import chainrule as torch
import chainrule.distributed as dist

dist.init_process_group("mpi")
r, n = dist.get_rank(), dist.get_world_size()
names = [None] * n
dist.all_gather_object(names, socket.gethostname())
t = torch.from_numpy(np.arange(100_001.0) * (r + 1))
dist.all_reduce(t)
assert np.array_equal(t.numpy(), np.arange(100_001.0) * n * (n + 1) / 2)
if r == 0:
    print("HOSTS " + ",".join(names), flush=True)
