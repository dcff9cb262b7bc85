"""The GPU check: one command, under 5 minutes, on a machine with a GPU (issue 17).

    python tools/gpu_check.py [--json results.json] [--quick]

Needs only what such a machine has: CuPy, PyTorch with CUDA, NumPy (and the repository's
tests/opinfo tables). Three parts, each with a time budget:

1. **The op table on the GPU.** Every row and sample of tests/opinfo, in float32, run by
   chainrule on ``cuda`` and compared with chainrule on the CPU and with PyTorch on CUDA:
   outputs, and the gradients of ``sum(outputs)`` for rows that are differentiable.
2. **The seed GAN loop with ``.cuda()``.** The SRGAN update loop of examples/seeds (models,
   criterion and inputs moved with ``.cuda()``, the corrected update order) for three steps;
   its losses against the same loop on the CPU and in PyTorch CUDA; then the seed program
   itself, as written.
3. **SRGAN step time** against PyTorch CUDA, at the demo's size (2x, 32x32 patches, batch 8)
   and at 4x with 96x96 patches, batch 16 (64 channels, 16 residual blocks, as SRGAN).
4. **Beyond the op table** (a few seconds): ``gradcheck`` of CUDA inputs, the per-GPU random
   generators (independent of the CPU's; ``cuda.get_rng_state``/``set_rng_state``; dropout,
   rrelu, a distribution, ``nn.init`` and a layer built on cuda drawing from them),
   ``parametrizations.orthogonal``, ``geqrf``, ``stft``/``istft`` and a
   ``TransformedDistribution`` on CUDA against the CPU (``geqrf`` and ``stft`` against
   PyTorch CUDA too); ops, backward and a step on the last GPU while GPU 0 is current,
   ``Generator(device='cuda')``'s device and draws, a compiled function's draws for CUDA
   tensors from the GPU's generator, and batched LU (cuBLAS getrfBatched) against the CPU
   and PyTorch CUDA.

PyTorch's TF32 is switched off for all three, so both libraries do the same float32 arithmetic.

Without a GPU it prints ``skipped: no GPU`` and the reason, and exits 0. It exits 1 when a
check fails. Written against chainrule's public API only, so it measures what users get.
Over 400 lines because it is one command: the four parts and their checks, written out.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import pathlib
import runpy
import sys
import time
import traceback
from typing import Any, Callable

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _torch_cuda() -> tuple[Any, str]:
    """PyTorch when it has CUDA, else None and why."""
    try:
        import torch
    except ImportError as e:
        return None, f"PyTorch is not installed ({e})"
    if not torch.cuda.is_available():
        return None, "PyTorch has no CUDA here"
    return torch, ""


def _to_np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy()


def _flat(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in _flat(o)]
    return [out]


def _close(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> bool:
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        return bool(np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True))
    return bool(np.array_equal(a, b))


# 1. The op table --------------------------------------------------------------------------------
def _run_case(m: Any, row: Any, sample: Any, device: str) -> tuple[list[np.ndarray], list[Any]]:
    """Outputs and input gradients of one op-table case in library ``m`` on ``device``."""
    args, leaves = [], []
    for i, a in enumerate(sample.args):
        if isinstance(a, np.ndarray):
            if a.dtype.kind == "f":
                rg = row.differentiable and i not in sample.no_grad
                t = m.tensor(a.astype(np.float32)).to(device).requires_grad_(rg)
                if rg:
                    leaves.append(t)
            else:
                t = m.tensor(a).to(device)
            args.append(t)
        else:
            args.append(a)
    outs = [o for o in _flat(row.call(m, *args, **sample.kwargs)) if hasattr(o, "shape")]
    grads: list[Any] = []
    diff = [o for o in outs if o.requires_grad]
    if leaves and diff:
        total = sum(o.float().sum() for o in diff)
        gs = m.autograd.grad(total, leaves, allow_unused=True)
        grads = [None if g is None else _to_np(g) for g in gs]
    return [_to_np(o) for o in outs], grads


def _same(ref: Any, got: Any, atol: float, rtol: float) -> bool:
    (ro, rg), (go, gg) = ref, got
    if len(ro) != len(go) or len(rg) != len(gg):
        return False
    pairs = list(zip(ro, go)) + [(a, b) for a, b in zip(rg, gg) if a is not None or b is not None]
    return all(a is not None and b is not None and _close(a, b, atol, rtol) for a, b in pairs)


def check_op_table(torch: Any, budget: float, quick: bool) -> dict[str, Any]:
    import chainrule as cr
    from tests.opinfo.registry import all_rows

    t0 = time.perf_counter()
    res: dict[str, Any] = {"cases": 0, "match_cpu": 0, "match_torch": 0, "failures": []}
    rows = all_rows()
    for row in rows[::7] if quick else rows:
        for k, s in enumerate(row.samples(np.random.default_rng(1234))):
            if time.perf_counter() - t0 > budget:
                res["stopped"] = f"time budget ({budget:.0f} s) spent at row {row.name}"
                return res
            name = f"{row.name}-{s.name or k}"
            res["cases"] += 1
            tol = (max(row.atol, 1e-4), max(row.rtol, 1e-3))  # float32 on a GPU: TF32 off
            try:
                cpu = _run_case(cr, row, s, "cpu")
                gpu = _run_case(cr, row, s, "cuda")
            except Exception as e:  # noqa: BLE001 - each case's failure is reported
                res["failures"].append(f"{name}: {type(e).__name__}: {str(e)[:200]}")
                continue
            if _same(cpu, gpu, *tol):
                res["match_cpu"] += 1
            else:
                res["failures"].append(f"{name}: CUDA result differs from the CPU one")
            if torch is not None and row.torch:
                try:
                    ref = _run_case(torch, row, s, "cuda")
                except Exception as e:  # noqa: BLE001
                    res["failures"].append(f"{name}: PyTorch CUDA failed: {type(e).__name__}")
                    continue
                if _same(ref, gpu, *tol):
                    res["match_torch"] += 1
                else:
                    res["failures"].append(f"{name}: CUDA result differs from PyTorch CUDA")
    res["seconds"] = round(time.perf_counter() - t0, 1)
    return res


# 2. The seed GAN loop ---------------------------------------------------------------------------
def _seed_loop(m: Any, device: str, steps: int = 3) -> list[tuple[float, float]]:
    """The seed program's SRGAN loop (corrected order), models and data on ``device``."""
    import workloads

    mods = workloads._srgan_models(m)
    nn, optim = m.nn, m.optim
    netG = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.PReLU(),
        nn.Conv2d(8, 12, 3, padding=1),
        nn.PixelShuffle(2),
    )
    netD = mods.Discriminator(8)
    workloads._init_like(m, netG, 1)
    workloads._init_like(m, netD, 2)
    criterion = mods.GeneratorLoss()
    if device == "cuda":
        netG, netD, criterion = netG.cuda(), netD.cuda(), criterion.cuda()
    optimizerG, optimizerD = optim.Adam(netG.parameters()), optim.Adam(netD.parameters())
    rng = np.random.default_rng(0)
    bar = [
        (rng.uniform(0, 1, (2, 3, 8, 8)), rng.uniform(0, 1, (2, 3, 16, 16))) for _ in range(steps)
    ]
    losses = []
    for data, target in bar:
        real_img = m.from_numpy(target.astype(np.float32))
        z = m.from_numpy(data.astype(np.float32))
        if device == "cuda":
            real_img, z = real_img.cuda(), z.cuda()
        fake_img = netG(z)
        netD.zero_grad()
        real_out = netD(real_img).mean()
        fake_out = netD(fake_img).mean()
        d_loss = 1 - real_out + fake_out
        d_loss.backward(retain_graph=True)
        optimizerD.step()
        netG.zero_grad()
        fake_out = netD(fake_img).mean()
        g_loss = criterion(fake_out, fake_img, real_img)
        g_loss.backward()
        optimizerG.step()
        losses.append((d_loss.item(), g_loss.item()))
    return losses


