"""Graph breaks inside compiled CUDA training steps (the CuPy stand-in): a read of the data
into Python (``.item()``, ``float``, ``bool`` after a side effect, ``.tolist()``), a
data-shaped call (``nonzero``) after a side effect and a tensor hook that reads a gradient in
the middle of the backward each end the capture there, and the rest of the call runs eagerly
on plain arrays (Note [de-tracing after a break] in chainrule/_compile/_tracer.py). Each step's
result and the parameters after several steps equal eager's on CUDA bit for bit, and the CPU
compiled run's; no tracing array is left in the model, its gradients or the optimizer's
state. Reads that are checked reads (before any side effect, Note [checked reads]) replay."""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule._compile._tracer import CuTracer, is_tracer

F = nn.functional


def _host(t: Any) -> np.ndarray:
    t = t.detach()
    return t.numpy() if t.device.type == "cpu" else t.cpu().numpy()


def _conv() -> nn.Module:
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(256, 3))


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(128, 16), nn.Tanh(), nn.Linear(16, 3))


# Each break point: (where, what) -> a read made at that point of the step, returning a float
# that scales the step's result (so the value read is used).
def _item(t: Any, y: Any) -> float:
    return t.item()


def _float(t: Any, y: Any) -> float:
    return float(t)


def _bool(t: Any, y: Any) -> float:
    return 2.0 if bool(t > 0) else 3.0


def _tolist(t: Any, y: Any) -> float:
    return sum(t.reshape(1).tolist())


def _nonzero(t: Any, y: Any) -> float:
    return float(len((y == 0).nonzero())) + 1.0


READS: dict[str, Callable[[Any, Any], float]] = {
    "item": _item,
    "float": _float,
    "bool": _bool,
    "tolist": _tolist,
    "nonzero": _nonzero,
}
# before: after the forward, before backward(); between: after backward(), before the
# optimizer's step; after: after the step (a side effect: every read is then a break).
WHERE = ("before", "between", "after")


def _make_step(model: nn.Module, read: str, where: str) -> Callable[..., Any]:
    opt = cr.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    fn = READS[read]

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        scale = fn(loss, y) if where == "before" else 1.0
        loss.backward()
        if where == "between":
            scale = fn(loss, y)
        opt.step()
        if where == "after":
            scale = fn(loss, y)
        return loss.detach() * scale

    step.opt = opt  # type: ignore[attr-defined]
    return step


def _make_hook_step(model: nn.Module) -> Callable[..., Any]:
    """A tensor hook on the hidden activation reads its gradient in the middle of the backward
    (a break inside the engine, with the rest of the backward still to run)."""
    opt = cr.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    seen: list[float] = []

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        out, hooked = x, False
        for m in model:
            out = m(out)
            if out.requires_grad and not hooked:  # the first layer's output
                out.register_hook(lambda g: seen.append(float(g.abs().sum())))
                hooked = True
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return loss.detach() * seen[-1]

    step.opt = opt  # type: ignore[attr-defined]
    return step


def _no_tracer_left(model: nn.Module, opt: Any) -> None:
    for p in model.parameters():
        assert not is_tracer(p._data)
        assert p.grad is None or not is_tracer(p.grad._data)
    for st in opt.state.values():
        for v in st.values():
            if isinstance(v, cr.Tensor):
                assert not is_tracer(v._data)


