"""Transforms and constraints against PyTorch: forward, inverse, log|det J| (and its gradient),
shapes, caching, and biject_to / transform_to landing in their constraint."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
import chainrule.distributions as CD

torch = pytest.importorskip("torch")
TD = torch.distributions

R = np.random.default_rng(0)

TRANSFORMS: list[tuple[str, Callable[[Any, Any], Any], np.ndarray]] = [
    ("Exp", lambda T, m: T.ExpTransform(), R.normal(size=(2, 3))),
    (
        "Power",
        lambda T, m: T.PowerTransform(m.tensor(2.5, dtype=m.float64)),
        R.uniform(0.2, 3, (2, 3)),
    ),
    ("Sigmoid", lambda T, m: T.SigmoidTransform(), R.normal(size=(2, 3))),
    ("Softplus", lambda T, m: T.SoftplusTransform(), R.normal(size=(2, 3))),
    ("Tanh", lambda T, m: T.TanhTransform(), R.uniform(-2, 2, (2, 3))),
    (
        "Affine",
        lambda T, m: T.AffineTransform(
            m.tensor([1.0, -2.0, 0.5], dtype=m.float64), m.tensor([2.0, -0.5, 3.0], dtype=m.float64)
        ),
        R.normal(size=(2, 3)),
    ),
    ("Affine_event", lambda T, m: T.AffineTransform(1.0, 3.0, event_dim=1), R.normal(size=(2, 3))),
    ("StickBreaking", lambda T, m: T.StickBreakingTransform(), R.normal(size=(2, 3))),
    ("LowerCholesky", lambda T, m: T.LowerCholeskyTransform(), R.normal(size=(2, 3, 3))),
    (
        "Compose",
        lambda T, m: T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform()]),
        R.normal(size=(2, 3)),
    ),
    (
        "Independent",
        lambda T, m: T.IndependentTransform(T.ExpTransform(), 1),
        R.normal(size=(2, 3)),
    ),
    ("Reshape", lambda T, m: T.ReshapeTransform((2, 3), (6,)), R.normal(size=(4, 2, 3))),
    ("Softmax", lambda T, m: T.SoftmaxTransform(), R.normal(size=(2, 3))),
    ("Abs", lambda T, m: T.AbsTransform(), R.normal(size=(2, 3))),
    ("Inverse", lambda T, m: T.ExpTransform().inv, R.uniform(0.2, 3, (2, 3))),
    (
        "CDF",
        lambda T, m: T.CumulativeDistributionTransform((CD if m is cr else TD).Normal(0.5, 2.0)),
        R.normal(size=(2, 3)),
    ),
]
HAS_LADJ = {
    "Exp",
    "Power",
    "Sigmoid",
    "Softplus",
    "Tanh",
    "Affine",
    "Affine_event",
    "StickBreaking",
    "Compose",
    "Independent",
    "Reshape",
    "Inverse",
    "CDF",
}


def _t(m: Any, name: str, make: Callable[[Any, Any], Any]) -> Any:
    return make(CD.transforms if m is cr else TD.transforms, m)


@pytest.mark.parametrize("name,make,x", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transform_matches_torch(name: str, make: Callable[[Any, Any], Any], x: np.ndarray) -> None:
    tc, tt = _t(cr, name, make), _t(torch, name, make)
    xc = cr.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    yc, yt = tc(xc), tt(xt)
    np.testing.assert_allclose(yc.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-14)
    if name not in ("Abs", "Softmax"):
        back = tc.inv(cr.tensor(yt.detach().numpy()))
        np.testing.assert_allclose(back.numpy(), tt.inv(yt.detach()).numpy(), rtol=1e-9, atol=1e-12)
    assert tc.bijective == tt.bijective
    assert tuple(tc.forward_shape(x.shape)) == tuple(tt.forward_shape(x.shape))
    assert repr(tc.domain).replace("torch.", "") == repr(tt.domain)
    assert repr(tc.codomain) == repr(tt.codomain)
    if name in HAS_LADJ:
        lc = tc.log_abs_det_jacobian(xc, yc)
        lt = tt.log_abs_det_jacobian(xt, yt)
        np.testing.assert_allclose(lc.detach().numpy(), lt.detach().numpy(), rtol=1e-10, atol=1e-12)
        (gc,) = cr.autograd.grad(lc.sum() + yc.sum(), [xc])
        (gt,) = torch.autograd.grad(lt.sum() + yt.sum(), [xt])
        np.testing.assert_allclose(gc.numpy(), gt.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["Exp", "Sigmoid", "Tanh", "Affine", "Power", "Softplus"])
def test_log_abs_det_jacobian_is_the_log_derivative(name: str) -> None:
    make, x = next((t[1], t[2]) for t in TRANSFORMS if t[0] == name)
    t = _t(cr, name, make)
    xc = cr.tensor(x, requires_grad=True)
    (dy,) = cr.autograd.grad(t(xc).sum(), [xc])
    ladj = t.log_abs_det_jacobian(xc, t(xc))
    np.testing.assert_allclose(ladj.detach().numpy(), np.log(np.abs(dy.numpy())), rtol=1e-9)


def test_caching_returns_the_same_tensor() -> None:
    t = CD.transforms.ExpTransform().with_cache()
    x = cr.tensor([0.5, 1.0])
    y = t(x)
    assert t(x) is y and t.inv(y) is x
    assert t.inv.inv is t
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        CD.transforms.ExpTransform(cache_size=2)


CONSTRAINTS = [
    ("real", lambda C: C.real, (2, 3)),
    ("positive", lambda C: C.positive, (2, 3)),
    ("nonnegative", lambda C: C.nonnegative, (2, 3)),
    ("greater_than", lambda C: C.greater_than(1.5), (2, 3)),
    ("less_than", lambda C: C.less_than(-1.0), (2, 3)),
    ("unit_interval", lambda C: C.unit_interval, (2, 3)),
    ("interval", lambda C: C.interval(-2.0, 5.0), (2, 3)),
    ("simplex", lambda C: C.simplex, (2, 3)),
    ("real_vector", lambda C: C.real_vector, (2, 3)),
    ("independent_positive", lambda C: C.independent(C.positive, 1), (2, 3)),
]


@pytest.mark.parametrize("name,make,shape", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_biject_to_and_transform_to(name: str, make: Callable[[Any], Any], shape: tuple) -> None:
    x = R.normal(size=shape)
    for reg_c, reg_t in ((CD.biject_to, TD.biject_to), (CD.transform_to, TD.transform_to)):
        cc, ct = make(CD.constraints), make(TD.constraints)
        tc, tt = reg_c(cc), reg_t(ct)
        yc, yt = tc(cr.tensor(x)), tt(torch.tensor(x))
        np.testing.assert_allclose(yc.numpy(), yt.numpy(), rtol=1e-12, atol=1e-14)
        assert bool(cc.check(yc).all())
        assert type(tc).__name__ == type(tt).__name__


def test_transform_to_lower_cholesky_and_errors() -> None:
    x = cr.tensor(R.normal(size=(3, 3)))
    y = CD.transform_to(CD.constraints.lower_cholesky)(x)
    assert bool(CD.constraints.lower_cholesky.check(y))
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        CD.biject_to(CD.constraints.boolean)


CHECKS = [
    ("boolean", lambda C: C.boolean, [0.0, 1.0, 0.5]),
    ("nonnegative_integer", lambda C: C.nonnegative_integer, [0.0, 2.0, 1.5, -1.0]),
    ("integer_interval", lambda C: C.integer_interval(0, 3), [0.0, 3.0, 4.0, 1.5]),
    ("half_open", lambda C: C.half_open_interval(0.0, 1.0), [0.0, 1.0, 0.5]),
    ("one_hot", lambda C: C.one_hot, [[0.0, 1.0], [1.0, 1.0]]),
    ("simplex", lambda C: C.simplex, [[0.3, 0.7], [0.5, 0.6]]),
    (
        "lower_cholesky",
        lambda C: C.lower_cholesky,
        [[[1.0, 0.0], [2.0, 1.0]], [[1.0, 1.0], [0.0, 1.0]]],
    ),
    (
        "positive_definite",
        lambda C: C.positive_definite,
        [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]],
    ),
    ("multinomial", lambda C: C.multinomial(3), [[1.0, 2.0], [2.0, 2.0]]),
    ("real", lambda C: C.real, [0.0, float("nan"), float("inf")]),
]


@pytest.mark.parametrize("name,make,v", CHECKS, ids=[c[0] for c in CHECKS])
def test_constraint_checks_match_torch(name: str, make: Callable[[Any], Any], v: Any) -> None:
    cc, ct = make(CD.constraints), make(TD.constraints)
    assert cc.check(cr.tensor(v)).tolist() == ct.check(torch.tensor(v)).tolist()
    assert cc.event_dim == ct.event_dim and cc.is_discrete == ct.is_discrete
    assert repr(cc) == repr(ct)
