"""The remaining activations, dropouts, losses and misc layers of torch.nn (issue 14), against
PyTorch: values and input gradients in float32 and float64, modules with the same options,
gradcheck/gradgradcheck in float64, error types and texts, and statistical tests of the random
layers (their random streams differ from PyTorch's, so only exact cases are compared).

Long because it covers about sixty functions and modules; most cases are rows of the tables
below."""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn
import chainrule.nn.functional as F
from tests.nn._compare import DT, TOL, error_of

R = np.random.default_rng(1234)


def _x(*shape: int) -> np.ndarray:
    return R.standard_normal(shape)


def _sign(*shape: int) -> np.ndarray:
    return np.where(R.random(shape) > 0.5, 1.0, -1.0)


X = _x(4, 6)
Y = _x(4, 6)
Z = _x(4, 6)
# Inputs kept away from the activations' kinks (|x| within 0.05 of 0, 0.5 or the threshold).
XK = np.where(np.abs(np.abs(X) - 0.5) < 0.05, X + 0.2, X)
MLT = np.array([[0, 5, -1, 1, 1, 1], [1, -1, 0, 0, 0, 0], [-1, 2, 0, 0, 0, 0], [3, 2, 1, 0, 4, 5]])

# (name, positional arrays, kwargs, indices of arrays that are not differentiated)
FUNCTIONAL_CASES: list[tuple[str, list[np.ndarray], dict[str, Any], tuple[int, ...]]] = [
    ("glu", [X], {}, ()),
    ("glu", [_x(2, 4, 3)], {"dim": 1}, ()),
    ("hardshrink", [XK], {}, ()),
    ("hardshrink", [XK], {"lambd": 0.3}, ()),
    ("softshrink", [XK], {}, ()),
    ("softsign", [X], {}, ()),
    ("tanhshrink", [X], {}, ()),
    ("threshold", [XK], {"threshold": 0.1, "value": 2.0}, ()),
    ("rrelu", [X], {}, ()),
    ("rrelu", [X], {"lower": 0.2, "upper": 0.4, "training": False}, ()),
    ("softplus", [X * 10], {"beta": 2.0, "threshold": 5.0}, ()),
    ("hardtanh", [X], {"min_val": -0.7, "max_val": 0.9}, ()),
    ("relu6", [X * 4], {}, ()),
    ("selu", [X], {}, ()),
    ("celu", [X], {"alpha": 0.5}, ()),  # 1/0.7 would hit torch's rounded float64 grad
    ("mish", [X], {}, ()),
    ("hardswish", [X * 3], {}, ()),
    ("hardsigmoid", [X * 3], {}, ()),
    ("logsigmoid", [X], {}, ()),
    ("softmin", [X], {"dim": 1}, ()),
    ("poisson_nll_loss", [X, np.abs(Y) * 3], {}, ()),
    ("poisson_nll_loss", [X, np.abs(Y) * 3], {"reduction": "none"}, ()),
    (
        "poisson_nll_loss",
        [np.abs(X), np.abs(Y) * 3],
        {"log_input": False, "full": True, "reduction": "sum"},
        (),
    ),
    ("gaussian_nll_loss", [X, Y, np.abs(Z) + 0.1], {}, ()),
    ("gaussian_nll_loss", [X, Y, np.abs(Z) + 0.1], {"full": True, "reduction": "none"}, ()),
    ("gaussian_nll_loss", [X, Y, np.abs(Z[:, 0])], {"reduction": "sum"}, ()),
    ("gaussian_nll_loss", [X, Y, np.abs(Z[:, :1])], {}, ()),
    ("margin_ranking_loss", [X[:, 0], Y[:, 0], _sign(4)], {"margin": 0.3}, (2,)),
    ("margin_ranking_loss", [X, Y, _sign(4, 6)], {"reduction": "none"}, (2,)),
    ("hinge_embedding_loss", [X, _sign(4, 6)], {"margin": 0.5}, (1,)),
    ("hinge_embedding_loss", [X, _sign(4, 6)], {"reduction": "sum"}, (1,)),
    ("soft_margin_loss", [X, _sign(4, 6)], {}, (1,)),
    ("soft_margin_loss", [X, _sign(4, 6)], {"reduction": "none"}, (1,)),
    ("cosine_embedding_loss", [X, Y, _sign(4)], {"margin": 0.2}, (2,)),
    ("cosine_embedding_loss", [X, Y, _sign(4)], {"margin": -0.5, "reduction": "none"}, (2,)),
    ("cosine_embedding_loss", [X[0], Y[0], np.array(-1.0)], {"margin": -0.9}, (2,)),
    ("pairwise_distance", [X, Y], {}, ()),
    ("pairwise_distance", [X, Y[:1]], {"p": 1.5, "keepdim": True}, ()),
    ("pairwise_distance", [X, Y], {"p": 1.0}, ()),
    ("pairwise_distance", [X[0], Y[0]], {"p": 3.0}, ()),
    ("triplet_margin_loss", [X, Y, Z], {}, ()),
    ("triplet_margin_loss", [X, Y, Z], {"swap": True, "margin": 2.0}, ()),
    ("triplet_margin_loss", [X, Y, Z], {"p": 1, "margin": 3.0, "reduction": "none"}, ()),
    ("triplet_margin_with_distance_loss", [X, Y, Z], {"swap": True}, ()),
    ("triplet_margin_with_distance_loss", [X, Y, Z], {"margin": 2.5, "reduction": "sum"}, ()),
    ("multi_margin_loss", [X, np.array([0, 5, 2, 3])], {}, ()),
    (
        "multi_margin_loss",
        [X, np.array([0, 5, 2, 3])],
        {"p": 2, "margin": 0.7, "reduction": "none"},
        (),
    ),
    ("multi_margin_loss", [X[1], np.array(4)], {}, ()),
    ("multilabel_margin_loss", [X, MLT], {}, ()),
    ("multilabel_margin_loss", [X, MLT], {"reduction": "none"}, ()),
    ("multilabel_margin_loss", [X[3], MLT[3]], {}, ()),
    ("multilabel_soft_margin_loss", [X, (Z > 0) * 1.0], {}, (1,)),
    ("multilabel_soft_margin_loss", [X, (Z > 0) * 1.0], {"reduction": "none"}, (1,)),
    ("pdist", [X], {}, ()),
    ("pdist", [X], {"p": 1.0}, ()),
    ("pdist", [X], {"p": 3.0}, ()),
    ("pdist", [X], {"p": math.inf}, ()),
    ("channel_shuffle", [_x(2, 6, 3)], {"groups": 3}, ()),
    ("channel_shuffle", [_x(1, 4, 2, 3)], {"groups": 2}, ()),
    ("alpha_dropout", [X], {"p": 0.0, "training": True}, ()),
    ("alpha_dropout", [X], {"p": 0.4, "training": False}, ()),
    ("alpha_dropout", [X], {"p": 1.0, "training": True}, ()),
    ("feature_alpha_dropout", [_x(2, 3, 4)], {"p": 0.5}, ()),
    ("feature_alpha_dropout", [_x(2, 3, 4)], {"p": 1.0, "training": True}, ()),
    ("dropout1d", [_x(2, 3, 4)], {"p": 1.0}, ()),
    ("dropout3d", [_x(2, 3, 2, 2, 2)], {"p": 0.0}, ()),
]


