"""chainrule.compile on CUDA tensors (the CuPy stand-in): captured and replayed calls give
eager's results bit for bit over several steps, the replay is the one used (``stats`` and
``explain()``), a call whose tensors moved to another device captures anew, and mixed
cpu/cuda inputs raise eager's error (docs/compile.md, docs/gpu.md)."""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn

F = nn.functional


def _host(t: Any) -> np.ndarray:
    t = t.detach()
    return t.numpy() if t.device.type == "cpu" else t.cpu().numpy()


def _chain(a: Any, b: Any) -> Any:
    h = (a @ b).tanh() * 1.5 - a[:, :2].exp()
    h = F.softmax(h, dim=1) + h.sin() ** 2
    h = cr.where(h > 0.4, h, -h).sum(0) / 3
    return h.log1p().clamp(min=-1.0) + b.T[0, :2].mean()


def _assert_steps_equal(eager: Callable[..., Any], compiled: Any, batches: list[Any]) -> None:
    for inputs in batches:
        want, got = eager(*inputs), compiled(*inputs)
        assert got.device == want.device
        np.testing.assert_array_equal(_host(got), _host(want))


@pytest.mark.parametrize("dev", ["cuda:0", "cuda:1"])
def test_op_chain_replays_bit_identical_on_cuda(fake_cuda: Any, dev: str) -> None:
    rng = np.random.default_rng(0)
    batches = [
        (cr.tensor(rng.standard_normal((5, 4), np.float32), device=dev),
         cr.tensor(rng.standard_normal((4, 2), np.float32), device=dev))
        for _ in range(5)
    ]  # fmt: skip
    g = cr.compile(_chain)
    _assert_steps_equal(_chain, g, batches)
    assert g.stats == {**g.stats, "captures": 2, "replays": 3, "eager": 0}
    assert "5 calls, 2 captures, 3 replays, 0 eager" in g.explain()
    # The replay reads the live arrays: an in-place change between calls is seen.
    a, b = batches[0]
    a.mul_(-2)
    np.testing.assert_array_equal(_host(g(a, b)), _host(_chain(a, b)))
    assert g.stats["replays"] == 4


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


def _convnet() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 4, 3, stride=2),
        nn.Flatten(),
        nn.Linear(4, 3),
    )


def _step_fn(model: nn.Module, opt: Any) -> Callable[..., Any]:
    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


OPTIMIZERS = {
    "sgd": lambda ps: cr.optim.SGD(ps, lr=0.1, momentum=0.9),
    "adam": lambda ps: cr.optim.Adam(ps, lr=0.01),
}


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
@pytest.mark.parametrize(
    ("make", "shape"), [(_mlp, (8, 6)), (_convnet, (4, 2, 8, 8))], ids=["mlp", "convnet"]
)
def test_training_step_compiled_on_cuda_matches_eager(
    fake_cuda: Any, make: Callable[[], nn.Module], shape: tuple[int, ...], opt_name: str
) -> None:
    cr.manual_seed(0)
    eager_model = make().cuda()
    comp_model = copy.deepcopy(eager_model)
    eager_step = _step_fn(eager_model, OPTIMIZERS[opt_name](eager_model.parameters()))
    compiled = cr.compile(_step_fn(comp_model, OPTIMIZERS[opt_name](comp_model.parameters())))
    rng = np.random.default_rng(1)
    for _ in range(6):
        x = cr.tensor(rng.standard_normal(shape).astype(np.float32)).cuda()
        y = cr.tensor(rng.integers(0, 3, shape[0])).cuda()
        want, got = eager_step(x, y), compiled(x, y)
        assert got.device == cr.device("cuda:0")
        np.testing.assert_array_equal(_host(got), _host(want))
        for p, q in zip(eager_model.parameters(), comp_model.parameters()):
            assert q.device == p.device
            np.testing.assert_array_equal(_host(q), _host(p))
            np.testing.assert_array_equal(_host(q.grad), _host(p.grad))
    # call 1 (no .grad yet) and calls 2-3 (the signature's two captures) capture; 4-6 replay
    assert compiled.stats["replays"] == 3 and compiled.stats["eager"] == 0
    assert "1 optimizer steps" in compiled.explain()


