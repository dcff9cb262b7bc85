"""LBFGS against torch.optim.LBFGS: trajectories with and without the strong-Wolfe line search,
closure calls, early stops, state dicts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

RNG = np.random.default_rng(2)
A0 = np.array([-1.2, 1.0, -0.5])
B0 = RNG.standard_normal((2, 2)) * 0.5
X = RNG.standard_normal((2, 5))


def _setup(m, dtype="float64"):
    a = m.nn.Parameter(m.tensor(A0.astype(dtype)))
    b = m.nn.Parameter(m.tensor(B0.astype(dtype)))
    x = m.tensor(X.astype(dtype))
    return a, b, x


def _loss(m, a, b, x):
    # Rosenbrock in a (a curved valley), plus a smooth term coupling b to a.
    rosen = (10 * (a[1:] - a[:-1] ** 2) ** 2 + (1 - a[:-1]) ** 2).sum()
    return rosen + (m.tanh(m.matmul(b, x)) * a[:2, None]).pow(2).mean()


def _run(m, kwargs, outer=10, dtype="float64", reload_at=None):
    a, b, x = _setup(m, dtype)
    opt = m.optim.LBFGS([a, b], **kwargs)
    calls = []

    def closure():
        opt.zero_grad()
        loss = _loss(m, a, b, x)
        loss.backward()
        calls.append(float(loss.detach()))
        return loss

    returned = []
    for i in range(outer):
        if i == reload_at:
            saved = opt.state_dict()
            opt = m.optim.LBFGS([a, b], **kwargs)
            opt.load_state_dict(saved)
        returned.append(float(opt.step(closure).detach()))
    return (a, b), opt, calls, returned


# Without a line search the fixed step lr = 1 oscillates in the valley, which amplifies
# last-bit differences in the gradients; smaller steps converge and stay comparable.
CASES = [
    dict(lr=0.5, max_iter=5),
    dict(max_iter=5, line_search_fn="strong_wolfe"),
    dict(lr=0.3, max_iter=5, history_size=3),
    dict(lr=0.8, max_iter=5, history_size=3, line_search_fn="strong_wolfe"),
    dict(max_iter=20, max_eval=7, line_search_fn="strong_wolfe"),
    dict(lr=0.3, max_iter=20, tolerance_grad=1e-3, tolerance_change=1e-5),
    dict(max_iter=3, history_size=2, tolerance_change=1e-4, line_search_fn="strong_wolfe"),
]


def _np(t):
    return t.detach().numpy()


def _compare_state(sa, sb):
    assert sa["param_groups"] == sb["param_groups"]
    a, b = sa["state"][0], sb["state"][0]
    assert sorted(a) == sorted(b)
    for key in b:
        va, vb = a[key], b[key]
        if isinstance(vb, list):
            assert len(va) == len(vb), key
            pairs = list(zip(va, vb))
        else:
            pairs = [(va, vb)]
        for x, y in pairs:
            if isinstance(y, torch.Tensor):
                # The history vectors are differences of nearby gradients and iterates, so
                # rounding shows relative to each vector's largest entry, not to each entry.
                scale = float(np.abs(_np(y)).max())
                np.testing.assert_allclose(
                    _np(x), _np(y), rtol=1e-6, atol=1e-5 * scale + 1e-12, err_msg=key
                )
            elif y is None:
                assert x is None, key
            else:
                np.testing.assert_allclose(float(x), float(y), rtol=1e-6, err_msg=key)


@pytest.mark.parametrize("kwargs", CASES, ids=[str(k) for k in CASES])
def test_trajectory_matches_torch(kwargs):
    pa, oa, ca, ra = _run(chainrule, kwargs)
    pb, ob, cb, rb = _run(torch, kwargs)
    # The same closure calls, with the same losses: the same iterates and line-search trials.
    assert len(ca) == len(cb)
    np.testing.assert_allclose(ca, cb, rtol=1e-6)
    np.testing.assert_allclose(ra, rb, rtol=1e-6)
    for a, b in zip(pa, pb):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-10)
    assert ca[-1] < 0.5 * ca[0]  # it optimised
    _compare_state(oa.state_dict(), ob.state_dict())


@pytest.mark.parametrize("kwargs", CASES[:4], ids=[str(k) for k in CASES[:4]])
def test_state_dict_round_trip_mid_run(kwargs):
    pa, oa, ca, _ = _run(chainrule, kwargs, reload_at=5)
    pb, ob, cb, _ = _run(torch, kwargs, reload_at=5)
    straight, _, cs, _ = _run(chainrule, kwargs)
    np.testing.assert_allclose(ca, cb, rtol=1e-6)
    assert ca == cs
    for a, b, c in zip(pa, pb, straight):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-10)
        np.testing.assert_array_equal(_np(a), _np(c))


def test_float32_matches_torch():
    kwargs = dict(max_iter=4, line_search_fn="strong_wolfe")
    pa, _, ca, _ = _run(chainrule, kwargs, outer=3, dtype="float32")
    pb, _, cb, _ = _run(torch, kwargs, outer=3, dtype="float32")
    assert len(ca) == len(cb)
    np.testing.assert_allclose(ca, cb, rtol=1e-4)
    for a, b in zip(pa, pb):
        assert _np(a).dtype == np.float32
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-5)


def test_converged_start_returns_after_one_call():
    for m in (chainrule, torch):
        a = m.nn.Parameter(m.tensor(np.ones(3)))
        opt = m.optim.LBFGS([a])
        calls = []

        def closure():
            opt.zero_grad()
            loss = ((a - 1) ** 2).sum()
            loss.backward()
            calls.append(1)
            return loss

        loss = opt.step(closure)
        assert float(loss.detach()) == 0.0 and len(calls) == 1
        np.testing.assert_array_equal(_np(a), np.ones(3))


def test_errors_match_torch():
    for m in (chainrule, torch):
        a = m.nn.Parameter(m.tensor(np.ones(3)))
        b = m.nn.Parameter(m.tensor(np.ones(2)))
        with pytest.raises(ValueError, match="doesn't support per-parameter options"):
            m.optim.LBFGS([{"params": [a]}, {"params": [b]}])
        with pytest.raises(ValueError, match="Invalid learning rate: -1"):
            m.optim.LBFGS([a], lr=-1)
        opt = m.optim.LBFGS([a], line_search_fn="wolfe")

        def closure():
            opt.zero_grad()
            loss = (a**2).sum()
            loss.backward()
            return loss

        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)
        with pytest.raises(TypeError):
            opt.step()
        with pytest.raises(TypeError):
            m.optim.LBFGS([a], maximize=True)


@pytest.mark.parametrize("kwargs,outer", [({}, 2), ({"line_search_fn": "strong_wolfe"}, 3)])
def test_default_settings_match_torch(kwargs, outer):
    # lr = 1, max_iter = 20: 40 iterations. Without a line search the fixed unit step
    # oscillates in the valley, so differences in the last bits grow (to about 1e-10 here).
    pa, oa, ca, _ = _run(chainrule, kwargs, outer=outer)
    pb, ob, cb, _ = _run(torch, kwargs, outer=outer)
    assert len(ca) == len(cb) == 40
    np.testing.assert_allclose(ca, cb, rtol=1e-6)
    for a, b in zip(pa, pb):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-9)
    assert oa.state_dict()["state"][0]["n_iter"] == ob.state_dict()["state"][0]["n_iter"]