def _ids(cases: list) -> list[str]:
    return [f"{c[0]}-{i}" for i, c in enumerate(cases)]


def _pair(arrays: list[np.ndarray], nograd: tuple[int, ...], dtype: str) -> tuple[list, list]:
    npdt, tdt, cdt = DT[dtype]
    ts, cs = [], []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        rg = a.dtype.kind == "f" and i not in nograd
        if a.dtype.kind == "f":
            a = a.astype(npdt)
        ts.append(torch.tensor(a, requires_grad=rg))
        cs.append(chainrule.tensor(a, requires_grad=rg))
    return ts, cs


def _compare(
    tout: torch.Tensor, cout: chainrule.Tensor, ts: list, cs: list, dtype: str, what: str
) -> None:
    tol = TOL[dtype]
    np.testing.assert_allclose(cout.detach().numpy(), tout.detach().numpy(), err_msg=what, **tol)
    assert tuple(cout.shape) == tuple(tout.shape)
    if not tout.requires_grad:
        return
    g = R.standard_normal(tuple(tout.shape)).astype(DT[dtype][0])
    tout.backward(torch.tensor(g))
    cout.backward(chainrule.tensor(g))
    for i, (t, c) in enumerate(zip(ts, cs)):
        if t.requires_grad:
            assert c.grad is not None, f"{what}: no grad for input {i}"
            np.testing.assert_allclose(
                c.grad.numpy(), t.grad.numpy(), err_msg=f"{what}: grad {i}", **tol
            )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", FUNCTIONAL_CASES, ids=_ids(FUNCTIONAL_CASES))
