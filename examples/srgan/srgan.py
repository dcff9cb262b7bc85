"""Train a small SRGAN on patches of scikit-image's bundled images and report PSNR/SSIM
against bicubic upscaling on held-out images.

    python examples/srgan/srgan.py [--steps N] [--pretrain-steps N] [--scale 2|4] [--out DIR]
                                   [--resume] [--nproc N]

``--nproc N`` trains data-parallel on N processes (``chainrule.distributed`` over MPI): the
script relaunches itself through ``python -m chainrule.distributed.run``, both networks are
wrapped in ``DistributedDataParallel``, each rank draws ``batch / N`` patches of its own, and
rank 0 writes the checkpoints, pictures and scores.

The discriminator and generator updates share one forward of the fake images:
``d_loss.backward(retain_graph=True)``; after ``optimizerD.step()`` the generator loss runs the
discriminator again on ``fake_img``, the ordering PyTorch 2.x accepts (see
examples/seeds/srgan_update_order.py for the ordering it rejects).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from data import PatchSampler, held_out  # noqa: E402
from models import Discriminator, Generator, GeneratorLoss  # noqa: E402

import chainrule as torch  # noqa: E402
from chainrule import nn, optim  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=250, help="adversarial steps")
    p.add_argument("--pretrain-steps", type=int, default=400, help="MSE pre-training steps")
    p.add_argument("--scale", type=int, default=2, choices=(2, 4))
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--patch", type=int, default=32, help="HR patch size")
    p.add_argument("--channels", type=int, default=24)
    p.add_argument("--blocks", type=int, default=2)
    p.add_argument("--eval-size", type=int, default=192, help="held-out crop size (HR pixels)")
    p.add_argument("--out", default="srgan_out")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ckpt-every", type=int, default=100)
    p.add_argument("--nproc", type=int, default=1, help="data-parallel processes (MPI)")
    p.add_argument(
        "--compile",
        action="store_true",
        help="run the training steps through chainrule.compile (docs/compile.md)",
    )
    return p.parse_args(argv)


def psnr_ssim(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    return (
        float(peak_signal_noise_ratio(b, a, data_range=1.0)),
        float(structural_similarity(b, a, channel_axis=-1, data_range=1.0)),
    )


def save_checkpoint(path: pathlib.Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, str(tmp))
    os.replace(tmp, path)


def relaunch(args: argparse.Namespace, argv: list[str] | None) -> dict:
    """Run this script on ``args.nproc`` ranks through chainrule's launcher."""
    import subprocess

    cmd = [
        sys.executable,
        "-m",
        "chainrule.distributed.run",
        "--nproc-per-node",
        str(args.nproc),
        __file__,
        *(sys.argv[1:] if argv is None else argv),
    ]
    # The launcher and the ranks import the chainrule this process imported.
    root = str(pathlib.Path(torch.__file__).resolve().parents[1])
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    )
    return {"returncode": subprocess.call(cmd, env=env)}


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    in_job = "WORLD_SIZE" in os.environ and "RANK" in os.environ
    if args.nproc > 1 and not in_job:
        return relaunch(args, argv)
    from tqdm import tqdm

    rank, world = 0, 1
    if args.nproc > 1:
        import chainrule.distributed as dist
        from chainrule.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
        if args.batch % world:
            raise SystemExit(f"--batch {args.batch} must be a multiple of --nproc {world}")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(args.seed)
    # Each rank draws its own patches; --batch is the batch over all ranks.
    sampler = PatchSampler(args.scale, args.patch, seed=args.seed + 1000 * rank)
    local_batch = args.batch // world
    netG = Generator(args.scale, args.channels, args.blocks)
    netD = Discriminator(args.channels)
    criterion = GeneratorLoss()
    mse = nn.MSELoss()
    optimizerG = optim.Adam(netG.parameters(), lr=1e-3)
    optimizerD = optim.Adam(netD.parameters(), lr=1e-4)
    history: dict[str, list[float]] = {"pretrain_mse": [], "d_loss": [], "g_loss": []}
    done_pre, done_adv = 0, 0

    ckpt = out / "checkpoint.safetensors"
    if args.resume and ckpt.exists():
        state = torch.load(str(ckpt))
        netG.load_state_dict(state["G"])
        netD.load_state_dict(state["D"])
        optimizerG.load_state_dict(state["optG"])
        optimizerD.load_state_dict(state["optD"])
        history = state["history"]
        done_pre, done_adv = state["done_pre"], state["done_adv"]
        print(f"resumed from {ckpt}: {done_pre} pre-training and {done_adv} adversarial steps done")

    # The single-process modules: checkpoints keep their keys whatever --nproc was.
    plainG, plainD = netG, netD
    if world > 1:
        netG, netD = DDP(netG), DDP(netD)

    def checkpoint() -> None:
        if rank != 0:
            return
        save_checkpoint(
            ckpt,
            {
                "G": plainG.state_dict(),
                "D": plainD.state_dict(),
                "optG": optimizerG.state_dict(),
                "optD": optimizerD.state_dict(),
                "history": history,
                "done_pre": done_pre,
                "done_adv": done_adv,
            },
        )

    t0 = time.perf_counter()
    netG.train()
    bar = tqdm(
        range(done_pre, args.pretrain_steps),
        desc="pre-train G (MSE)",
        leave=True,
        ascii=True,
        disable=rank != 0,
    )

    def pretrain_step(lr: torch.Tensor, bic: torch.Tensor, hr: torch.Tensor) -> torch.Tensor:
        optimizerG.zero_grad()
        loss = mse(netG(lr, bic), hr)
        loss.backward()
        optimizerG.step()
        return loss.detach()

    if args.compile:
        pretrain_step = torch.compile(pretrain_step)
    for i in bar:
        lr, bic, hr = (torch.from_numpy(a) for a in sampler.batch(local_batch))
        loss = pretrain_step(lr, bic, hr)
        history["pretrain_mse"].append(loss.item())
        done_pre = i + 1
        bar.set_postfix(mse=f"{np.mean(history['pretrain_mse'][-20:]):.5f}")
        if done_pre % args.ckpt_every == 0:
            checkpoint()

    for g in optimizerG.param_groups:
        g["lr"] = 1e-4
    netD.train()
    bar = tqdm(
        range(done_adv, args.steps), desc="adversarial", leave=True, ascii=True, disable=rank != 0
    )

    def adversarial_step(
        lr: torch.Tensor, bic: torch.Tensor, hr: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        real_img, fake_img = hr, netG(lr, bic)

        # (1) Update D: maximize D(x) - D(G(z)), i.e. minimize 1 - D(real) + D(fake).
        netD.zero_grad()
        real_out = netD(real_img).mean()
        fake_out = netD(fake_img).mean()
        d_loss = 1 - real_out + fake_out
        if world > 1:
            # Only D's gradients: G's hooks must fire once, in the generator's backward below.
            d_loss.backward(retain_graph=True, inputs=list(plainD.parameters()))
        else:
            d_loss.backward(retain_graph=True)
        optimizerD.step()

        # (2) Update G: the discriminator changed in place, so run it again on fake_img
        # (its generator graph was retained above) rather than reuse fake_out. D's gradients
        # from this pass are thrown away, so with --nproc it runs without DDP's reduction.
        netG.zero_grad()
        fake_out = plainD(fake_img).mean()
        g_loss = criterion(fake_out, fake_img, real_img)
        g_loss.backward()
        optimizerG.step()
        return d_loss.detach(), g_loss.detach()

    if args.compile:
        adversarial_step = torch.compile(adversarial_step)
    for i in bar:
        lr, bic, hr = (torch.from_numpy(a) for a in sampler.batch(local_batch))
        d_loss, g_loss = adversarial_step(lr, bic, hr)
        history["d_loss"].append(d_loss.item())
        history["g_loss"].append(g_loss.item())
        done_adv = i + 1
        bar.set_postfix(
            d=f"{np.mean(history['d_loss'][-20:]):.4f}", g=f"{np.mean(history['g_loss'][-20:]):.5f}"
        )
        if done_adv % args.ckpt_every == 0:
            checkpoint()
    checkpoint()
    train_s = time.perf_counter() - t0
    if rank != 0:
        return {"rank": rank, "train_seconds": train_s}

    results = evaluate(plainG, args, out)
    plot_losses(history, out / "losses.png")
    print(
        f"\ntraining took {train_s:.1f} s on {world} process(es) of "
        f"{torch.get_num_threads()} thread(s) (torch.get_num_threads()); outputs in {out}/"
    )
    print(
        f"{'image':<10} {'bicubic PSNR':>13} {'SRGAN PSNR':>11} {'bicubic SSIM':>13} "
        f"{'SRGAN SSIM':>11}"
    )
    for r in results["images"]:
        print(
            f"{r['name']:<10} {r['bicubic_psnr']:>13.2f} {r['sr_psnr']:>11.2f} "
            f"{r['bicubic_ssim']:>13.4f} {r['sr_ssim']:>11.4f}"
        )
    m = results["mean"]
    print(
        f"{'mean':<10} {m['bicubic_psnr']:>13.2f} {m['sr_psnr']:>11.2f} "
        f"{m['bicubic_ssim']:>13.4f} {m['sr_ssim']:>11.4f}"
    )
    results["train_seconds"] = train_s
    results["threads"] = torch.get_num_threads()
    return results


def evaluate(netG: nn.Module, args: argparse.Namespace, out: pathlib.Path) -> dict:
    from PIL import Image

    netG.eval()
    rows = []
    with torch.no_grad():
        for name, lr, bic, hr in held_out(args.scale, args.eval_size):
            x = torch.from_numpy(np.ascontiguousarray(lr.transpose(2, 0, 1))[None])
            b = torch.from_numpy(np.ascontiguousarray(bic.transpose(2, 0, 1))[None])
            sr = netG(x, b)[0].numpy().transpose(1, 2, 0).clip(0, 1)
            bp, bs = psnr_ssim(bic, hr)
            sp, ss = psnr_ssim(sr, hr)
            rows.append(
                {"name": name, "bicubic_psnr": bp, "sr_psnr": sp, "bicubic_ssim": bs, "sr_ssim": ss}
            )
            panel = np.concatenate([bic, sr, hr], axis=1)
            Image.fromarray((panel * 255).round().astype(np.uint8)).save(out / f"{name}.png")
    netG.train()
    mean = {k: float(np.mean([r[k] for r in rows])) for k in rows[0] if k != "name"}
    return {"images": rows, "mean": mean}


def _smooth(xs: list[float], k: int = 20) -> np.ndarray:
    """Running mean over the last ``k`` steps (per-batch losses are noisy)."""
    c = np.concatenate([[0.0], np.cumsum(np.asarray(xs, dtype=np.float64))])
    i = np.arange(1, len(xs) + 1)
    lo = np.maximum(i - k, 0)
    return (c[i] - c[lo]) / (i - lo)


def plot_losses(history: dict[str, list[float]], path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.5))
    panels = [
        ("pretrain_mse", "pre-training: image MSE", True),
        ("d_loss", "D: 1 - D(real) + D(fake)", False),
        ("g_loss", "G: generator criterion", True),
    ]
    for ax, (key, title, log) in zip(axes, panels):
        ax.plot(history[key], alpha=0.3, label="per step")
        ax.plot(_smooth(history[key]), label="mean of last 20")
        ax.set_title(title)
        ax.set_xlabel("step")
        if log:
            ax.set_yscale("log")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main().get("returncode", 0))
