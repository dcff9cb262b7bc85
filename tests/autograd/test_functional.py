"""autograd.functional (vjp, jvp, jacobian, hessian, hvp, vhp) against PyTorch, and a WGAN-GP
style gradient penalty that trains."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _flat(x: Any) -> list[Any]:
    if isinstance(x, (tuple, list)):
        out = []
        for e in x:
            out.extend(_flat(e))
        return out
    return [np.array(x.detach().numpy())]


def _cmp(a: Any, b: Any) -> None:
    assert type(a).__name__ in ("tuple", "Tensor") and isinstance(b, (tuple, torch.Tensor))
    fa, fb = _flat(a), _flat(b)
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        assert x.shape == y.shape
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-8)


def f1(m: Any) -> Any:
    def f(x: Any) -> Any:
        return (x.sin() * x).sum()

    return f


def f2(m: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        return x.exp() @ y, (x * x).sum() + y.tanh().sum()

    return f


def inputs(m: Any) -> Any:
    x = m.tensor([[0.5, -0.2], [0.1, 0.3]], dtype=m.float64)
    y = m.tensor([[1.0, 2.0], [-1.0, 0.5]], dtype=m.float64)
    return x, y


@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"])
def test_against_torch(name: str) -> None:
    res = []
    for m in (cr, torch):
        F = m.autograd.functional
        x, y = inputs(m)
        v = m.tensor([[1.0, -1.0], [0.5, 2.0]], dtype=m.float64)
        if name == "vjp":
            r = (F.vjp(f1(m), x), F.vjp(f2(m), (x, y), (v, m.tensor(2.0, dtype=m.float64))))
        elif name == "jvp":
            r = (F.jvp(f1(m), x, v), F.jvp(f2(m), (x, y), (v, v * 2)))
        elif name == "jacobian":
            r = (
                F.jacobian(f1(m), x),
                F.jacobian(f2(m), (x, y)),
                F.jacobian(lambda a: a.exp() * 2, x),
            )
        elif name == "hessian":
            r = (F.hessian(f1(m), x), F.hessian(lambda a, b: (a * b.sin()).sum(), (x, y)))
        else:
            fn = getattr(F, name)
            r = (fn(f1(m), x, v), fn(lambda a, b: (a * a * b).sum(), (x, y), (v, v)))
        res.append(r)
    _cmp(*res)


def test_create_graph_and_strict() -> None:
    F = cr.autograd.functional
    x = cr.tensor([0.5, 1.5], dtype=cr.float64, requires_grad=True)
    _, g = F.vjp(lambda a: (a**3).sum(), x, create_graph=True)
    assert g.requires_grad
    (gg,) = cr.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * np.array([0.5, 1.5]))
    _, g2 = F.vjp(lambda a: (a**3).sum(), x)
    assert not g2.requires_grad
    with pytest.raises(RuntimeError, match="independent of input 0"):
        F.vjp(lambda a: cr.ones(()), x, strict=True)
    np.testing.assert_array_equal(F.vjp(lambda a: (a * 0).sum() + 1, x)[1].numpy(), [0.0, 0.0])


def _mlp(m: Any, params: list[Any], x: Any) -> Any:
    w1, b1, w2, b2 = params
    return (x @ w1 + b1).tanh() @ w2 + b2


def test_gradient_penalty_trains() -> None:
    rng = np.random.default_rng(0)
    real = rng.normal(1.0, 0.5, (16, 2))
    fake = rng.normal(-1.0, 0.5, (16, 2))
    init = [rng.normal(0, 0.5, (2, 8)), np.zeros(8), rng.normal(0, 0.5, (8, 1)), np.zeros(1)]
    eps_np = rng.uniform(size=(16, 1))
    losses = {}
    for m in (cr, torch):
        params = [m.tensor(p, dtype=m.float64, requires_grad=True) for p in init]
        xr, xf = m.tensor(real, dtype=m.float64), m.tensor(fake, dtype=m.float64)
        eps = m.tensor(eps_np, dtype=m.float64)
        hist = []
        for _ in range(5):
            xh = (eps * xr + (1 - eps) * xf).requires_grad_(True)
            d_hat = _mlp(m, params, xh)
            (g,) = m.autograd.grad(d_hat.sum(), xh, create_graph=True)
            gp = ((g.pow(2).sum(1) + 1e-12).sqrt() - 1).pow(2).mean()
            loss = _mlp(m, params, xf).mean() - _mlp(m, params, xr).mean() + 10 * gp
            for p in params:
                p.grad = None
            loss.backward()
            with m.no_grad():
                for p in params:
                    p.sub_(0.05 * p.grad)
            hist.append(float(loss.detach()))
        losses[m.__name__] = hist
    assert losses["chainrule"][-1] < losses["chainrule"][0]
    np.testing.assert_allclose(losses["chainrule"], losses["torch"], rtol=1e-9)