def test_functional_matches_torch(case: tuple, dtype: str) -> None:
    name, arrays, kwargs, nograd = case
    ts, cs = _pair(arrays, nograd, dtype)
    tout = getattr(torch.nn.functional, name)(*ts, **kwargs)
    cout = getattr(F, name)(*cs, **kwargs)
    _compare(tout, cout, ts, cs, dtype, name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_weighted_losses_match_torch(dtype: str) -> None:
    npdt, tdt, _ = DT[dtype]
    w = np.abs(Y[0]).astype(npdt) + 0.1
    for name, args, extra in [
        ("multi_margin_loss", [X, np.array([0, 5, 2, 3])], {"margin": 0.5}),
        ("multilabel_soft_margin_loss", [X, (Z > 0) * 1.0], {"reduction": "sum"}),
    ]:
        ts, cs = _pair(args, (1,), dtype)
        tout = getattr(torch.nn.functional, name)(*ts, weight=torch.tensor(w), **extra)
        cout = getattr(F, name)(*cs, weight=chainrule.tensor(w), **extra)
        _compare(tout, cout, ts, cs, dtype, name)


def test_poisson_and_gaussian_target_and_var_gradients() -> None:
    # Gradients reach the target (Poisson, full) and var (Gaussian, through the clamp).
    ts, cs = _pair([X, np.abs(Y) * 3], (), "float64")
    _compare(
        torch.nn.functional.poisson_nll_loss(*ts, full=True),
        F.poisson_nll_loss(*cs, full=True),
        ts,
        cs,
        "float64",
        "poisson full",
    )
    var = np.abs(Z)
    var[0, 0] = 1e-9  # below eps: clamped in value, gradient unclamped (as in PyTorch)
    ts, cs = _pair([X, Y, var], (), "float64")
    _compare(
        torch.nn.functional.gaussian_nll_loss(*ts),
        F.gaussian_nll_loss(*cs),
        ts,
        cs,
        "float64",
        "gaussian clamped var",
    )
    t = torch.nn.functional.gaussian_nll_loss(torch.tensor(X), torch.tensor(Y), 0.5)
    c = F.gaussian_nll_loss(chainrule.tensor(X), chainrule.tensor(Y), 0.5)
    np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-12)


GRADCHECK_CASES = [
    ("glu", [_x(2, 4)], {}),
    ("softsign", [_x(3, 2)], {}),
    ("tanhshrink", [_x(3, 2)], {}),
    ("softshrink", [XK[:2, :3]], {}),
    ("threshold", [XK[:2, :3]], {"threshold": 0.1, "value": -1.0}),
    ("rrelu", [_x(2, 3)], {}),
    ("poisson_nll_loss", [_x(2, 3), np.abs(_x(2, 3)) * 2], {"full": True}),
    ("gaussian_nll_loss", [_x(2, 3), _x(2, 3), np.abs(_x(2, 3)) + 0.5], {"full": True}),
    ("margin_ranking_loss", [_x(4), _x(4), _sign(4)], {"margin": 0.1}),
    ("soft_margin_loss", [_x(2, 3), _sign(2, 3)], {}),
    ("cosine_embedding_loss", [_x(3, 4), _x(3, 4), _sign(3)], {"margin": -0.5}),
    ("pairwise_distance", [_x(3, 4), _x(3, 4)], {"p": 3.0}),
    ("triplet_margin_loss", [_x(3, 4), _x(3, 4), _x(3, 4)], {"margin": 5.0, "swap": True}),
    ("multi_margin_loss", [_x(3, 4), np.array([0, 3, 1])], {"p": 2, "margin": 3.0}),
    ("multilabel_margin_loss", [_x(2, 4), np.array([[1, 2, -1, 0], [3, -1, 0, 0]])], {}),
    ("multilabel_soft_margin_loss", [_x(2, 3), (_x(2, 3) > 0) * 1.0], {}),
    ("pdist", [_x(4, 3)], {}),
    ("channel_shuffle", [_x(1, 4, 3)], {"groups": 2}),
]


@pytest.mark.parametrize("case", GRADCHECK_CASES, ids=_ids(GRADCHECK_CASES))
def test_gradcheck_float64(case: tuple) -> None:
    name, arrays, kwargs = case
    diff = [
        i
        for i, a in enumerate(arrays)
        if np.asarray(a).dtype.kind == "f"
        and not (
            name in ("margin_ranking_loss", "soft_margin_loss", "cosine_embedding_loss")
            and i == len(arrays) - 1
        )
    ]
    base = [chainrule.tensor(np.asarray(a)) for a in arrays]
    inputs = tuple(chainrule.tensor(np.asarray(arrays[i]), requires_grad=True) for i in diff)
    fn = getattr(F, name)

    def f(*xs: chainrule.Tensor) -> chainrule.Tensor:
        args = list(base)
        for i, x in zip(diff, xs):
            args[i] = x
        if name == "rrelu":  # eval slope: deterministic
            return fn(*args, training=False, **kwargs)
        return fn(*args, **kwargs)

    assert chainrule.autograd.gradcheck(f, inputs)
    assert chainrule.autograd.gradgradcheck(f, inputs)


# Modules ---------------------------------------------------------------------------------------