def test_a_device_change_captures_anew(fake_cuda: Any) -> None:
    x, w = cr.randn(5, 4), cr.randn(4, 2)
    g = cr.compile(_chain)
    want = _chain(x, w).numpy()
    counts = []
    for dev in ("cuda:0", "cuda:1", "cpu", "cuda:0"):
        for _ in range(3):
            out = g(x.to(dev), w.to(dev))
            assert out.device == cr.device(dev)
            np.testing.assert_allclose(_host(out), want, rtol=1e-5, atol=1e-6)
        counts.append((g.stats["captures"], g.stats["replays"]))
    # each new device: two captures, then a replay; back on cuda:0, its capture is kept
    assert counts == [(2, 1), (4, 2), (6, 3), (6, 6)]


def test_replay_keeps_the_current_device(fake_cuda: Any) -> None:
    """Work on cuda:1 replays on cuda:1 while cuda:0 is current, and cuda:0 stays current; a
    call made with another device current runs eagerly (its factories would follow it)."""
    a, b = cr.randn(5, 4, device="cuda:1"), cr.randn(4, 2, device="cuda:1")
    g = cr.compile(_chain)
    for _ in range(3):
        np.testing.assert_array_equal(_host(g(a, b)), _host(_chain(a, b)))
        assert cr.cuda.current_device() == 0
    assert g.stats["replays"] == 1
    with cr.cuda.device(1):
        np.testing.assert_array_equal(_host(g(a, b)), _host(_chain(a, b)))
        assert cr.cuda.current_device() == 1
    assert g.stats["replays"] == 1 and g.stats["eager"] == 1


def _mixed(a: Any, b: Any) -> Any:
    return (a * 2) @ b


def test_mixed_devices_raise_eagers_error(fake_cuda: Any) -> None:
    x, w = cr.randn(3, 4), cr.randn(4, 2)
    cases = [(x, w.cuda()), (x.cuda(), w), (x.to("cuda:0"), w.to("cuda:1"))]
    for a, b in cases:
        with pytest.raises(RuntimeError) as eager:
            _mixed(a, b)
        g = cr.compile(_mixed)
        for _ in range(3):
            with pytest.raises(RuntimeError) as compiled:
                g(a, b)
            assert str(compiled.value) == str(eager.value)
            assert "Expected all tensors to be on the same device" in str(compiled.value)


def test_a_cpu_scalar_tensor_joins_a_cuda_op_as_in_eager(fake_cuda: Any) -> None:
    """A 0-d CPU tensor may join CUDA tensors (as in PyTorch), also while captured."""
    s = cr.tensor(3.0)
    x = cr.randn(4, device="cuda")

    def f(x: Any, s: Any) -> Any:
        return (x * s + s).exp()

    g = cr.compile(f)
    for _ in range(3):
        np.testing.assert_array_equal(_host(g(x, s)), _host(f(x, s)))
    assert g.stats["replays"] == 1


def test_data_read_on_cuda_is_a_graph_break(fake_cuda: Any) -> None:
    x = cr.randn(4, device="cuda")

    def f(x: Any) -> Any:
        return x * float(x.sum())

    g = cr.compile(f)
    for _ in range(3):
        np.testing.assert_array_equal(_host(g(x)), _host(f(x)))
    assert g.stats["replays"] == 0
    assert "graph break: Tensor data read into Python" in g.explain()


def test_a_graph_break_in_a_cuda_conv_step_runs_the_rest_eagerly(fake_cuda: Any) -> None:
    cr.manual_seed(0)
    eager_model = nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1), nn.Flatten(), nn.Linear(256, 3)
    ).cuda()
    comp_model = copy.deepcopy(eager_model)

    def make(model: nn.Module) -> Callable[..., Any]:
        opt = cr.optim.SGD(model.parameters(), lr=0.1)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            scale = float(loss)  # a graph break before the backward
            loss.backward()
            opt.step()
            return loss.detach() * scale

        return step

    eager, compiled = make(eager_model), cr.compile(make(comp_model))
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = cr.tensor(rng.standard_normal((2, 2, 8, 8)).astype(np.float32)).cuda()
        y = cr.tensor(rng.integers(0, 3, 2)).cuda()
        np.testing.assert_array_equal(_host(compiled(x, y)), _host(eager(x, y)))
        for p, q in zip(eager_model.parameters(), comp_model.parameters()):
            np.testing.assert_array_equal(_host(q), _host(p))
    assert compiled.stats["replays"] == 0
    assert "graph break: Tensor data read into Python" in compiled.explain()
