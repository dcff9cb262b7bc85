"""Modules, optimizers and checkpoints on the ``cuda`` device, played by the strict CuPy
stand-in (tests/_fakecupy): moving modules in place, layer constructors' ``device=`` and
``dtype=``, training steps that must equal the CPU ones, optimizer state and
``load(map_location=)``, and one SRGAN step."""

from __future__ import annotations

import copy
import inspect
import io
import pathlib
import sys
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn

MIXED = (
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
)


def _host(t: Any) -> np.ndarray:
    return cr.backends.backend_of(t._data).to_host(t._data)


def _tensors(m: nn.Module) -> list[Any]:
    return list(m.parameters()) + list(m.buffers())


# Moving a module ------------------------------------------------------------------------------


def test_module_cuda_moves_parameters_buffers_and_grads_in_place(fake_cuda: Any) -> None:
    cr.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    m(cr.randn(5, 3)).sum().backward()
    w, g = m[0].weight, m[0].weight.grad
    before = _host(w).copy(), _host(g).copy()
    assert m.cuda() is m
    assert m[0].weight is w  # the same Parameter object, as PyTorch keeps it
    assert all(t.device == cr.device("cuda", 0) for t in _tensors(m))
    assert w.grad.device.type == "cuda" and w.is_leaf and w.requires_grad
    np.testing.assert_array_equal(_host(w), before[0])
    np.testing.assert_array_equal(_host(w.grad), before[1])
    assert m[1].num_batches_tracked.dtype == cr.int64  # not cast by a device move
    m.to("cuda:1")
    assert all(t.device == cr.device("cuda", 1) for t in _tensors(m))
    m.cuda(0).to(cr.float64)
    assert w.dtype == cr.float64 and w.device.index == 0
    m.cpu()
    assert all(t.device.type == "cpu" for t in _tensors(m))
    m.to(cr.zeros(1, device="cuda", dtype=cr.float32))  # to(tensor): its device and dtype
    assert w.device.type == "cuda" and w.dtype == cr.float32
    assert m[1].num_batches_tracked.dtype == cr.int64


def test_tensor_to_overloads(fake_cuda: Any) -> None:
    x = cr.randn(2, 3, requires_grad=True)
    assert x.cuda().device == cr.device("cuda", 0)
    assert x.cuda(1).device == cr.device("cuda", 1)
    assert x.to(1).device == cr.device("cuda", 1)
    assert x.to("cuda", cr.float64).dtype == cr.float64
    assert x.to(device="cuda", dtype=cr.float64, non_blocking=True).device.type == "cuda"
    y = x.cuda()
    assert y.to("cuda:0") is y and y.to("cuda:0", copy=True) is not y
    assert y.to(x).device.type == "cpu"
    assert x.to(cr.float32) is x
    assert x.to("cpu", cr.float32, False, True) is not x  # positional non_blocking, copy
    with pytest.raises(RuntimeError, match="Invalid device, must be cuda device"):
        x.cuda("cpu")
    # The copy is differentiable both ways: gradients come back to the source device.
    z = (y.to(cr.float64) * 2).cpu().sum()
    z.backward()
    assert x.grad.device.type == "cpu"
    np.testing.assert_array_equal(_host(x.grad), np.full((2, 3), 2.0, np.float32))
    a = cr.randn(3, dtype=cr.float64, requires_grad=True)
    assert cr.autograd.gradcheck(lambda t: (t.cuda() ** 2).cpu(), (a,))
    assert cr.autograd.gradgradcheck(lambda t: (t.cuda(1) ** 3).cpu(), (a,))


def test_mixed_devices_raise_pytorchs_error(fake_cuda: Any) -> None:
    lin = nn.Linear(3, 2).cuda()
    with pytest.raises(RuntimeError) as e:
        lin(cr.randn(4, 3))
    assert str(e.value) == MIXED
    x = cr.randn(3, device="cuda")
    for f in (lambda: x + cr.ones(3), lambda: cr.ones(3) * x, lambda: cr.cat([x, cr.ones(3)])):
        with pytest.raises(RuntimeError) as e:
            f()
        assert str(e.value) == MIXED
    # A 0-d CPU tensor may join, as a scalar does in PyTorch.
    np.testing.assert_allclose(_host(x + cr.tensor(1.0)), _host(x) + 1)
    # copy_ moves across devices, as in PyTorch.
    y = cr.zeros(3, device="cuda")
    y.copy_(cr.ones(3))
    np.testing.assert_array_equal(_host(y), np.ones(3, np.float32))