# (class name, constructor args, constructor kwargs, forward arrays, nograd indices)
MODULE_CASES: list[tuple[str, tuple, dict, list[np.ndarray], tuple[int, ...]]] = [
    ("Softplus", (), {"beta": 2.0, "threshold": 3.0}, [X * 3], ()),
    ("Hardtanh", (-0.5, 0.5), {}, [X], ()),
    ("ReLU6", (), {}, [X * 5], ()),
    ("SELU", (), {}, [X], ()),
    ("CELU", (0.5,), {}, [X], ()),
    ("GLU", (), {"dim": 0}, [X], ()),
    ("Mish", (), {}, [X], ()),
    ("Hardswish", (), {}, [X * 3], ()),
    ("Hardsigmoid", (), {}, [X * 3], ()),
    ("LogSigmoid", (), {}, [X], ()),
    ("Softsign", (), {}, [X], ()),
    ("Softmin", (), {"dim": 0}, [X], ()),
    ("Softmax2d", (), {}, [_x(2, 3, 2, 2)], ()),
    ("Softmax2d", (), {}, [_x(3, 2, 2)], ()),
    ("Threshold", (0.2, -3.0), {}, [XK], ()),
    ("Hardshrink", (), {"lambd": 0.5}, [XK], ()),
    ("Softshrink", (0.5,), {}, [XK], ()),
    ("Tanhshrink", (), {}, [X], ()),
    ("PoissonNLLLoss", (), {"log_input": False, "full": True}, [np.abs(X), np.abs(Y) * 2], ()),
    ("GaussianNLLLoss", (), {"full": True}, [X, Y, np.abs(Z) + 0.1], ()),
    ("MarginRankingLoss", (0.1,), {}, [X[:, 0], Y[:, 0], _sign(4)], (2,)),
    ("HingeEmbeddingLoss", (), {"margin": 2.0, "reduction": "sum"}, [X, _sign(4, 6)], (1,)),
    ("CosineEmbeddingLoss", (), {"margin": 0.1}, [X, Y, _sign(4)], (2,)),
    ("TripletMarginLoss", (), {"margin": 2.0, "p": 1.0}, [X, Y, Z], ()),
    ("TripletMarginWithDistanceLoss", (), {"swap": True}, [X, Y, Z], ()),
    ("MultiMarginLoss", (), {"p": 2}, [X, np.array([1, 2, 3, 4])], ()),
    ("MultiLabelMarginLoss", (), {"reduction": "none"}, [X, MLT], ()),
    ("MultiLabelSoftMarginLoss", (), {}, [X, (Y > 0) * 1.0], (1,)),
    ("SoftMarginLoss", (), {"reduction": "sum"}, [X, _sign(4, 6)], (1,)),
    ("NLLLoss2d", (), {"ignore_index": 1}, [_x(2, 3, 2, 2), R.integers(0, 3, (2, 2, 2))], ()),
    ("CosineSimilarity", (), {"dim": 0}, [X, Y], ()),
    ("PairwiseDistance", (), {"p": 1.0, "keepdim": True}, [X, Y], ()),
    ("ChannelShuffle", (2,), {}, [_x(2, 4, 3)], ()),
    ("UpsamplingNearest2d", (), {"scale_factor": 2}, [_x(1, 2, 3, 3)], ()),
    ("UpsamplingBilinear2d", (), {"size": (5, 4)}, [_x(1, 2, 3, 3)], ()),
    ("Dropout1d", (), {}, [_x(2, 3, 4)], ()),  # eval: identity
    ("Dropout3d", (), {}, [_x(2, 3, 2, 2, 2)], ()),
    ("AlphaDropout", (0.3,), {}, [X], ()),
    ("FeatureAlphaDropout", (0.3,), {}, [_x(2, 3, 4)], ()),
    ("RReLU", (0.1, 0.3), {}, [X], ()),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", MODULE_CASES, ids=_ids(MODULE_CASES))
def test_module_matches_torch(case: tuple, dtype: str) -> None:
    name, args, kwargs, arrays, nograd = case
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        tm = getattr(torch.nn, name)(*args, **kwargs).eval()
    with warnings.catch_warnings(record=True) as cw:
        warnings.simplefilter("always")
        cm = getattr(nn, name)(*args, **kwargs).eval()
    assert [(w.category, str(w.message)) for w in cw] == [(w.category, str(w.message)) for w in tw]
    assert cm.extra_repr() == tm.extra_repr()
    assert type(cm).__name__ == type(tm).__name__
    ts, cs = _pair(arrays, nograd, dtype)
    _compare(tm(*ts), cm(*cs), ts, cs, dtype, name)


def test_inplace_activations() -> None:
    for name, kw in [
        ("relu_", {}),
        ("elu_", {"alpha": 0.5}),
        ("celu_", {}),
        ("selu_", {}),
        ("leaky_relu_", {"negative_slope": 0.2}),
        ("hardtanh_", {}),
        ("threshold_", {"threshold": 0.1, "value": 5.0}),
    ]:
        t = torch.tensor(X)
        c = chainrule.tensor(X)
        out = getattr(F, name)(c, **kw)
        getattr(torch.nn.functional, name)(t, **kw)
        assert out is c
        np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-12, err_msg=name)
    for cls, args in [
        ("ReLU6", ()),
        ("SELU", ()),
        ("Hardswish", ()),
        ("Mish", ()),
        ("Threshold", (0.0, 1.0)),
        ("CELU", (1.0,)),
    ]:
        t = torch.tensor(X)
        c = chainrule.tensor(X)
        getattr(torch.nn, cls)(*args, inplace=True)(t)
        assert getattr(nn, cls)(*args, inplace=True)(c) is c
        np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-12, err_msg=cls)
    # In-place on a non-leaf keeps the gradient right.
    a = chainrule.tensor(X, requires_grad=True)
    ta = torch.tensor(X, requires_grad=True)
    F.threshold(a * 2, 0.3, -1.0, inplace=True).sum().backward()
    torch.nn.functional.threshold(ta * 2, 0.3, -1.0, inplace=True).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())


