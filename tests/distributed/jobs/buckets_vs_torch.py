"""DDP's buckets against PyTorch's, in a world of one (chainrule over MPI, torch over gloo, in
one plain ``python`` process): the layout at construction and after the rebuild, and the
gradient-ready order, for each of torch's bucketing cases; then static_graph's own errors.
Prints one ``OK <name>`` line per check."""

from __future__ import annotations

import os
import socket
import sys
import warnings

import torch
import torch.distributed as tdist

import chainrule
import chainrule.distributed as cdist

with socket.socket() as s_:
    s_.bind(("127.0.0.1", 0))
    port = s_.getsockname()[1]
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
tdist.init_process_group("gloo", rank=0, world_size=1)
cdist.init_process_group("mpi")
warnings.filterwarnings("ignore", message="find_unused_parameters=True was specified")


def swap(m):
    """Registration order b, a, c; backward reaches b first, then c, then a."""
    nn = m.nn

    class Swap(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.b = nn.Linear(8, 3)
            self.a = nn.Linear(6, 8)
            self.c = nn.Linear(6, 8)

        def forward(self, x):
            return self.b(self.a(x) * self.c(x))

    return Swap()


def mlp(m):
    nn = m.nn
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Linear(16, 3))


KEYS = (
    "bucket_sizes",
    "rebuilt_bucket_sizes",
    "rebuilt_per_bucket_param_indices",
    "has_rebuilt_buckets",
    "prev_iteration_grad_ready_order_indices",
    "bucket_cap_bytes",
)
CASES = [
    ("swap", dict(bucket_cap_mb=0.0002)),
    ("swap", dict(bucket_cap_mb=0.0002, find_unused_parameters=True)),
    ("swap", dict()),
    ("swap", dict(bucket_cap_mb=0.0002, static_graph=True)),
    ("mlp", dict(bucket_cap_mb=0.001)),
    ("mlp", dict(bucket_cap_mb=0.001, find_unused_parameters=True)),
    ("mlp", dict(bucket_cap_mb=0.0001, gradient_as_bucket_view=True)),
    # bucket_cap_mb_list: one cap per bucket (the last for the rest), at construction too.
    ("mlp", dict(bucket_cap_mb_list=[0.0005, 0.001])),
    ("mlp", dict(bucket_cap_mb_list=[0.0001])),
    ("mlp", dict(bucket_cap_mb_list=[0.001, 0.0001], find_unused_parameters=True)),
    ("mlp", dict(bucket_cap_mb_list=[0.0005, 0.001], static_graph=True)),
    ("mlp", dict(bucket_cap_mb_list=[0.0005, 0.001], bucket_cap_mb=0.0001)),
    ("swap", dict(bucket_cap_mb_list=[0.0002, 0.0001])),
    ("mlp", dict(bucket_cap_mb_list=[])),
]
for name, kw in CASES:
    got = []
    for m in (torch, chainrule):
        m.manual_seed(0)
        d = m.nn.parallel.DistributedDataParallel((swap if name == "swap" else mlp)(m), **kw)
        x = m.ones(4, 6)
        for _ in range(3):
            d(x).sum().backward()
        d(x)  # torch logs the state at a forward, before that forward's own rebuild
        data = d._get_ddp_logging_data()
        got.append({k: data.get(k) for k in KEYS})
    assert got[0] == got[1], (name, kw, got)
    assert got[1]["prev_iteration_grad_ready_order_indices"], got
    print(f"OK buckets as torch: {name} {kw}: {got[1]['rebuilt_per_bucket_param_indices']}")


# static_graph: the first iteration is the first backward in which a gradient hook fires (a
# forward never backpropagated does not count); its all-reduces all start at its end, later
# ones from the hooks. Seen through a communication hook that logs each bucket's launch.
def static_launches(m, steps):
    class Two(m.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = m.nn.Linear(4, 2)
            self.b = m.nn.Linear(4, 2)

        def forward(self, x, use_b=True):
            return self.a(x) + self.b(x) if use_b else self.a(x)

    m.manual_seed(0)
    d = m.nn.parallel.DistributedDataParallel(Two(), static_graph=True, bucket_cap_mb=0.00001)
    calls = []

    def hook(state, bucket):
        calls.append(bucket.index())
        fut = m.futures.Future()
        fut.set_result(bucket.buffer())
        return fut

    d.register_comm_hook(None, hook)
    x = m.ones(3, 4)
    out = []
    for step in steps:
        calls.clear()
        try:
            if step == "forward":
                d(x)
            else:
                d(x, step != "unused_b").sum().backward()
            out.append(("ok", list(calls)))
        except RuntimeError as e:
            out.append(("RuntimeError", str(e)[:60]))
    return out


for steps in (
    ("forward", "step", "step", "step"),
    ("forward", "unused_b", "step"),
    ("step", "unused_b", "step"),
    ("unused_b", "step", "step"),
):
    got = [static_launches(m, steps) for m in (torch, chainrule)]
    assert got[0] == got[1], (steps, got)
    print(f"OK static_graph launches as torch: {steps}: {got[1]}")

# static_graph: a parameter unused in the first iteration may not be used later.
chainrule.manual_seed(0)
ddp = chainrule.nn.parallel.DistributedDataParallel


class Maybe(chainrule.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = chainrule.nn.Linear(4, 2)
        self.b = chainrule.nn.Linear(4, 2)

    def forward(self, x, use_b):
        return self.a(x) + (self.b(x) if use_b else 0)


d = ddp(Maybe(), static_graph=True)
x = chainrule.ones(3, 4)
d(x, False).sum().backward()
assert d.module.b.weight.grad is None
d(x, False).sum().backward()
try:
    d(x, True).sum().backward()
except RuntimeError as e:
    assert str(e).startswith("Your training graph has changed in this iteration"), e
else:
    raise AssertionError("no error for a graph that changed under static_graph")
print("OK static_graph: a parameter unused in the first iteration may not be used later")

with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    d = ddp(Maybe(), find_unused_parameters=True)
    d._set_static_graph()
    d._set_static_graph()
msgs = [str(m.message) for m in w]
assert any(s.startswith("You passed find_unused_parameters=true") for s in msgs), msgs
assert "You've set static_graph to be True, no need to set it again." in msgs, msgs
print("OK _set_static_graph warns as torch")
cdist.destroy_process_group()
tdist.destroy_process_group()
sys.exit(0)