def check_seed_loop(torch: Any) -> dict[str, Any]:
    import chainrule as cr

    res: dict[str, Any] = {}
    try:
        cpu, gpu = _seed_loop(cr, "cpu"), _seed_loop(cr, "cuda")
        res["chainrule_cuda"] = gpu
        res["matches_cpu"] = bool(np.allclose(cpu, gpu, rtol=1e-3, atol=1e-4))
        if torch is not None:
            ref = _seed_loop(torch, "cuda")
            res["torch_cuda"] = ref
            res["matches_torch"] = bool(np.allclose(ref, gpu, rtol=1e-3, atol=1e-4))
    except Exception as e:  # noqa: BLE001
        res["error"] = f"{type(e).__name__}: {e}"
        res["traceback"] = traceback.format_exc(limit=6)
    # The seed program itself, unmodified (it moves its inputs with .cuda() when it can).
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(
                str(ROOT / "examples" / "seeds" / "srgan_update_order.py"), run_name="__main__"
            )
        res["seed_program"] = "ran"
    except Exception as e:  # noqa: BLE001
        res["seed_program"] = f"{type(e).__name__}: {e}"
    res["seed_program_output"] = out.getvalue().splitlines()[:6]
    return res


# 3. SRGAN step time -----------------------------------------------------------------------------
def _srgan_step(
    m: Any, scale: int, patch: int, batch: int, channels: int, blocks: int
) -> Callable[[], Any]:
    import workloads

    mods = workloads._srgan_models(m)
    netG = mods.Generator(scale, channels, blocks)
    netD = mods.Discriminator(channels)
    workloads._init_like(m, netG, 4)
    workloads._init_like(m, netD, 5)
    netG, netD = netG.cuda(), netD.cuda()
    criterion = mods.GeneratorLoss().cuda()
    optG = m.optim.Adam(netG.parameters(), lr=1e-4)
    optD = m.optim.Adam(netD.parameters(), lr=1e-4)
    rng = np.random.default_rng(6)
    hr_np = rng.uniform(0, 1, (batch, 3, patch, patch)).astype(np.float32)
    p = patch // scale
    lr_np = hr_np.reshape(batch, 3, p, scale, p, scale).mean(axis=(3, 5))
    bic_np = np.repeat(np.repeat(lr_np, scale, axis=2), scale, axis=3)
    lr, bic, hr = (m.from_numpy(a.copy()).cuda() for a in (lr_np, bic_np, hr_np))

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
        return g_loss

    return step


