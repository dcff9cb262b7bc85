"""The optimizers added for issue 14 (and the execution flags of all of them): 50-step float64
trajectories against torch.optim on a small MLP with a Rosenbrock term, two parameter groups.

(Over 400 lines: one table of cases and the checks of every new optimizer share the fixtures.)
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import chainrule
import chainrule.optim as optim

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
    [
        ("Adadelta", dict(lr=1.0, **kw), {"lr": 0.5})
        for kw in _grid(weight_decay=[0, 0.1], maximize=[False, True])
    ]
    + [("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, foreach=True), {"rho": 0.95})]
    + [
        ("Adamax", dict(lr=0.02, **kw), {"lr": 0.01})
        for kw in _grid(weight_decay=[0, 0.1], maximize=[False, True])
    ]
    + [("Adamax", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, foreach=False), {})]
    + [
        ("NAdam", dict(lr=0.01, **kw), {"lr": 0.005})
        for kw in _grid(
            weight_decay=[0, 0.1], decoupled_weight_decay=[False, True], maximize=[False, True]
        )
    ]
    + [("NAdam", dict(lr=0.01, momentum_decay=0.01, betas=(0.8, 0.95)), {"momentum_decay": 0})]
    + [
        ("RAdam", dict(lr=0.01, **kw), {"lr": 0.02})
        for kw in _grid(
            weight_decay=[0, 0.1], decoupled_weight_decay=[False, True], maximize=[False, True]
        )
    ]
    # beta2 = 0.9 makes rho_t exceed 5 from step 6, so both branches run.
    + [("RAdam", dict(lr=0.01, betas=(0.9, 0.9)), {"betas": (0.8, 0.5)})]
    + [
        ("ASGD", dict(lr=0.05, **kw), {"lr": 0.02})
        for kw in _grid(weight_decay=[0, 0.1], maximize=[False, True])
    ]
    # t0 = 10 starts the averaging (mu < 1) within the run.
    + [("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=10), {"t0": 20})]
    + [("Rprop", dict(lr=0.01, **kw), {"lr": 0.02}) for kw in _grid(maximize=[False, True])]
    + [("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 0.05)), {"etas": (0.6, 1.1)})]
    + [
        ("Adafactor", dict(lr=0.01, **kw), {"lr": 0.02})
        for kw in _grid(weight_decay=[0, 0.1], maximize=[False, True])
    ]
    + [("Adafactor", dict(lr=0.5, beta2_decay=-0.5, eps=(1e-6, 1e-2), d=2.0), {"d": 1.0})]
    # The existing optimizers with the execution flags (accepted, no change to the numbers).
    + [
        ("SGD", dict(lr=0.002, momentum=0.5, foreach=True, maximize=True), {"lr": 0.001}),
        ("SGD", dict(lr=0.05, nesterov=True, momentum=0.5, fused=True), {}),
        ("Adam", dict(lr=0.01, fused=True, amsgrad=True), {"lr": 0.02}),
        ("Adam", dict(lr=0.01, foreach=True, decoupled_weight_decay=True, weight_decay=0.1), {}),
        ("AdamW", dict(lr=0.01, fused=False, foreach=False, maximize=True), {}),
        ("RMSprop", dict(lr=0.01, foreach=True, centered=True, momentum=0.5), {"alpha": 0.9}),
        ("Adagrad", dict(lr=0.05, fused=True, maximize=True), {"lr_decay": 0.01}),
    ]
)


@pytest.mark.parametrize("name,kwargs,group2", CASES, ids=[f"{n}-{k}-{g}" for n, k, g in CASES])
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


MUON_CASES = [
    dict(lr=0.02),
    dict(lr=0.02, nesterov=False, momentum=0.9, weight_decay=0.01),
    dict(lr=0.02, adjust_lr_fn="match_rms_adamw", ns_steps=3),
    dict(lr=0.02, adjust_lr_fn="original", ns_coefficients=(2.0, -1.5, 0.5), eps=1e-5),
]


def _run_muon(m, kwargs, steps=STEPS):
    w1, b1, w2, b2 = _params(m)
    b1.requires_grad_(False)
    b2.requires_grad_(False)
    x, y = m.tensor(X), m.tensor(Y)
    opt = m.optim.Muon([{"params": [w1]}, {"params": [w2], "lr": 0.01}], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        _loss(m, [w1, b1, w2, b2], x, y).backward()
        opt.step()
    return [w1, w2], opt


@pytest.mark.parametrize("kwargs", MUON_CASES, ids=[str(k) for k in MUON_CASES])
def test_muon_matches_torch(kwargs):
    # torch runs the Newton-Schulz iteration in bfloat16; chainrule rounds to bfloat16 after
    # the same operations, and the float32-accumulated products agree here to the last bit.
    pa, oa = _run_muon(chainrule, kwargs)
    pb, ob = _run_muon(torch, kwargs)
    for a, b, a0 in zip(pa, pb, (W1, W2)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-10)
        assert np.abs(_np(a) - a0).max() > 1e-2
    _compare_state(oa.state_dict(), ob.state_dict())


def test_muon_newton_schulz_orthogonalises():
    from chainrule.optim.muon import zeropower_via_newtonschulz

    g = RNG.standard_normal((4, 7))
    o = zeropower_via_newtonschulz(g, (3.4445, -4.775, 2.0315), 5, 1e-7)
    # The quintic iteration drives the singular values into roughly [0.7, 1.2].
    s = np.linalg.svd(o.astype(np.float64), compute_uv=False)
    assert s.min() > 0.6 and s.max() < 1.25
    assert o.T.shape == zeropower_via_newtonschulz(g.T, (3.4445, -4.775, 2.0315), 5, 1e-7).shape


NEW = [
    "Adadelta",
    "Adafactor",
    "Adamax",
    "ASGD",
    "Muon",
    "NAdam",
    "RAdam",
    "Rprop",
    "SparseAdam",
    "LBFGS",
]
ALL = NEW + ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]


@pytest.mark.parametrize("name", ALL)
def test_signature_matches_torch(name):
    import inspect

    sa = inspect.signature(getattr(optim, name).__init__).parameters
    sb = inspect.signature(getattr(torch.optim, name).__init__).parameters
    assert list(sa) == list(sb)
    for key in sb:
        assert sa[key].kind == sb[key].kind, key
        assert sa[key].default == sb[key].default, key


WITH_CAPTURABLE = [
    "Adadelta",
    "Adamax",
    "ASGD",
    "NAdam",
    "RAdam",
    "Rprop",
    "Adam",
    "AdamW",
    "RMSprop",
]


@pytest.mark.parametrize("name", WITH_CAPTURABLE)
def test_capturable_fails_at_step_on_cpu_as_torch(name):
    for m in (chainrule, torch):
        w = m.nn.Parameter(m.tensor(np.ones(3)))
        opt = getattr(m.optim, name)([w], capturable=True)
        (w * w).sum().backward()
        with pytest.raises(AssertionError, match="If capturable=True"):
            opt.step()
        np.testing.assert_array_equal(_np(w), np.ones(3))  # nothing changed


@pytest.mark.parametrize(
    "name", [n for n in ALL if n not in ("Adafactor", "Muon", "SparseAdam", "LBFGS")]
)
def test_differentiable_is_refused(name):
    # torch fails at step() for leaf parameters; chainrule, which cannot record the update,
    # refuses at construction. Both are RuntimeErrors.
    w = chainrule.nn.Parameter(chainrule.tensor(np.ones(3)))
    with pytest.raises(NotImplementedError, match="differentiable=True is not supported"):
        getattr(optim, name)([w], lr=0.1, differentiable=True)
    wt = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    opt = getattr(torch.optim, name)([wt], lr=0.1, differentiable=True)
    (wt * wt).sum().backward()
    with pytest.raises(RuntimeError):
        opt.step()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_fused_flag_checks_match_torch(name):
    for m in (chainrule, torch):
        w = m.nn.Parameter(m.tensor(np.ones(3)))
        with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
            getattr(m.optim, name)([w], lr=0.1, fused=True, foreach=True)
        with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
            getattr(m.optim, name)([w], lr=0.1, fused=True, differentiable=True)


BAD = [
    ("Adadelta", dict(lr=-1)),
    ("Adadelta", dict(rho=1.5)),
    ("Adadelta", dict(eps=-1)),
    ("Adadelta", dict(weight_decay=-1)),
    ("Adamax", dict(lr=-1)),
    ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(eps=-1)),
    ("NAdam", dict(momentum_decay=-1)),
    ("NAdam", dict(betas=(0.9, 1.0))),
    ("RAdam", dict(weight_decay=-1)),
    ("RAdam", dict(lr=-0.1)),
    ("ASGD", dict(lr=-1)),
    ("ASGD", dict(weight_decay=-1)),
    ("Rprop", dict(lr=-1)),
    ("Rprop", dict(etas=(1.2, 0.5))),
    ("SparseAdam", dict(lr=-1)),
    ("SparseAdam", dict(eps=-1)),
    ("SparseAdam", dict(betas=(0.9, 1.5))),
    ("Adafactor", dict(lr=-1)),
    ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1, 1e-3))),
    ("Adafactor", dict(eps=(None, -1))),
    ("Adafactor", dict(d=0.5)),
    ("Adafactor", dict(weight_decay=-1)),
    ("Muon", dict(lr=-1)),
    ("Muon", dict(momentum=-1)),
    ("Muon", dict(weight_decay=-1)),
    ("Muon", dict(adjust_lr_fn="sqrt")),
]


@pytest.mark.parametrize("name,kwargs", BAD, ids=[f"{n}-{k}" for n, k in BAD])
def test_bad_hyperparameters_match_torch(name, kwargs):
    errors = []
    for m in (chainrule, torch):
        w = m.nn.Parameter(m.tensor(np.ones((2, 3))))
        with pytest.raises(ValueError) as info:
            getattr(m.optim, name)([w], **kwargs)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_muon_rejects_non_matrices_and_many_steps():
    for m in (chainrule, torch):
        with pytest.raises(ValueError, match=r"Muon only supports 2D parameters .*\[3\]"):
            m.optim.Muon([m.nn.Parameter(m.tensor(np.ones(3)))])
        w = m.nn.Parameter(m.tensor(np.ones((2, 3))))
        opt = m.optim.Muon([w], ns_steps=100)
        (w * w).sum().backward()
        with pytest.raises(ValueError, match="Number of steps must be less than 100"):
            opt.step()


def test_sparse_adam_refuses_dense_gradients_as_torch():
    for m in (chainrule, torch):
        w = m.nn.Parameter(m.tensor(np.ones(3)))
        opt = m.optim.SparseAdam([w])
        opt.step()  # no gradient yet: nothing to do
        (w * w).sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            opt.step()
        np.testing.assert_array_equal(_np(w), np.ones(3))


def _swap_run(m):
    import copy

    w = m.nn.Parameter(m.tensor(np.ones(2)))
    opt = m.optim.Adam([w], lr=0.1)
    w.grad = m.tensor(np.ones(2))
    opt.step()
    other = m.nn.Parameter(m.tensor(np.zeros(2)))
    other.grad = m.tensor(np.full(2, -1.0))
    sd = copy.deepcopy(opt.state_dict())
    sd["param_groups"][0]["lr"] = 1.0
    with m.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, sd):
        assert opt.param_groups[0]["params"][0] is other
        assert opt.param_groups[0]["lr"] == 1.0
        opt.step()
    assert opt.param_groups[0]["params"][0] is w and opt.param_groups[0]["lr"] == 0.1
    fresh = m.optim.Adam([w], lr=0.1)
    with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
        with m.optim.swap_in_optimizer_params_and_state(fresh, {"w": other}, sd):
            pass
    return (
        _np(w),
        _np(other),
        float(sd["state"][0]["step"]),
        float(opt.state[w]["step"]),
        _np(sd["state"][0]["exp_avg"]),
    )


def test_swap_in_optimizer_params_and_state_matches_torch():
    a, b = _swap_run(chainrule), _swap_run(torch)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-12)
    assert a[2] == 2.0 and a[3] == 1.0  # the swapped-in state stepped in place, not the live one


F32 = [c for c in CASES if c[0] in NEW][::3]


@pytest.mark.parametrize("name,kwargs,group2", F32, ids=[f"{n}-{k}" for n, k, _ in F32])
def test_float32_trajectories_match_torch(name, kwargs, group2):
    def run(m):
        params = [m.nn.Parameter(m.tensor(a.astype(np.float32))) for a in (W1, B1, W2, B2)]
        x, y = m.tensor(X.astype(np.float32)), m.tensor(Y.astype(np.float32))
        opt = getattr(m.optim, name)(_groups(params, kwargs, group2), **kwargs)
        for _ in range(20):
            opt.zero_grad()
            _loss(m, params, x, y).backward()
            opt.step()
        return params, opt

    pa, oa = run(chainrule)
    pb, ob = run(torch)
    for a, b in zip(pa, pb):
        assert _np(a).dtype == np.float32
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-5)
    for k, state in ob.state_dict()["state"].items():
        for key, value in state.items():
            assert _np(oa.state_dict()["state"][k][key]).dtype == _np(value).dtype, key
