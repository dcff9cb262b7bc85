"""A compiled function's result backpropagated by the caller (Note [backward outside] in
chainrule/_compile/capture.py): ``loss = compiled(x); loss.backward()`` replays the forward and
the backward, bit for bit as eager, with eager's accumulation, retain_graph, version checks."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn

F = nn.functional


def _arr(t: Any) -> Any:
    return t.detach().numpy().copy()


def _pair(make: Any) -> tuple[Any, Any]:
    cr.manual_seed(0)
    a = make()
    cr.manual_seed(0)
    return a, make()


MODELS = {
    "mlp": (lambda: nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)), (4, 6)),
    "conv": (lambda: nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU()), (2, 2, 6, 6)),
    "batchnorm": (lambda: nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5)), (4, 6)),
    "gelu_ln": (lambda: nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8)), (4, 6)),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_module_compiled_backward_outside_equals_eager(name: str) -> None:
    make, shape = MODELS[name]
    m1, m2 = _pair(make)
    o1 = cr.optim.SGD(m1.parameters(), lr=0.1)
    o2 = cr.optim.SGD(m2.parameters(), lr=0.1)
    f = cr.compile(m1)
    rng = np.random.default_rng(0)
    for _ in range(6):
        x = cr.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        x2 = x.detach().clone().requires_grad_()
        o1.zero_grad()
        o2.zero_grad()
        out1, out2 = f(x), m2(x2)
        assert np.array_equal(_arr(out1), _arr(out2))
        (out1.square().mean() * 3.0).backward()  # eager ops after the compiled ones
        (out2.square().mean() * 3.0).backward()
        assert np.array_equal(_arr(x.grad), _arr(x2.grad))
        for (n, p), q in zip(m1.named_parameters(), m2.parameters()):
            assert np.array_equal(_arr(p.grad), _arr(q.grad)), n
        o1.step()
        o2.step()
    assert f.stats["replays"] >= 3
    assert out1.grad_fn.name() == "CompiledFunctionBackward"
    (cap,) = f.cache.values()
    assert "def backward(R, G)" in cap.bw_source


def _loss(m: Any, x: Any) -> Any:
    return (m(x) ** 2).sum()


def test_retain_graph_accumulation_and_freed_graph() -> None:
    m1, m2 = _pair(lambda: nn.Linear(3, 2))
    f = cr.compile(_loss)
    x = cr.ones(4, 3)
    for _ in range(4):
        m1.zero_grad()
        loss = f(m1, x)
    assert f.stats["replays"] == 2
    assert loss.grad_fn.name() == "CompiledFunctionBackward"
    want = _loss(m2, x)
    for _ in range(2):
        loss.backward(retain_graph=True)
        want.backward(retain_graph=True)
        assert np.array_equal(_arr(m1.weight.grad), _arr(m2.weight.grad))
    loss.backward()
    want.backward()
    assert np.array_equal(_arr(m1.weight.grad), _arr(m2.weight.grad))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        want.backward()


def test_gradient_argument_and_autograd_grad() -> None:
    m1, m2 = _pair(lambda: nn.Sequential(nn.Linear(3, 4), nn.Sigmoid()))
    f = cr.compile(m1)
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = cr.tensor(rng.standard_normal((2, 3)).astype(np.float32))
        g = cr.tensor(rng.standard_normal((4, 2)).astype(np.float32)).t()  # not contiguous
        (got,) = cr.autograd.grad(f(x), [m1[0].weight], g)
        (want,) = cr.autograd.grad(m2(x), [m2[0].weight], g)
        assert np.array_equal(_arr(got), _arr(want))
    assert f.stats["replays"] == 2


def test_in_place_change_before_backward_as_eager() -> None:
    m1, m2 = _pair(lambda: nn.Linear(3, 2))
    f = cr.compile(_loss)
    x1, x2 = cr.ones(4, 3), cr.ones(4, 3)
    for _ in range(3):
        loss = f(m1, x1)
    assert f.stats["replays"] == 1
    want = _loss(m2, x2)
    with cr.no_grad():  # the weight is not saved (the input and the output are)
        m1.weight.mul_(2.0)
        m2.weight.mul_(2.0)
    loss.backward(retain_graph=True)
    want.backward(retain_graph=True)
    assert np.array_equal(_arr(m1.weight.grad), _arr(m2.weight.grad))
    x1.add_(1.0)  # the saved input
    x2.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        want.backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_create_graph_through_a_replay_raises() -> None:
    m = nn.Linear(3, 1)
    f = cr.compile(_loss)
    x = cr.ones(2, 3)
    for _ in range(3):
        loss = f(m, x)
    with pytest.raises(RuntimeError, match="create_graph"):
        cr.autograd.grad(loss, [m.weight], create_graph=True)


def test_leaf_hooks_run_on_the_replayed_gradients() -> None:
    m = nn.Linear(3, 2)
    f = cr.compile(_loss)
    x = cr.ones(2, 3)
    for _ in range(3):
        loss = f(m, x)
    seen = []
    m.weight.register_hook(lambda g: seen.append(_arr(g)))
    m.zero_grad()
    loss.backward()
    assert len(seen) == 1 and np.array_equal(seen[0], _arr(m.weight.grad))


def test_capture_keeps_no_eager_graph_alive() -> None:
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
    f = cr.compile(m)
    refs = []
    for _ in range(4):
        out = f(cr.ones(2, 3))
        refs.append(weakref.ref(out.grad_fn))
        out.sum().backward()
    del out
    gc.collect()
    assert f.stats["replays"] == 1
    assert all(r() is None for r in refs)
    (cap,) = f.cache.values()
    assert cap.bw.tensor is None


def test_a_graph_from_outside_fn_is_not_cut() -> None:
    w = cr.tensor([1.0, 2.0], requires_grad=True)
    w2 = w * 3.0  # a global with history: the caller's backward must reach w through it

    def f(x: Any) -> Any:
        return (w2 * x + w).sum()

    c = cr.compile(f)
    for _ in range(4):
        w.grad = None
        c(cr.tensor([1.0, 1.0])).backward(retain_graph=True)
        assert np.array_equal(_arr(w.grad), [4.0, 4.0])
    assert c.stats["replays"] == 0
