"""Run by the launcher with --torch: ``import torch`` is chainrule, torchrun's variables are
set, and a torch-style DDP script runs unchanged."""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
assert int(os.environ["RANK"]) == rank and int(os.environ["WORLD_SIZE"]) == world
assert int(os.environ["LOCAL_RANK"]) == rank and int(os.environ["LOCAL_WORLD_SIZE"]) == world
assert os.environ["OMP_NUM_THREADS"] == "1"
assert (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]) == ("127.0.0.1", "29500")
assert torch.__name__ == "chainrule"
model = DDP(nn.Linear(4, 2))
model(torch.ones(3, 4)).sum().backward()
print(f"OK rank {rank} of {world}: {model.module.weight.grad.sum().item():.1f}", flush=True)
dist.destroy_process_group()