def _time(m: Any, step: Callable[[], Any], budget: float) -> float:
    """Median milliseconds of ``step`` (GPU work finished before each clock read)."""
    for _ in range(2):
        step()
    m.cuda.synchronize()
    times: list[float] = []
    t_end = time.perf_counter() + budget
    while len(times) < 3 or (len(times) < 20 and time.perf_counter() < t_end):
        t = time.perf_counter()
        step()
        m.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1000)
    return float(np.median(times))


SIZES = {
    "demo (2x, 32x32, batch 8, 24 ch, 2 blocks)": (2, 32, 8, 24, 2),
    "4x, 96x96, batch 16, 64 ch, 16 blocks": (4, 96, 16, 64, 16),
}


def check_srgan_speed(torch: Any, budget: float, sizes: str = "all") -> dict[str, Any]:
    import chainrule as cr

    res: dict[str, Any] = {}
    for label, size in SIZES.items():
        if sizes == "demo" and not label.startswith("demo"):
            continue
        r: dict[str, Any] = {}
        for name, m in (("chainrule", cr), ("torch", torch)):
            if m is None:
                continue
            try:
                r[f"{name}_ms"] = round(_time(m, _srgan_step(m, *size), budget / 4), 2)
            except Exception as e:  # noqa: BLE001
                r[f"{name}_error"] = f"{type(e).__name__}: {str(e)[:200]}"
        if "chainrule_ms" in r and "torch_ms" in r:
            r["ratio"] = round(r["chainrule_ms"] / r["torch_ms"], 2)
        res[label] = r
    return res


