"""torch.multinomial/bernoulli/normal/poisson, the in-place samplers, finfo and iinfo:
distributions (moments), dtypes, shapes and errors against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _err(fn, m):
    try:
        fn(m)
    except Exception as e:  # noqa: BLE001 - compared below
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.multinomial(m.tensor([0.5, 0.5]), 3),
        lambda m: m.multinomial(m.tensor([-0.5, 0.5]), 1),
        lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1),
        lambda m: m.multinomial(m.ones(2, 2, 2), 1),
        lambda m: m.bernoulli(m.tensor([1.5])),
        lambda m: m.normal(m.zeros(2), -m.ones(2)),
        lambda m: m.zeros(3).uniform_(2, 1),
        lambda m: m.zeros(3).exponential_(-1),
        lambda m: m.zeros(3).geometric_(1.5),
        lambda m: m.zeros(3).log_normal_(0, -1),
        lambda m: m.zeros(3, dtype=m.int64).random_(5, 2),
        lambda m: m.zeros(2, requires_grad=True).normal_(),
        lambda m: m.finfo(m.int32),
        lambda m: m.iinfo(m.float32),
    ],
)
def test_errors_as_torch(call):
    ours, theirs = _err(call, cr), _err(call, torch)
    assert theirs is not None and ours is not None
    assert ours[0] == theirs[0], (ours, theirs)
    assert ours[1].split(".")[0][:40] == theirs[1].split(".")[0][:40], (ours, theirs)


def test_moments_and_dtypes():
    g = cr.Generator().manual_seed(0)
    n = 200_000
    x = cr.empty(n, dtype=cr.float64).normal_(2.0, 3.0, generator=g)
    assert abs(x.mean().item() - 2.0) < 4 * 3 / n**0.5 and abs(x.std().item() - 3.0) < 0.03
    u = cr.empty(n).uniform_(-1, 3, generator=g)
    assert u.dtype == cr.float32 and -1 <= u.min().item() and u.max().item() < 3
    assert abs(u.mean().item() - 1.0) < 0.02
    e = cr.empty(n, dtype=cr.float64).exponential_(4.0, generator=g)
    assert abs(e.mean().item() - 0.25) < 0.005
    ln = cr.empty(n, dtype=cr.float64).log_normal_(0.0, 0.5, generator=g)
    assert abs(ln.log().mean().item()) < 0.01
    geo = cr.empty(n, dtype=cr.float64).geometric_(0.25, generator=g)
    assert geo.min().item() == 1 and abs(geo.mean().item() - 4.0) < 0.05
    b = cr.full((n,), 0.3).bernoulli(generator=g)
    assert b.dtype == cr.float32 and abs(b.mean().item() - 0.3) < 0.01
    p = cr.poisson(cr.full((n,), 3.0), generator=g)
    assert abs(p.mean().item() - 3.0) < 0.03
    r = cr.zeros(n, dtype=cr.int64).random_(3, 7, generator=g)
    assert r.unique().tolist() == [3, 4, 5, 6]
    assert cr.normal(1.0, 2.0, (4, 5)).shape == (4, 5)
    assert cr.normal(cr.zeros(3, dtype=cr.float64), 1.0).dtype == cr.float64
    assert cr.normal(0.0, cr.ones(2, 3)).shape == (2, 3)


def test_multinomial():
    g = cr.Generator().manual_seed(1)
    w = cr.tensor([[1.0, 0.0, 3.0], [0.0, 2.0, 2.0]])
    draws = cr.multinomial(w, 20_000, replacement=True, generator=g)
    assert draws.dtype == cr.int64 and draws.shape == (2, 20_000)
    f0 = np.bincount(draws[0].numpy(), minlength=3) / 20_000
    assert f0[1] == 0 and abs(f0[2] - 0.75) < 0.02
    no_rep = cr.multinomial(cr.ones(5), 5, generator=g)
    assert sorted(no_rep.tolist()) == [0, 1, 2, 3, 4]
    firsts = [cr.multinomial(cr.tensor([1.0, 3.0]), 1, generator=g).item() for _ in range(2000)]
    assert abs(np.mean(firsts) - 0.75) < 0.04
    assert w.multinomial(1).shape == (2, 1)


def test_in_place_samplers_follow_in_place_rules():
    p = cr.nn.Parameter(cr.zeros(3))
    with cr.no_grad():
        p.uniform_(-0.1, 0.1)
    assert p.abs().max().item() <= 0.1 and p.requires_grad and p.grad_fn is None
    x = cr.zeros(4)
    v = x[1:3]
    v.fill_(0.0)
    v.normal_()
    assert x[0].item() == 0 and x[3].item() == 0 and x[1].item() != 0


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_as_torch(name):
    ours, theirs = cr.finfo(getattr(cr, name)), torch.finfo(getattr(torch, name))
    for f in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, f) == getattr(theirs, f), f
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_as_torch(name):
    ours, theirs = cr.iinfo(getattr(cr, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.min, ours.max) == (theirs.bits, theirs.min, theirs.max)
    assert repr(ours) == repr(theirs)
