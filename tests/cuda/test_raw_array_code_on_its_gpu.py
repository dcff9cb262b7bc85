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


def _x() -> Any:
    return cr.randn(4, 3, dtype=cr.float64, generator=cr.Generator().manual_seed(5))


def _img() -> Any:
    return cr.randn(2, 3, 5, 5, dtype=cr.float64, generator=cr.Generator().manual_seed(6))


_F = nn.functional
# name -> (function of the moved inputs, the CPU inputs); the first input gets a gradient.
_SITES: dict[str, Any] = {
    "binary_cross_entropy": (lambda x, p: _F.binary_cross_entropy(x.sigmoid(), p), ("x", "p")),
    "gaussian_nll_loss": (lambda x, p: _F.gaussian_nll_loss(x, p, p + 0.1), ("x", "p")),
    "embedding": (lambda w, t: _F.embedding(t, w, padding_idx=1), ("x", "t")),
    "one_hot": (lambda x, t: x * _F.one_hot(t, 3), ("x", "t")),
    "pad_reflect": (lambda i: _F.pad(i, (1, 2, 2, 1), mode="reflect"), ("img",)),
    "max_pool2d": (lambda i: _F.max_pool2d(i, 2, return_indices=True)[0], ("img",)),
    "max_unpool2d": (
        lambda i: _F.max_unpool2d(*_F.max_pool2d(i, 2, return_indices=True), 2, output_size=(5, 5)),
        ("img",),
    ),
    "fractional_max_pool2d": (
        lambda i, r: _F.fractional_max_pool2d(i, 2, output_size=2, _random_samples=r),
        ("img", "r"),
    ),
    "cosine_similarity": (lambda x, p: _F.cosine_similarity(x, p), ("x", "p")),
    "grid_sample": (lambda i, g: _F.grid_sample(i, g, align_corners=False), ("img", "grid")),
    "affine_grid": (
        lambda th: _F.affine_grid(th, [2, 3, 4, 4], align_corners=False),
        ("theta",),
    ),
    "ctc_loss": (
        lambda lp, tg: _F.ctc_loss(lp.log_softmax(2), tg, cr.tensor([6, 5]), cr.tensor([2, 2])),
        ("lp", "tgt"),
    ),
}


def _inputs() -> dict[str, Any]:
    g = cr.Generator().manual_seed(7)
    return {
        "x": _x(),
        "p": cr.rand(4, 3, dtype=cr.float64, generator=g),
        "t": cr.tensor([0, 2, 1, 1]),
        "img": _img(),
        "r": cr.rand(2, 3, 2, dtype=cr.float64, generator=g),
        "grid": cr.rand(2, 3, 3, 2, dtype=cr.float64, generator=g) * 2 - 1,
        "theta": cr.randn(2, 2, 3, dtype=cr.float64, generator=g),
        "lp": cr.randn(6, 2, 4, dtype=cr.float64, generator=g),
        "tgt": cr.tensor([[1, 2], [3, 1]]),
    }


@pytest.mark.parametrize("name", sorted(_SITES))
def test_nn_functional_raw_array_sites_on_cuda1(fake_cuda: Any, name: str) -> None:
    fn, names = _SITES[name]
    res = []
    for dev in ("cpu", "cuda:1"):
        ins = [_inputs()[k].to(dev) for k in names]
        ins[0] = ins[0].detach().requires_grad_()
        out = fn(*ins)
        (out * out).sum().backward()
        assert cr.cuda.current_device() == 0
        assert ins[0].grad is not None and ins[0].grad.device == cr.device(dev)
        res.append((out.detach().cpu().numpy(), ins[0].grad.cpu().numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-10, atol=1e-12)


def _every_optimizer() -> list[Any]:
    out = []
    for name in sorted(dir(cr.optim)):
        cls = getattr(cr.optim, name)
        if isinstance(cls, type) and issubclass(cls, cr.optim.Optimizer):
            if name not in ("Optimizer", "SparseAdam"):  # SparseAdam takes sparse gradients
                out.append(pytest.param(cls, id=name))
    out.append(pytest.param("lbfgs_wolfe", id="LBFGS-strong_wolfe"))
    return out


@pytest.mark.parametrize("cls", _every_optimizer())
def test_every_optimizer_on_cuda1_while_cuda0_is_current(fake_cuda: Any, cls: Any) -> None:
    # The optimizers' raw-array code (state, line search, closures' losses) runs on the
    # parameters' GPU, not the current one: the stand-in refuses a kernel off the current GPU.
    weights = []
    for device in ("cpu", "cuda:1"):
        cr.manual_seed(0)
        m = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2)).double().to(device)
        params = [p for p in m.parameters() if p.dim() == 2] if cls is cr.optim.Muon else None
        params = params if params is not None else list(m.parameters())
        if cls == "lbfgs_wolfe":
            opt = cr.optim.LBFGS(params, lr=0.5, history_size=3, line_search_fn="strong_wolfe")
        elif cls is cr.optim.LBFGS:
            opt = cls(params, lr=0.1, history_size=3)
        else:
            opt = cls(params, lr=0.01)
        x = cr.randn(5, 4, dtype=cr.float64).to(device)

        def closure() -> Any:
            opt.zero_grad()
            loss = (m(x) ** 2).mean()
            loss.backward()
            return loss

        for _ in range(3):
            opt.step(closure)
            assert cr.cuda.current_device() == 0
        for p in m.parameters():
            assert p.device == cr.device(device)
        for st in opt.state.values():
            for v in st.values():
                if isinstance(v, cr.Tensor) and v.dim() > 0:
                    assert v.device == cr.device(device)
        weights.append([_host(p) for p in m.parameters()])
    for a, b in zip(weights[0], weights[1]):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)


def test_lr_schedulers_on_cuda1_while_cuda0_is_current(fake_cuda: Any) -> None:
    # ReduceLROnPlateau reads a loss tensor on cuda:1; the others only touch Python floats.
    res = []
    for device in ("cpu", "cuda:1"):
        cr.manual_seed(0)
        m = nn.Linear(3, 1).double().to(device)
        opt = cr.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        plateau = cr.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5)
        x = cr.randn(4, 3, dtype=cr.float64).to(device)
        lrs = []
        for _ in range(4):
            opt.zero_grad()
            loss = (m(x) ** 2).mean() + 1.0
            loss.backward()
            opt.step()
            plateau.step(loss.detach() * 0 + 1.0)  # constant: a plateau every step
            assert cr.cuda.current_device() == 0
            lrs.append(opt.param_groups[0]["lr"])
        res.append((lrs, _host(m.weight)))
    assert res[0][0] == res[1][0] == [0.1, 0.05, 0.025, 0.0125]
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-10)