# 4. Beyond the op table -------------------------------------------------------------------------
def _gaps(torch: Any) -> dict[str, Callable[[], bool]]:
    import chainrule as cr

    rng = np.random.default_rng(5)

    def h(t: Any) -> np.ndarray:
        return t.detach().cpu().numpy()

    def gradcheck() -> bool:
        x = cr.tensor(rng.standard_normal((3, 3)), device="cuda", requires_grad=True)
        f = lambda a: (a.sin() @ a).exp()  # noqa: E731
        return bool(cr.autograd.gradcheck(f, (x,)) and cr.autograd.gradgradcheck(f, (x,)))

    def rng_streams() -> bool:
        cr.manual_seed(0)
        a, b = h(cr.randn(6)), h(cr.randn(6, device="cuda"))
        cr.manual_seed(0)
        b2, a2 = h(cr.randn(6, device="cuda")), h(cr.randn(6))
        state = cr.cuda.get_rng_state()
        c = h(cr.rand(5, device="cuda"))
        cr.rand(3)
        cr.cuda.set_rng_state(state)
        return bool(
            (a == a2).all() and (b == b2).all() and (c == h(cr.rand(5, device="cuda"))).all()
        )

    def cuda_draws() -> bool:
        """Dropout, rrelu, a distribution, nn.init and a layer built on cuda draw from the
        GPU's generator: the CPU stream is untouched, cuda.manual_seed and get/set_rng_state
        replay them, and a CPU generator for a CUDA tensor raises PyTorch's error."""
        F = cr.nn.functional
        draws = lambda: [  # noqa: E731
            h(F.dropout(cr.ones(64, device="cuda"), 0.5)),
            h(F.rrelu(-cr.ones(8, device="cuda"), training=True)),
            h(cr.distributions.Normal(cr.zeros(8, device="cuda"), 1.0).rsample()),
            h(cr.nn.init.kaiming_uniform_(cr.empty(4, 4, device="cuda"))),
            h(cr.nn.Linear(4, 3, device="cuda").weight),
        ]
        cr.manual_seed(1)
        cpu = h(cr.rand(6))
        cr.manual_seed(1)
        cr.cuda.manual_seed(2)
        first = draws()
        ok = bool((h(cr.rand(6)) == cpu).all())
        cr.cuda.manual_seed(2)
        ok = ok and all((u == v).all() for u, v in zip(first, draws()))
        state = cr.cuda.get_rng_state()
        again = draws()
        cr.cuda.set_rng_state(state)
        ok = ok and all((u == v).all() for u, v in zip(again, draws()))
        try:
            cr.randn(3, device="cuda", generator=cr.Generator())
            ok = False
        except RuntimeError as e:
            ok = ok and str(e) == "Expected a 'cuda' device type for generator but found 'cpu'"
        return ok

    def orthogonal() -> bool:
        from chainrule.nn.utils.parametrizations import orthogonal as orth

        ok = True
        for mp in ("matrix_exp", "cayley", "householder"):
            outs = []
            for dev in ("cpu", "cuda"):
                cr.manual_seed(0)
                lin = orth(cr.nn.Linear(3, 5), orthogonal_map=mp).to(dev)
                x = cr.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=cr.float32, device=dev)
                lin(x).pow(2).sum().backward()
                outs.append((h(lin.weight), h(lin.parametrizations.weight.original.grad)))
            ok = ok and all(_close(b, a, 1e-5, 1e-4) for a, b in zip(*outs))
        return ok

    def geqrf_stft() -> bool:
        a = rng.standard_normal((2, 5, 3)).astype(np.float32)
        sig = rng.standard_normal(64).astype(np.float32)
        mine = {}
        for dev in ("cpu", "cuda"):
            q, tau = cr.geqrf(cr.tensor(a, device=dev))
            w = cr.hann_window(16, device=dev)
            s_ = cr.stft(
                cr.tensor(sig, device=dev), 16, hop_length=4, window=w, return_complex=True
            )
            y = cr.istft(s_, 16, hop_length=4, window=w, length=64)
            mine[dev] = [h(q), h(tau), h(s_), h(y)]
        ok = all(_close(b, a_, 1e-4, 1e-3) for a_, b in zip(mine["cpu"], mine["cuda"]))
        if torch is not None:
            tq, ttau = torch.geqrf(torch.tensor(a, device="cuda"))
            tw = torch.hann_window(16, device="cuda")
            ts = torch.stft(
                torch.tensor(sig, device="cuda"), 16, hop_length=4, window=tw, return_complex=True
            )
            ref = [_to_np(tq), _to_np(ttau), _to_np(ts)]
            ok = ok and all(_close(r, g, 1e-4, 1e-3) for r, g in zip(ref, mine["cuda"]))
        return ok

    def transformed() -> bool:
        import chainrule.distributions as D

        outs = []
        for dev in ("cpu", "cuda"):
            base = D.Normal(cr.zeros(3, device=dev), cr.ones(3, device=dev))
            d = D.TransformedDistribution(base, [D.transforms.StickBreakingTransform()])
            v = cr.tensor([0.2, 0.3, 0.1, 0.4], device=dev)
            outs.append(h(d.log_prob(v)))
        return _close(outs[1], outs[0], 1e-5, 1e-4)

    return {
        **_more_gaps(torch),
        **_rest_gaps(),
        "gradcheck_cuda_inputs": gradcheck,
        "rng_per_gpu": rng_streams,
        "cuda_draws_from_gpu_generator": cuda_draws,
        "orthogonal": orthogonal,
        "geqrf_stft": geqrf_stft,
        "transformed_distribution": transformed,
    }


