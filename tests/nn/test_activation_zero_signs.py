"""PReLU, LeakyReLU and RReLU (eval) bit for bit against PyTorch: the signs of zeros, NaNs and
infinities, forward and backward, on small arrays (NumPy's ``where``) and large ones (the
branch-free ``x * f`` of ``_slope_select``) (issue #15)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
import chainrule.nn.functional as CF

VALUES = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e38, -3e38, 0.5]
SLOPES = [0.25, -0.25, 0.0, -0.0, 1.0, 2.0, -2.0, np.inf, -np.inf, np.nan, 0.01]

Form = Callable[[Any, Any, Any, float], Any]
FORMS: dict[str, Form] = {
    "prelu": lambda F, m, x, s: F.prelu(x, m.tensor([s], dtype=x.dtype)),
    "prelu_channels": lambda F, m, x, s: F.prelu(x, m.tensor([s, -s, 0.5], dtype=x.dtype)),
    "leaky_relu": lambda F, m, x, s: F.leaky_relu(x, s),
    "rrelu_eval": lambda F, m, x, s: F.rrelu(x, s, s, training=False),
}


def _same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_array_equal(np.signbit(a[~np.isnan(a)]), np.signbit(b[~np.isnan(b)]))
    np.testing.assert_array_equal(a[~np.isnan(a)], b[~np.isnan(b)])


# (rrelu refuses a bound that is not finite: test_rrelu_bounds_must_be_finite)
CASES = [(f, s) for f in FORMS for s in SLOPES if f != "rrelu_eval" or np.isfinite(s)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("n", [12, 6000], ids=["small", "large"])
@pytest.mark.parametrize("form, slope", CASES)
def test_forward_bits_match_torch(form: str, n: int, dtype: str, slope: float) -> None:
    x = np.resize(np.array(VALUES, dtype=dtype), n).reshape(n // 3, 3)
    f = FORMS[form]
    want = f(TF, torch, torch.tensor(x), slope).numpy()
    got = f(CF, cr, cr.tensor(x), slope).numpy()
    _same_bits(got, want)


@pytest.mark.parametrize("n", [12, 6000], ids=["small", "large"])
@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("slope", [0.25, -0.25, 0.0, -0.0, 2.0])
def test_backward_bits_match_torch(form: str, n: int, slope: float) -> None:
    finite = [v for v in VALUES if np.isfinite(v)]
    x = np.resize(np.array(finite, dtype=np.float32), n).reshape(n // 3, 3)
    g = np.resize(np.array([1.0, -1.0, 0.0, -0.0, 2.5], dtype=np.float32), n).reshape(n // 3, 3)
    f = FORMS[form]
    grads = []
    for F, m in ((TF, torch), (CF, cr)):
        t = m.tensor(x, requires_grad=True)
        f(F, m, t, slope).backward(m.tensor(g))
        grads.append(t.grad.numpy())
    _same_bits(grads[1], grads[0])


def test_prelu_zero_input_negative_slope_is_negative_zero() -> None:
    for m in (torch, cr):
        y = m.nn.PReLU(init=-0.25)(m.tensor([0.0, -0.0])).detach().numpy()
        assert np.signbit(y).tolist() == [True, False]


@pytest.mark.parametrize("lower, upper", [(np.inf, np.inf), (0.1, np.inf), (np.nan, 0.2)])
def test_rrelu_bounds_must_be_finite(lower: float, upper: float) -> None:
    msgs = []
    for F, m in ((TF, torch), (CF, cr)):
        with pytest.raises(RuntimeError) as e:
            F.rrelu(m.ones(3), lower, upper)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("inplace", [False, True])
def test_rrelu_training_zero_signs_and_gradient(inplace: bool) -> None:
    # x <= 0 gives x r with r in [lower, upper] (here r = -0.25 exactly), x > 0 gives x
    x = np.array([0.0, -0.0, 2.0, -4.0, np.nan], dtype=np.float32)
    outs = []
    for F, m in ((TF, torch), (CF, cr)):
        t = m.tensor(x, requires_grad=True)
        y = F.rrelu(t * 1, -0.25, -0.25, training=True, inplace=inplace)
        y.backward(m.tensor([1.0, -0.0, -0.0, 0.0, 1.0]))
        outs.append((y.detach().numpy(), t.grad.numpy(), type(y.grad_fn).__name__))
    _same_bits(outs[1][0], outs[0][0])
    _same_bits(outs[1][1], outs[0][1])
    assert outs[1][2] == outs[0][2]
