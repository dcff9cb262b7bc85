"""A world of one: the script started with plain ``python`` (no launcher) joins a process
group of its own; collectives, DDP and SyncBatchNorm then behave as on one process."""

from __future__ import annotations

import datetime
import os

import chainrule as torch
import chainrule.distributed as dist
import chainrule.nn as nn
import chainrule.nn.functional as F

assert not dist.is_initialized()
try:
    nn.parallel.DistributedDataParallel(nn.Linear(2, 2))
except ValueError as e:
    assert "Default process group has not been initialized" in str(e)
os.environ["WORLD_SIZE"] = "2"
try:
    dist.init_process_group("mpi")
except ValueError as e:
    assert "world_size is 2 but MPI started 1 process(es)" in str(e), e
    print("OK world-size mismatch")
del os.environ["WORLD_SIZE"]
try:
    dist.init_process_group("nccl")
except ValueError as e:
    assert "Invalid backend: 'nccl'" in str(e)
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=5))
assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
assert dist.get_backend() == "gloo"
try:
    dist.init_process_group("mpi")
except ValueError as e:
    assert "twice" in str(e)
t = torch.tensor([1.0, 2.0])
dist.all_reduce(t, dist.ReduceOp.AVG)
assert t.tolist() == [1.0, 2.0]
out = torch.zeros(2)
dist.all_gather_into_tensor(out, t)
assert out.tolist() == [1.0, 2.0]
w = dist.broadcast(t, 0, async_op=True)
assert w.wait() and w.is_completed()
objs = [None]
dist.all_gather_object(objs, {"a": 1})
assert objs == [{"a": 1}]
print("OK collectives on a world of one")

torch.manual_seed(0)
bn = nn.BatchNorm2d(3).double()
sbn = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(3).double()))[0]
assert isinstance(sbn, nn.SyncBatchNorm)
x = torch.randn(4, 3, 2, 2, dtype=torch.float64, requires_grad=True)
y1, y2 = bn(x), sbn(x)
assert torch.equal(y1, y2) and torch.equal(bn.running_mean, sbn.running_mean)
print("OK SyncBatchNorm on one rank is BatchNorm")

torch.manual_seed(0)
m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
ref = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
ref.load_state_dict(m.state_dict())
ddp = nn.parallel.DistributedDataParallel(m)
x = torch.randn(5, 3, dtype=torch.float64)
F.mse_loss(ddp(x), torch.zeros(5, 1, dtype=torch.float64)).backward()
F.mse_loss(ref(x), torch.zeros(5, 1, dtype=torch.float64)).backward()
assert all(torch.equal(p.grad, q.grad) for p, q in zip(m.parameters(), ref.parameters()))
for bad, err in (({"bogus": 1}, TypeError), ({"mixed_precision": object()}, ValueError)):
    try:
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2), **bad)
    except err:
        pass
    else:
        raise AssertionError(f"DDP accepted {bad}")
print("OK DDP on one rank")
dist.destroy_process_group()
assert not dist.is_initialized()
print("OK single done")
