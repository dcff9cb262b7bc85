"""Learning-rate schedulers: lr sequences against torch.optim.lr_scheduler."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import chainrule
import chainrule.optim as optim
from chainrule.optim import lr_scheduler


def _opt(m, lrs=(0.1, 0.02)):
    groups = [{"params": [m.nn.Parameter(m.ones(1))], "lr": lr} for lr in lrs]
    return m.optim.SGD(groups, lr=lrs[0])


class Halver:
    """A callable object (its state is saved, unlike a function's)."""

    def __init__(self):
        self.factor = 0.5

    def __call__(self, epoch):
        return self.factor**epoch


SCHEDULERS = {
    "StepLR": lambda m, o: m.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda m, o: m.optim.lr_scheduler.MultiStepLR(o, [2, 5, 5, 9], gamma=0.3),
    "ExponentialLR": lambda m, o: m.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda m, o: m.optim.lr_scheduler.CosineAnnealingLR(o, 4, eta_min=1e-3),
    "LambdaLR": lambda m, o: m.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1)),
    "LambdaLR-list": lambda m, o: m.optim.lr_scheduler.LambdaLR(o, [lambda e: 0.95**e, Halver()]),
}


def _sequence(m, make, steps=14):
    opt = _opt(m)
    sched = make(m, opt)
    seq = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append(sched.get_last_lr())
        assert seq[-1] == [g["lr"] for g in opt.param_groups]
    return seq, sched, opt


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_lr_sequence_matches_torch(name):
    a, _, _ = _sequence(chainrule, SCHEDULERS[name])
    b, _, _ = _sequence(torch, SCHEDULERS[name])
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-12)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR"])
def test_state_dict_resume(name):
    full, _, _ = _sequence(chainrule, SCHEDULERS[name], steps=10)
    _, sched, opt = _sequence(chainrule, SCHEDULERS[name], steps=4)
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4
    opt2 = _opt(chainrule)
    opt2.load_state_dict(opt.state_dict())
    sched2 = SCHEDULERS[name](chainrule, opt2)
    sched2.load_state_dict(sd)
    rest = []
    for _ in range(6):
        opt2.step()
        sched2.step()
        rest.append(sched2.get_last_lr())
    np.testing.assert_allclose(np.array(rest), np.array(full[5:]), rtol=1e-12)


def test_state_dict_keys_match_torch():
    for name in SCHEDULERS:
        _, sa, _ = _sequence(chainrule, SCHEDULERS[name], steps=2)
        _, sb, _ = _sequence(torch, SCHEDULERS[name], steps=2)
        kb = {
            k for k in sb.state_dict() if not k.startswith("_") or k in ("_last_lr", "_step_count")
        }
        assert kb <= set(sa.state_dict()), name
    _, sa, _ = _sequence(chainrule, SCHEDULERS["LambdaLR-list"], steps=1)
    assert sa.state_dict()["lr_lambdas"] == [None, {"factor": 0.5}]


def _plateau(m, metrics, **kw):
    opt = _opt(m)
    sched = m.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
    out = []
    for v in metrics:
        sched.step(v)
        out.append(sched.get_last_lr())
    return out


@pytest.mark.parametrize(
    "kw",
    [
        dict(patience=1),
        dict(mode="max", factor=0.5, patience=0, cooldown=1),
        dict(threshold_mode="abs", threshold=0.1, patience=0, min_lr=[0.05, 0.0]),
    ],
)
def test_reduce_on_plateau_matches_torch(kw):
    metrics = [1.0, 0.9, 0.95, 0.97, 0.99, 0.5, 0.6, 0.7, 0.8, 0.85, 0.2, 0.3]
    assert _plateau(chainrule, metrics, **kw) == _plateau(torch, metrics, **kw)


def test_scheduler_errors():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lr_scheduler.StepLR(object(), 1)
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        lr_scheduler.ReduceLROnPlateau(_opt(chainrule), factor=1.0)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(_opt(chainrule), 1, last_epoch=3)
    opt = _opt(chainrule)
    sched = lr_scheduler.CosineAnnealingLR(opt, 10)
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(5)
    assert sched.get_last_lr()[0] == pytest.approx(0.05 * (1 + math.cos(math.pi / 2)))
    assert isinstance(opt, optim.Optimizer)
