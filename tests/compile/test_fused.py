"""The fused replay (Note [fused replay] in chainrule/_compile/fusion.py): elementwise chains run
in donated arguments and per-capture buffers, bit-identical to eager and to the plain replay;
memory that leaves the program (results, views of them, gradients, optimizer inputs) is fresh
on every replay."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule._compile import fusion

F = nn.functional


def _arr(t: Any) -> Any:
    return t.detach().numpy().copy()


def _cap(f: Any) -> Any:
    (cap,) = f.cache.values()
    return cap


@pytest.fixture
def plain() -> Any:
    fusion.FUSE[0] = False
    yield
    fusion.FUSE[0] = True


def _chain(x: Any) -> Any:
    # sub -> exp -> mul -> add: one buffer; the tanh chain starts another.
    y = ((x - 0.5).exp() * 3.0 + 1.0).tanh()
    return (y * y).sum(dim=1)


def test_elementwise_chain_is_fused_and_equals_eager() -> None:
    f = cr.compile(_chain)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = cr.tensor(rng.standard_normal((8, 16)).astype(np.float32))
        got, want = f(x), _chain(x)
        assert np.array_equal(_arr(got), _arr(want))
    cap = _cap(f)
    assert f.stats["replays"] == 3
    assert "out=B0" in cap.source  # the chain's head writes into the capture's buffer
    assert ", out=s" in cap.source  # the rest of the chain into its dead argument
    assert "del s" in cap.source
    assert cap.bytes_buffers == 8 * 16 * 4
    assert cap.n_fused >= 4


def test_plain_replay_has_no_fusion_and_same_bits(plain: Any) -> None:
    f = cr.compile(_chain)
    x = cr.tensor(np.linspace(-1, 1, 48, dtype=np.float32).reshape(3, 16))
    outs = [_arr(f(x)) for _ in range(4)]
    cap = _cap(f)
    assert "out=" not in cap.source and "del " not in cap.source
    assert cap.bytes_buffers == 0 and cap.lock is None
    fusion.FUSE[0] = True
    g = cr.compile(_chain)
    assert all(np.array_equal(_arr(g(x)), o) for o in outs)
    assert "out=" in _cap(g).source


def _returns_chain_views(x: Any) -> Any:
    a = (x * 2.0).exp()  # a chain whose memory leaves through views
    b = a + 1.0
    return b.reshape(-1), b[:, 1], b.t(), (b * 0.5).sum()


def test_memory_that_leaves_is_fresh_on_every_replay() -> None:
    f = cr.compile(_returns_chain_views)
    rng = np.random.default_rng(1)
    kept = []
    for _ in range(5):
        x = cr.tensor(rng.standard_normal((4, 3)).astype(np.float32))
        got = f(x)
        want = _returns_chain_views(x)
        for g, w in zip(got, want):
            assert np.array_equal(_arr(g), _arr(w))
        kept.append((got, [_arr(g) for g in got]))
    assert f.stats["replays"] == 3
    for got, snap in kept:  # a later replay did not write into an earlier result
        for g, s in zip(got, snap):
            assert np.array_equal(_arr(g), s)


def _train(model: Any, opt: Any, x: Any, y: Any) -> Any:
    opt.zero_grad()
    loss = F.mse_loss(model(x).sigmoid() * 2.0 - 1.0, y)
    loss.backward()
    opt.step()
    return loss.detach()


@pytest.mark.parametrize("optname", ["sgd", "adam"])
def test_train_step_fused_grads_are_fresh_and_equal_eager(optname: str) -> None:
    def make() -> Any:
        cr.manual_seed(0)
        m = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3))
        o = (
            cr.optim.SGD(m.parameters(), lr=0.1)
            if optname == "sgd"
            else cr.optim.Adam(m.parameters(), lr=0.01)
        )
        return m, o

    (m1, o1), (m2, o2) = make(), make()
    f = cr.compile(_train)
    rng = np.random.default_rng(2)
    held = []
    for _ in range(6):
        x = cr.tensor(rng.standard_normal((4, 5)).astype(np.float32))
        y = cr.tensor(rng.standard_normal((4, 3)).astype(np.float32))
        assert np.array_equal(_arr(f(m1, o1, x, y)), _arr(_train(m2, o2, x, y)))
        for p, q in zip(m1.parameters(), m2.parameters()):
            assert np.array_equal(_arr(p), _arr(q))
            assert np.array_equal(_arr(p.grad), _arr(q.grad))
        held.append([(p.grad, _arr(p.grad)) for p in m1.parameters()])
    # The first call has no .grad and no optimizer state yet: its signature differs.
    assert f.stats["replays"] == 3
    assert "out=" in f.cache[next(reversed(f.cache))].source
    for grads in held:  # zero_grad sets None: each step's gradients are new arrays
        for g, snap in grads:
            assert np.array_equal(_arr(g), snap)


def test_a_capture_in_use_runs_eagerly() -> None:
    f = cr.compile(_chain)
    x = cr.tensor(np.ones((2, 16), np.float32))
    for _ in range(3):
        f(x)
    cap = _cap(f)
    assert isinstance(cap.lock, type(threading.Lock()))
    with cap.lock:  # as if another thread were replaying this capture's buffers
        got = f(x)
    assert f.stats["eager"] == 1 and f.stats["replays"] == 1
    assert np.array_equal(_arr(got), _arr(_chain(x)))
    f(x)
    assert f.stats["replays"] == 2
