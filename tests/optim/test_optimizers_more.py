"""The optimizers added for issue 14 (and the execution flags of all of them): 50-step float64
trajectories against torch.optim on a small MLP with a Rosenbrock term, two parameter groups."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import chainrule

RNG = np.random.default_rng(1)
W1 = RNG.standard_normal((4, 3)) * 0.5
B1 = RNG.standard_normal(4) * 0.5
W2 = RNG.standard_normal((2, 4)) * 0.5
B2 = RNG.standard_normal(2) * 0.5
X = RNG.standard_normal((3, 6))
Y = RNG.standard_normal((2, 6))
STEPS = 50


def _grid(**axes):
    keys = list(axes)
    return [dict(zip(keys, vals)) for vals in itertools.product(*axes.values())]


def _params(m):
    return [m.nn.Parameter(m.tensor(a.copy())) for a in (W1, B1, W2, B2)]


def _loss(m, params, x, y):
    w1, b1, w2, b2 = params
    h = m.tanh(m.matmul(w1, x) + b1[:, None])
    out = m.matmul(w2, h) + b2[:, None]
    # A Rosenbrock term couples neighbouring entries of b1 (a curved valley).
    rosen = (100 * (b1[1:] - b1[:-1] ** 2) ** 2 + (1 - b1[:-1]) ** 2).sum()
    return ((out - y) ** 2).mean() + 1e-3 * rosen


def _groups(params, kwargs, group2):
    return [{"params": params[:2]}, {"params": params[2:], **group2}]


def _run(m, name, kwargs, group2, steps=STEPS, grad_none=False):
    params = _params(m)
    x, y = m.tensor(X), m.tensor(Y)
    opt = getattr(m.optim, name)(_groups(params, kwargs, group2), **kwargs)
    losses = []
    for i in range(steps):
        opt.zero_grad()
        loss = _loss(m, params, x, y)
        loss.backward()
        if grad_none and i % 3 == 0:
            params[3].grad = None  # a parameter without a gradient is skipped
        losses.append(float(loss.detach()))
        opt.step()
    return params, opt, losses


def _np(t):
    return t.detach().numpy()


def _compare_state(sa, sb):
    assert sa["param_groups"] == sb["param_groups"]
    assert sorted(sa["state"]) == sorted(sb["state"])
    for k in sb["state"]:
        a, b = sa["state"][k], sb["state"][k]
        assert sorted(a) == sorted(b)
        for key in b:
            va, vb = _np(a[key]), _np(b[key])
            assert va.dtype == vb.dtype, key
            assert va.shape == vb.shape, key
            np.testing.assert_allclose(va, vb, rtol=1e-6, atol=1e-12, err_msg=key)


CASES = (
    [("Adadelta", dict(lr=1.0, **kw), {"lr": 0.5}) for kw in _grid(
        weight_decay=[0, 0.1], maximize=[False, True])]
    + [("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, foreach=True), {"rho": 0.95})]
    + [("Adamax", dict(lr=0.02, **kw), {"lr": 0.01}) for kw in _grid(
        weight_decay=[0, 0.1], maximize=[False, True])]
    + [("Adamax", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, foreach=False), {})]
    + [("NAdam", dict(lr=0.01, **kw), {"lr": 0.005}) for kw in _grid(
        weight_decay=[0, 0.1], decoupled_weight_decay=[False, True], maximize=[False, True])]
    + [("NAdam", dict(lr=0.01, momentum_decay=0.01, betas=(0.8, 0.95)), {"momentum_decay": 0})]
    + [("RAdam", dict(lr=0.01, **kw), {"lr": 0.02}) for kw in _grid(
        weight_decay=[0, 0.1], decoupled_weight_decay=[False, True], maximize=[False, True])]
    # beta2 = 0.9 makes rho_t exceed 5 from step 6, so both branches run.
    + [("RAdam", dict(lr=0.01, betas=(0.9, 0.9)), {"betas": (0.8, 0.5)})]
    + [("ASGD", dict(lr=0.05, **kw), {"lr": 0.02}) for kw in _grid(
        weight_decay=[0, 0.1], maximize=[False, True])]
    # t0 = 10 starts the averaging (mu < 1) within the run.
    + [("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=10), {"t0": 20})]
    + [("Rprop", dict(lr=0.01, **kw), {"lr": 0.02}) for kw in _grid(maximize=[False, True])]
    + [("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 0.05)), {"etas": (0.6, 1.1)})]
    + [("Adafactor", dict(lr=0.01, **kw), {"lr": 0.02}) for kw in _grid(
        weight_decay=[0, 0.1], maximize=[False, True])]
    + [("Adafactor", dict(lr=0.5, beta2_decay=-0.5, eps=(1e-6, 1e-2), d=2.0), {"d": 1.0})]
    # The existing optimizers with the execution flags (accepted, no change to the numbers).
    + [("SGD", dict(lr=0.002, momentum=0.5, foreach=True, maximize=True), {"lr": 0.001}),
       ("SGD", dict(lr=0.05, nesterov=True, momentum=0.5, fused=True), {}),
       ("Adam", dict(lr=0.01, fused=True, amsgrad=True), {"lr": 0.02}),
       ("Adam", dict(lr=0.01, foreach=True, decoupled_weight_decay=True, weight_decay=0.1), {}),
       ("AdamW", dict(lr=0.01, fused=False, foreach=False, maximize=True), {}),
       ("RMSprop", dict(lr=0.01, foreach=True, centered=True, momentum=0.5), {"alpha": 0.9}),
       ("Adagrad", dict(lr=0.05, fused=True, maximize=True), {"lr_decay": 0.01})]
)


@pytest.mark.parametrize(
    "name,kwargs,group2", CASES, ids=[f"{n}-{k}-{g}" for n, k, g in CASES]
)
def test_trajectory_matches_torch(name, kwargs, group2):
    # torch 2.13's fused SGD fails on a parameter without a gradient (a torch bug), so the
    # fused cases give every parameter a gradient.
    skip = not kwargs.get("fused")
    pa, oa, la = _run(chainrule, name, kwargs, group2, grad_none=skip)
    pb, ob, lb = _run(torch, name, kwargs, group2, grad_none=skip)
    for a, b in zip(pa, pb):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(la, lb, rtol=1e-6)
    # The run went somewhere: the parameters moved by more than the tolerance.
    assert max(np.abs(_np(a) - a0).max() for a, a0 in zip(pa, (W1, B1, W2, B2))) > 1e-3
    _compare_state(oa.state_dict(), ob.state_dict())


def _run_reloaded(m, name, kwargs, group2):
    # 20 steps, save, load into a fresh optimizer, 20 more.
    params = _params(m)
    x, y = m.tensor(X), m.tensor(Y)
    opt = getattr(m.optim, name)(_groups(params, kwargs, group2), **kwargs)
    for i in range(40):
        if i == 20:
            saved = opt.state_dict()
            opt = getattr(m.optim, name)(_groups(params, kwargs, group2), **kwargs)
            opt.load_state_dict(saved)
        opt.zero_grad()
        _loss(m, params, x, y).backward()
        opt.step()
    return params, opt


@pytest.mark.parametrize("name,kwargs,group2", CASES[::3], ids=[c[0] for c in CASES[::3]])
def test_state_dict_round_trip_mid_run(name, kwargs, group2):
    straight, _, _ = _run(chainrule, name, kwargs, group2, steps=40)
    pa, oa = _run_reloaded(chainrule, name, kwargs, group2)
    pb, ob = _run_reloaded(torch, name, kwargs, group2)
    for a, b, c in zip(pa, pb, straight):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-10)
        # Loading casts float32 scalar state (NAdam's mu_product, ASGD's eta) to the
        # parameter's dtype, in torch too, so a reloaded run may differ in the last bits.
        np.testing.assert_allclose(_np(a), _np(c), rtol=1e-6, atol=1e-10)
    _compare_state(oa.state_dict(), ob.state_dict())
