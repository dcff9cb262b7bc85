"""Edge cases of the unary ops that OpInfo rows cannot express: subgradients at kinks, integer
inputs, rounding ties, erf accuracy, in-place activations and error messages, vs PyTorch."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _grad_pair(
    f: Callable[[Any, Any], Any], values: list[float], dtype: str = "float64"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    out = []
    for m in (cr, torch):
        x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        y = f(m, x)
        y.sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy()))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def _fn(m: Any, name: str) -> Any:
    if m is cr:
        return getattr(cr.ops, name)
    return (
        getattr(torch.nn.functional, name)
        if hasattr(torch.nn.functional, name)
        else getattr(torch, name)
    )


KINKS = {
    "relu": ([-1.0, 0.0, 1.0], lambda m, x: m.relu(x)),
    "abs": ([-1.0, 0.0, -0.0, 1.0], lambda m, x: m.abs(x)),
    "sign": ([-1.0, 0.0, 1.0], lambda m, x: m.sign(x)),
    "hardtanh": ([-2.0, -1.0, 0.0, 1.0, 2.0], lambda m, x: _fn(m, "hardtanh")(x)),
    "relu6": ([-1.0, 0.0, 3.0, 6.0, 7.0], lambda m, x: _fn(m, "relu6")(x)),
    "leaky_relu": ([-1.0, 0.0, 1.0], lambda m, x: _fn(m, "leaky_relu")(x, 0.1)),
    "elu": ([-1.0, 0.0, 1.0], lambda m, x: _fn(m, "elu")(x, 0.7)),
    "selu": ([-1.0, 0.0, 1.0], lambda m, x: _fn(m, "selu")(x)),
    "celu": ([-1.0, 0.0, 1.0], lambda m, x: _fn(m, "celu")(x, 1.5)),
    "hardsigmoid": ([-4.0, -3.0, 0.0, 3.0, 4.0], lambda m, x: _fn(m, "hardsigmoid")(x)),
    "hardswish": ([-4.0, -3.0, 0.0, 3.0, 4.0], lambda m, x: _fn(m, "hardswish")(x)),
    "softplus": ([-1.0, 1.0, 1.5, 2.0], lambda m, x: _fn(m, "softplus")(x, 2.0, 3.0)),
    "clamp": ([-2.0, -1.0, 0.0, 1.0, 2.0], lambda m, x: m.clamp(x, -1.0, 1.0)),
    "clamp_min": ([-2.0, -1.0, 0.0], lambda m, x: m.clamp(x, min=-1.0)),
    "clamp_max": ([0.0, 1.0, 2.0], lambda m, x: m.clamp(x, max=1.0)),
    "clamp_min_fn": ([-2.0, -1.0, 0.0], lambda m, x: m.clamp_min(x, -1.0)),
    "clamp_max_fn": ([0.0, 1.0, 2.0], lambda m, x: m.clamp_max(x, 1.0)),
    "clamp_inverted": ([-2.0, 0.0, 2.0], lambda m, x: m.clamp(x, 1.0, -1.0)),
    "floor": ([-1.5, 0.0, 1.0, 2.5], lambda m, x: m.floor(x)),
    "ceil": ([-1.5, 0.0, 1.0, 2.5], lambda m, x: m.ceil(x)),
    "round": ([-2.5, -0.5, 0.5, 1.5, 2.5], lambda m, x: m.round(x)),
    "trunc": ([-1.5, 0.0, 1.0], lambda m, x: m.trunc(x)),
    "frac": ([-1.5, 0.0, 1.0, 2.25], lambda m, x: m.frac(x)),
    "nan_to_num": ([float("nan"), float("inf"), -float("inf"), 1.0], lambda m, x: m.nan_to_num(x)),
}


@pytest.mark.parametrize("name", list(KINKS))
def test_values_and_subgradients_at_kinks(name: str) -> None:
    values, f = KINKS[name]
    cy, ty, cg, tg = _grad_pair(f, values)
    np.testing.assert_allclose(cy, ty, rtol=1e-12)
    np.testing.assert_allclose(cg, tg, rtol=1e-12)


def test_clamp_tensor_bounds_gradients_at_ties() -> None:
    res = []
    for m in (cr, torch):
        x = m.tensor([-2.0, -1.0, 0.0, 1.0, 2.0, 0.5], dtype=m.float64, requires_grad=True)
        lo = m.tensor([-1.0, -1.0, -1.0, -1.0, -1.0, 1.0], dtype=m.float64, requires_grad=True)
        hi = m.tensor([1.0, 1.0, 1.0, 1.0, 1.0, -1.0], dtype=m.float64, requires_grad=True)
        y = m.clamp(x, lo, hi)
        y.backward(m.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=m.float64))
        res.append([y.detach().numpy(), x.grad.numpy(), lo.grad.numpy(), hi.grad.numpy()])
    for c, t in zip(*res):
        np.testing.assert_array_equal(c, t)


@pytest.mark.parametrize(
    "name",
    [
        "floor",
        "ceil",
        "round",
        "trunc",
        "sign",
        "abs",
        "relu",
        "square",
        "exp",
        "sqrt",
        "sigmoid",
        "reciprocal",
        "erf",
        "nan_to_num",
        "isnan",
        "logical_not",
        "neg",
    ],
)
def test_integer_inputs(name: str) -> None:
    v = [1, 4, 9] if name in ("sqrt", "reciprocal") else [-2, 0, 3]
    c = getattr(cr, name)(cr.tensor(v))
    t = getattr(torch, name)(torch.tensor(v))
    assert c.dtype.name == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(c.numpy().astype(float), t.numpy().astype(float), rtol=1e-6)


def test_activation_on_integers_raises_like_torch() -> None:
    for name in ("leaky_relu", "elu", "gelu", "silu", "softplus", "hardswish"):
        with pytest.raises(NotImplementedError) as e:
            _fn(torch, name)(torch.tensor([1, 2]))
        if name == "leaky_relu":
            continue  # int leaky_relu computes here (PyTorch has no integer kernel)
        with pytest.raises(NotImplementedError):
            _fn(cr, name)(cr.tensor([1, 2]))
        assert "not implemented for 'Long'" in str(e.value)


def test_round_half_even_and_decimals() -> None:
    v = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.125, 1.2345, -7.55, 1234.5]
    for d in (0, 1, 2, -1, -2):
        for dt in ("float32", "float64"):
            c = cr.round(cr.tensor(v, dtype=getattr(cr, dt)), decimals=d)
            t = torch.round(torch.tensor(v, dtype=getattr(torch, dt)), decimals=d)
            np.testing.assert_array_equal(c.numpy(), t.numpy(), err_msg=f"decimals={d} {dt}")
    x = cr.tensor([1.26], requires_grad=True)
    assert cr.round(x, decimals=1).grad_fn.name() == "RoundBackward1"
    assert cr.round(x).grad_fn.name() == "RoundBackward0"


def test_erf_accuracy_float64() -> None:
    x = np.concatenate(
        [
            np.linspace(-7, 7, 2001),
            [0.0, -0.0, 1e-300, 1e-10, 0.84375, 1.25, 1 / 0.35, 6.0, 28.0, 30.0],
        ]
    )
    c = cr.erf(cr.tensor(x)).numpy()
    c2 = cr.erfc(cr.tensor(x)).numpy()
    ref = np.array([math.erf(v) for v in x])
    ref2 = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(c, ref, rtol=4e-16, atol=1e-300)
    np.testing.assert_allclose(c2, ref2, rtol=1e-15, atol=1e-300)
    special = cr.erf(cr.tensor([float("nan"), float("inf"), -float("inf")])).numpy()
    assert np.isnan(special[0]) and special[1] == 1.0 and special[2] == -1.0
    assert cr.erfc(cr.tensor([float("inf"), -float("inf")])).tolist() == [0.0, 2.0]


def test_gelu_float64_matches_torch_tightly() -> None:
    v = np.linspace(-6, 6, 101)
    for approx in ("none", "tanh"):
        cy, ty, cg, tg = _grad_pair(lambda m, x: _fn(m, "gelu")(x, approximate=approx), list(v))
        # 1 + erf(x) cancels in the far negative tail: compare there in absolute terms.
        np.testing.assert_allclose(cy, ty, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(cg, tg, rtol=1e-13, atol=1e-14)


def test_gelu_bad_approximate() -> None:
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        cr.ops.gelu(cr.tensor([1.0]), approximate="fast")


@pytest.mark.parametrize(
    "name,args",
    [
        ("leaky_relu", (0.2,)),
        ("elu", (1.0,)),
        ("relu6", ()),
        ("hardtanh", (-0.5, 0.5)),
        ("silu", ()),
        ("selu", ()),
        ("celu", (1.0,)),
        ("hardswish", ()),
        ("mish", ()),
        ("hardsigmoid", ()),
    ],
)
def test_inplace_activation(name: str, args: tuple[float, ...]) -> None:
    res = []
    for m in (cr, torch):
        leaf = m.tensor([-1.0, 0.25, 2.0], dtype=m.float64, requires_grad=True)
        x = leaf * 1.0
        y = _fn(m, name)(x, *args, inplace=True)
        assert y is x
        y.sum().backward()
        res.append((x.detach().numpy(), leaf.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)


def test_clamp_errors_and_dtype() -> None:
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        cr.clamp(cr.tensor([1.0]))
    assert cr.clamp(cr.tensor([1, 5]), min=1.5).dtype is cr.float32
    assert cr.clamp(cr.tensor([1, 5]), 0, 3).dtype is cr.int64
    assert cr.clamp(cr.tensor([1, 5]), 0, 3).tolist() == [1, 3]
    t = cr.tensor([1.0, -1.0], requires_grad=True)
    assert cr.clamp(t, 0, 1).grad_fn.name() == "ClampBackward1"
    assert cr.clamp(t, cr.tensor(0.0)).grad_fn.name() == "ClampBackward0"


def test_bool_and_integer_errors() -> None:
    for f in (
        lambda m: m.abs(m.tensor([True])),
        lambda m: m.round(m.tensor([15]), decimals=-1),
        lambda m: (
            m.nn.functional.hardtanh(m.tensor([1.0]), 2.0, 1.0)
            if m is torch
            else m.ops.hardtanh(m.tensor([1.0]), 2.0, 1.0)
        ),
    ):
        with pytest.raises(Exception) as ec:
            f(cr)
        with pytest.raises(Exception) as et:
            f(torch)
        assert type(ec.value) is type(et.value) and str(ec.value) == str(et.value)


def test_grad_fn_names() -> None:
    x = cr.tensor([0.5, 1.5], requires_grad=True)
    tx = torch.tensor([0.5, 1.5], requires_grad=True)
    for name in (
        "expm1",
        "log1p",
        "rsqrt",
        "reciprocal",
        "erf",
        "erfc",
        "frac",
        "floor",
        "square",
        "nan_to_num",
        "logsigmoid",
        "relu6",
        "selu",
        "celu",
        "gelu",
        "mish",
        "hardswish",
        "hardsigmoid",
        "softplus",
        "silu",
        "leaky_relu",
        "elu",
    ):
        assert _fn(cr, name)(x).grad_fn.name() == _fn(torch, name)(tx).grad_fn.name(), name
    for name in ("clamp_min", "clamp_max"):
        want = getattr(torch, name)(tx, 1.0).grad_fn.name()
        assert getattr(cr, name)(x, 1.0).grad_fn.name() == want, name


def test_float32_stays_float32() -> None:
    x = cr.tensor([0.25, 0.5, 3.0])
    for name in (
        "logsigmoid",
        "softplus",
        "gelu",
        "silu",
        "mish",
        "elu",
        "selu",
        "celu",
        "leaky_relu",
        "hardtanh",
        "hardswish",
        "hardsigmoid",
        "erf",
        "erfc",
        "frac",
        "round",
        "rsqrt",
        "expm1",
    ):
        assert _fn(cr, name)(x).dtype is cr.float32, name


def test_large_inputs_do_not_overflow() -> None:
    x = cr.tensor([-1000.0, 1000.0], dtype=cr.float64, requires_grad=True)
    tx = torch.tensor([-1000.0, 1000.0], dtype=torch.float64, requires_grad=True)
    for name in ("logsigmoid", "softplus", "elu", "selu", "silu", "mish", "gelu"):
        c = _fn(cr, name)(x)
        t = _fn(torch, name)(tx)
        np.testing.assert_allclose(c.detach().numpy(), t.detach().numpy(), rtol=1e-12)
        (gc,) = cr.autograd.grad(c.sum(), x)
        (gt,) = torch.autograd.grad(t.sum(), tx)
        np.testing.assert_allclose(gc.numpy(), gt.numpy(), rtol=1e-12, atol=1e-300)
