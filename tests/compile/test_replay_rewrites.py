"""Calls the replay program writes in another form than the one recorded, with the same bits:
``where`` as the branch-free ``select`` (Note [branch-free select] in _compile/fusion.py) and
``ndarray.__getitem__``/``__setitem__`` as subscripts (Note [method calls] in replay.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule._compile import fusion

F = nn.functional


def _arr(t: Any) -> Any:
    return t.detach().numpy().copy()


def _bits(a: Any) -> bytes:
    a = np.ascontiguousarray(a)
    return a.dtype.str.encode() + repr(a.shape).encode() + a.tobytes()


def _programs(f: Any) -> list[Any]:
    return [c for c in f.cache.values() if getattr(c, "program", None) is not None]


def _uses_select(f: Any) -> bool:
    return any(v is fusion.select for c in _programs(f) for v in c.program.__globals__.values())


_SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40])


def _data(rng: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    a = rng.standard_normal(shape).astype(dtype)
    flat = a.reshape(-1)
    flat[: len(_SPECIALS) * 3 : 3] = _SPECIALS.astype(dtype)
    return a


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_select_equals_where_bit_for_bit(dtype: Any) -> None:
    rng = np.random.default_rng(0)
    shape = (64, 80)
    c = rng.random(shape) < 0.5
    a, b = _data(rng, shape, dtype), _data(rng, shape, dtype)
    # NaNs with payloads and both signs: where copies their bits, and so must select.
    pay = np.array([0x7FC00001, 0xFFC00123], dtype=np.uint32).view(np.float32).astype(dtype)
    a.reshape(-1)[1:3] = pay
    zero, negzero, three = (np.array(v, dtype=dtype) for v in (0.0, -0.0, 3.0))
    for x, y in [(a, b), (zero, b), (negzero, b), (three, b), (a, zero), (a, three)]:
        assert fusion._selectable(c, x, y) is not None
        assert _bits(fusion.select(c, x, y)) == _bits(np.where(c, x, y))
    got = fusion.select(c, a, b)
    assert got.flags.c_contiguous and got.flags.writeable


def test_select_falls_back_to_where_on_other_arrays() -> None:
    rng = np.random.default_rng(1)
    c = rng.random((40, 30)) < 0.5
    a = rng.standard_normal((40, 30)).astype(np.float32)
    b = rng.standard_normal((40, 30)).astype(np.float32)
    cases = [
        (c, a, b.astype(np.float64)),  # promotion
        (c.T, a.T, b.T),  # not C-contiguous
        (c, a[:, :1], b),  # broadcast, not 0-d
        (c.astype(np.int8), a, b),  # not a boolean mask
        (c, np.float32(0.0) + np.zeros((), np.float32), np.zeros((), np.float32)),  # both 0-d
        (c, a.astype(np.int32), b.astype(np.int32)),  # not a float dtype
    ]
    for x in cases:
        assert fusion._selectable(*x) is None
        assert _bits(fusion.select(*x)) == _bits(np.where(*x))


def _relu_mlp_step(model: Any, opt: Any, x: Any, y: Any) -> Any:
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.detach()


def _make_mlp(seed: int) -> tuple[Any, Any]:
    cr.manual_seed(seed)
    m = nn.Sequential(
        nn.Linear(20, 256), nn.ReLU(), nn.Linear(256, 64), nn.PReLU(), nn.Linear(64, 5)
    )
    return m, cr.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)


def test_relu_and_prelu_step_replays_with_select_bit_for_bit() -> None:
    (m1, o1), (m2, o2) = _make_mlp(0), _make_mlp(0)
    f = cr.compile(_relu_mlp_step)
    rng = np.random.default_rng(2)
    for step in range(8):
        n = 64 if step < 6 else 96  # a new batch size: its guards fail and it captures anew
        x = cr.tensor(rng.standard_normal((n, 20)).astype(np.float32))
        y = cr.tensor(rng.integers(0, 5, n))
        assert _bits(_arr(f(m1, o1, x, y))) == _bits(_arr(_relu_mlp_step(m2, o2, x, y)))
        for p, q in zip(m1.parameters(), m2.parameters()):
            assert _bits(_arr(p)) == _bits(_arr(q))
            assert _bits(_arr(p.grad)) == _bits(_arr(q.grad))
    # The first call has no .grad nor momentum yet (a signature of its own); calls 2 and 3
    # capture twice, 4-6 replay; the batch of 96 captures twice and has a program.
    assert f.stats["replays"] == 3
    assert len(_programs(f)) == 2
    assert _uses_select(f)  # ReLU's gradient (64 x 256) and PReLU's forward (64 x 64)


def _masked(x: Any, w: Any) -> Any:
    # where of a NaN/inf/-0 carrying input, a 0-d zero and a 0-d non-zero.
    y = cr.where(x > 0, x, w * x)
    z = cr.where(x < 0.5, cr.zeros(()), y)
    return cr.where(x.abs() > 1.0, cr.full((), 7.0), z) * 2.0


def test_where_with_special_values_replays_bit_for_bit() -> None:
    f = cr.compile(_masked)
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = cr.tensor(_data(rng, (70, 80), np.float32))
        w = cr.tensor(_data(rng, (70, 80), np.float32))
        assert _bits(_arr(f(x, w))) == _bits(_arr(_masked(x, w)))
    assert f.stats["replays"] == 3
    assert _uses_select(f)


def _small_where(x: Any) -> Any:
    return cr.where(x > 0, x, x * 0.5)


def test_small_where_stays_where() -> None:
    f = cr.compile(_small_where)
    x = cr.tensor(np.linspace(-1, 1, 64, dtype=np.float32))
    for _ in range(4):
        assert _bits(_arr(f(x))) == _bits(_arr(_small_where(x)))
    assert f.stats["replays"] == 2
    assert not _uses_select(f)  # under SELECT_MIN elements


def _indexing(x: Any) -> Any:
    a = x[:, 1:5] * 2.0
    b = x[2]
    c = x.clone()
    c[1:3, ::2] = 0.0
    # the VJP of x[:, -1] writes the gradient into zeros by a slice assignment
    (g,) = cr.autograd.grad((x[:, -1] * 3.0).sum(), x)
    return (a.sum() + b.sum() + c.sum()).detach(), c.detach(), g


def test_subscripts_replay_bit_for_bit() -> None:
    f = cr.compile(_indexing)
    rng = np.random.default_rng(4)
    for _ in range(5):
        x = cr.tensor(rng.standard_normal((6, 8)).astype(np.float32), requires_grad=True)
        for g, w in zip(f(x), _indexing(x)):
            assert _bits(_arr(g)) == _bits(_arr(w))
    assert f.stats["replays"] == 3
    (cap,) = _programs(f)
    assert not any(v is np.ndarray.__getitem__ for v in cap.program.__globals__.values())
    assert "] = " in cap.source  # a slice assignment written as one


def _stacks(x: Any, y: Any) -> Any:
    outs = [cr.stack([x, y * 2.0, x - y], dim=d) for d in (0, 1, -1)]
    return cr.cat([o.reshape(-1) for o in outs]) + cr.zeros_like(x).sum()


def test_stack_and_dispatched_functions_replay_bit_for_bit() -> None:
    f = cr.compile(_stacks)
    rng = np.random.default_rng(5)
    for _ in range(5):
        x = cr.tensor(rng.standard_normal((3, 4)).astype(np.float32))
        y = cr.tensor(rng.standard_normal((3, 4)).astype(np.float32))
        assert _bits(_arr(f(x, y))) == _bits(_arr(_stacks(x, y)))
    assert f.stats["replays"] == 3
    (cap,) = _programs(f)
    env = list(cap.program.__globals__.values())
    assert not any(v is np.stack for v in env)  # written as concatenate of a[:, None] views
    assert not any(v is np.concatenate for v in env)  # called as its _implementation
    assert any(v is np.concatenate._implementation for v in env)  # type: ignore[attr-defined]


def _conv_step(model: Any, opt: Any, x: Any) -> Any:
    opt.zero_grad()
    loss = (model(x) ** 2).mean()
    loss.backward()
    opt.step()
    return loss.detach()


def test_conv_step_strided_views_replay_bit_for_bit() -> None:
    def make() -> tuple[Any, Any]:
        cr.manual_seed(1)
        m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.PReLU(), nn.Conv2d(8, 4, 3))
        return m, cr.optim.SGD(m.parameters(), lr=0.01)

    (m1, o1), (m2, o2) = make(), make()
    f = cr.compile(_conv_step)
    rng = np.random.default_rng(6)
    for _ in range(6):
        x = cr.tensor(rng.standard_normal((2, 3, 12, 12)).astype(np.float32))
        assert _bits(_arr(f(m1, o1, x))) == _bits(_arr(_conv_step(m2, o2, x)))
        for p, q in zip(m1.parameters(), m2.parameters()):
            assert _bits(_arr(p)) == _bits(_arr(q))
            assert _bits(_arr(p.grad)) == _bits(_arr(q.grad))
    assert f.stats["replays"] == 3
    env = [v for c in _programs(f) for v in c.program.__globals__.values()]
    assert any(v is fusion.strided for v in env)
    assert not any(v is np.lib.stride_tricks.as_strided for v in env)


def test_strided_equals_as_strided() -> None:
    x = np.arange(60, dtype=np.float32).reshape(3, 20)
    ro = x.copy()
    ro.flags.writeable = False
    for a, wr in [(x, True), (x, False), (ro, True), (x[:, ::2], False), (x.T, True)]:
        shape, strides = (2, 4, 3), (a.strides[0], a.strides[-1], a.strides[-1])
        got = fusion.strided(a, shape, strides, writeable=wr)
        want = np.lib.stride_tricks.as_strided(a, shape=shape, strides=strides, writeable=wr)
        assert _bits(got) == _bits(want) and got.strides == want.strides
        assert got.flags.writeable == want.flags.writeable
        assert np.shares_memory(got, a)