# Random layers ---------------------------------------------------------------------------------


def test_rrelu_training_slopes() -> None:
    chainrule.manual_seed(0)
    x = chainrule.tensor(-np.abs(_x(2000)) - 0.01, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slope = (y / x).detach().numpy()
    assert slope.min() >= 0.1 and slope.max() <= 0.3
    assert abs(slope.mean() - 0.2) < 0.01 and slope.std() > 0.04  # U(0.1, 0.3): std 0.058
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slope)  # d(a x)/dx = a
    pos = chainrule.tensor(np.abs(_x(10)))
    np.testing.assert_array_equal(F.rrelu(pos, training=True).numpy(), pos.numpy())
    chainrule.manual_seed(0)
    again = F.rrelu(x.detach(), 0.1, 0.3, training=True)
    np.testing.assert_array_equal(again.numpy(), y.detach().numpy())
    m = nn.RReLU(0.1, 0.3)
    assert m.training and not np.allclose(m(x.detach()).numpy(), (x * 0.2).detach().numpy())
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(x, 0.5, 0.1, training=True)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_mean_and_variance(feature: bool) -> None:
    chainrule.manual_seed(0)
    x = chainrule.tensor(_x(400, 100, 5) if feature else _x(200000))
    fn = F.feature_alpha_dropout if feature else F.alpha_dropout
    for p in (0.2, 0.5):
        y = fn(x, p, training=True).numpy()
        assert abs(y.mean()) < 0.02 and abs(y.var() - 1) < 0.03, (p, y.mean(), y.var())
        dropped = np.isclose(y, -1.7580993408473766 * _alpha_a(p) + _alpha_b(p))
        assert abs(dropped.mean() - p) < 0.01
        if feature:  # whole channels
            per_channel = dropped.all(-1) | ~dropped.any(-1)
            assert per_channel.all()


def _alpha_a(p: float) -> float:
    return 1 / math.sqrt((1.7580993408473766**2 * p + 1) * (1 - p))


def _alpha_b(p: float) -> float:
    return 1.7580993408473766 * _alpha_a(p) * p


def test_alpha_dropout_gradient_is_the_kept_scale() -> None:
    chainrule.manual_seed(3)
    x = chainrule.tensor(_x(50, 4), requires_grad=True)
    m = nn.AlphaDropout(0.5)
    y = m(x)
    y.sum().backward()
    a = _alpha_a(0.5)
    kept = ~np.isclose(y.detach().numpy(), -1.7580993408473766 * a + _alpha_b(0.5))
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, a, 0.0))
    np.testing.assert_allclose(
        y.detach().numpy()[kept], (x.detach().numpy() * a + _alpha_b(0.5))[kept]
    )


@pytest.mark.parametrize(
    "cls,shape",
    [("Dropout1d", (50, 8, 6)), ("Dropout1d", (40, 6)), ("Dropout3d", (20, 10, 2, 2, 2))],
)
def test_channel_dropout_layers(cls: str, shape: tuple) -> None:
    chainrule.manual_seed(1)
    x = np.abs(R.standard_normal(shape)) + 0.1
    m = getattr(nn, cls)(p=0.25)
    y = m(chainrule.tensor(x)).numpy()
    lead = 2 if len(shape) in (3, 5) else 1
    flat = (y / x).reshape(int(np.prod(shape[:lead])), -1)
    assert np.all(np.isclose(flat, 0) | np.isclose(flat, 1 / 0.75))
    assert np.all(np.ptp(flat, axis=1) < 1e-12)  # one draw per channel
    assert 0.15 < np.isclose(flat[:, 0], 0).mean() < 0.35
    m.eval()
    np.testing.assert_array_equal(m(chainrule.tensor(x)).numpy(), x)


