"""``chainrule.compile``: draws made for a CUDA tensor inside a captured function come from the
GPU's generator at every replay, as in eager mode (issue 17)."""

from __future__ import annotations

from typing import Any

import numpy as np

import chainrule as cr


def _f(x: Any) -> Any:
    noise = cr.randn(3, device="cuda").cpu() + cr.rand(3, device="cuda:1").cpu()
    return x * 2 + noise


def _runs(fn: Any, x: Any) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    cr.manual_seed(0)
    cr.cuda.manual_seed_all(5)
    outs = [fn(x).numpy() for _ in range(2)]
    cr.cuda.manual_seed_all(7)  # a reseed between replays is read by the next one
    outs.append(fn(x).numpy())
    gpu_next = cr.randn(2, device="cuda").cpu().numpy()
    return outs, cr.rand(2).numpy(), gpu_next


def test_captured_cuda_draws_replay_from_the_gpu_generator(fake_cuda: Any) -> None:
    x = cr.ones(3)
    eager, cpu_eager, gpu_eager = _runs(_f, x)
    compiled = cr.compile(_f)
    got, cpu_got, gpu_got = _runs(compiled, x)
    for a, b in zip(eager, got):
        np.testing.assert_array_equal(a, b)
    # The CPU stream was not drawn from (as in eager), and the GPUs' streams moved the same.
    np.testing.assert_array_equal(cpu_eager, cpu_got)
    np.testing.assert_array_equal(gpu_eager, gpu_got)
    assert not np.array_equal(eager[0], eager[1])
