"""chainrule.compile of calls that read CUDA tensors: the capture records NumPy arrays only
(its Tracer is an ``np.ndarray`` subclass), so such a call runs eagerly, with the reason in
``explain()`` (docs/gpu.md); CPU calls of the same compiled function are still captured."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.compiler import Unsupported


def _host(t: Any) -> np.ndarray:
    return cr.backends.get_backend("cuda").to_host(t.detach()._data)


def f(a: Any, b: Any) -> Any:
    return (a @ b).tanh().sum(0) * 2


def test_cuda_inputs_run_eagerly_with_the_reason(fake_cuda: Any) -> None:
    x, w = cr.randn(3, 4), cr.randn(4, 2)
    g = cr.compile(f)
    for _ in range(3):
        out = g(x.to("cuda:1"), w.to("cuda:1"))
        assert out.device == cr.device("cuda:1")
        np.testing.assert_allclose(_host(out), f(x, w).numpy(), rtol=1e-6)
    rep = g.explain()
    assert "0 captures, 0 replays, 3 eager" in rep
    assert "a tensor is on cuda:1: the capture records NumPy (CPU) arrays only" in rep
    for _ in range(3):  # CPU calls are captured, then replayed
        np.testing.assert_allclose(g(x, w).numpy(), f(x, w).numpy(), rtol=1e-6)
    assert g.stats["replays"] == 1 and g.stats["captures"] == 2
    with pytest.raises(Unsupported, match="a tensor is on cuda:0.*fullgraph=True"):
        cr.compile(f, fullgraph=True)(x.cuda(), w.cuda())


def test_a_compiled_training_step_on_cuda(fake_cuda: Any) -> None:
    cr.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    gpu = copy.deepcopy(model).cuda()
    x = cr.randn(6, 4, dtype=cr.float64)
    for m, xx in ((model, x), (gpu, x.cuda())):
        opt = cr.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

        def step(inp: Any, m: nn.Module = m, opt: Any = opt) -> Any:
            opt.zero_grad()
            loss = (m(inp) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        c = cr.compile(step)
        for _ in range(3):
            c(xx)
    assert "a tensor is on cuda:0" in c.explain() and c.stats["eager"] == 3
    for p, q in zip(model.parameters(), gpu.parameters()):
        np.testing.assert_allclose(_host(q), p.detach().numpy(), rtol=1e-10, atol=1e-12)
