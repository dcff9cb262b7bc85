"""REINFORCE (the score-function policy gradient) on CartPole, with chainrule.distributions:
the shape of PyTorch's examples/reinforcement_learning/reinforce.py.

Each step the policy network gives action probabilities, ``Categorical(probs).sample()`` picks
the action, and at the end of the episode the loss

    -sum_t log pi(a_t | s_t) * G_t,     G_t = sum_{k >= t} gamma**(k - t) r_k (normalized)

is backpropagated: its gradient is an unbiased estimate of the gradient of the expected return.
(This replaces the removed ``action.reinforce(reward)``.) Stops when the average return over
the last 100 episodes reaches ``--target`` (195, CartPole's classic "solved" level), and writes
the learning curve as a PNG.

    python examples/reinforce/reinforce.py --out reinforce_out
"""

from __future__ import annotations

import argparse
import pathlib
import time
from typing import Any

import numpy as np

import chainrule as torch
import chainrule.nn as nn
from chainrule.distributions import Categorical


class Policy(nn.Module):
    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, x: Any) -> Any:
        return self.net(x).softmax(-1)


def discounted_returns(rewards: list[float], gamma: float) -> np.ndarray:
    """G_t = r_t + gamma G_{t+1}, normalized to zero mean and unit variance (a baseline that
    lowers the variance of the estimator)."""
    g, out = 0.0, []
    for r in reversed(rewards):
        g = r + gamma * g
        out.append(g)
    ret = np.array(out[::-1], dtype=np.float32)
    return (ret - ret.mean()) / (ret.std() + np.finfo(np.float32).eps)


def save_curve(returns: list[float], path: pathlib.Path, target: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = np.array(returns)
    avg = np.array([r[max(0, i - 99) : i + 1].mean() for i in range(len(r))])
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(r, lw=0.6, alpha=0.5, label="episode return")
    ax.plot(avg, lw=1.5, label="average of last 100")
    ax.axhline(target, color="k", ls="--", lw=0.8, label=f"target {target:g}")
    ax.set_xlabel("episode")
    ax.set_ylabel("return")
    ax.set_title("REINFORCE on CartPole-v1 (chainrule)")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=543)
    p.add_argument("--episodes", type=int, default=2000, help="at most this many")
    p.add_argument("--target", type=float, default=195.0)
    p.add_argument("--out", default="reinforce_out")
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument(
        "--compile",
        action="store_true",
        help="compile the policy (chainrule.compile): acting replays; the update's forward, "
        "whose episode length varies, is captured for 8 lengths at most, then runs eagerly",
    )
    args = p.parse_args(argv)

    import gymnasium as gym

    env = gym.make("CartPole-v1")
    torch.manual_seed(args.seed)
    policy = Policy()
    if args.compile:
        policy.compile()
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    returns: list[float] = []
    t0 = time.perf_counter()
    solved_at = None
    for episode in range(1, args.episodes + 1):
        state, _ = env.reset(seed=args.seed + episode)
        states, actions, rewards = [], [], []
        done = False
        while not done:
            with torch.no_grad():  # acting needs no graph; log-probs are recomputed below
                probs = policy(torch.tensor(state, dtype=torch.float32))
                action = int(Categorical(probs).sample().item())
            states.append(state)
            actions.append(action)
            state, reward, terminated, truncated, _ = env.step(action)
            rewards.append(float(reward))
            done = terminated or truncated
        # One batched forward over the episode's states gives the same log pi(a_t | s_t).
        m = Categorical(policy(torch.tensor(np.array(states), dtype=torch.float32)))
        g = torch.tensor(discounted_returns(rewards, args.gamma))
        loss = -(m.log_prob(torch.tensor(actions)) * g).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()

        returns.append(sum(rewards))
        avg = float(np.mean(returns[-100:]))
        if episode % args.log_every == 0:
            print(
                f"episode {episode:4d}  return {returns[-1]:5.0f}  average of last 100 "
                f"{avg:6.1f}  ({time.perf_counter() - t0:.0f} s)"
            )
        if len(returns) >= 100 and avg >= args.target:
            solved_at = episode
            print(
                f"solved at episode {episode}: average return {avg:.1f} over the last 100 "
                f"episodes ({time.perf_counter() - t0:.0f} s)"
            )
            break
    env.close()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    save_curve(returns, out / "learning_curve.png", args.target)
    print(f"wrote {out / 'learning_curve.png'}")
    return {
        "returns": returns,
        "solved_at": solved_at,
        "png": out / "learning_curve.png",
        "seconds": time.perf_counter() - t0,
    }


if __name__ == "__main__":
    main()
