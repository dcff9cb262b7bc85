"""DistributedDataParallel on N ranks against one process with the whole batch (float64,
5 SGD steps): an MLP, a CNN with SyncBatchNorm and a CNN with plain BatchNorm; parameters
bit-identical across ranks after every step. With ``full``, also no_sync, unused parameters
(both ways), gradient_as_bucket_view, overlap of bucket all-reduces with backward, state-dict
keys. Prints one ``OK <name>`` line per check from rank 0."""

from __future__ import annotations

import hashlib
import sys

import numpy as np

import chainrule as torch
import chainrule.distributed as dist
import chainrule.nn as nn
import chainrule.nn.functional as F
from chainrule.nn.parallel import DistributedDataParallel as DDP

torch.set_default_dtype(torch.float64)
dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()
B, STEPS, TOL = 8, 5, 1e-10
full = sys.argv[1:] == ["full"]


def ok(name: str) -> None:
    if R == 0:
        print(f"OK {name}", flush=True)


def mlp() -> nn.Module:
    return nn.Sequential(
        nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3)
    )


def cnn(sync: bool) -> nn.Module:
    m = nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.Conv2d(4, 4, 3),
        nn.BatchNorm2d(4),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 3),
    )
    return nn.SyncBatchNorm.convert_sync_batchnorm(m) if sync else m


