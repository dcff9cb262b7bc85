"""nn.utils: gradient clipping and parameter/vector conversion against torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn
from chainrule.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)

R = np.random.default_rng(0)
GRADS = [R.standard_normal(s).astype(np.float32) * 3 for s in [(3, 4), (5,), ()]]


def _params(m, grads=GRADS):
    ps = []
    for g in grads:
        p = m.nn.Parameter(m.zeros(g.shape))
        p.grad = m.tensor(g.copy())
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf])
@pytest.mark.parametrize("max_norm", [1.0, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    pa, pb = _params(chainrule), _params(torch)
    na = clip_grad_norm_(pa, max_norm, norm_type=norm_type)
    nb = torch.nn.utils.clip_grad_norm_(pb, max_norm, norm_type=norm_type)
    assert isinstance(na, chainrule.Tensor) and na.shape == () and na.dtype == chainrule.float32
    np.testing.assert_allclose(na.item(), nb.item(), rtol=1e-5)
    for a, b in zip(pa, pb):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_nonfinite_and_empty():
    grads = [np.array([1.0, np.inf], np.float32)]
    msgs = []
    for m in (chainrule, torch):
        with pytest.raises(RuntimeError) as e:
            (clip_grad_norm_ if m is chainrule else torch.nn.utils.clip_grad_norm_)(
                _params(m, grads), 1.0, error_if_nonfinite=True
            )
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert clip_grad_norm_(_params(chainrule, grads), 1.0).item() == math.inf
    p = nn.Parameter(chainrule.ones(2))
    assert clip_grad_norm_([p], 1.0).item() == 0.0
    assert clip_grad_norm_(p, 1.0).item() == 0.0


def test_clip_grad_value():
    pa, pb = _params(chainrule), _params(torch)
    clip_grad_value_(pa, 0.5)
    torch.nn.utils.clip_grad_value_(pb, 0.5)
    for a, b in zip(pa, pb):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_parameters_vector_round_trip():
    lin = nn.Linear(3, 2)
    vec = parameters_to_vector(lin.parameters())
    assert vec.shape == (8,)
    np.testing.assert_array_equal(vec.detach().numpy()[:6], lin.weight.detach().numpy().reshape(-1))
    vec.sum().backward()
    np.testing.assert_array_equal(lin.weight.grad.numpy(), np.ones((2, 3), np.float32))
    vector_to_parameters(chainrule.arange(8.0), lin.parameters())
    np.testing.assert_array_equal(lin.bias.detach().numpy(), [6.0, 7.0])
    assert lin.weight.shape == (2, 3)
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        vector_to_parameters([1.0], lin.parameters())