def _batches(n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(1)
    return [
        (rng.standard_normal((2, 2, 8, 8)).astype(np.float32), rng.integers(0, 3, 2))
        for _ in range(n)
    ]


def _run_three(
    make: Callable[[nn.Module], Callable[..., Any]], net: Callable[[], nn.Module]
) -> tuple[Any, Any]:
    """Eager on CUDA, compiled on CUDA and compiled on CPU, from the same parameters, for four
    steps: each step's results and the parameters after it compared bit for bit. Returns the
    two compiled functions."""
    cr.manual_seed(0)
    cpu_model = net()
    eager_model = copy.deepcopy(cpu_model).cuda()
    comp_model = copy.deepcopy(cpu_model).cuda()
    eager, comp_step = make(eager_model), make(comp_model)
    compiled, compiled_cpu = cr.compile(comp_step), cr.compile(make(cpu_model))
    for xb, yb in _batches(4):
        x, y = cr.tensor(xb), cr.tensor(yb)
        want = _host(eager(x.cuda(), y.cuda()))
        got = compiled(x.cuda(), y.cuda())
        assert got.device.type == "cuda"
        assert not is_tracer(got._data)
        np.testing.assert_array_equal(_host(got), want)
        np.testing.assert_array_equal(_host(compiled_cpu(x, y)), want)
        for p, q, r in zip(
            eager_model.parameters(), comp_model.parameters(), cpu_model.parameters()
        ):
            np.testing.assert_array_equal(_host(q), _host(p))
            np.testing.assert_array_equal(_host(r), _host(p))
        _no_tracer_left(comp_model, comp_step.opt)  # type: ignore[attr-defined]
    return compiled, compiled_cpu


def _is_break(read: str, where: str) -> bool:
    # A boolean read or a nonzero before any side effect (the backward writes only new
    # gradients) is a checked read (Note [checked reads]), not a break.
    return read in ("item", "float", "tolist") or where == "after"


@pytest.mark.parametrize("net", [_conv, _mlp], ids=["conv", "mlp"])
@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("read", list(READS))
def test_a_read_in_a_cuda_step_matches_eager_and_the_cpu_run(
    fake_cuda: Any, read: str, where: str, net: Callable[[], nn.Module]
) -> None:
    compiled, compiled_cpu = _run_three(lambda m: _make_step(m, read, where), net)
    for c in (compiled, compiled_cpu):
        if _is_break(read, where):
            assert c.stats["replays"] == 0
            assert "graph break:" in c.explain()
        else:
            assert "graph break:" not in c.explain()


@pytest.mark.parametrize("net", [_conv, _mlp], ids=["conv", "mlp"])
def test_a_hook_reading_a_gradient_mid_backward_matches_eager(
    fake_cuda: Any, net: Callable[[], nn.Module]
) -> None:
    compiled, compiled_cpu = _run_three(_make_hook_step, net)
    for c in (compiled, compiled_cpu):
        assert c.stats["replays"] == 0
        assert "graph break: Tensor data read into Python" in c.explain()


def test_a_graph_returned_from_a_broken_capture_backpropagates_outside(fake_cuda: Any) -> None:
    """The saved activations of a graph made before the break and returned are plain arrays:
    the caller's backward (the conv's weight gradient pads its saved input) runs as eager."""
    cr.manual_seed(0)
    eager_model = _conv().cuda()
    comp_model = copy.deepcopy(eager_model)

    def make(model: nn.Module) -> Callable[..., Any]:
        def fwd(x: Any, y: Any) -> Any:
            loss = F.cross_entropy(model(x), y)
            return loss * loss.item()

        return fwd

    eager, compiled = make(eager_model), cr.compile(make(comp_model))
    for xb, yb in _batches(3):
        x, y = cr.tensor(xb).cuda(), cr.tensor(yb).cuda()
        want, got = eager(x, y), compiled(x, y)
        np.testing.assert_array_equal(_host(got), _host(want))
        want.backward()
        got.backward()
        for p, q in zip(eager_model.parameters(), comp_model.parameters()):
            np.testing.assert_array_equal(_host(q.grad), _host(p.grad))
            assert not is_tracer(q.grad._data)
    assert compiled.stats["replays"] == 0


def test_detrace_reaches_lists_dicts_slots_cells_and_nested_tuples(fake_cuda: Any) -> None:
    """The holders that the de-tracing rebinds (Note [de-tracing after a break])."""
    from chainrule._compile._tracer import detrace

    a = fake_cuda.asarray(np.arange(3.0))
    b = fake_cuda.asarray(np.ones(2))
    ta, tb = CuTracer(a), CuTracer(b)
    t = cr.zeros(1)
    t._data = ta  # a slot
    lst = [ta, 1, tb]
    dct = {"k": tb, "n": None}
    nested = {"t": (1, (ta, "x"), [tb])}

    def closure() -> Any:
        return ta

    n = detrace([ta, tb], ())
    assert t._data is a
    assert lst[0] is a and lst[2] is b and lst[1] == 1
    assert dct["k"] is b and dct["n"] is None
    inner = nested["t"]
    assert inner[1][0] is a and inner[1][1] == "x" and inner[2][0] is b
    assert closure() is a
    assert n >= 7
    # A container named in ``skip`` keeps its tracer.
    kept = [tb]
    detrace([tb], (kept,))
    assert kept[0] is tb


def _no_step(model: nn.Module, where: str) -> Callable[..., Any]:
    """A forward and backward that reads the loss before the backward, or the gradient in the
    middle of it (a hook on the first layer's output)."""
    seen: list[float] = []

    def f(x: Any, y: Any) -> Any:
        out, hooked = x, False
        for m in model:
            out = m(out)
            if where == "hook" and out.requires_grad and not hooked:
                out.register_hook(lambda g: seen.append(float(g.abs().sum())))
                hooked = True
        loss = F.cross_entropy(out, y)
        scale = float(loss) if where == "before" else 1.0
        loss.backward()
        return loss.detach() * (seen[-1] if where == "hook" else scale)

    return f


@pytest.mark.parametrize("where", ["before", "hook"])
def test_a_backward_after_a_break_runs_on_the_nodes_gpu(fake_cuda: Any, where: str) -> None:
    """A backward on cuda:1 with cuda:0 current, after a break before it or broken by a hook
    inside it, runs as eager's: its gradients are plain CuPy arrays, which the engine's
    per-node device switch sees (TracingCupyBackend.ndarray and on_node_devices)."""
    cr.manual_seed(0)
    cpu_model = _conv()
    # Copied on the CPU: a CUDA tensor's deepcopy is made on the current GPU here.
    eager_model = copy.deepcopy(cpu_model).to("cuda:1")
    comp_model = cpu_model.to("cuda:1")

    def make(model: nn.Module) -> Callable[..., Any]:
        return _no_step(model, where)

    eager, compiled = make(eager_model), cr.compile(make(comp_model))
    assert cr.cuda.current_device() == 0
    for xb, yb in _batches(3):
        x, y = cr.tensor(xb).to("cuda:1"), cr.tensor(yb).to("cuda:1")
        np.testing.assert_array_equal(_host(compiled(x, y)), _host(eager(x, y)))
        for p, q in zip(eager_model.parameters(), comp_model.parameters()):
            assert q.grad.device == p.grad.device
            np.testing.assert_array_equal(_host(q.grad), _host(p.grad))
    assert cr.cuda.current_device() == 0


@pytest.mark.parametrize("read", ["none", "float"])
@pytest.mark.parametrize("net", [_conv, _mlp], ids=["conv", "mlp"])
def test_a_compiled_step_on_a_gpu_that_is_not_current(
    fake_cuda: Any, net: Callable[[], nn.Module], read: str
) -> None:
    """A training step on cuda:1 with cuda:0 current, replayed (no read) or broken
    (``float(loss)`` before the backward): the optimizer step, run unrecorded on the plain
    arrays, finds its parameters' GPU (the tracing backend's ``ndarray`` is the plain type
    while paused), as eager's does; equal to eager bit for bit."""
    cr.manual_seed(0)
    cpu_model = net()
    eager_model = copy.deepcopy(cpu_model).to("cuda:1")
    comp_model = cpu_model.to("cuda:1")

    def make(model: nn.Module) -> Callable[..., Any]:
        opt = cr.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            scale = float(loss) if read == "float" else 1.0
            loss.backward()
            opt.step()
            return loss.detach() * scale

        return step

    eager, compiled = make(eager_model), cr.compile(make(comp_model))
    for xb, yb in _batches(5):
        x, y = cr.tensor(xb).to("cuda:1"), cr.tensor(yb).to("cuda:1")
        np.testing.assert_array_equal(_host(compiled(x, y)), _host(eager(x, y)))
        assert cr.cuda.current_device() == 0
        for p, q in zip(eager_model.parameters(), comp_model.parameters()):
            assert q.device == p.device
            np.testing.assert_array_equal(_host(q), _host(p))
    if read == "none":
        assert compiled.stats["replays"] >= 1
    else:
        assert compiled.stats["replays"] == 0


def test_a_backward_that_breaks_in_a_hook_crosses_gpus_as_eager(fake_cuda: Any) -> None:
    """A graph over two GPUs (a layer on cuda:1, a copy to cuda:0, a layer there) whose
    backward began while recording and broke in a hook: the nodes after the break get plain
    gradients, and the engine's switch to cuda:1 for the first layer still happens
    (TracingCupyBackend.on_node_devices looks at both array types)."""
    cr.manual_seed(0)
    cpu_a, cpu_b = nn.Linear(6, 5), nn.Linear(5, 3)
    eager_ab = (copy.deepcopy(cpu_a).to("cuda:1"), copy.deepcopy(cpu_b).to("cuda:0"))
    comp_ab = (cpu_a.to("cuda:1"), cpu_b.to("cuda:0"))

    def make(a: nn.Module, b: nn.Module) -> Callable[..., Any]:
        seen: list[float] = []

        def f(x: Any, y: Any) -> Any:
            h = b(a(x).tanh().to("cuda:0"))
            h.register_hook(lambda g: seen.append(float(g.abs().sum())))
            loss = F.cross_entropy(h, y)
            loss.backward()
            return loss.detach() * seen[-1]

        return f

    eager, compiled = make(*eager_ab), cr.compile(make(*comp_ab))
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = cr.tensor(rng.standard_normal((4, 6)).astype(np.float32)).to("cuda:1")
        y = cr.tensor(rng.integers(0, 3, 4)).to("cuda:0")
        np.testing.assert_array_equal(_host(compiled(x, y)), _host(eager(x, y)))
        for m, n in zip(eager_ab, comp_ab):
            for p, q in zip(m.parameters(), n.parameters()):
                assert q.grad.device == p.grad.device
                np.testing.assert_array_equal(_host(q.grad), _host(p.grad))
    assert compiled.stats["replays"] == 0
