"""Optimisers: trajectories against torch.optim, state dicts, parameter groups."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn
import chainrule.optim as optim

RNG = np.random.default_rng(0)
W0 = RNG.standard_normal((3, 4)).astype(np.float32)
B0 = RNG.standard_normal(4).astype(np.float32)
X = RNG.standard_normal((5, 3)).astype(np.float32)
Y = RNG.standard_normal((5, 4)).astype(np.float32)


def _grid(**axes):
    keys = list(axes)
    return [dict(zip(keys, vals)) for vals in itertools.product(*axes.values())]


CASES = (
    [
        ("SGD", dict(lr=0.1, **kw))
        for kw in _grid(momentum=[0, 0.9], weight_decay=[0, 0.1], maximize=[False, True])
    ]
    + [
        ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5)),
        ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.05)),
    ]
    + [
        (name, dict(lr=0.05, **kw))
        for name in ("Adam", "AdamW")
        for kw in _grid(amsgrad=[False, True], weight_decay=[0, 0.1], maximize=[False, True])
    ]
    + [("Adam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6))]
    + [
        ("RMSprop", dict(lr=0.01, **kw))
        for kw in _grid(momentum=[0, 0.9], centered=[False, True], weight_decay=[0, 0.1])
    ]
    + [("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, maximize=True))]
    + [
        ("Adagrad", dict(lr=0.1, **kw))
        for kw in _grid(
            lr_decay=[0, 0.01], initial_accumulator_value=[0, 0.1], weight_decay=[0, 0.1]
        )
    ]
    + [("Adagrad", dict(lr=0.1, maximize=True, eps=1e-8))]
)


def _run(m, name, kwargs, steps=6, closure=False):
    w = m.nn.Parameter(m.tensor(W0.copy()))
    b = m.nn.Parameter(m.tensor(B0.copy()))
    x, y = m.tensor(X), m.tensor(Y)
    opt = getattr(m.optim, name)([w, b], **kwargs)

    def loss_fn():
        opt.zero_grad()
        loss = ((m.matmul(x, w) + b - y) ** 2).mean()
        loss.backward()
        return loss

    losses = []
    for _ in range(steps):
        if closure:
            losses.append(float(opt.step(loss_fn).detach()))
        else:
            losses.append(float(loss_fn().detach()))
            opt.step()
    return w, b, opt, losses


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_trajectory_matches_torch(name, kwargs):
    wa, ba, oa, la = _run(chainrule, name, kwargs)
    wb, bb, ob, lb = _run(torch, name, kwargs)
    np.testing.assert_allclose(_np(wa), _np(wb), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(ba), _np(bb), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(la, lb, rtol=1e-5)
    assert _np(wa).dtype == np.float32
    # Same state layout: keys, shapes and values.
    sa, sb = oa.state_dict(), ob.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    assert list(sa["state"]) == list(sb["state"])
    for i in sb["state"]:
        assert list(sa["state"][i]) == list(sb["state"][i])
        for k, vb in sb["state"][i].items():
            va = sa["state"][i][k]
            assert tuple(va.shape) == tuple(vb.shape), k
            np.testing.assert_allclose(_np(va), _np(vb), rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_closure(name):
    kwargs = {"lr": 0.01, "momentum": 0.5} if name != "Adam" else {"lr": 0.01}
    wa, _, _, la = _run(chainrule, name, kwargs, steps=3, closure=True)
    wb, _, _, lb = _run(torch, name, kwargs, steps=3, closure=True)
    np.testing.assert_allclose(_np(wa), _np(wb), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(la, lb, rtol=1e-5)


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("SGD", dict(lr=0.1, momentum=0.9)),
        ("Adam", dict(lr=0.05, amsgrad=True)),
        ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
        ("Adagrad", dict(lr=0.1)),
    ],
)
def test_state_dict_resume_matches_uninterrupted(name, kwargs):
    w_full, b_full, _, _ = _run(chainrule, name, kwargs, steps=6)
    w, b, opt, _ = _run(chainrule, name, kwargs, steps=3)
    sd = opt.state_dict()
    w2 = nn.Parameter(w.detach().clone())
    b2 = nn.Parameter(b.detach().clone())
    opt2 = getattr(optim, name)([w2, b2], lr=123.0)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == kwargs["lr"]
    assert opt2.param_groups[0]["params"][0] is w2
    x, y = chainrule.tensor(X), chainrule.tensor(Y)
    for _ in range(3):
        opt2.zero_grad()
        ((chainrule.matmul(x, w2) + b2 - y) ** 2).mean().backward()
        opt2.step()
    np.testing.assert_allclose(_np(w2), _np(w_full), rtol=1e-6, atol=1e-7)


def test_load_state_dict_validates_before_changing():
    w, b, opt, _ = _run(chainrule, "Adam", dict(lr=0.05), steps=2)
    sd = opt.state_dict()
    p = nn.Parameter(chainrule.zeros(2))
    other = optim.Adam([p, nn.Parameter(chainrule.zeros(4))], lr=1.0)
    with pytest.raises(ValueError, match="has shape"):
        other.load_state_dict(sd)
    assert other.param_groups[0]["lr"] == 1.0 and len(other.state) == 0
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.Adam([{"params": [w]}, {"params": [b]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.Adam([w]).load_state_dict(sd)


def test_step_bumps_version_and_keeps_identity():
    w = nn.Parameter(chainrule.ones(2))
    data = w._data
    opt = optim.SGD([w], lr=0.5)
    w.grad = chainrule.ones(2)
    v = w._version
    opt.step()
    assert w._version == v + 1 and w._data is data
    np.testing.assert_array_equal(w.detach().numpy(), [0.5, 0.5])
    assert not w.grad.requires_grad


def test_param_groups_and_add_param_group():
    a = nn.Parameter(chainrule.ones(1))
    b = nn.Parameter(chainrule.ones(1))
    c = nn.Parameter(chainrule.ones(1))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": c, "lr": 0.01})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0, 0.01]
    assert opt.param_groups[2]["momentum"] == 0.5
    for p in (a, b, c):
        p.grad = chainrule.ones(1)
    opt.step()
    np.testing.assert_allclose([float(a), float(b), float(c)], [0.9, 0.0, 0.99], rtol=1e-6)
    assert opt.state_dict()["param_groups"][2]["params"] == [2]
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_zero_grad_and_errors_match_torch():
    for m in (chainrule, torch):
        p = m.nn.Parameter(m.ones(2))
        opt = m.optim.SGD([p], lr=0.1)
        p.grad = m.ones(2)
        opt.zero_grad(set_to_none=False)
        assert p.grad is not None and float(p.grad.sum()) == 0
        opt.zero_grad()
        assert p.grad is None
    msgs = []
    for m in (chainrule, torch):
        errs = []
        for bad in (
            lambda: m.optim.SGD([], lr=0.1),
            lambda: m.optim.SGD(m.ones(1), lr=0.1),
            lambda: m.optim.SGD([m.ones(1)], lr=-1.0),
            lambda: m.optim.Adam([m.ones(1)], betas=(1.0, 0.9)),
            lambda: m.optim.SGD([m.ones(1)], lr=0.1, nesterov=True),
            lambda: m.optim.SGD([{"params": {m.ones(1)}}], lr=0.1),
        ):
            with pytest.raises((ValueError, TypeError)) as e:
                bad()
            errs.append((type(e.value), str(e.value).replace("chainrule.", "torch.")))
        msgs.append(errs)
    assert msgs[0] == msgs[1]


def test_pure_update_functions_documented():
    from chainrule.optim.adagrad import adagrad_update
    from chainrule.optim.adam import adam_update
    from chainrule.optim.rmsprop import rmsprop_update
    from chainrule.optim.sgd import sgd_update

    p = np.ones(2, np.float32)
    buf = sgd_update(
        np,
        p,
        np.ones(2, np.float32),
        None,
        lr=0.1,
        momentum=0.9,
        dampening=0.0,
        nesterov=False,
        weight_decay=0.0,
        maximize=False,
    )
    np.testing.assert_allclose(p, [0.9, 0.9])
    np.testing.assert_allclose(buf, [1.0, 1.0])
    for f in (sgd_update, adam_update, rmsprop_update, adagrad_update):
        assert "=" in f.__doc__
