"""CrossMapLRN2d (values against torch in float32 / float64, gradcheck of the exact
derivative, errors, repr) and the deprecated nn.Container."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
from chainrule.autograd import gradcheck, gradgradcheck
from tests.nn._compare import DT, close
from tests.nn.test_parametrize import same_err


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 9])
def test_cross_map_lrn2d_values_match_torch(size, dtype):
    x = np.random.default_rng(size).standard_normal((2, 7, 3, 2)).astype(DT[dtype][0])
    tm = torch.nn.CrossMapLRN2d(size, alpha=0.1, beta=0.75, k=1.5)
    cm = chainrule.nn.CrossMapLRN2d(size, alpha=0.1, beta=0.75, k=1.5)
    assert repr(cm) == repr(tm)
    close(cm(chainrule.tensor(x)), tm(torch.tensor(x)), dtype, "output")


@pytest.mark.parametrize("size", [1, 3, 4])
def test_cross_map_lrn2d_gradcheck(size):
    x = chainrule.tensor(np.random.default_rng(0).standard_normal((1, 5, 2, 2)), requires_grad=True)
    m = chainrule.nn.CrossMapLRN2d(size, alpha=0.2, beta=0.6, k=1.2)
    assert gradcheck(m, (x,))
    assert gradgradcheck(m, (x,))


def test_cross_map_lrn2d_defaults_and_errors():
    assert repr(chainrule.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    same_err(lambda lib: lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3, 4)))


def test_container_is_a_deprecated_module():
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        c = chainrule.nn.Container(a=chainrule.nn.Linear(2, 2), b=chainrule.nn.ReLU())
    with pytest.warns(FutureWarning):
        t = torch.nn.Container(a=torch.nn.Linear(2, 2), b=torch.nn.ReLU())
    assert repr(c) == repr(t)
    assert list(c.state_dict()) == list(t.state_dict()) == ["a.weight", "a.bias"]
    assert isinstance(c, chainrule.nn.Module)