def test_gumbel_softmax() -> None:
    chainrule.manual_seed(0)
    logits = chainrule.tensor(np.log([0.1, 0.2, 0.7]), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum().item(), 1.0)
    hard = F.gumbel_softmax(
        chainrule.tensor(np.tile(np.log([0.1, 0.2, 0.7]), (20000, 1))), hard=True
    )
    h = hard.numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and np.all(h.sum(1) == 1)
    np.testing.assert_allclose(h.mean(0), [0.1, 0.2, 0.7], atol=0.015)
    # Straight-through: the hard sample's gradient is the soft sample's.
    w = chainrule.tensor([1.0, -2.0, 0.5])
    chainrule.manual_seed(5)
    (F.gumbel_softmax(logits, hard=True, dim=0) * w).sum().backward()
    g_hard = logits.grad.numpy().copy()
    logits.grad = None
    chainrule.manual_seed(5)
    (F.gumbel_softmax(logits, hard=False, dim=0) * w).sum().backward()
    np.testing.assert_allclose(g_hard, logits.grad.numpy())
    assert np.abs(g_hard).sum() > 0


# Containers and wrappers -----------------------------------------------------------------------


def test_parameter_dict() -> None:
    d = nn.ParameterDict({"a": chainrule.ones(2), "b": nn.Parameter(chainrule.zeros(3))})
    assert list(d) == ["a", "b"] and isinstance(d["a"], nn.Parameter) and len(d) == 2
    d["c"] = chainrule.ones(1)
    d.update([("z", chainrule.zeros(1))])
    assert list(d.keys()) == ["a", "b", "c", "z"] and "c" in d
    assert [k for k, _ in d.named_parameters()] == ["a", "b", "c", "z"]
    assert d.pop("c").shape == (1,) and "c" not in d
    assert d.get("nope") is None and d.setdefault("e", chainrule.ones(4)).shape == (4,)
    parent = nn.Module()
    parent.pd = d
    assert list(parent.state_dict()) == ["pd.a", "pd.b", "pd.z", "pd.e"]
    td = torch.nn.ParameterDict({"a": torch.ones(1)})
    for f_c, f_t in [(lambda: d[1], lambda: td[1]), (lambda: d(), lambda: td(torch.ones(1)))]:
        ec, et = error_of(f_c), error_of(f_t)
        assert ec is not None and et is not None
        if ec[0] is TypeError:
            assert ec == et
    with pytest.raises(RuntimeError, match="ParameterDict should not be called"):
        d()
    del d["a"]
    assert list(d) == ["b", "z", "e"]
    d.clear()
    assert len(d) == 0 and list(d.parameters()) == []


def test_buffer() -> None:
    m = nn.Module()
    src = chainrule.ones(2, requires_grad=True)
    m.x = nn.Buffer(src, persistent=False)
    m.y = nn.Buffer(chainrule.zeros(1))
    assert isinstance(m.x, nn.Buffer) and not isinstance(src, nn.Buffer)
    assert not m.x.requires_grad
    assert list(m.state_dict()) == ["y"]
    assert [k for k, _ in m.named_buffers()] == ["x", "y"]
    tm = torch.nn.Module()
    tm.x = torch.nn.Buffer(torch.ones(2), persistent=False)
    tm.y = torch.nn.Buffer(torch.zeros(1))
    assert list(tm.state_dict()) == list(m.state_dict())
    assert nn.Buffer().shape == (0,)


def test_data_parallel_is_a_pass_through_on_cpu() -> None:
    inner = nn.Linear(3, 2)
    dp = nn.DataParallel(inner)
    assert dp.module is inner and dp.device_ids == []
    x = chainrule.tensor(_x(4, 3).astype(np.float32))
    np.testing.assert_array_equal(dp(x).detach().numpy(), inner(x).detach().numpy())
    assert list(dp.state_dict()) == list(torch.nn.DataParallel(torch.nn.Linear(3, 2)).state_dict())


def test_nll_loss2d_is_nll_loss() -> None:
    assert issubclass(nn.NLLLoss2d, nn.NLLLoss)
    with pytest.warns(FutureWarning, match="NLLLoss2d` has been deprecated"):
        m = nn.NLLLoss2d(ignore_index=3, reduction="sum")
    assert (m.ignore_index, m.reduction) == (3, "sum")


# Errors ----------------------------------------------------------------------------------------

