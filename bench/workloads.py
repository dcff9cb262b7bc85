"""Benchmark workloads, written once against the PyTorch API: ``m`` is ``chainrule`` or ``torch``.

Each workload is ``make(m) -> (step, check)``: ``step()`` is the timed unit; ``check()`` is run
once on fresh state before timing and returns a number computed the same way in both libraries
(e.g. the loss after one step from identical initial weights), so a fast wrong answer shows.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

Step = Callable[[], Any]
Check = Callable[[], float]


@dataclasses.dataclass
class Workload:
    make: Callable[[Any], tuple[Step, Check]]
    divisor: float = 1.0  # the reported unit is time / divisor (e.g. per op)
    unit: str = "ms"
    repeats: int = 200  # at most; the worker also stops after ~10 s
    warmup: int = 3
    reports_value: bool = False  # step() returns the figure (in ``unit``) instead of being timed


def op_chain(m: Any) -> tuple[Step, Check]:
    """200 elementwise ops (mul, add, tanh, exp, repeated) on float32[16], forward + backward."""
    x = m.tensor(np.linspace(-1, 1, 16, dtype=np.float32), requires_grad=True)

    def step() -> Any:
        x.grad = None
        y = x
        for _ in range(50):
            y = y * 0.9
            y = y + 0.1
            y = y.tanh()
            y = y.exp()
        y.sum().backward()
        return y

    def check() -> float:
        y = step()
        return float(y.sum().item()) + float(x.grad.abs().sum().item())

    return step, check


def fn_call(m: Any) -> tuple[Step, Check]:
    """10 calls of a tiny custom ``autograd.Function`` (saves its input and a float) chained on
    float32[16], forward + backward: the cost of one Function call (ctx, node, save, backward)."""

    class Scale(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: float) -> Any:
            ctx.k = k
            ctx.save_for_backward(x)
            return x * k

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * ctx.k, None

    x = m.tensor(np.linspace(-1, 1, 16, dtype=np.float32), requires_grad=True)

    def step() -> Any:
        x.grad = None
        y = x
        for _ in range(10):
            y = Scale.apply(y, 0.9)
        y.sum().backward()
        return y

    def check() -> float:
        y = step()
        return float(y.sum().item()) + float(x.grad.abs().sum().item())

    return step, check


def _init_like(m: Any, model: Any, seed: int = 0) -> None:
    """Give ``model`` the same initial weights in both libraries (uniform, fan-in scaled)."""
    rng = np.random.default_rng(seed)
    with m.no_grad():
        for p in model.parameters():
            fan_in = int(np.prod(p.shape[1:])) if len(p.shape) > 1 else p.shape[0]
            b = 1.0 / np.sqrt(max(fan_in, 1))
            p.copy_(m.from_numpy(rng.uniform(-b, b, tuple(p.shape)).astype(np.float32)))


def _classifier_step(m: Any, model: Any, x: Any, y: Any) -> tuple[Step, Check]:
    F = m.nn.functional
    opt = m.optim.SGD(model.parameters(), lr=0.01)

    def step() -> Any:
        opt.zero_grad()
        loss = F.nll_loss(F.log_softmax(model(x), dim=1), y)
        loss.backward()
        opt.step()
        return loss

    def check() -> float:
        step()
        with m.no_grad():
            return float(F.nll_loss(F.log_softmax(model(x), dim=1), y).item())

    return step, check


def mlp_step(m: Any) -> tuple[Step, Check]:
    """784-512-512-10 MLP with ReLU, batch 128, log_softmax + NLL, forward + backward + SGD."""
    nn = m.nn
    model = nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
    )
    _init_like(m, model)
    rng = np.random.default_rng(1)
    x = m.from_numpy(rng.standard_normal((128, 784)).astype(np.float32))
    y = m.from_numpy(rng.integers(0, 10, 128).astype(np.int64))
    return _classifier_step(m, model, x, y)


def cnn_step(m: Any) -> tuple[Step, Check]:
    """Batch 32 of 1x28x28: conv3x3(1->16, pad 1)+ReLU+maxpool2, conv3x3(16->32, pad 1)+ReLU+
    maxpool2, linear -> 10, log_softmax + NLL, SGD."""
    nn = m.nn
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 7 * 7, 10),
    )
    _init_like(m, model)
    rng = np.random.default_rng(2)
    x = m.from_numpy(rng.standard_normal((32, 1, 28, 28)).astype(np.float32))
    y = m.from_numpy(rng.integers(0, 10, 32).astype(np.int64))
    return _classifier_step(m, model, x, y)


def _deep_chain(n: int) -> Callable[[Any], tuple[Step, Check]]:
    def make(m: Any) -> tuple[Step, Check]:
        """A chain of n scalar ops (alternating mul and add), forward + backward."""
        x = m.tensor(1.0, requires_grad=True)

        def step() -> Any:
            x.grad = None
            y = x
            for i in range(n // 2):
                y = y * 1.0001
                y = y + 1e-4
            y.backward()
            return y

        def check() -> float:
            y = step()
            return float(y.item()) + float(x.grad.item())

        return step, check

    return make


def walkthrough(m: Any) -> tuple[Step, Check]:
    """The X = [4, 3, 2] index-assignment walkthrough (forward, Y[i] = yi, backward)."""
    g = m.tensor([10.0, 100.0, 1000.0])

    def step() -> Any:
        X = m.tensor([4.0, 3.0, 2.0], requires_grad=True)
        x0, x1, x2 = X[0], X[1], X[2]
        y0 = 3 * x0 + 7 * x1**2 + 6 * x2**3
        y1 = 4 * x0 + 8 * x1**2 + 3 * x2**3
        y2 = 5 * x0 + 9 * x1**2 + 1 * x2**3
        Y = m.zeros(3)
        Y[0], Y[1], Y[2] = y0, y1, y2
        Y.backward(gradient=g)
        return X

    def check() -> float:
        return float(step().grad.sum().item())

    return step, check


def grad_penalty(m: Any) -> tuple[Step, Check]:
    """A WGAN-GP style step: loss = D(x).mean() + 10 * (||dD(x^)/dx^|| - 1)^2, with double
    backward through a 64-128-128-1 MLP critic, batch 64."""
    nn = m.nn
    D = nn.Sequential(
        nn.Linear(64, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh(), nn.Linear(128, 1)
    )
    _init_like(m, D)
    rng = np.random.default_rng(3)
    x = m.from_numpy(rng.standard_normal((64, 64)).astype(np.float32))
    opt = m.optim.SGD(D.parameters(), lr=1e-3)

    def step() -> Any:
        opt.zero_grad()
        xh = x.detach().requires_grad_(True)
        out = D(xh)
        (g,) = m.autograd.grad(out.sum(), xh, create_graph=True)
        gp = ((g.pow(2).sum(dim=1).sqrt() - 1) ** 2).mean()
        loss = D(x).mean() + 10 * gp
        loss.backward()
        opt.step()
        return loss

    def check() -> float:
        return float(step().item())

    return step, check


def _srgan_models(m: Any) -> Any:
    """examples/srgan/models.py with ``torch`` bound to ``m`` (the file imports chainrule)."""
    import pathlib
    import types

    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "srgan" / "models.py"
    src = path.read_text().replace("import chainrule as torch\nfrom chainrule import nn\n", "")
    mod = types.ModuleType(f"srgan_models_{m.__name__}")
    mod.__dict__.update(torch=m, nn=m.nn)
    exec(compile(src, str(path), "exec"), mod.__dict__)
    return mod


def srgan_step(m: Any) -> tuple[Step, Check]:
    """One adversarial step of examples/srgan (scale 2, batch 8, 32x32 patches, 32 channels,
    3 residual blocks, Adam): D update with retain_graph, then G update with the perceptual
    criterion, as in examples/srgan/srgan.py."""
    mods = _srgan_models(m)
    netG, netD = mods.Generator(2, 32, 3), mods.Discriminator(32)
    _init_like(m, netG, 4)
    _init_like(m, netD, 5)
    criterion = mods.GeneratorLoss()
    optG = m.optim.Adam(netG.parameters(), lr=1e-4)
    optD = m.optim.Adam(netD.parameters(), lr=1e-4)
    rng = np.random.default_rng(6)
    hr_np = rng.uniform(0, 1, (8, 3, 32, 32)).astype(np.float32)
    lr_np = hr_np.reshape(8, 3, 16, 2, 16, 2).mean(axis=(3, 5))
    bic_np = np.repeat(np.repeat(lr_np, 2, axis=2), 2, axis=3)
    lr, bic, hr = (m.from_numpy(a.copy()) for a in (lr_np, bic_np, hr_np))

    def step() -> Any:
        fake = netG(lr, bic)
        netD.zero_grad()
        d_loss = 1 - netD(hr).mean() + netD(fake).mean()
        d_loss.backward(retain_graph=True)
        optD.step()
        netG.zero_grad()
        g_loss = criterion(netD(fake).mean(), fake, hr)
        g_loss.backward()
        optG.step()
        return d_loss, g_loss

    def check() -> float:
        d, g = step()
        return float(d.item()) + float(g.item())

    return step, check


def _gpt_block_classes(m: Any) -> Any:
    """nanoGPT's Block (model.py), written against ``m``: pre-norm causal self-attention with
    F.scaled_dot_product_attention(is_causal=True), then a 4x GELU MLP, dropout 0."""
    nn, F = m.nn, m.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self, n_embd: int, n_head: int) -> None:
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.n_head, self.n_embd = n_head, n_embd

        def forward(self, x: Any) -> Any:
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True
            )
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self, n_embd: int) -> None:
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd)

        def forward(self, x: Any) -> Any:
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self, n_embd: int, n_head: int) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention(n_embd, n_head)
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = MLP(n_embd)

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    return Block


def gpt_blocks(m: Any) -> tuple[Step, Check]:
    """4 nanoGPT Blocks (d_model 128, 4 heads, causal SDPA), context 64, batch 8, MSE to a
    fixed target, forward + backward + AdamW."""
    Block = _gpt_block_classes(m)
    model = m.nn.Sequential(*[Block(128, 4) for _ in range(4)])
    _init_like(m, model, 7)
    rng = np.random.default_rng(8)
    x = m.from_numpy(rng.standard_normal((8, 64, 128)).astype(np.float32))
    y = m.from_numpy(rng.standard_normal((8, 64, 128)).astype(np.float32))
    opt = m.optim.AdamW(model.parameters(), lr=1e-3)
    F = m.nn.functional

    def step() -> Any:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    def check() -> float:
        step()
        with m.no_grad():
            return float(F.mse_loss(model(x), y).item())

    return step, check


def lstm_lm_step(m: Any) -> tuple[Step, Check]:
    """Word-level LSTM language model step (the PyTorch word_language_model example's shape):
    Embedding 10k -> 256, 2-layer LSTM hidden 256, sequence 35, batch 20, Linear 256 -> 10k,
    cross_entropy, backward, SGD."""
    nn = m.nn
    ntok, nhid, seq, batch = 10_000, 256, 35, 20

    class LM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = nn.Embedding(ntok, nhid)
            self.rnn = nn.LSTM(nhid, nhid, 2)
            self.decoder = nn.Linear(nhid, ntok)

        def forward(self, x: Any) -> Any:
            out, _ = self.rnn(self.encoder(x))
            return self.decoder(out).view(-1, ntok)

    model = LM()
    _init_like(m, model, 7)
    rng = np.random.default_rng(8)
    x = m.from_numpy(rng.integers(0, ntok, (seq, batch)).astype(np.int64))
    y = m.from_numpy(rng.integers(0, ntok, seq * batch).astype(np.int64))
    opt = m.optim.SGD(model.parameters(), lr=0.1)
    F = m.nn.functional

    def step() -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    def check() -> float:
        step()
        with m.no_grad():
            return float(F.cross_entropy(model(x), y).item())

    return step, check


def lstm_small_step(m: Any) -> tuple[Step, Check]:
    """One-layer LSTM, hidden 64, sequence 20, batch 8, input 32: MSE of the last hidden
    state against a target, forward + backward + SGD."""
    nn = m.nn
    m.manual_seed(0)
    lstm = nn.LSTM(32, 64, batch_first=True)
    _init_like(m, lstm)
    rng = np.random.default_rng(3)
    x = m.from_numpy(rng.standard_normal((8, 20, 32)).astype(np.float32))
    target = m.from_numpy(rng.standard_normal((8, 64)).astype(np.float32))
    opt = m.optim.SGD(lstm.parameters(), lr=0.01)

    def step() -> Any:
        opt.zero_grad()
        out, _ = lstm(x)
        loss = ((out[:, -1] - target) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    def check() -> float:
        return float(step().item())

    return step, check


def _compiled(make: Callable[[Any], tuple[Step, Check]]) -> Callable[[Any], tuple[Step, Check]]:
    """The workload with chainrule's step compiled (``chainrule.compile``); PyTorch's stays
    eager (torch.compile needs a C++ compiler that this machine lacks)."""

    def mk(m: Any) -> tuple[Step, Check]:
        step, check = make(m)
        if m.__name__ == "chainrule":
            return m.compile(step), check
        return step, check

    mk.__doc__ = make.__doc__
    return mk


WORKLOADS: dict[str, Workload] = {
    "op_chain": Workload(op_chain, divisor=200.0, unit="us/op"),
    "fn_call": Workload(fn_call, divisor=10.0, unit="us/call"),
    "mlp_step": Workload(mlp_step, unit="ms", repeats=50),
    "cnn_step": Workload(cnn_step, unit="ms", repeats=50),
    "chain_20k": Workload(_deep_chain(20_000), unit="s", repeats=5, warmup=1),
    "deep_10k": Workload(_deep_chain(10_000), divisor=10_000, unit="us/node", repeats=5, warmup=1),
    "deep_100k": Workload(
        _deep_chain(100_000), divisor=100_000, unit="us/node", repeats=3, warmup=1
    ),
    "deep_1M": Workload(
        _deep_chain(1_000_000), divisor=1_000_000, unit="us/node", repeats=1, warmup=0
    ),
    "walkthrough": Workload(walkthrough, unit="us", repeats=500),
    "grad_penalty": Workload(grad_penalty, unit="ms", repeats=50),
    "srgan_step": Workload(srgan_step, unit="ms", repeats=20, warmup=2),
    # Peak resident memory of a process doing 20 MLP steps (the unit MB means: report RSS).
    "mlp_rss_20": Workload(mlp_step, unit="MB", repeats=20, warmup=0),
    "lstm_lm_step": Workload(lstm_lm_step, unit="ms", repeats=30, warmup=2),
    "gpt_blocks": Workload(gpt_blocks, unit="ms", repeats=30, warmup=2),
    "lstm_small_step": Workload(lstm_small_step, unit="ms", repeats=50, warmup=2),
    # chainrule.compile (docs/compile.md): warm-up 3 = two captures and a first replay.
    "op_chain_compiled": Workload(_compiled(op_chain), divisor=200.0, unit="us/op", warmup=4),
    "walkthrough_compiled": Workload(_compiled(walkthrough), unit="us", repeats=500, warmup=4),
    "mlp_step_compiled": Workload(_compiled(mlp_step), unit="ms", repeats=50, warmup=4),
    "lstm_small_step_compiled": Workload(
        _compiled(lstm_small_step), unit="ms", repeats=50, warmup=4
    ),
    "srgan_step_compiled": Workload(_compiled(srgan_step), unit="ms", repeats=20, warmup=4),
}


# Checkpoints ----------------------------------------------------------------------------------
# A 200 MB state dict (50 float32 [1024, 1024] weights and their biases) saved to and loaded
# from a file in a temporary folder (hot in the page cache for both libraries). The "_rss"
# variants report the peak resident memory above the level just before the call, in MB: the
# kernel's high-water mark is reset first (writing 5 to /proc/self/clear_refs), so the figure
# is what the save or load itself adds, whatever the process held before. Each is measured
# once, in a process that never held the tensors before (the file is written by a child).
def _state_dict(m: Any) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    sd = {}
    for i in range(50):
        sd[f"layer{i}.weight"] = m.from_numpy(rng.standard_normal((1024, 1024), np.float32))
        sd[f"layer{i}.bias"] = m.from_numpy(rng.standard_normal(1024, np.float32))
    return sd


def _ckpt_dir() -> str:
    import atexit
    import shutil
    import tempfile

    d = tempfile.mkdtemp(prefix="bench_ckpt_")
    atexit.register(shutil.rmtree, d, True)
    return d


def _rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MB, from /proc/self/status."""
    got = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                got[line[:5]] = int(line.split()[1]) / 1024
    return got["VmRSS"], got["VmHWM"]


def _above_baseline(fn: Callable[[], Any]) -> float:
    """Peak RSS (MB) above the level before ``fn()``, while ``fn``'s result is still alive."""
    import gc

    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset the high-water mark to the current RSS
    base, _ = _rss_mb()
    out = fn()
    _, peak = _rss_mb()
    del out
    return peak - base


def _save_elsewhere(m: Any, path: str) -> None:
    """Write the checkpoint from a child process, so that this one never held (and freed) the
    state dict: an allocator that keeps freed memory would make a later load look free."""
    import os
    import subprocess
    import sys

    code = (
        f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
        f"import workloads, {m.__name__} as m; m.save(workloads._state_dict(m), {path!r})"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _checkpoint(kind: str, rss: bool) -> Callable[[Any], tuple[Step, Check]]:
    def make(m: Any) -> tuple[Step, Check]:
        path = f"{_ckpt_dir()}/ckpt"
        if kind == "save":
            sd = _state_dict(m)
            m.save(sd, path)

            def call() -> Any:
                return m.save(sd, path)
        else:
            _save_elsewhere(m, path)
            mmap = kind == "load_mmap"

            def call() -> Any:
                return m.load(path, mmap=mmap)

        def step() -> Any:
            return _above_baseline(call) if rss else call()

        def check() -> float:  # through a memory map: touches one page of one tensor
            w = m.load(path, mmap=True)["layer3.weight"].numpy()
            return float(w[0, :8].astype(np.float64).sum())

        return step, check

    return make


WORKLOADS.update(
    {
        "checkpoint_save": Workload(_checkpoint("save", False), unit="s", repeats=5, warmup=1),
        "checkpoint_load": Workload(_checkpoint("load", False), unit="s", repeats=5, warmup=1),
        "checkpoint_load_mmap": Workload(
            _checkpoint("load_mmap", False), unit="s", repeats=5, warmup=1
        ),
        # The step returns its figure (peak RSS above baseline, MB) instead of being timed.
        "checkpoint_save_rss": Workload(
            _checkpoint("save", True), unit="MB>base", repeats=1, warmup=0, reports_value=True
        ),
        "checkpoint_load_rss": Workload(
            _checkpoint("load", True), unit="MB>base", repeats=1, warmup=0, reports_value=True
        ),
        "checkpoint_load_mmap_rss": Workload(
            _checkpoint("load_mmap", True), unit="MB>base", repeats=1, warmup=0, reports_value=True
        ),
    }
)
