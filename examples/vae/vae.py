"""A variational autoencoder on scikit-learn's 8x8 digits (bundled with the package, nothing
downloaded), written with chainrule.distributions: the encoder gives q(z|x) = Normal(mu,
sigma), ``rsample`` draws z with the reparameterization gradient, the decoder gives a Bernoulli
likelihood over the 64 (binarized) pixels, and the loss is the negative ELBO

    -ELBO = -E_q[log p(x|z)] + KL(q(z|x) || N(0, I)),

with the KL term from ``kl_divergence(Normal, Normal)`` in closed form. Prints the held-out
ELBO (nats per digit) each epoch and writes a PNG of held-out digits, their reconstructions and
samples from the prior.

    python examples/vae/vae.py --out vae_out
"""

from __future__ import annotations

import argparse
import pathlib
import time
from typing import Any

import numpy as np

import chainrule as torch
import chainrule.nn as nn
from chainrule.distributions import Bernoulli, Independent, Normal, kl_divergence


def load_digits_binary(seed: int = 0, test_size: int = 297) -> tuple[np.ndarray, np.ndarray]:
    """The 1797 digits as binary 64-vectors (pixel > 7 of 16), split into train and held-out."""
    from sklearn.datasets import load_digits

    x = (load_digits().data > 7).astype(np.float32)
    perm = np.random.default_rng(seed).permutation(len(x))
    return x[perm[test_size:]], x[perm[:test_size]]


class VAE(nn.Module):
    def __init__(self, d: int = 64, hidden: int = 128, latent: int = 8) -> None:
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, 2 * latent))
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, d))
        self.latent = latent

    def posterior(self, x: Any) -> Normal:
        h = self.enc(x)
        mu, log_sigma = h[:, : self.latent], h[:, self.latent :]
        return Normal(mu, log_sigma.exp())

    def likelihood(self, z: Any) -> Independent:
        return Independent(Bernoulli(logits=self.dec(z)), 1)

    def elbo(self, x: Any) -> Any:
        """Per-digit ELBO: E_q[log p(x|z)] (one reparameterized sample) - KL(q || prior)."""
        q = self.posterior(x)
        z = q.rsample()
        prior = Normal(torch.zeros_like(q.loc), torch.ones_like(q.scale))
        return self.likelihood(z).log_prob(x) - kl_divergence(q, prior).sum(-1)


def save_png(model: VAE, x_test: np.ndarray, path: pathlib.Path, n: int = 10) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with torch.no_grad():
        x = torch.tensor(x_test[:n])
        recon = model.likelihood(model.posterior(x).loc).base_dist.probs.numpy()
        samples = model.likelihood(torch.randn(n, model.latent)).base_dist.probs.numpy()
    rows = [("held-out", x_test[:n]), ("reconstruction", recon), ("prior sample", samples)]
    fig, axes = plt.subplots(len(rows), n, figsize=(n, len(rows) * 1.1))
    for r, (label, imgs) in enumerate(rows):
        for c in range(n):
            ax = axes[r, c]
            ax.imshow(imgs[c].reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
        axes[r, 0].set_ylabel(label, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--latent", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="vae_out")
    p.add_argument(
        "--compile", action="store_true", help="run the training step through chainrule.compile"
    )
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    x_train, x_test = load_digits_binary(args.seed)
    model = VAE(latent=args.latent)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    history = []
    t0 = time.perf_counter()

    def train_step(x: torch.Tensor) -> torch.Tensor:
        loss = -model.elbo(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    if args.compile:
        train_step = torch.compile(train_step)
    for epoch in range(1, args.epochs + 1):
        perm = rng.permutation(len(x_train))
        total = 0.0
        for i in range(0, len(perm), args.batch):
            x = torch.tensor(x_train[perm[i : i + args.batch]])
            loss = train_step(x)
            total += loss.item() * len(x)
        with torch.no_grad():
            test_elbo = model.elbo(torch.tensor(x_test)).mean().item()
        history.append(
            {"epoch": epoch, "train_elbo": -total / len(x_train), "test_elbo": test_elbo}
        )
        print(
            f"epoch {epoch:3d}  train ELBO {-total / len(x_train):8.3f}  "
            f"held-out ELBO {test_elbo:8.3f} nats/digit  ({time.perf_counter() - t0:.1f} s)"
        )
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    save_png(model, x_test, out / "vae_digits.png")
    print(f"wrote {out / 'vae_digits.png'}")
    return {"history": history, "png": out / "vae_digits.png"}


if __name__ == "__main__":
    main()