def _layer_classes() -> list[Any]:
    out = []
    for name in sorted(dir(nn)):
        cls = getattr(nn, name)
        if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
            continue
        if name.startswith("Lazy") or name == "RNNBase":
            continue
        if "device" in inspect.signature(cls.__init__).parameters:
            out.append(pytest.param(cls, id=name))
    return out


_ARGS = {"normalized_shape": 4, "cutoffs": [2], "mode": "sum"}


@pytest.mark.parametrize("cls", _layer_classes())
def test_layer_constructor_device_and_dtype(cls: Any, fake_cuda: Any) -> None:
    sig = inspect.signature(cls.__init__)
    args = [
        _ARGS.get(p.name, 4)
        for p in list(sig.parameters.values())[1:]
        if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    # Ask for every optional parameter and buffer there is.
    kw = {k: True for k in ("affine", "track_running_stats") if k in sig.parameters}
    m = cls(*args, **kw, device="cuda:1", dtype=cr.float64)
    ts = _tensors(m)
    assert ts, "a layer that takes device= has parameters or buffers"
    for t in ts:
        assert t.device == cr.device("cuda", 1)
        if t.is_floating_point():
            assert t.dtype == cr.float64
    assert all(t.device.type == "cpu" for t in _tensors(cls(*args, **kw)))


def test_lazy_layer_materializes_on_its_device(fake_cuda: Any) -> None:
    m = nn.LazyLinear(3, device="cuda")
    y = m(cr.randn(2, 5, device="cuda"))
    assert y.device.type == "cuda" and m.weight.device.type == "cuda"


# Training steps on cuda equal the CPU ones ------------------------------------------------------
# The data is drawn on the CPU and moved: each GPU has its own generator (Note [one generator
# per GPU] in chainrule/_random.py), so randn(device="cuda") after the layers' CPU init would
# not give the CPU run's numbers, as in PyTorch.


def _mlp() -> tuple[nn.Module, Callable[[Any], Any]]:
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)), lambda d: cr.randn(5, 6).to(
        d
    )


def _conv() -> tuple[nn.Module, Callable[[Any], Any]]:
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2)
    ), lambda d: cr.randn(2, 2, 6, 6).to(d)


class _LSTMHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(3, 5, num_layers=2, batch_first=True)
        self.out = nn.Linear(5, 2)

    def forward(self, x: Any) -> Any:
        return self.out(self.lstm(x)[0][:, -1])


def _lstm() -> tuple[nn.Module, Callable[[Any], Any]]:
    return _LSTMHead(), lambda d: cr.randn(2, 4, 3).to(d)


_OPTIMIZERS = {
    "sgd": lambda p: cr.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-3),
    "adam": lambda p: cr.optim.Adam(p, lr=0.01),
}


def _train(build: Any, opt_name: str, device: str, steps: int = 2) -> tuple[Any, list[float]]:
    cr.manual_seed(3)
    m, data = build()
    m.to(device)
    opt = _OPTIMIZERS[opt_name](m.parameters())
    losses = []
    for _ in range(steps):
        x = data(device)
        opt.zero_grad()
        loss = (m(x) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return m, losses


@pytest.mark.parametrize("opt_name", sorted(_OPTIMIZERS))
@pytest.mark.parametrize("build", [_mlp, _conv, _lstm], ids=["linear", "conv_bn", "lstm"])
def test_training_step_on_cuda_matches_cpu(build: Any, opt_name: str, fake_cuda: Any) -> None:
    cpu, cpu_losses = _train(build, opt_name, "cpu")
    gpu, gpu_losses = _train(build, opt_name, "cuda")
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-6)
    for (name, a), (_, b) in zip(cpu.state_dict().items(), gpu.state_dict().items()):
        assert b.device.type == "cuda", name
        np.testing.assert_allclose(_host(b), _host(a), rtol=1e-5, atol=1e-7, err_msg=name)


