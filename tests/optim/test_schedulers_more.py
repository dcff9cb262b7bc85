"""The schedulers added for issue 14: lr (and momentum / beta1) trajectories against
torch.optim.lr_scheduler for 60 steps, mid-run state-dict round trips, step(epoch) and
errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule

STEPS = 60


def _opt(m, kind):
    a = m.nn.Parameter(m.tensor(np.ones(2)))
    b = m.nn.Parameter(m.tensor(np.ones(3)))
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if kind == "adam":
        return m.optim.Adam(groups, lr=0.1, betas=(0.9, 0.99))
    if kind == "rmsprop":
        return m.optim.RMSprop(groups, lr=0.1, momentum=0.5)
    return m.optim.SGD(groups, lr=0.1, momentum=0.9)


def _make(m, name, opt, kwargs):
    L = m.optim.lr_scheduler
    if name == "MultiplicativeLR":
        return L.MultiplicativeLR(opt, **kwargs)
    if name == "SequentialLR":
        first = L.LinearLR(opt, start_factor=0.1, total_iters=10)
        second = L.CosineAnnealingWarmRestarts(opt, T_0=7, T_mult=2)
        third = L.ExponentialLR(opt, gamma=0.95)
        return L.SequentialLR(opt, [first, second, third], milestones=[10, 30])
    if name == "SequentialLR-constant":
        first = L.ConstantLR(opt, factor=0.5, total_iters=4)
        second = L.PolynomialLR(opt, total_iters=20, power=2.0)
        return L.SequentialLR(opt, [first, second], milestones=[8])
    if name == "ChainedScheduler":
        return L.ChainedScheduler(
            [
                L.ConstantLR(opt, factor=0.2, total_iters=5),
                L.ExponentialLR(opt, gamma=0.97),
                L.LinearLR(opt, start_factor=0.5, total_iters=12),
            ]
        )
    return getattr(L, name)(opt, **kwargs)


CASES = [
    ("ConstantLR", "sgd", {}),
    ("ConstantLR", "sgd", dict(factor=0.25, total_iters=12)),
    ("LinearLR", "sgd", {}),
    ("LinearLR", "sgd", dict(start_factor=0.05, end_factor=0.5, total_iters=30)),
    ("LinearLR", "sgd", dict(start_factor=1.0, end_factor=0.0, total_iters=20)),
    ("PolynomialLR", "sgd", {}),
    ("PolynomialLR", "sgd", dict(total_iters=40, power=0.5)),
    ("MultiplicativeLR", "sgd", dict(lr_lambda=lambda e: 0.97)),
    ("MultiplicativeLR", "sgd", dict(lr_lambda=[lambda e: 0.9, lambda e: 1.0 + 0.01 * e])),
    ("CosineAnnealingWarmRestarts", "sgd", dict(T_0=10)),
    ("CosineAnnealingWarmRestarts", "sgd", dict(T_0=5, T_mult=2, eta_min=1e-3)),
    ("CyclicLR", "sgd", dict(base_lr=0.01, max_lr=0.1, step_size_up=7)),
    (
        "CyclicLR",
        "sgd",
        dict(
            base_lr=[0.01, 0.02],
            max_lr=[0.1, 0.3],
            step_size_up=5,
            step_size_down=9,
            mode="triangular2",
        ),
    ),
    (
        "CyclicLR",
        "adam",
        dict(
            base_lr=0.01,
            max_lr=0.1,
            step_size_up=6,
            mode="exp_range",
            gamma=0.97,
            base_momentum=0.8,
            max_momentum=0.95,
        ),
    ),
    (
        "CyclicLR",
        "rmsprop",
        dict(
            base_lr=0.01,
            max_lr=0.1,
            step_size_up=4,
            scale_fn=lambda x: 0.5**x,
            scale_mode="iterations",
        ),
    ),
    ("CyclicLR", "sgd", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, cycle_momentum=False)),
    ("OneCycleLR", "sgd", dict(max_lr=0.5, total_steps=STEPS)),
    (
        "OneCycleLR",
        "adam",
        dict(
            max_lr=[0.5, 1.0],
            epochs=6,
            steps_per_epoch=10,
            anneal_strategy="linear",
            pct_start=0.25,
        ),
    ),
    (
        "OneCycleLR",
        "sgd",
        dict(
            max_lr=0.5,
            total_steps=STEPS + 5,
            three_phase=True,
            div_factor=10.0,
            final_div_factor=100.0,
            base_momentum=0.7,
        ),
    ),
    ("OneCycleLR", "adam", dict(max_lr=0.5, total_steps=STEPS, cycle_momentum=False)),
    ("SequentialLR", "sgd", {}),
    ("SequentialLR-constant", "sgd", {}),
    ("ChainedScheduler", "sgd", {}),
]


def _momenta(opt):
    out = []
    for g in opt.param_groups:
        out.append(g["betas"][0] if "betas" in g else g["momentum"])
    return out


def _trajectory(m, name, kind, kwargs, steps=STEPS, reload_at=None):
    opt = _opt(m, kind)
    sched = _make(m, name, opt, kwargs)
    lrs = [sched.get_last_lr()]
    groups = [[g["lr"] for g in opt.param_groups]]
    moms = [_momenta(opt)]
    for i in range(steps):
        if i == reload_at:
            saved_opt, saved = opt.state_dict(), sched.state_dict()
            opt = _opt(m, kind)
            sched = _make(m, name, opt, kwargs)
            opt.load_state_dict(saved_opt)
            sched.load_state_dict(saved)
        opt.step()
        sched.step()
        lrs.append(list(sched.get_last_lr()))
        groups.append([g["lr"] for g in opt.param_groups])
        moms.append(_momenta(opt))
    return np.array(lrs, float), np.array(groups, float), np.array(moms, float)


IDS = [f"{n}-{k}-{i}" for i, (n, k, _) in enumerate(CASES)]


@pytest.mark.parametrize("name,kind,kwargs", CASES, ids=IDS)
def test_trajectory_matches_torch(name, kind, kwargs):
    la, ga, ma = _trajectory(chainrule, name, kind, kwargs)
    lb, gb, mb = _trajectory(torch, name, kind, kwargs)
    np.testing.assert_allclose(la, lb, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(ga, gb, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(ma, mb, rtol=1e-10, atol=1e-15)
    np.testing.assert_array_equal(la, ga)  # get_last_lr() is what the groups hold
    assert np.unique(np.round(la[:, 0], 12)).size > 1  # the rate really changes


@pytest.mark.parametrize("name,kind,kwargs", CASES, ids=IDS)
def test_state_dict_round_trip_mid_run(name, kind, kwargs):
    straight = _trajectory(chainrule, name, kind, kwargs)
    reloaded = _trajectory(chainrule, name, kind, kwargs, reload_at=25)
    torch_reloaded = _trajectory(torch, name, kind, kwargs, reload_at=25)
    for a, b, c in zip(straight, reloaded, torch_reloaded):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(b, c, rtol=1e-10, atol=1e-15)


CLOSED = [
    ("ConstantLR", dict(factor=0.5, total_iters=4)),
    ("LinearLR", dict(start_factor=0.2, total_iters=8)),
    ("PolynomialLR", dict(total_iters=8, power=2.0)),
]


@pytest.mark.parametrize("name,kwargs", CLOSED, ids=[c[0] for c in CLOSED])
def test_step_with_epoch_uses_the_closed_form(name, kwargs):
    out = []
    for m in (chainrule, torch):
        opt = _opt(m, "sgd")
        sched = _make(m, name, opt, kwargs)
        lrs = []
        for epoch in (3, 9, 5, 0, 6):
            opt.step()
            with pytest.warns(UserWarning, match="The epoch parameter"):
                sched.step(epoch)
            lrs.append(sched.get_last_lr())
        out.append(lrs)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)


def test_warm_restarts_fractional_epochs():
    out = []
    for m in (chainrule, torch):
        opt = _opt(m, "sgd")
        sched = m.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
        lrs = []
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no deprecation warning for step(epoch) here
            for epoch in np.arange(0, 25, 0.37):
                sched.step(float(epoch))
                lrs.append(sched.get_last_lr() + [sched.T_cur, sched.T_i, sched.last_epoch])
        out.append(lrs)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12, atol=1e-15)


def test_lr_scheduler_alias_and_base():
    L = chainrule.optim.lr_scheduler
    assert issubclass(L._LRScheduler, L.LRScheduler)

    class Halving(L._LRScheduler):
        def get_lr(self):
            return [base * 0.5**self.last_epoch for base in self.base_lrs]

    opt = _opt(chainrule, "sgd")
    sched = Halving(opt)
    for _ in range(3):
        opt.step()
        sched.step()
    assert sched.get_last_lr() == [0.1 * 0.125, 0.05 * 0.125]


def _step_n(sched, opt, n):
    for _ in range(n):
        opt.step()
        sched.step()


def _errors(fn):
    out = []
    for m in (chainrule, torch):
        with pytest.raises(Exception) as info:
            fn(m, _opt(m, "sgd"))
        out.append((type(info.value), str(info.value)))
    assert out[0] == out[1]


BAD = [
    lambda m, o: m.optim.lr_scheduler.ConstantLR(o, factor=1.5),
    lambda m, o: m.optim.lr_scheduler.LinearLR(o, start_factor=0),
    lambda m, o: m.optim.lr_scheduler.LinearLR(o, end_factor=2),
    lambda m, o: m.optim.lr_scheduler.MultiplicativeLR(o, [lambda e: 1.0]),
    lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="x"),
    lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, mode="square"),
    lambda m, o: m.optim.lr_scheduler.CyclicLR(o, [0.1], 1.0),
    lambda m, o: m.optim.lr_scheduler.CyclicLR(
        m.optim.Adagrad(o.param_groups[0]["params"]), 0.1, 1.0
    ),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, 1.0),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=0),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, 1.0, epochs=0, steps_per_epoch=3),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, 1.0, epochs=2, steps_per_epoch=1.5),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=5, pct_start=1.5),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=5, anneal_strategy="x"),
    lambda m, o: _step_n(m.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=3), o, 4),
    lambda m, o: m.optim.lr_scheduler.SequentialLR(o, [], []),
    lambda m, o: m.optim.lr_scheduler.SequentialLR(o, [m.optim.lr_scheduler.ConstantLR(o)], [3]),
    lambda m, o: m.optim.lr_scheduler.SequentialLR(
        o, [m.optim.lr_scheduler.ReduceLROnPlateau(o)], []
    ),
    lambda m, o: m.optim.lr_scheduler.ChainedScheduler([]),
    lambda m, o: m.optim.lr_scheduler.ChainedScheduler([object()], optimizer=o),
]


@pytest.mark.parametrize("fn", BAD, ids=[str(i) for i in range(len(BAD))])
def test_errors_match_torch(fn):
    _errors(fn)


def test_sequential_rejects_a_foreign_optimizer():
    for m in (chainrule, torch):
        o1, o2 = _opt(m, "sgd"), _opt(m, "sgd")
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same"):
            m.optim.lr_scheduler.SequentialLR(
                o1,
                [m.optim.lr_scheduler.ConstantLR(o1), m.optim.lr_scheduler.ConstantLR(o2)],
                [3],
            )
