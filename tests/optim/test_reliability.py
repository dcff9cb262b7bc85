"""Optimizer state dicts and failed steps (issue 12, defect 9).

Before the fix ``Adam.load_state_dict(sgd.state_dict())`` was accepted and the next ``step()``
failed with ``KeyError: 'betas'``; a state dict without ``'state'`` was accepted; and switching
``amsgrad`` on after some steps bumped one parameter's step counter before raising. Now a
state dict is checked when it is loaded, and a step checks everything it reads before its
first write: a failing step changes no parameter and no state entry.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import optim
from chainrule.optim.optimizer import OptimizerStateKeyError


def _params(m=cr, n=3):
    rng = np.random.default_rng(0)
    ps = [
        m.nn.Parameter(m.tensor(rng.standard_normal(s).astype(np.float32)))
        for s in [(2, 3), (3,), (4,)][:n]
    ]
    for p in ps:
        p.grad = m.ones(*p.shape)
    return ps


def _snapshot(opt):
    params = [p.detach().numpy().copy() for g in opt.param_groups for p in g["params"]]
    state = {
        id(p): {
            k: (v.numpy().copy() if hasattr(v, "numpy") else copy.deepcopy(v)) for k, v in s.items()
        }
        for p, s in opt.state.items()
    }
    groups = copy.deepcopy(
        [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
    )
    return params, state, groups


def _assert_unchanged(opt, snap):
    params, state, groups = _snapshot(opt)
    for a, b in zip(params, snap[0]):
        np.testing.assert_array_equal(a, b)
    assert state.keys() == snap[1].keys()
    for pid in state:
        assert state[pid].keys() == snap[1][pid].keys()
        for k in state[pid]:
            np.testing.assert_array_equal(state[pid][k], snap[1][pid][k])
    assert groups == snap[2]


def _adam_with_steps(**kw):
    opt = optim.Adam(_params(), lr=0.1, **kw)
    opt.step()
    opt.step()
    return opt


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_adam_refuses_an_sgd_state_dict_at_load(momentum):
    ps = _params()
    sgd = optim.SGD(ps, lr=0.1, momentum=momentum)
    sgd.step()
    adam = _adam_with_steps()
    snap = _snapshot(adam)
    with pytest.raises(KeyError, match="'betas'") as e:
        adam.load_state_dict(sgd.state_dict())
    assert isinstance(e.value, OptimizerStateKeyError)
    assert "group 0" in str(e.value) and "nothing was loaded" in str(e.value)
    _assert_unchanged(adam, snap)
    adam.step()  # still usable


def test_pytorch_accepts_the_sgd_state_dict_then_fails_in_step():
    # What chainrule improves on: the same mistake in PyTorch surfaces one step later.
    p = torch.nn.Parameter(torch.ones(3))
    p.grad = torch.ones(3)
    adam = torch.optim.Adam([p])
    adam.load_state_dict(torch.optim.SGD([p], lr=0.1).state_dict())
    with pytest.raises(KeyError, match="betas"):
        adam.step()


@pytest.mark.parametrize("key", ["state", "param_groups"])
def test_missing_top_level_key_is_a_key_error(key):
    opt = _adam_with_steps()
    sd = opt.state_dict()
    del sd[key]
    snap = _snapshot(opt)
    with pytest.raises(KeyError, match=f"no '{key}' key"):
        opt.load_state_dict(sd)
    _assert_unchanged(opt, snap)
    # PyTorch raises a KeyError too, naming the key.
    t = torch.optim.Adam([torch.nn.Parameter(torch.ones(2))])
    tsd = t.state_dict()
    del tsd[key]
    with pytest.raises(KeyError, match=key):
        t.load_state_dict(tsd)


@pytest.mark.parametrize("bad", [[1], "state", None])
def test_state_dict_that_is_not_a_dict_is_a_type_error(bad):
    opt = _adam_with_steps()
    with pytest.raises(TypeError, match="expects a dict"):
        opt.load_state_dict(bad)


def test_group_count_and_size_errors_are_torchs():
    ps = _params()
    sd = optim.Adam(ps).state_dict()
    for make, text in [
        (
            lambda m, q: m.optim.Adam([{"params": q[:1]}, {"params": q[1:]}]),
            "loaded state dict has a different number of parameter groups",
        ),
        (
            lambda m, q: m.optim.Adam(q[:2]),
            "loaded state dict contains a parameter group that doesn't match the size of "
            "optimizer's group",
        ),
    ]:
        with pytest.raises(ValueError) as got:
            make(cr, ps).load_state_dict(sd)
        tp = _params(torch)
        with pytest.raises(ValueError) as want:
            make(torch, tp).load_state_dict(torch.optim.Adam(tp).state_dict())
        assert str(got.value) == str(want.value) == text


def test_settings_added_by_newer_versions_are_filled_from_defaults():
    opt = _adam_with_steps()
    sd = opt.state_dict()
    for g in sd["param_groups"]:
        for k in ("decoupled_weight_decay", "fused", "capturable", "maximize"):
            del g[k]
    fresh = optim.Adam(_params(), lr=0.1)
    fresh.load_state_dict(sd)
    assert fresh.param_groups[0]["decoupled_weight_decay"] is False
    assert fresh.param_groups[0]["maximize"] is False
    fresh.step()


def test_loaded_state_lacking_a_key_is_refused_at_load():
    opt = _adam_with_steps()
    sd = opt.state_dict()
    del sd["state"][1]["exp_avg_sq"]
    target = optim.Adam(_params(), lr=0.1)
    with pytest.raises(KeyError, match="parameter 1 has no 'exp_avg_sq'"):
        target.load_state_dict(sd)
    assert len(target.state) == 0


def test_amsgrad_switched_on_fails_without_touching_anything():
    opt = _adam_with_steps()
    opt.param_groups[0]["amsgrad"] = True
    snap = _snapshot(opt)
    with pytest.raises(KeyError, match="'max_exp_avg_sq'"):
        opt.step()
    _assert_unchanged(opt, snap)  # every step counter is still 2
    assert all(float(s["step"]) == 2.0 for s in opt.state.values())


def test_pytorch_amsgrad_switch_also_raises_key_error():
    p = torch.nn.Parameter(torch.ones(3))
    p.grad = torch.ones(3)
    opt = torch.optim.Adam([p])
    opt.step()
    opt.param_groups[0]["amsgrad"] = True
    with pytest.raises(KeyError, match="max_exp_avg_sq"):
        opt.step()


@pytest.mark.parametrize(
    "make,break_it",
    [
        # the second group's setting removed by hand: the first group must not be updated
        (
            lambda ps: optim.Adam([{"params": ps[:1]}, {"params": ps[1:]}], lr=0.1),
            lambda o: o.param_groups[1].pop("eps"),
        ),
        # the last parameter's state lost a buffer: the first two must not be updated
        (
            lambda ps: optim.Adam(ps, lr=0.1),
            lambda o: o.state[o.param_groups[0]["params"][2]].pop("exp_avg"),
        ),
        (lambda ps: optim.RMSprop(ps, lr=0.1), lambda o: o.param_groups[0].update(momentum=0.9)),
        (lambda ps: optim.RMSprop(ps, lr=0.1), lambda o: o.param_groups[0].update(centered=True)),
        (
            lambda ps: optim.Adagrad(ps, lr=0.1),
            lambda o: o.state[o.param_groups[0]["params"][1]].clear(),
        ),
        (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), lambda o: o.param_groups[0].pop("lr")),
    ],
)
def test_failed_step_changes_no_parameter_and_no_state(make, break_it):
    opt = make(_params())
    opt.step()
    break_it(opt)
    snap = _snapshot(opt)
    with pytest.raises(KeyError):
        opt.step()
    _assert_unchanged(opt, snap)


def test_round_trip_still_matches_torch_after_checks():
    ps, tps = _params(), _params(torch)
    a, b = optim.Adam(ps, lr=0.1, amsgrad=True), torch.optim.Adam(tps, lr=0.1, amsgrad=True)
    for _ in range(2):
        a.step()
        b.step()
    c = optim.Adam(ps, lr=0.1, amsgrad=True)
    c.load_state_dict(a.state_dict())
    c.step()
    b.step()
    for p, q in zip(ps, tps):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6)