def test_optimizer_state_follows_the_parameters(fake_cuda: Any) -> None:
    cpu, _ = _train(_mlp, "adam", "cpu", steps=1)
    opt = cr.optim.Adam(cpu.parameters(), lr=0.01)
    (cpu(cr.randn(2, 6)) ** 2).sum().backward()
    opt.step()
    saved = copy.deepcopy(opt.state_dict())
    gpu = copy.deepcopy(cpu).cuda()
    opt2 = cr.optim.Adam(gpu.parameters(), lr=0.01)
    opt2.load_state_dict(saved)  # CPU state, loaded for CUDA parameters: moved, as PyTorch
    for p in gpu.parameters():
        st = opt2.state[p]
        assert st["exp_avg"].device.type == "cuda" and st["exp_avg_sq"].device.type == "cuda"
        assert st["step"].device.type == "cpu"  # PyTorch keeps step on the CPU
    (gpu(cr.randn(2, 6, device="cuda")) ** 2).sum().backward()
    opt2.step()
    fresh = cr.optim.SGD(gpu.parameters(), lr=0.1, momentum=0.9)
    fresh.step()
    assert all(fresh.state[p]["momentum_buffer"].device.type == "cuda" for p in gpu.parameters())


# load(map_location=) -----------------------------------------------------------------------------


def test_load_map_location(fake_cuda: Any) -> None:
    sd = {"w": cr.randn(2, device="cuda"), "c": cr.ones(2)}
    buf = io.BytesIO()
    cr.save(sd, buf)

    def load(ml: Any) -> Any:
        buf.seek(0)
        r = cr.load(buf, map_location=ml)
        np.testing.assert_array_equal(_host(r["w"]), _host(sd["w"]))
        return str(r["w"].device), str(r["c"].device)

    assert load(None) == ("cuda:0", "cpu")  # where they were saved from
    assert load("cpu") == load(cr.device("cpu")) == ("cpu", "cpu")
    assert load({"cuda:0": "cpu"}) == ("cpu", "cpu")
    assert load({"cpu": "cuda:1"}) == ("cuda:0", "cuda:1")
    assert load("cuda:1") == ("cuda:1", "cuda:1")
    assert load(lambda t, loc: t) == ("cpu", "cpu")  # a callable's tensor is used as it is
    assert load(lambda t, loc: None) == ("cuda:0", "cpu")
    assert load(lambda t, loc: "cuda:1" if loc == "cpu" else None) == ("cuda:0", "cuda:1")


def test_load_of_a_cuda_checkpoint_without_a_gpu() -> None:
    buf = io.BytesIO()
    prev = cr.backends.set_cupy_module("tests._fakecupy")
    try:
        cr.save({"w": cr.ones(2, device="cuda")}, buf)
    finally:
        cr.backends.set_cupy_module(prev)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        cr.load(buf)
    buf.seek(0)
    assert cr.load(buf, map_location="cpu")["w"].device.type == "cpu"


# SRGAN ------------------------------------------------------------------------------------------

SRGAN = pathlib.Path(__file__).resolve().parents[2] / "examples" / "srgan"


def _srgan_step(device: str) -> tuple[list[float], list[np.ndarray]]:
    sys.path.insert(0, str(SRGAN))
    try:
        import models
    finally:
        sys.path.remove(str(SRGAN))
    cr.manual_seed(5)
    netG, netD = models.Generator(2, 4, 1).to(device), models.Discriminator(4).to(device)
    criterion = models.GeneratorLoss().to(device)
    optG = cr.optim.Adam(netG.parameters(), lr=1e-3)
    optD = cr.optim.Adam(netD.parameters(), lr=1e-3)
    rng = np.random.default_rng(6)
    hr_np = rng.uniform(0, 1, (2, 3, 16, 16)).astype(np.float32)
    lr_np = hr_np.reshape(2, 3, 8, 2, 8, 2).mean(axis=(3, 5))
    bic_np = np.repeat(np.repeat(lr_np, 2, axis=2), 2, axis=3)
    lr, bic, hr = (cr.tensor(a, device=device) for a in (lr_np, bic_np, hr_np))
    fake = netG(lr, bic)
    netD.zero_grad()
    d_loss = 1 - netD(hr).mean() + netD(fake).mean()
    d_loss.backward(retain_graph=True)
    optD.step()
    netG.zero_grad()
    g_loss = criterion(netD(fake).mean(), fake, hr)
    g_loss.backward()
    optG.step()
    return [d_loss.item(), g_loss.item()], [_host(p) for p in netG.parameters()]


def test_srgan_step_on_cuda_matches_cpu(fake_cuda: Any) -> None:
    cpu_losses, cpu_params = _srgan_step("cpu")
    gpu_losses, gpu_params = _srgan_step("cuda")
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-5)
    for a, b in zip(cpu_params, gpu_params):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-6)


def _optimizer_classes() -> list[Any]:
    out = []
    for name in sorted(dir(cr.optim)):
        cls = getattr(cr.optim, name)
        if isinstance(cls, type) and issubclass(cls, cr.optim.Optimizer):
            if name not in ("Optimizer", "SparseAdam"):  # SparseAdam takes sparse gradients
                out.append(pytest.param(cls, id=name))
    return out


