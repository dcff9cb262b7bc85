"""The SRGAN demo's shared-graph D/G update (examples/srgan) data-parallel on N ranks against
one process with the whole batch: float64, both networks' BatchNorms made SyncBatchNorm, 3
steps; generator and discriminator parameters within 1e-10, identical across ranks."""

from __future__ import annotations

import hashlib
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples" / "srgan"))

from models import Discriminator, Generator, GeneratorLoss  # noqa: E402

import chainrule as torch  # noqa: E402
import chainrule.distributed as dist  # noqa: E402
from chainrule import nn, optim  # noqa: E402
from chainrule.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

torch.set_default_dtype(torch.float64)
dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()
B, STEPS = 4, 3


def nets(seed: int, group):
    torch.manual_seed(seed)
    g = nn.SyncBatchNorm.convert_sync_batchnorm(Generator(2, 4, 1), group).double()
    d = nn.SyncBatchNorm.convert_sync_batchnorm(Discriminator(4), group).double()
    return g, d, GeneratorLoss().double()


def batch(step: int):
    rng = np.random.default_rng(step)
    hr = rng.random((B, 3, 16, 16))
    lr = hr.reshape(B, 3, 8, 2, 8, 2).mean((3, 5))
    bic = lr.repeat(2, 2).repeat(2, 3)
    return torch.from_numpy(lr), torch.from_numpy(bic), torch.from_numpy(hr)


def train(distributed: bool, group=None):
    plainG, plainD, criterion = nets(R if distributed else 0, group)
    netG, netD = (DDP(plainG), DDP(plainD)) if distributed else (plainG, plainD)
    optG = optim.Adam(netG.parameters(), lr=1e-3)
    optD = optim.Adam(netD.parameters(), lr=1e-3)
    share = B // N if distributed else B
    lo = R * share if distributed else 0
    for step in range(STEPS):
        lr, bic, hr = (t[lo : lo + share] for t in batch(step))
        fake = netG(lr, bic)
        netD.zero_grad()
        d_loss = 1 - netD(hr).mean() + netD(fake).mean()
        d_loss.backward(retain_graph=True, inputs=list(plainD.parameters()))
        optD.step()
        netG.zero_grad()
        g_loss = criterion(plainD(fake).mean(), fake, hr)
        g_loss.backward()
        optG.step()
        if distributed:
            h = hashlib.sha256()
            for p in list(plainG.parameters()) + list(plainD.parameters()):
                h.update(p.detach().numpy().tobytes())
            digests = [None] * N
            dist.all_gather_object(digests, h.hexdigest())
            assert len(set(digests)) == 1, f"step {step}: parameters differ across ranks"
    return plainG, plainD


# The reference: one process, whole batch. Its SyncBatchNorms use a group of this rank alone,
# where they are plain BatchNorm (every rank must create every group, in the same order).
alone = [dist.new_group([r]) for r in range(N)][R]
refG, refD = train(distributed=False, group=alone)
gotG, gotD = train(distributed=True)
for ref, got, name in ((refG, gotG, "G"), (refD, gotD, "D")):
    for (k, a), b in zip(ref.named_parameters(), got.parameters()):
        d = float((a - b).abs().max())
        assert d <= 1e-10, f"{name}.{k} differs by {d:g} on {N} ranks"
    for (k, a), b in zip(ref.named_buffers(), got.buffers()):
        if a.dtype == torch.float64:
            assert float((a - b).abs().max()) <= 1e-10, f"{name} buffer {k}"
if R == 0:
    print(f"OK srgan step on {N} ranks matches one process", flush=True)
