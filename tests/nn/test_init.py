"""nn.init: in-place fills, bounds and statistics of the random initialisers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import chainrule
from chainrule.nn import init


def _t(*shape, dtype=None):
    return chainrule.empty(shape, dtype=dtype)


def test_calculate_gain_matches_torch():
    for nl, p in [
        ("linear", None),
        ("conv2d", None),
        ("sigmoid", None),
        ("tanh", None),
        ("relu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
        ("selu", None),
    ]:
        assert init.calculate_gain(nl, p) == torch.nn.init.calculate_gain(nl, p)
    for bad in (
        lambda m: m.nn.init.calculate_gain("bogus"),
        lambda m: m.nn.init.calculate_gain("leaky_relu", "x"),
    ):
        msgs = []
        for m in (chainrule, torch):
            with pytest.raises(ValueError) as e:
                bad(m)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


def test_fan_in_fan_out_matches_torch():
    for shape in [(3, 4), (8, 4, 3, 3), (2, 5, 7)]:
        assert init._calculate_fan_in_and_fan_out(
            _t(*shape)
        ) == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(_t(3))


def test_in_place_no_grad_and_version():
    w = chainrule.nn.Parameter(chainrule.empty(4, 5))
    data = w._data
    v = w._version
    out = init.uniform_(w, -1, 1)
    assert out is w and w._data is data and w._version == v + 1
    assert w.requires_grad and w.grad_fn is None
    init.constant_(w, 0.5)
    np.testing.assert_array_equal(w.detach().numpy(), np.full((4, 5), 0.5, np.float32))
    init.zeros_(w)
    assert float(w.detach().abs().sum()) == 0
    init.ones_(w)
    assert float(w.detach().sum()) == 20
    init.eye_(w)
    np.testing.assert_array_equal(w.detach().numpy(), np.eye(4, 5, dtype=np.float32))
    d = _t(4, 2, 3, 3)
    init.dirac_(d)
    np.testing.assert_array_equal(d.numpy(), torch.nn.init.dirac_(torch.empty(4, 2, 3, 3)).numpy())


def test_generator_reproducible():
    a, b = _t(100), _t(100)
    init.normal_(a, generator=chainrule.Generator().manual_seed(3))
    init.normal_(b, generator=chainrule.Generator().manual_seed(3))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    init.kaiming_uniform_(a.reshape(10, 10), generator=chainrule.Generator().manual_seed(4))


def _stats(fill, shape=(200, 300), dtype=None):
    t = _t(*shape, dtype=dtype)
    fill(t)
    a = t.numpy().astype(np.float64)
    return a, t


def test_uniform_and_normal_statistics():
    a, t = _stats(lambda t: init.uniform_(t, -2, 3))
    assert a.min() >= -2 and a.max() <= 3 and abs(a.mean() - 0.5) < 0.03
    assert abs(a.std() - 5 / math.sqrt(12)) < 0.02
    a, _ = _stats(lambda t: init.normal_(t, 1.0, 0.5), dtype=chainrule.float64)
    assert abs(a.mean() - 1.0) < 0.01 and abs(a.std() - 0.5) < 0.01
    assert t.dtype == chainrule.float32


def test_trunc_normal_bounds():
    a, _ = _stats(lambda t: init.trunc_normal_(t, mean=0.0, std=1.0, a=-0.5, b=1.0))
    assert a.min() >= -0.5 and a.max() <= 1.0
    # Mean of N(0, 1) truncated to [-0.5, 1]: (phi(-0.5) - phi(1)) / (Phi(1) - Phi(-0.5)).
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    expected = (phi(-0.5) - phi(1.0)) / (cdf(1.0) - cdf(-0.5))
    assert abs(a.mean() - expected) < 0.01


@pytest.mark.parametrize("shape", [(200, 300), (64, 32, 3, 3)])
def test_xavier_and_kaiming_statistics(shape):
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(_t(*shape))
    a, _ = _stats(lambda t: init.xavier_uniform_(t, gain=2.0), shape)
    bound = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.98 * bound
    a, _ = _stats(lambda t: init.xavier_normal_(t), shape)
    assert abs(a.std() / math.sqrt(2 / (fan_in + fan_out)) - 1) < 0.03
    a, _ = _stats(lambda t: init.kaiming_uniform_(t, a=math.sqrt(5)), shape)
    bound = math.sqrt(3) * math.sqrt(2 / 6) / math.sqrt(fan_in)  # = 1 / sqrt(fan_in)
    assert np.abs(a).max() <= bound * (1 + 1e-6) and np.abs(a).max() > 0.98 * bound
    a, _ = _stats(lambda t: init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"), shape)
    assert abs(a.std() / (math.sqrt(2) / math.sqrt(fan_out)) - 1) < 0.03
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_normal_(_t(*shape), mode="fan_avg")


def test_orthogonal():
    for shape in [(6, 4), (4, 6), (3, 2, 2)]:
        t = _t(*shape)
        init.orthogonal_(t, gain=2.0)
        q = t.numpy().reshape(shape[0], -1).astype(np.float64)
        small = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
        np.testing.assert_allclose(small, 4 * np.eye(small.shape[0]), atol=1e-5)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(_t(3))