@pytest.mark.parametrize("cls", _optimizer_classes())
def test_every_optimizer_steps_on_cuda_as_on_cpu(cls: Any, fake_cuda: Any) -> None:
    weights = []
    for device in ("cpu", "cuda"):
        cr.manual_seed(0)
        m = nn.Linear(4, 3).to(device)
        params = [m.weight] if cls.__name__ == "Muon" else list(m.parameters())  # 2-d only
        opt = cls(params) if cls.__name__ == "LBFGS" else cls(params, lr=0.01)
        x = cr.randn(5, 4).to(device)

        def closure() -> Any:
            opt.zero_grad()
            loss = (m(x) ** 2).mean()
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        assert m.weight.device.type == device
        weights.append(_host(m.weight))
    np.testing.assert_allclose(weights[1], weights[0], rtol=1e-5, atol=1e-7)


# Functions outside the op table ---------------------------------------------------------------

F = nn.functional
_FUNCTIONS: dict[str, Callable[[Any, str], Any]] = {
    "max_pool3d": lambda x, d: F.max_pool3d(x, 2, return_indices=True)[1],
    "max_unpool3d": lambda x, d: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2),
    "gumbel_softmax_hard": lambda x, d: F.gumbel_softmax(x[:, :, 0, 0, 0], hard=True),
    "gaussian_nll_loss": lambda x, d: F.gaussian_nll_loss(x, x.detach(), cr.ones_like(x)),
    "instance_norm": lambda x, d: F.instance_norm(x, use_input_stats=True),
    "ctc_loss": lambda x, d: F.ctc_loss(
        x[0].reshape(3, 4, 16).log_softmax(2)[:, :2, :5],
        cr.tensor([[1, 2], [1, 1]], device=d),
        cr.tensor([3, 3]),
        cr.tensor([2, 2]),
    ),
    "fractional_max_pool2d": lambda x, d: F.fractional_max_pool2d(x[:, :, 0], 2, output_size=2),
    "multi_margin_loss": lambda x, d: F.multi_margin_loss(
        x[:, :, 0, 0, 0], cr.tensor([0, 2], device=d)
    ),
    "multilabel_margin_loss": lambda x, d: F.multilabel_margin_loss(
        x[:, :, 0, 0, 0], cr.tensor([[0, -1, 1], [2, -1, 0]], device=d)
    ),
    "embedding_bag": lambda x, d: F.embedding_bag(
        cr.tensor([0, 2, 1, 1], device=d), x[0, :, :, 0, 0], cr.tensor([0, 2], device=d)
    ),
    "dropout": lambda x, d: F.dropout(x, 0.5),
    "normal_": lambda x, d: cr.empty(3, device=d).normal_(),
    "bernoulli": lambda x, d: cr.bernoulli(x.detach().sigmoid()),
    "multinomial": lambda x, d: cr.multinomial(x[0, :, 0, 0].detach().exp(), 2),
    "Normal.log_prob": lambda x, d: cr.distributions.Normal(x, 1.0).log_prob(x.detach()),
    "Normal.rsample": lambda x, d: cr.distributions.Normal(x, 1.0).rsample(),
    "Categorical.sample": lambda x, d: cr.distributions.Categorical(logits=x[:, :, 0, 0, 0]).sample(
        (4,)
    ),
    "Dirichlet.log_prob": lambda x, d: cr.distributions.Dirichlet(x[0, :, 0, 0, 0].exp()).log_prob(
        cr.tensor([0.2, 0.3, 0.5], device=d)
    ),
    "clip_grad_norm_": lambda x, d: (
        (x**2).sum().backward(),
        nn.utils.clip_grad_norm_([x], 1.0),
        x.grad,
    )[2],
}


@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_function_on_cuda_matches_cpu(name: str, fake_cuda: Any) -> None:
    got = []
    for d in ("cpu", "cuda"):
        cr.manual_seed(1)  # draws are made on the host: the same numbers on both devices
        x = cr.tensor(np.random.default_rng(2).normal(size=(2, 3, 4, 4, 4)), device=d)
        x.requires_grad_()
        out = _FUNCTIONS[name](x, d)
        assert out.device.type == d, name
        got.append(_host(out.detach()))
    np.testing.assert_allclose(got[1], got[0], rtol=1e-10, atol=1e-12)
