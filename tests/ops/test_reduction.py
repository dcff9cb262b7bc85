"""Reduction edge cases vs PyTorch: ties, zeros, NaN, error messages, return types."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _pair(a, dtype="float64", requires_grad=True):
    a = np.asarray(a, dtype=dtype)
    return (cr.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad))


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t._data)


def _same(c, t):
    assert tuple(c.shape) == tuple(t.shape)
    assert c.dtype.name == str(t.dtype).replace("torch.", "")
    np.testing.assert_allclose(_np(c), _np(t), rtol=1e-12, atol=1e-12)


def _grads(f, a, g=None):
    """Value and gradient of ``f`` under chainrule and torch, compared."""
    c, t = _pair(a)
    co, to = f(cr, c), f(torch, t)
    _same(co, to)
    gw = np.ones(tuple(to.shape)) if g is None else np.asarray(g, dtype="float64")
    co.backward(cr.tensor(gw))
    to.backward(torch.tensor(gw))
    _same(c.grad, t.grad)
    return c.grad


TIES = [[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 5.0, 4.0, 5.0]]


@pytest.mark.parametrize(
    "f",
    [
        lambda m, x: m.amax(x, 1),
        lambda m, x: m.amin(x, 1),
        lambda m, x: x.amax(),
        lambda m, x: x.amin((0, 1)),
        lambda m, x: m.max(x),
        lambda m, x: x.min(),
        lambda m, x: m.max(x, 1).values,
        lambda m, x: x.min(0, keepdim=True)[0],
        lambda m, x: m.norm(x, math.inf, dim=1),
        lambda m, x: m.linalg.vector_norm(x, -math.inf),
    ],
    ids=[
        "amax",
        "amin",
        "amax_all",
        "amin_dims",
        "max_all",
        "min_all",
        "max_dim",
        "min_dim_keep",
        "norm_inf",
        "vnorm_-inf",
    ],
)
def test_ties_match_torch(f):
    _grads(f, TIES, None)


def test_max_dim_indices_and_return_type():
    c, t = _pair(TIES)
    rc, rt = cr.max(c, 1), torch.max(t, 1)
    _same(rc.indices, rt.indices)
    _same(rc.values, rt.values)
    v, i = rc
    assert v is rc[0] and i is rc.indices
    assert type(rc).__name__ == "max" and repr(rc).startswith("torch.return_types.max(\nvalues=")
    assert rc.values.grad_fn.name() == rt.values.grad_fn.name() == "MaxBackward0"
    assert cr.min(c, -1, True).indices.shape == (3, 1)


def test_max_binary_form():
    a, b = _pair([1.0, 5.0, -2.0]), _pair([3.0, 0.0, -2.0])
    if not hasattr(cr, "maximum"):
        pytest.skip("maximum is not available yet")
    _same(cr.max(a[0], b[0]), torch.max(a[1], b[1]))
    _same(cr.min(a[0], b[0]), torch.min(a[1], b[1]))


def test_argmax_nan_and_ties():
    x = [[1.0, float("nan"), 3.0], [2.0, 2.0, 1.0]]
    c, t = _pair(x, requires_grad=False)
    for f in (
        lambda m, x: m.argmax(x, 1),
        lambda m, x: m.argmin(x, 1),
        lambda m, x: m.argmax(x),
        lambda m, x: x.argmin(keepdim=True),
        lambda m, x: m.max(x, 1).indices,
        lambda m, x: m.amax(x, 1),
    ):
        co, to = f(cr, c), f(torch, t)
        assert tuple(co.shape) == tuple(to.shape)
        np.testing.assert_array_equal(_np(co), _np(to))


@pytest.mark.parametrize(
    "x",
    [
        [[2.0, 0.0, 3.0], [1.0, 2.0, 4.0]],
        [[0.0, 0.0, 3.0], [1.0, 0.0, 4.0]],
        [[0.0, 0.0, 0.0], [0.0, 2.0, -1.0]],
    ],
    ids=["one_zero", "two_zeros", "three_zeros"],
)
@pytest.mark.parametrize(
    "f",
    [
        lambda m, x: m.prod(x, 1),
        lambda m, x: x.prod(),
        lambda m, x: m.prod(x, 0, keepdim=True),
        lambda m, x: m.cumprod(x, 1),
        lambda m, x: x.cumprod(0),
    ],
    ids=["prod_dim", "prod_all", "prod_dim0", "cumprod1", "cumprod0"],
)
def test_zeros_match_torch(x, f):
    _grads(f, x)


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, -1.0], [0.0, 2.0, 0.0, 3.0], [1.0, 2.0, 3.0, 0.0]])
@pytest.mark.parametrize("op", ["prod", "cumprod"])
def test_double_backward_at_zeros_matches_torch(x, op):
    res = []
    for m in (cr, torch):
        t = m.tensor(x, dtype=m.float64, requires_grad=True)
        y = t.prod() if op == "prod" else t.cumprod(0)
        w = m.tensor([1.0, -2.0, 0.5, 3.0], dtype=m.float64)
        y = y * 1.5 if op == "prod" else (y * w).sum()
        (g,) = m.autograd.grad(y, t, create_graph=True)
        (h,) = m.autograd.grad((g * w).sum(), t)
        res.append((_np(g), _np(h)))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)


def test_norm_gradient_at_zero_is_zero():
    for f in (
        lambda m, x: m.norm(x),
        lambda m, x: m.linalg.vector_norm(x, 3),
        lambda m, x: m.linalg.vector_norm(x, 1.5),
        lambda m, x: x.norm(dim=0),
    ):
        g = _grads(f, [0.0, 0.0, 0.0])
        assert not np.any(_np(g))


def test_std_gradient_constant_input():
    _grads(lambda m, x: m.std(x, 1), [[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])


def test_logsumexp_stability_and_inf():
    _grads(lambda m, x: m.logsumexp(x, 1), [[1000.0, 1000.0, -1000.0], [-1e4, -1e4 + 1, -1e4]])
    c, t = _pair([[-math.inf, -math.inf], [math.inf, 1.0]], requires_grad=False)
    np.testing.assert_array_equal(_np(cr.logsumexp(c, 1)), _np(torch.logsumexp(t, 1)))


def test_dtypes():
    i = [[1, 2], [3, 4]]
    ci, ti = cr.tensor(i), torch.tensor(i)
    for f in (
        lambda m, x: m.sum(x),
        lambda m, x: x.prod(1),
        lambda m, x: m.cumsum(x, 0),
        lambda m, x: x.cumprod(1),
        lambda m, x: m.count_nonzero(x),
        lambda m, x: m.all(x, 1),
        lambda m, x: x.any(),
        lambda m, x: m.argmax(x),
        lambda m, x: m.logsumexp(x, 0),
        lambda m, x: m.sum(x, dtype=m.float32),
        lambda m, x: m.mean(x, 0, dtype=m.float64),
        lambda m, x: m.cumsum(x, 1, dtype=m.int32),
        lambda m, x: m.all(x.to(m.uint8), 0),
        lambda m, x: m.amax(x, 0),
        lambda m, x: m.max(x, 1).values,
    ):
        co, to = f(cr, ci), f(torch, ti)
        assert co.dtype.name == str(to.dtype).replace("torch.", "")
        np.testing.assert_allclose(_np(co), _np(to))


def test_var_variants():
    x = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    c, t = _pair(x)
    for f in (
        lambda m, x: m.var(x, 1, True),
        lambda m, x: m.var(x, False),
        lambda m, x: x.var(0, correction=0, keepdim=True),
        lambda m, x: x.std(unbiased=False),
        lambda m, x: m.var_mean(x, 1)[0],
        lambda m, x: m.std_mean(x, (0, 1))[1],
    ):
        _same(f(cr, c), f(torch, t))


def _errors(fc, ft):
    with pytest.raises(Exception) as ec:
        fc()
    with pytest.raises(Exception) as et:
        ft()
    assert str(ec.value) == str(et.value)
    assert isinstance(ec.value, type(et.value)) or issubclass(type(et.value), type(ec.value))


@pytest.mark.parametrize(
    "f",
    [
        lambda m: m.zeros(0, 3).max(0),
        lambda m: m.zeros(0, 3).max(),
        lambda m: m.zeros(0, 3).amax(0),
        lambda m: m.zeros(0, 3).argmax(),
        lambda m: m.arange(3).var(),
        lambda m: m.arange(3).std(0),
        lambda m: m.arange(4).mean(),
        lambda m: m.ones(2, 3).sum(2),
        lambda m: m.ones(2).amax((0, 0)),
        lambda m: m.ones(2, 3).max(-3),
        lambda m: m.ones(2, 3).argmin(2),
    ],
    ids=[
        "max_empty_dim",
        "max_empty",
        "amax_empty",
        "argmax_empty",
        "var_int",
        "std_int",
        "mean_int",
        "dim_range",
        "dim_repeat",
        "max_dim_range",
        "argmin_range",
    ],
)
def test_errors_match_torch(f):
    _errors(lambda: f(cr), lambda: f(torch))


@pytest.mark.parametrize(
    "f", [lambda m: m.var(m.ones(1, 3), 0), lambda m: m.ones(3).std(correction=3)]
)
def test_var_zero_dof_warns_and_matches(f):
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0") as wc:
        rc = f(cr)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0") as wt:
        rt = f(torch)
    assert str(wc[0].message) == str(wt[0].message).split(" (Triggered")[0]
    np.testing.assert_array_equal(_np(rc), _np(rt))