def _more_gaps(torch: Any) -> dict[str, Callable[[], bool]]:
    """The checks of the issue-17 follow-ups: devices, generators, compile, batched LU."""
    import chainrule as cr

    rng = np.random.default_rng(6)

    def h(t: Any) -> np.ndarray:
        return t.detach().cpu().numpy()

    def ops_on_their_gpu() -> bool:
        """Forward, backward and a step on the last GPU while GPU 0 is current (with one
        GPU: the same on GPU 0), equal to the CPU; the current GPU is left as it was."""
        last = cr.cuda.device_count() - 1
        cr.manual_seed(3)
        cpu = cr.nn.Sequential(cr.nn.Conv2d(2, 3, 3, padding=1), cr.nn.Tanh(), cr.nn.Flatten())
        gpu = cr.nn.Sequential(cr.nn.Conv2d(2, 3, 3, padding=1), cr.nn.Tanh(), cr.nn.Flatten())
        gpu.load_state_dict(cpu.state_dict())
        gpu.to(f"cuda:{last}")
        x = cr.tensor(rng.standard_normal((4, 2, 5, 5)), dtype=cr.float32)
        outs = []
        for m, xx in ((cpu, x), (gpu, x.to(f"cuda:{last}"))):
            with cr.cuda.device(0):
                y = m(xx)
                (y * y).sum().backward()
            outs.append((h(y), h(m[0].weight.grad), y.device.index))
        return bool(
            outs[1][2] == last
            and cr.cuda.current_device() == 0
            and _close(outs[1][0], outs[0][0], 1e-5, 1e-4)
            and _close(outs[1][1], outs[0][1], 1e-4, 1e-4)
        )

    def generator_device() -> bool:
        """Generator(device='cuda') is for the current GPU (torch's .device), and draws."""
        last = cr.cuda.device_count() - 1
        ok = cr.Generator(device="cuda").device == cr.device("cuda", 0)
        with cr.cuda.device(last):
            ok = ok and cr.Generator(device="cuda").device == cr.device("cuda", last)
        g = cr.Generator(device="cuda").manual_seed(4)
        a = h(cr.randn(5, device="cuda", generator=g))
        g.manual_seed(4)
        return bool(ok and (a == h(cr.randn(5, device="cuda", generator=g))).all())

    def compiled_cuda_draws() -> bool:
        """A compiled function's draws for a CUDA tensor replay from the GPU's generator."""

        def f(x: Any) -> Any:
            return x * 2 + cr.randn(3, device="cuda").cpu()

        def runs(fn: Any) -> list[np.ndarray]:
            cr.manual_seed(0)
            cr.cuda.manual_seed_all(5)
            return [h(fn(cr.ones(3))) for _ in range(3)] + [h(cr.rand(2))]

        return all((a == b).all() for a, b in zip(runs(f), runs(cr.compile(f))))

    def batched_lu() -> bool:
        """A batch of square LUs (cuBLAS getrfBatched) and a rectangular one (cuSOLVER) equal
        LAPACK's on the CPU; info marks the singular matrix; PyTorch CUDA agrees on LU."""
        a = rng.standard_normal((6, 5, 5)).astype(np.float32)
        a[2, 1] = a[2, 0]
        ok = True
        for arr in (a, rng.standard_normal((3, 4, 6)).astype(np.float32)):
            got = [h(t) for t in cr.linalg.lu_factor_ex(cr.tensor(arr, device="cuda"))]
            ref = [h(t) for t in cr.linalg.lu_factor_ex(cr.tensor(arr))]
            ok = ok and _close(got[0], ref[0], 1e-4, 1e-3)
            ok = ok and bool((got[1] == ref[1]).all() and (got[2] == ref[2]).all())
            if torch is not None:
                tlu, tpiv = torch.linalg.lu_factor(torch.tensor(arr, device="cuda"))
                ok = ok and _close(_to_np(tlu), got[0], 1e-4, 1e-3)
        return ok

    return {
        "ops_run_on_their_gpu": ops_on_their_gpu,
        "generator_device": generator_device,
        "compiled_cuda_draws": compiled_cuda_draws,
        "batched_lu": batched_lu,
    }


