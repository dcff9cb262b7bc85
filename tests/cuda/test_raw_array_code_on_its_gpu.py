"""Code that computes on raw arrays outside the op table (the optimizers' steps, batch_norm's
running statistics, the losses' target checks) runs on its tensors' GPU whatever GPU is
current, as PyTorch's does (docs/gpu.md, "Ops run on their inputs' GPU"). The stand-in raises
CuPy's peer-access ValueError for a kernel whose operand is not on the current GPU, so each
test runs a model on ``cuda:1`` with ``cuda:0`` current and compares with the CPU's run."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn


def _host(t: Any) -> np.ndarray:
    return cr.backends.get_backend("cuda").to_host(t.detach()._data)


def _make(name: str, params: Any, foreach: bool) -> Any:
    if name == "sgd":
        return cr.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=1e-3, foreach=foreach)
    if name == "adam":
        return cr.optim.Adam(params, lr=0.01, amsgrad=True, foreach=foreach)
    return cr.optim.AdamW(params, lr=0.01, weight_decay=0.1, foreach=foreach)


def _train(model: nn.Module, x: Any, t: Any, opt: str, foreach: bool, loss: str) -> None:
    o = _make(opt, model.parameters(), foreach)
    for _ in range(3):
        o.zero_grad()
        out = model(x)
        if loss == "mse":
            v = ((out - t) ** 2).mean()
        else:
            v = nn.functional.cross_entropy(out, t, label_smoothing=0.1)
        v.backward()
        assert cr.cuda.current_device() == 0
        o.step()
        assert cr.cuda.current_device() == 0


def _same(cpu: nn.Module, gpu: nn.Module) -> None:
    for p, q in zip(cpu.parameters(), gpu.parameters()):
        assert q.device.index == 1
        np.testing.assert_allclose(_host(q), p.detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(cpu.buffers(), gpu.buffers()):
        assert b.device.index == 1
        np.testing.assert_allclose(_host(b), a.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("opt", ["sgd", "adam", "adamw"])
def test_optimizer_step_on_cuda1_while_cuda0_is_current(
    fake_cuda: Any, opt: str, foreach: bool
) -> None:
    cr.manual_seed(1)
    model = nn.Sequential(
        nn.Conv2d(2, 3, 3, padding=1), nn.Tanh(), nn.Flatten(), nn.Linear(48, 2)
    ).double()
    gpu = copy.deepcopy(model).to("cuda:1")
    x = cr.randn(5, 2, 4, 4, dtype=cr.float64)
    t = cr.randn(5, 2, dtype=cr.float64)
    _train(model, x, t, opt, foreach, "mse")
    _train(gpu, x.to("cuda:1"), t.to("cuda:1"), opt, foreach, "mse")
    _same(model, gpu)


def test_batchnorm_training_and_cross_entropy_on_cuda1(fake_cuda: Any) -> None:
    cr.manual_seed(2)
    model = nn.Sequential(
        nn.Conv2d(2, 3, 3, padding=1),
        nn.BatchNorm2d(3),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(48, 4),
        nn.BatchNorm1d(4),
    ).double()
    gpu = copy.deepcopy(model).to("cuda:1")
    x = cr.randn(6, 2, 4, 4, dtype=cr.float64)
    t = cr.tensor([0, 3, 1, 2, 3, 0])
    _train(model, x, t, "adam", False, "ce")
    _train(gpu, x.to("cuda:1"), t.to("cuda:1"), "adam", False, "ce")
    _same(model, gpu)
    model.eval()
    gpu.eval()
    np.testing.assert_allclose(_host(gpu(x.to("cuda:1"))), model(x).detach().numpy(), rtol=1e-10)


def test_nll_loss_target_checks_on_cuda1(fake_cuda: Any) -> None:
    x = cr.randn(4, 3, dtype=cr.float64).to("cuda:1")
    w = cr.tensor([1.0, 2.0, 0.5], dtype=cr.float64).to("cuda:1")
    t = cr.tensor([0, 2, 1, -100]).to("cuda:1")
    ref = nn.functional.nll_loss(x.cpu(), t.cpu(), weight=w.cpu(), ignore_index=-100)
    got = nn.functional.nll_loss(x, t, weight=w, ignore_index=-100)
    np.testing.assert_allclose(_host(got), ref.numpy(), rtol=1e-12)
    bad = cr.tensor([0, 3, 1, 2]).to("cuda:1")
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        nn.functional.nll_loss(x, bad)
    assert cr.cuda.current_device() == 0


def test_a_step_over_parameters_on_two_gpus(fake_cuda: Any) -> None:
    # One optimizer over layers on cuda:1 and cuda:0 (and a CPU one): each GPU's parameters
    # are updated with that GPU current (Note [a step on its parameters' GPU]).
    cr.manual_seed(3)
    a, b, c = nn.Linear(3, 4).double(), nn.Linear(4, 2).double(), nn.Linear(2, 1).double()
    ga, gb, gc = copy.deepcopy(a).to("cuda:1"), copy.deepcopy(b).to("cuda:0"), copy.deepcopy(c)
    x = cr.randn(5, 3, dtype=cr.float64)
    for mods, xx in (((a, b, c), x), ((ga, gb, gc), x.to("cuda:1"))):
        params = [p for m in mods for p in m.parameters()]
        o = cr.optim.Adam(params, lr=0.05, weight_decay=0.01)
        for _ in range(2):
            o.zero_grad()
            h = mods[1](mods[0](xx).to(params[2].device))
            mods[2](h.cpu()).sum().backward()
            o.step()
            assert cr.cuda.current_device() == 0
        assert len(o.param_groups[0]["params"]) == 6
    for p, q in zip([*a.parameters(), *b.parameters()], [*ga.parameters(), *gb.parameters()]):
        np.testing.assert_allclose(_host(q), p.detach().numpy(), rtol=1e-10, atol=1e-12)
    for p, q in zip(c.parameters(), gc.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-10)