def batch(step: int, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    g = np.random.default_rng(100 + step)
    x = g.standard_normal((B, 6) if kind == "mlp" else (B, 2, 6, 6))
    y = g.integers(0, 3, B)
    return torch.from_numpy(x), torch.from_numpy(y)


def build(kind: str, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return mlp() if kind == "mlp" else cnn(kind == "cnn_sync")


def digest(module: nn.Module) -> str:
    h = hashlib.sha256()
    for p in module.parameters():
        h.update(np.ascontiguousarray(p.detach().numpy()).tobytes())
    return h.hexdigest()


def same_on_all_ranks(module: nn.Module, what: str) -> None:
    digests = [None] * N
    dist.all_gather_object(digests, digest(module))
    assert len(set(digests)) == 1, f"{what}: parameters differ across ranks: {digests}"


def train_reference(kind: str) -> nn.Module:
    """One process, whole batch. Plain BatchNorm in DDP normalises each rank's shard with its
    own statistics, so its reference averages the losses of the N shards ("ghost batches");
    SyncBatchNorm's reference is plain BatchNorm over the whole batch."""
    model = build("cnn" if kind == "cnn_sync" else kind, seed=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(STEPS):
        x, y = batch(step, kind)
        opt.zero_grad()
        if kind == "cnn":
            loss = sum(F.cross_entropy(model(xs), ys) for xs, ys in zip(x.chunk(N), y.chunk(N))) / N
        else:
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return model


def train_ddp(kind: str, **ddp_kwargs) -> nn.Module:
    # Each rank starts from a different initialisation: DDP must broadcast rank 0's.
    model = DDP(build(kind, seed=R), **ddp_kwargs)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    share = B // N
    for step in range(STEPS):
        x, y = batch(step, kind)
        opt.zero_grad()
        F.cross_entropy(
            model(x[R * share : (R + 1) * share]), y[R * share : (R + 1) * share]
        ).backward()
        opt.step()
        same_on_all_ranks(model, f"{kind} step {step}")
    return model


def close(a: nn.Module, b: nn.Module, what: str, buffers: bool = False) -> None:
    pa = dict(a.named_parameters())
    pb = dict(b.named_parameters())
    if buffers:
        pa.update((k, v) for k, v in a.named_buffers() if v.dtype == torch.float64)
        pb.update((k, v) for k, v in b.named_buffers() if v.dtype == torch.float64)
    assert pa.keys() == pb.keys(), (pa.keys(), pb.keys())
    for k in pa:
        d = float((pa[k] - pb[k]).abs().max())
        assert d <= TOL, f"{what}: {k} differs by {d:g}"


for kind in ("mlp", "cnn_sync", "cnn"):
    ref = train_reference(kind)
    got = train_ddp(kind, bucket_cap_mb=0.001)  # several buckets even for these small models
    close(got.module, ref, f"{kind} on {N} ranks", buffers=(kind == "cnn_sync"))
    ok(f"{kind} matches one process after {STEPS} steps, parameters identical across ranks")

if full:
    x, y = batch(0, "mlp")
    share = B // N
    xs, ys = x[R * share : (R + 1) * share], y[R * share : (R + 1) * share]

    # no_sync: two local backward passes, then one synced one, equal the average of all three.
    m = DDP(build("mlp", 0))
    with m.no_sync():
        F.cross_entropy(m(xs), ys).backward()
        F.cross_entropy(m(xs * 2), ys).backward()
    local_only = [p.grad.clone() for p in m.parameters()]
    F.cross_entropy(m(xs * 3), ys).backward()
    ref = build("mlp", 0)
    for k in (1, 2, 3):
        F.cross_entropy(ref(x * k), y).backward()
    for p, q in zip(m.parameters(), ref.parameters()):
        assert float((p.grad - q.grad).abs().max()) <= TOL
    assert any(float((a - p.grad).abs().max()) > 1e-6 for a, p in zip(local_only, m.parameters()))
    ok("no_sync accumulates locally, the next backward averages the sum")

    # Two forwards, then one backward through both (a GAN's D(real), D(fake)), as PyTorch allows.
    m = DDP(build("mlp", 0))
    (m(xs).sum() + m(xs * 2).sum()).backward()
    ref = build("mlp", 0)
    ((ref(x).sum() + ref(x * 2).sum()) / N).backward()
    for p, q in zip(m.parameters(), ref.parameters()):
        assert float((p.grad - q.grad).abs().max()) <= TOL
    ok("two forwards before one backward are reduced once")

    # Unused parameters: a branch that rank 0 alone uses.
    class Branchy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(6, 3)
            self.b = nn.Linear(6, 3)
            self.never = nn.Linear(6, 3)

        def forward(self, x, use_b):
            return self.a(x) + (self.b(x) if use_b else 0)

    torch.manual_seed(0)
    m = DDP(Branchy(), find_unused_parameters=True)
    F.cross_entropy(m(xs, R == 0), ys).backward()
    assert m.module.never.weight.grad is None  # used by no rank: left alone
    gb = [None] * N
    dist.all_gather_object(gb, m.module.b.weight.grad.numpy())
    assert all(np.array_equal(gb[0], g) for g in gb)  # rank 0's gradient, averaged over N
    torch.manual_seed(0)
    solo = Branchy()
    F.cross_entropy(solo(x[:share], True), y[:share]).backward()
    assert float((m.module.b.weight.grad - solo.b.weight.grad / N).abs().max()) <= TOL
    ok("find_unused_parameters: globally unused grads untouched, partly used averaged")

    torch.manual_seed(0)
    m = DDP(Branchy())
    F.cross_entropy(m(xs, True), ys).backward()
    try:
        m(xs, True)
    except RuntimeError as e:
        assert str(e).startswith("Expected to have finished reduction in the prior iteration")
        assert "Parameter indices which did not receive grad for rank " + str(R) + ": 4 5" in str(e)
    else:
        raise AssertionError("no error for an unused parameter without find_unused_parameters")
    ok("unused parameter without find_unused_parameters: PyTorch's error at the next forward")

    # gradient_as_bucket_view: .grad are views of the buckets, and stay so across steps.
    m = DDP(build("mlp", R), gradient_as_bucket_view=True, bucket_cap_mb=0.001)
    ref = train_reference("mlp")
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for step in range(STEPS):
        bx, by = batch(step, "mlp")
        opt.zero_grad(set_to_none=False)
        F.cross_entropy(
            m(bx[R * share : (R + 1) * share]), by[R * share : (R + 1) * share]
        ).backward()
        opt.step()
    bases = {id(b.flat) for b in m._buckets}
    assert all(id(p.grad.numpy().base) in bases for p in m.parameters())
    close(m.module, ref, "gradient_as_bucket_view")
    ok("gradient_as_bucket_view: grads are bucket views, same training")

    # Bucket rebuild, as PyTorch: one bucket in the first iteration, then (at the next forward)
    # buckets in the order the gradients became ready, so that the first all-reduce starts
    # while backward still computes the rest. Swap registers b first but applies it last.
    class Swap(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.b = nn.Linear(8, 3)
            self.a = nn.Linear(6, 8)
            self.c = nn.Linear(6, 8)

        def forward(self, x, use_c=True):
            return self.b(self.a(x) * (self.c(x) if use_c else 1))

    events: list[tuple[str, int]] = []

    def logging_hook(state, bucket):
        events.append(("launch", bucket.index()))
        return dist.all_reduce(bucket.buffer(), dist.ReduceOp.AVG, async_op=True).get_future()

    def watched(module: nn.Module, **kwargs) -> DDP:
        # Registered before DDP's own hooks, so each ("grad", i) precedes what DDP does with it.
        for i, p in enumerate(module.parameters()):
            p.register_post_accumulate_grad_hook(lambda p, i=i: events.append(("grad", i)))
        m = DDP(module, **kwargs)
        m.register_comm_hook(None, logging_hook)
        return m

    def launched_before_last_grad() -> bool:
        last_grad = max(i for i, e in enumerate(events) if e[0] == "grad")
        return events.index(("launch", 0)) < last_grad

    torch.manual_seed(0)
    m = watched(Swap(), bucket_cap_mb=0.0002)  # 209 bytes: three buckets after the rebuild
    assert len(m._buckets) == 1
    m(xs).sum().backward()
    assert not launched_before_last_grad(), events
    if R == 1:  # a rank's own ready order is overruled by rank 0's
        m._rebuilt_order.reverse()
    events.clear()
    m(xs).sum().backward()
    layout = [b.indices for b in m._buckets]
    assert layout == [[1, 0], [5, 4], [3, 2]], layout  # b's grads first, then c's, then a's
    assert m._launch_log == [0, 1, 2] and launched_before_last_grad(), events
    assert events.index(("launch", 0)) < events.index(("grad", 2)), events
    every = [None] * N
    dist.all_gather_object(every, layout)
    assert all(x == layout for x in every), every
    ok(f"bucket rebuild: ready order {layout}, bucket 0 launched before a's gradients")

    # static_graph: the first iteration finds the unused parameters (here c on rank 1) and
    # delays every all-reduce to the end of its backward; the third forward rebuilds.
    def static_reference() -> nn.Module:
        torch.manual_seed(0)
        ref = Swap()
        opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
        for step in range(STEPS):
            bx, _ = batch(step, "mlp")
            opt.zero_grad()
            (
                sum(ref(bx[r * share : (r + 1) * share], r != 1).sum() for r in range(N)) / N
            ).backward()
            opt.step()
        return ref

    torch.manual_seed(R)
    m = watched(Swap(), bucket_cap_mb=0.0002, static_graph=True)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for step in range(STEPS):
        bx, _ = batch(step, "mlp")
        events.clear()
        opt.zero_grad()
        m(bx[R * share : (R + 1) * share], R != 1).sum().backward()
        opt.step()
        same_on_all_ranks(m, f"static_graph step {step}")
        if step == 0:
            assert not launched_before_last_grad(), events
            assert m._unused == ([4, 5] if R == 1 else []), m._unused
        if step == 1:
            assert not m._has_rebuilt_buckets
    assert m._has_rebuilt_buckets and launched_before_last_grad(), events
    close(m.module, static_reference(), "static_graph")
    ok("static_graph: unused found once, first all-reduce delayed, rebuilt at the third forward")

    sd = m.state_dict()
    assert list(sd)[:2] == ["module.b.weight", "module.b.bias"], list(sd)[:2]
    ok("state_dict keys carry the module. prefix")

dist.barrier()
ok(f"ddp job on {N} ranks done")