def _compile_cuda_break() -> bool:
    """A compiled conv training step on the last GPU (GPU 0 current) that reads
    ``float(loss)`` before its backward (a graph break) runs the rest eagerly on plain CuPy
    arrays (Note [de-tracing after a break] in _compile/_tracer.py): results and weights
    equal eager's bit for bit over three steps, no replay."""
    import chainrule as cr

    F = cr.nn.functional
    dev = f"cuda:{cr.cuda.device_count() - 1}"  # the last GPU, GPU 0 current

    def h(t: Any) -> np.ndarray:
        return t.detach().cpu().numpy()

    cr.manual_seed(3)
    net = cr.nn.Sequential(cr.nn.Conv2d(2, 4, 3, padding=1), cr.nn.Flatten(), cr.nn.Linear(64, 3))
    nets = [copy.deepcopy(net).to(dev), net.to(dev)]

    def make(m: Any) -> Callable[..., Any]:
        o = cr.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

        def step(x: Any, y: Any) -> Any:
            o.zero_grad()
            loss = F.cross_entropy(m(x), y)
            scale = float(loss)
            loss.backward()
            o.step()
            return loss.detach() * scale

        return step

    eager, g = make(nets[0]), cr.compile(make(nets[1]))
    ok = True
    for i in range(3):
        x = cr.randn(2, 2, 4, 4).to(dev)
        y = cr.tensor([i % 3, (i + 1) % 3]).to(dev)
        ok = ok and _close(h(g(x, y)), h(eager(x, y)), 0, 0)
        for p, q in zip(nets[0].parameters(), nets[1].parameters()):
            ok = ok and _close(h(q), h(p), 0, 0)
    return bool(ok and g.stats["replays"] == 0)