ERROR_CASES: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("glu odd", lambda t, f: f.glu(t.ones(2, 3), 1)),
    ("glu scalar", lambda t, f: f.glu(t.tensor(1.0))),
    ("softshrink", lambda t, f: f.softshrink(t.ones(2), -1.0)),
    ("softshrink double", lambda t, f: f.softshrink(t.ones(2, dtype=t.float64), -1.5)),
    ("softmax2d", lambda t, f: t.nn.Softmax2d()(t.ones(2, 3))),
    ("shuffle groups", lambda t, f: f.channel_shuffle(t.ones(2, 3, 4), 0)),
    ("shuffle div", lambda t, f: f.channel_shuffle(t.ones(2, 3, 4), 2)),
    ("shuffle dims", lambda t, f: f.channel_shuffle(t.ones(2, 4), 2)),
    ("alpha p", lambda t, f: f.alpha_dropout(t.ones(2), 1.5)),
    ("alpha module p", lambda t, f: t.nn.AlphaDropout(-0.1)),
    ("multi margin p", lambda t, f: f.multi_margin_loss(t.ones(2, 3), t.tensor([0, 1]), p=3)),
    ("multi margin target", lambda t, f: f.multi_margin_loss(t.ones(2, 3), t.tensor([0, 5]))),
    ("multi margin weight", lambda t, f: t.nn.MultiMarginLoss(weight=t.ones(2, 2))),
    ("gauss var size", lambda t, f: f.gaussian_nll_loss(t.ones(2, 3), t.ones(2, 3), t.ones(2, 2))),
    ("gauss var neg", lambda t, f: f.gaussian_nll_loss(t.ones(2, 3), t.ones(2, 3), -t.ones(2, 3))),
    (
        "gauss reduction",
        lambda t, f: f.gaussian_nll_loss(t.ones(2), t.ones(2), t.ones(2), reduction="bad"),
    ),
    ("poisson reduction", lambda t, f: f.poisson_nll_loss(t.ones(2), t.ones(2), reduction="bad")),
    ("ranking dims", lambda t, f: f.margin_ranking_loss(t.ones(3), t.ones(3), t.ones(3, 1))),
    ("triplet dims", lambda t, f: f.triplet_margin_loss(t.ones(3, 2), t.ones(3, 2), t.ones(3))),
    ("triplet margin", lambda t, f: t.nn.TripletMarginLoss(margin=0)),
    (
        "triplet dist margin",
        lambda t, f: f.triplet_margin_with_distance_loss(
            t.ones(3, 2), t.ones(3, 2), t.ones(3, 2), margin=0
        ),
    ),
    ("triplet dist module margin", lambda t, f: t.nn.TripletMarginWithDistanceLoss(margin=-1)),
    ("pdist dims", lambda t, f: f.pdist(t.ones(3))),
    ("pdist p", lambda t, f: f.pdist(t.ones(3, 2), p=-1)),
    (
        "multilabel target",
        lambda t, f: f.multilabel_margin_loss(t.ones(2, 3), t.tensor([[0, 5, -1], [1, -1, 0]])),
    ),
    ("hardtanh bounds", lambda t, f: t.nn.Hardtanh(1.0, 0.0)),
    ("rrelu bounds", lambda t, f: f.rrelu(t.ones(2), 0.5, 0.1, training=True)),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_torch(case: tuple) -> None:
    _, fn = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = error_of(lambda: fn(torch, torch.nn.functional))
    got = error_of(lambda: fn(chainrule, F))
    assert expected is not None
    assert got == expected


# CTC -------------------------------------------------------------------------------------------

