"""Edge cases of the binary ops, vs PyTorch: ties in maximum/minimum, broadcasting errors,
integer division and remainders, pow at zero, whole-tensor comparisons, reflected operators."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _both(f: Callable[[Any], Any]) -> tuple[Any, Any]:
    return f(cr), f(torch)


def _error(f: Callable[[], Any]) -> tuple[type, str]:
    with pytest.raises(Exception) as e:
        f()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_ties_gradient_the_gradient(name: str) -> None:
    res = []
    for m in (cr, torch):
        a = m.tensor([1.0, 2.0, 3.0, 2.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([1.0, 1.0, 4.0, 2.0], dtype=m.float64, requires_grad=True)
        y = getattr(m, name)(a, b)
        y.backward(m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64))
        res.append((y.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for c, t in zip(*res):
        np.testing.assert_array_equal(c, t)


def test_maximum_requires_tensors() -> None:
    tc, mc = _error(lambda: cr.maximum(cr.tensor([1.0]), 1.0))
    tt, mt = _error(lambda: torch.maximum(torch.tensor([1.0]), 1.0))
    assert tc is tt and mc == mt


@pytest.mark.parametrize(
    "shapes", [((2, 3), (4,)), ((2, 3, 5), (4, 1)), ((3, 2), (5, 3, 4)), ((2, 1, 3), (4, 2))]
)
@pytest.mark.parametrize(
    "op",
    [
        "add",
        "sub",
        "mul",
        "div",
        "pow",
        "maximum",
        "eq",
        "lt",
        "atan2",
        "remainder",
        "logical_and",
        "rsub_scalar_free",
    ],
)
def test_broadcast_error_message(shapes: tuple[tuple[int, ...], ...], op: str) -> None:
    def run(m: Any) -> Any:
        a, b = m.ones(shapes[0]), m.ones(shapes[1])
        if op == "rsub_scalar_free":
            return m.where(a > 0, a, b)
        return getattr(m, op)(a, b)

    tc, mc = _error(lambda: run(cr))
    tt, mt = _error(lambda: run(torch))
    assert tc is tt is RuntimeError
    assert mc == mt


def test_broadcast_error_keeps_other_value_errors() -> None:
    # A ValueError not about shapes is not rewritten into the broadcasting message.
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        cr.tensor([2, 3]) ** cr.tensor([-1, 1])


@pytest.mark.parametrize(
    "a,b",
    [
        ([7, -7, 7, -7, 0], [2, 2, -2, -2, 3]),
        ([7.5, -7.5, 7.5, -7.5, 0.0], [2.0, 2.0, -2.0, -2.0, 3.0]),
    ],
)
def test_division_and_remainder_signs(a: list[Any], b: list[Any]) -> None:
    for f in (
        lambda m, x, y: m.remainder(x, y),
        lambda m, x, y: m.fmod(x, y),
        lambda m, x, y: x // y,
        lambda m, x, y: x % y,
        lambda m, x, y: x / y,
        lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
        lambda m, x, y: m.div(x, y, rounding_mode="floor"),
        lambda m, x, y: 5 // y,
        lambda m, x, y: 5 % y,
        lambda m, x, y: x % 3,
        lambda m, x, y: m.fmod(x, -3),
        lambda m, x, y: x // -2.5,
    ):
        c = f(cr, cr.tensor(a), cr.tensor(b))
        t = f(torch, torch.tensor(a), torch.tensor(b))
        assert c.dtype.name == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(c.numpy(), t.numpy())


@pytest.mark.parametrize(
    "f",
    [
        lambda m, x: x // m.tensor([1, 0]),
        lambda m, x: x % 0,
        lambda m, x: m.fmod(x, m.tensor([0, 1])),
        lambda m, x: m.div(x, 0, rounding_mode="trunc"),
    ],
)
def test_integer_division_by_zero_raises(f: Callable[..., Any]) -> None:
    tc, mc = _error(lambda: f(cr, cr.tensor([3, 4])))
    tt, mt = _error(lambda: f(torch, torch.tensor([3, 4])))
    assert tc is tt and mc == mt


def test_remainder_fmod_gradients() -> None:
    res = []
    for m in (cr, torch):
        a = m.tensor([5.5, -5.5, 5.5, -5.5], dtype=m.float64, requires_grad=True)
        b = m.tensor([2.0, 2.0, -2.0, -2.0], dtype=m.float64, requires_grad=True)
        ga, gb = m.autograd.grad((m.remainder(a, b) * 2 + m.fmod(a, b) * 3).sum(), (a, b))
        res.append((ga.numpy(), gb.numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])


def test_pow_gradients_at_zero() -> None:
    res = []
    for m in (cr, torch):
        a = m.tensor([0.0, 0.0, 0.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([0.0, 1.0, 2.0, 0.0, 2.0], dtype=m.float64, requires_grad=True)
        y = a**b
        ga, gb = m.autograd.grad(y.sum(), (a, b))
        (gs,) = m.autograd.grad((a**0).sum() + (a**2.0).sum(), (a,))
        res.append((y.detach().numpy(), ga.numpy(), gb.numpy(), gs.numpy()))
    for c, t in zip(*res):
        np.testing.assert_array_equal(c, t)


def test_pow_dtypes_and_node_names() -> None:
    for f in (
        lambda m: m.tensor([1, 2]) ** 2,
        lambda m: m.tensor([1, 2]) ** 0.5,
        lambda m: 2 ** m.tensor([1, 2]),
        lambda m: 2.5 ** m.tensor([1, 2]),
        lambda m: m.tensor([1, 2]) ** m.tensor([1.0, 2.0]),
        lambda m: m.float_power(m.tensor([1, 2]), 2),
        lambda m: m.square(m.tensor([True, False])),
    ):
        c, t = _both(f)
        assert c.dtype.name == str(t.dtype).split(".")[1]
        np.testing.assert_allclose(c.numpy(), t.numpy())
    x = cr.tensor([1.0], requires_grad=True)
    assert (x**2).grad_fn.name() == "PowBackward0"
    assert (x**x).grad_fn.name() == "PowBackward1"
    assert (2**x).grad_fn.name() == "PowBackward2"


def test_equal_isclose_allclose() -> None:
    nan = float("nan")
    pairs = [
        ([1.0, 2.0], [1.0, 2.0]),
        ([1.0, nan], [1.0, nan]),
        ([1.0, 2.0], [1.0, 2.0001]),
        ([1.0], [1.0, 1.0]),
        ([float("inf")], [float("inf")]),
    ]
    for a, b in pairs:
        for kw in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 1e-3}):
            c = cr.allclose(cr.tensor(a), cr.tensor(b), **kw)
            t = torch.allclose(torch.tensor(a), torch.tensor(b), **kw)
            assert c == t
            c2 = cr.isclose(cr.tensor(a), cr.tensor(b), **kw)
            t2 = torch.isclose(torch.tensor(a), torch.tensor(b), **kw)
            assert c2.tolist() == t2.tolist()
        assert cr.equal(cr.tensor(a), cr.tensor(b)) == torch.equal(torch.tensor(a), torch.tensor(b))
        assert cr.tensor(a).equal(cr.tensor(b)) == torch.tensor(a).equal(torch.tensor(b))
    tc, mc = _error(lambda: cr.isclose(cr.tensor([1.0]), cr.tensor([1.0]).double()))
    tt, mt = _error(lambda: torch.isclose(torch.tensor([1.0]), torch.tensor([1.0]).double()))
    assert tc is tt and mc == mt
    assert cr.equal(cr.tensor([1, 2]), cr.tensor([1.0, 2.0])) == torch.equal(
        torch.tensor([1, 2]), torch.tensor([1.0, 2.0])
    )
    assert cr.isclose(cr.tensor([1, 2]), cr.tensor([1, 3])).tolist() == [True, False]


def test_comparison_methods_and_aliases() -> None:
    a, b = [1.0, 2.0, 3.0], [2.0, 2.0, 2.0]
    for name in (
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "greater",
        "greater_equal",
        "less",
        "less_equal",
        "not_equal",
    ):
        c = getattr(cr.tensor(a), name)(cr.tensor(b))
        t = getattr(torch.tensor(a), name)(torch.tensor(b))
        assert c.dtype is cr.bool and c.tolist() == t.tolist()
        assert (
            getattr(cr, name)(cr.tensor(a), 2).tolist()
            == getattr(torch, name)(torch.tensor(a), 2).tolist()
        )


def test_logical_ops_on_numbers() -> None:
    a, b = [0.0, 1.0, -2.0, 0.0], [0, 0, 3, 5]
    for name in ("logical_and", "logical_or", "logical_xor"):
        c = getattr(cr, name)(cr.tensor(a), cr.tensor(b))
        t = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        assert c.dtype is cr.bool and c.tolist() == t.tolist()


def test_lerp_weights_and_errors() -> None:
    res = []
    for m in (cr, torch):
        a = m.tensor([0.0, 1.0, -2.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([1.0, 3.0, 5.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([0.0, 0.5, 1.0], dtype=m.float64, requires_grad=True)
        y = m.lerp(a, b, w) + m.lerp(a, b, 0.75)
        grads = m.autograd.grad(y.sum(), (a, b, w))
        res.append([y.detach().numpy()] + [g.numpy() for g in grads])
    for c, t in zip(*res):
        np.testing.assert_array_equal(c, t)
    tc, mc = _error(lambda: cr.lerp(cr.tensor([1.0]), cr.tensor([1.0]).double(), 0.5))
    tt, mt = _error(lambda: torch.lerp(torch.tensor([1.0]), torch.tensor([1.0]).double(), 0.5))
    assert tc is tt and mc == mt


def test_where_condition_and_promotion() -> None:
    c = cr.tensor([True, False])
    assert cr.where(c, cr.tensor([1, 2]), 2.5).dtype is cr.float32
    assert cr.where(c, cr.tensor([1.0, 2.0]).double(), cr.tensor([1.0, 2.0])).dtype is cr.float64
    assert cr.tensor([1.0, 2.0]).where(c, 0.0).tolist() == [1.0, 0.0]
    with pytest.warns(UserWarning, match="uint8 condition"):
        r = cr.where(cr.tensor([1, 0], dtype=cr.uint8), cr.tensor([1.0, 2.0]), 0.0)
    assert r.tolist() == [1.0, 0.0]
    tc, mc = _error(lambda: cr.where(cr.tensor([1.0, 0.0]), cr.tensor([1.0, 2.0]), 0.0))
    tt, mt = _error(lambda: torch.where(torch.tensor([1.0, 0.0]), torch.tensor([1.0, 2.0]), 0.0))
    assert tc is tt and mc == mt


def test_reflected_operators_and_dtypes() -> None:
    for f in (
        lambda m: 7 // m.tensor([2, -3]),
        lambda m: 7.5 // m.tensor([2, -3]),
        lambda m: 7 % m.tensor([2, -3]),
        lambda m: -7.5 % m.tensor([2.0, -3.0]),
        lambda m: m.tensor([2, -3], dtype=m.int32) // 2,
        lambda m: m.tensor([2, -3], dtype=m.int32) % 2.5,
        lambda m: m.tensor(5, dtype=m.int32) // m.tensor([2, 3], dtype=m.uint8),
    ):
        c, t = _both(f)
        assert c.dtype.name == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(c.numpy(), t.numpy())


@pytest.mark.parametrize(
    "f",
    [
        lambda m, b: b - b,
        lambda m, b: -b,
        lambda m, b: b - 1,
        lambda m, b: 1 - b,
        lambda m, b: m.sub(b, m.tensor([1.0])),
    ],
)
def test_bool_subtraction_and_negation_raise(f: Callable[..., Any]) -> None:
    tc, mc = _error(lambda: f(cr, cr.tensor([True, False])))
    tt, mt = _error(lambda: f(torch, torch.tensor([True, False])))
    assert tc is tt and mc == mt


def _bits(t: Any) -> np.ndarray:
    a = np.ascontiguousarray(t.detach().numpy())
    return a.view(np.uint8)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_where_and_leaky_relu_match_torch_bit_for_bit(dtype: str) -> None:
    """Above 4096 elements where() selects on the bits (binary.select): the same values as
    torch, NaNs, infinities and signed zeros included, with broadcasting and number operands;
    leaky_relu's forward (maximum for slopes in [0, 1]) and its VJP (through where) too."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((70, 80)).astype(dtype)
    b = rng.standard_normal((70, 80)).astype(dtype)
    a[0, :6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -0.0]
    b[0, :6] = [-0.0, np.nan, -0.0, -np.inf, 1.0, 0.0]
    cases = [
        lambda m, x, y: m.where(x > 0, x, y),
        lambda m, x, y: m.where(x > 0, x, 0.0),
        lambda m, x, y: m.where(y < 0.5, -2.5, y),
        lambda m, x, y: m.where(x[:, :1] > 0, x, y),
        lambda m, x, y: m.where(x > 0, x[:1], y[:, :1]),
        lambda m, x, y: m.where(m.ones(3, 1, 1, dtype=m.bool) & (x > 0), x, y),
    ]
    for f in cases:
        r = [f(m, m.tensor(a), m.tensor(b)) for m in (cr, torch)]
        assert r[0].shape == tuple(r[1].shape)
        assert (_bits(r[0]) == _bits(r[1])).all()
    for slope in (0.0, 0.2, 1.0, 1.5, -0.1):
        out, grads = [], []
        for m in (cr, torch):
            x = m.tensor(a, requires_grad=True)
            y = m.nn.functional.leaky_relu(x, slope)
            (y * m.tensor(b).nan_to_num()).sum().backward()
            out.append(y)
            grads.append(x.grad)
        assert (_bits(out[0]) == _bits(out[1])).all()
        np.testing.assert_array_equal(grads[0].numpy(), grads[1].numpy())