def _rest_gaps() -> dict[str, Callable[[], bool]]:
    """The checks of the issue-17 remainders: raw-array code on its tensors' GPU, compile
    with CUDA inputs, 0-d CPU operands' gradients (with one GPU, all on GPU 0)."""
    import chainrule as cr

    F = cr.nn.functional

    def h(t: Any) -> np.ndarray:
        return t.detach().cpu().numpy()

    def last() -> str:
        return f"cuda:{cr.cuda.device_count() - 1}"

    def steps_on_param_gpu() -> bool:
        """SGD, Adam, AdamW steps and BatchNorm/cross_entropy training on the last GPU while
        GPU 0 is current, equal to the CPU's run; GPU 0 stays current."""
        ok = True
        for name in ("sgd", "adam", "adamw"):
            cr.manual_seed(1)
            cpu = cr.nn.Sequential(
                cr.nn.Linear(5, 6), cr.nn.BatchNorm1d(6), cr.nn.ReLU(), cr.nn.Linear(6, 3)
            ).double()
            gpu = copy.deepcopy(cpu).to(last())
            x = cr.randn(8, 5, dtype=cr.float64)
            t = cr.tensor([0, 1, 2, 0, 1, 2, 2, 1])
            for m, xx, tt in ((cpu, x, t), (gpu, x.to(last()), t.to(last()))):
                o = {
                    "sgd": lambda p: cr.optim.SGD(p, lr=0.1, momentum=0.9),
                    "adam": lambda p: cr.optim.Adam(p, lr=0.01),
                    "adamw": lambda p: cr.optim.AdamW(p, lr=0.01, foreach=True),
                }[name](m.parameters())
                with cr.cuda.device(0):
                    for _ in range(3):
                        o.zero_grad()
                        F.cross_entropy(m(xx), tt, label_smoothing=0.1).backward()
                        o.step()
                ok = ok and cr.cuda.current_device() == 0
            for a, b in zip(cpu.state_dict().values(), gpu.state_dict().values()):
                ok = ok and _close(h(b), h(a), 1e-10, 1e-8)
        return bool(ok)

    def compile_cuda_inputs() -> bool:
        """A compiled call that reads CUDA tensors (on the last GPU, GPU 0 current) is
        captured twice and then replayed, equal to eager bit for bit."""

        def f(a: Any, b: Any) -> Any:
            return (a @ b).tanh().sum(0)

        a, b = cr.randn(3, 4).to(last()), cr.randn(4, 2).to(last())
        g = cr.compile(f)
        same = all(_close(h(g(a, b)), h(f(a, b)), 0, 0) for _ in range(4))
        return bool(same and g.stats["replays"] == 2 and g.stats["eager"] == 0)

    def cpu_scalar_grad() -> bool:
        """A 0-d CPU tensor in a CUDA op gets its gradient on the CPU, equal to the CPU's."""
        res = []
        for dev in ("cpu", last()):
            s = cr.tensor(0.7, dtype=cr.float64, requires_grad=True)
            x = cr.arange(6, dtype=cr.float64).to(dev)
            (x * s + s.exp()).sum().backward()
            res.append((s.grad.device.type, h(s.grad)))
        return bool(res[1][0] == "cpu" and _close(res[1][1], res[0][1], 1e-12, 1e-12))

    def functional_sites() -> bool:
        """grid_sample, affine_grid, pad, max_unpool, one_hot and binary_cross_entropy on
        the last GPU with GPU 0 current, equal to the CPU."""
        cr.manual_seed(2)
        img = cr.randn(2, 3, 5, 5, dtype=cr.float64)
        grid = cr.rand(2, 3, 3, 2, dtype=cr.float64) * 2 - 1
        theta = cr.randn(2, 2, 3, dtype=cr.float64)
        t = cr.tensor([0, 2, 1])

        def run(dev: str) -> list[np.ndarray]:
            i = img.to(dev)
            with cr.cuda.device(0):
                return [
                    h(F.grid_sample(i, grid.to(dev), align_corners=False)),
                    h(F.affine_grid(theta.to(dev), [2, 3, 4, 4], align_corners=False)),
                    h(F.pad(i, (1, 2, 2, 1), mode="reflect")),
                    h(
                        F.max_unpool2d(
                            *F.max_pool2d(i, 2, return_indices=True), 2, output_size=(5, 5)
                        )
                    ),
                    h(F.one_hot(t.to(dev), 4)),
                    h(F.binary_cross_entropy(i.sigmoid(), i.sigmoid().detach() * 0.5)),
                ]

        return all(_close(b, a, 1e-10, 1e-8) for a, b in zip(run("cpu"), run(last())))

    return {
        "steps_on_param_gpu": steps_on_param_gpu,
        "compile_cuda_inputs": compile_cuda_inputs,
        "compile_cuda_break": _compile_cuda_break,
        "cpu_scalar_grad": cpu_scalar_grad,
        "functional_sites": functional_sites,
    }