CTC_X = _x(6, 3, 5)
CTC_T = np.array([[1, 1, 2], [3, 0, 0], [4, 2, 0]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("layout", ["padded", "concatenated", "impossible", "unbatched"])
def test_ctc_loss_matches_torch(reduction: str, dtype: str, layout: str) -> None:
    # Compared through log_softmax: PyTorch's own gradient with respect to log_probs is
    # exp(log_probs) - posterior, which equals the true one only after log_softmax.
    il, tl, tg = [6, 4, 5], [3, 1, 2], CTC_T
    x = CTC_X
    if layout == "concatenated":
        tg = np.array([1, 1, 2, 3, 4, 2])
    if layout == "impossible":
        il = [2, 4, 5]  # three labels with a repeat cannot fit in two steps
    if layout == "unbatched":
        x, tg, il, tl = CTC_X[:, 0], CTC_T[0], (6,), (3,)
    ts, cs = _pair([x], (), dtype)
    for zero_infinity in (False, True):
        for t in ts + cs:
            t.grad = None
        kw = {"reduction": reduction, "zero_infinity": zero_infinity}
        tout = torch.nn.functional.ctc_loss(ts[0].log_softmax(-1), torch.tensor(tg), il, tl, **kw)
        cout = F.ctc_loss(F.log_softmax(cs[0], -1), chainrule.tensor(tg), il, tl, **kw)
        if layout == "impossible" and not zero_infinity:
            np.testing.assert_allclose(cout.detach().numpy(), tout.detach().numpy())
            continue
        _compare(tout, cout, ts, cs, dtype, f"ctc {layout} {kw}")
    tm = torch.nn.CTCLoss(blank=0, reduction=reduction)
    cm = nn.CTCLoss(blank=0, reduction=reduction)
    assert cm.extra_repr() == tm.extra_repr()


def test_ctc_loss_gradcheck_and_errors() -> None:
    lp = chainrule.tensor(_x(4, 2, 3), requires_grad=True)

    def f(x: chainrule.Tensor) -> chainrule.Tensor:
        return F.ctc_loss(x, chainrule.tensor([[1, 2], [2, 0]]), [4, 3], [2, 1], blank=0)

    assert chainrule.autograd.gradcheck(f, (lp,))
    assert chainrule.autograd.gradgradcheck(f, (lp,))
    cases = [
        lambda t: t.nn.functional.ctc_loss(
            t.zeros(5, 2, 4), t.tensor([[1, 1], [3, 0]]), [6, 4], [2, 1]
        ),
        lambda t: t.nn.functional.ctc_loss(
            t.zeros(5, 2, 4), t.tensor([[1, 1], [3, 0]]), [5, 4], [3, 1]
        ),
        lambda t: t.nn.functional.ctc_loss(
            t.zeros(5, 2, 4), t.tensor([[1, 1], [3, 0]]), [5, 4], [2, 1], blank=4
        ),
    ]
    for case in cases:
        assert error_of(lambda: case(chainrule)) == error_of(lambda: case(torch))


# Adaptive softmax ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adaptive_log_softmax_matches_torch(dtype: str) -> None:
    npdt, tdt, cdt = DT[dtype]
    torch.manual_seed(0)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=True).to(
        tdt
    )
    cm = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=True)
    cm = cm.to(cdt)
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert [tuple(p.shape) for p in cm.parameters()] == [tuple(p.shape) for p in tm.parameters()]
    cm.load_state_dict({k: chainrule.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    assert repr(cm) == repr(tm)
    x = _x(7, 16).astype(npdt)
    t = np.array([0, 3, 5, 9, 12, 19, 2])
    tx = torch.tensor(x, requires_grad=True)
    cx = chainrule.tensor(x, requires_grad=True)
    to, co = tm(tx, torch.tensor(t)), cm(cx, chainrule.tensor(t))
    tol = TOL[dtype]
    np.testing.assert_allclose(co.output.detach().numpy(), to.output.detach().numpy(), **tol)
    np.testing.assert_allclose(co.loss.item(), to.loss.item(), **tol)
    (to.loss + to.output.sum()).backward()
    (co.loss + co.output.sum()).backward()
    np.testing.assert_allclose(cx.grad.numpy(), tx.grad.numpy(), **tol)
    for (name, p), (_, q) in zip(tm.named_parameters(), cm.named_parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), err_msg=name, **tol)
    np.testing.assert_allclose(
        cm.log_prob(cx).detach().numpy(), tm.log_prob(tx).detach().numpy(), **tol
    )
    np.testing.assert_array_equal(cm.predict(cx).numpy(), tm.predict(tx).numpy())
    np.testing.assert_allclose(
        cm(cx[0], chainrule.tensor(3)).output.item(),
        tm(tx[0], torch.tensor(3)).output.item(),
        **tol,
    )


def test_adaptive_log_softmax_errors() -> None:
    for cutoffs in ([4, 2], [0, 3], [3, 20], [3, 3]):
        assert error_of(lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs)) == error_of(
            lambda: torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs)
        )
    cm = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])
    for args in [((2, 8), [0, 10]), ((3, 8), [0, 1]), ((2, 8), [[0, 1]])]:
        shape, tgt = args
        ec = error_of(lambda: cm(chainrule.zeros(*shape), chainrule.tensor(tgt)))
        et = error_of(lambda: tm(torch.zeros(*shape), torch.tensor(tgt)))
        assert et is not None and ec == et


@pytest.mark.parametrize(
    "name,kw",
    [
        ("upsample", {"scale_factor": 2, "mode": "bilinear"}),
        ("upsample_nearest", {"size": (3, 5)}),
        ("upsample_bilinear", {"scale_factor": 2}),
    ],
)
def test_deprecated_upsample_functionals(name: str, kw: dict) -> None:
    x = _x(1, 2, 3, 3)
    ts, cs = _pair([x], (), "float64")
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
        cout = getattr(F, name)(cs[0], **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout = getattr(torch.nn.functional, name)(ts[0], **kw)
    _compare(tout, cout, ts, cs, "float64", name)