def check_device_gaps(torch: Any) -> dict[str, Any]:
    """Each check of part 4: True, False (a mismatch) or the error it raised."""
    res: dict[str, Any] = {}
    for name, fn in _gaps(torch).items():
        try:
            res[name] = fn()
        except Exception as e:  # noqa: BLE001 - each check's failure is reported
            res[name] = f"{type(e).__name__}: {str(e)[:200]}"
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="also write the results to this file")
    p.add_argument("--quick", action="store_true", help="every 7th op-table row only")
    p.add_argument("--op-budget", type=float, default=150.0, help="seconds for the op table")
    p.add_argument("--speed-budget", type=float, default=60.0, help="seconds for the timings")
    p.add_argument(
        "--speed-sizes",
        choices=("all", "demo"),
        default="all",
        help="time the SRGAN step at both sizes, or at the demo's only (for the CPU stand-in, "
        "where a 4x step takes minutes)",
    )
    args = p.parse_args(argv)

    import chainrule as cr

    if not cr.cuda.is_available():
        import importlib.util

        if importlib.util.find_spec("cupy") is None:
            why = "CuPy is not installed: pip install 'chainrule[cuda]'"
        else:
            why = "CuPy is installed but sees no GPU"
        print(f"skipped: no GPU ({why}; chainrule.cuda.is_available() is False)")
        return 0
    torch, why_not = _torch_cuda()
    if torch is not None:
        # The same float32 arithmetic on both sides: PyTorch lets cuDNN use TF32 by default,
        # CuPy does not (CUPY_TF32 unset), and TF32 alone would exceed the op table's tolerances.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    print(f"GPU: {cr.cuda.get_device_name()}; PyTorch CUDA: {why_not or torch.__version__}")

    results: dict[str, Any] = {"device": cr.cuda.get_device_name()}
    t0 = time.perf_counter()
    ops = results["op_table"] = check_op_table(torch, args.op_budget, args.quick)
    print(
        f"op table: {ops['cases']} cases, {ops['match_cpu']} match the CPU, "
        f"{ops['match_torch']} match PyTorch CUDA, {len(ops['failures'])} failures"
        + (f" ({ops['stopped']})" if "stopped" in ops else "")
    )
    for f in ops["failures"][:25]:
        print("   ", f)
    seed = results["seed_loop"] = check_seed_loop(torch)
    print(
        f"seed GAN loop with .cuda(): {seed.get('error') or 'ran'}; matches CPU: "
        f"{seed.get('matches_cpu')}; matches PyTorch CUDA: {seed.get('matches_torch')}; "
        f"seed program: {seed['seed_program']}"
    )
    speed = results["srgan_step"] = check_srgan_speed(torch, args.speed_budget, args.speed_sizes)
    for label, r in speed.items():
        print(f"SRGAN step, {label}: {r}")
    gaps = results["beyond_op_table"] = check_device_gaps(torch)
    print("beyond the op table: " + ", ".join(f"{k}: {v}" for k, v in gaps.items()))
    results["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"total {results['seconds']} s")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    ok = (
        not ops["failures"]
        and "stopped" not in ops
        and seed.get("matches_cpu")
        and seed.get("matches_torch", True)
        and seed["seed_program"] == "ran"
        and all("chainrule_ms" in r for r in speed.values())
        and all(v is True for v in gaps.values())
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
