"""Complex tensors against PyTorch: dtypes and promotion, creation, printing, the parts as
writable views, errors, and Wirtinger gradients on complex leaves (ops/complex_numbers.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _c(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _same(c: object, t: object) -> None:
    ca = np.asarray(c._data)  # type: ignore[attr-defined]
    ta = t.detach().resolve_conj().numpy()  # type: ignore[attr-defined]
    assert ca.dtype == ta.dtype, (ca.dtype, ta.dtype)
    np.testing.assert_allclose(ca, ta, rtol=1e-6, atol=1e-7)


def test_dtypes_and_names() -> None:
    assert cr.cfloat is cr.complex64 and cr.cdouble is cr.complex128
    for name in ("complex64", "complex128"):
        c, t = getattr(cr, name), getattr(torch, name)
        assert (c.is_complex, c.is_floating_point, c.itemsize) == (
            t.is_complex,
            t.is_floating_point,
            t.itemsize,
        )
    assert not cr.float32.is_complex


@pytest.mark.parametrize(
    "a,b",
    [
        ("complex64", "float64"),
        ("complex64", "float32"),
        ("complex128", "float32"),
        ("complex64", "int64"),
        ("complex64", "bool"),
        ("complex64", "complex128"),
        ("float16", "complex64"),
    ],
)
def test_promote_types(a: str, b: str) -> None:
    c = cr.promote_types(getattr(cr, a), getattr(cr, b))
    t = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert c.name == str(t).split(".")[-1]


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.ones(2) * 1j,
        lambda m: m.ones(2, dtype=m.float64) + 1j,
        lambda m: m.arange(3) * (1 + 1j),
        lambda m: m.ones(2) + m.tensor(1j, dtype=m.complex128),
        lambda m: m.ones(2, dtype=m.float64) * m.ones(2, dtype=m.complex64),
        lambda m: m.tensor([1 + 2j, 3]),
        lambda m: m.tensor([1.0, 2.0]).cdouble(),
        lambda m: m.tensor([1.0, 2.0], dtype=m.float64).cfloat() / 2,
        lambda m: m.zeros(2, 2, dtype=m.cfloat),
        lambda m: m.tensor(np.array([1 + 1j], dtype=np.complex128)),
    ],
)
def test_creation_and_promotion_match_torch(make: object) -> None:
    _same(make(cr), make(torch))  # type: ignore[operator]


def test_default_complex_follows_default_dtype() -> None:
    cr.set_default_dtype(cr.float64)
    torch.set_default_dtype(torch.float64)
    try:
        _same(cr.tensor([1j]), torch.tensor([1j]))
        _same(cr.ones(2) * 1j, torch.ones(2) * 1j)
    finally:
        cr.set_default_dtype(cr.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize(
    "values",
    [
        [1 + 2j, -3.5 - 0.25j],
        [[1e-5 + 3j, 100], [2, -1j]],
        [0j],
        [1 + 1j, 2 + 2j, 3 - 3j],
        [1.5 - 2.25j],
        np.arange(2000).astype(np.complex64) * (1 - 1j),
    ],
)
def test_repr_matches_torch(values: object) -> None:
    assert repr(cr.tensor(values)) == repr(torch.tensor(values))
    assert repr(cr.tensor(values, dtype=cr.complex128)) == repr(
        torch.tensor(values, dtype=torch.complex128)
    ).replace("torch.", "chainrule.")


def test_repr_scalar_and_grad_suffix() -> None:
    assert repr(cr.tensor(2.5 + 0j)) == repr(torch.tensor(2.5 + 0j))
    c = cr.tensor([1 + 1j], requires_grad=True)
    t = torch.tensor([1 + 1j], requires_grad=True)
    assert repr(c) == repr(t)
    assert repr(c * 2) == repr(t * 2).replace("MulBackward0", "MulBackward0")
    assert f"{cr.tensor(1j)}" == f"{torch.tensor(1j)}"


def test_real_imag_are_writable_views() -> None:
    for m in (cr, torch):
        x = m.tensor([1 + 2j, 3 - 4j])
        x.real[0] = 5.0
        x.imag.mul_(2)
        x.real = m.tensor([7.0, 8.0])
        assert x.tolist() == [7 + 4j, 8 - 8j]
    x = cr.tensor([1.0, 2.0])
    assert x.real is x


def test_view_as_real_shares_memory() -> None:
    x = cr.tensor([1 + 2j, 3 + 4j])
    v = cr.view_as_real(x)
    v[1, 1] = 9.0
    assert x.tolist() == [1 + 2j, 3 + 9j]
    back = cr.view_as_complex(v)
    back[0] = 0j
    assert x.tolist() == [0j, 3 + 9j]
    assert x._version == v._version == 2


def test_view_copies_do_not_share_memory() -> None:
    for m in (cr, torch):
        x = m.tensor([1 + 2j])
        r = m.view_as_real_copy(x)
        c = m.view_as_complex_copy(r)
        r[0, 0] = 9.0
        c[0] = 0j
        assert x.tolist() == [1 + 2j] and r.tolist() == [[9.0, 2.0]]


def test_write_through_real_view_in_graph() -> None:
    # Writing into x.real of a non-leaf rewrites its history, as PyTorch's CopySlices.
    a = _c(3)
    grads = []
    for m in (cr, torch):
        leaf = m.tensor(a, requires_grad=True)
        y = leaf * 2
        y.real[1] = leaf.real[0] ** 2
        (y.abs() ** 2).sum().backward()
        grads.append(leaf.grad)
    _same(*grads)


@pytest.mark.parametrize(
    "call,exc,msg",
    [
        (lambda m: m.tensor([1.0]).imag, RuntimeError, "imag is not implemented"),
        (lambda m: m.view_as_real(m.tensor([1.0])), RuntimeError, "view_as_real is only"),
        (lambda m: m.view_as_complex(m.ones(3)), RuntimeError, "last dimension of size 2"),
        (lambda m: m.view_as_complex(m.ones(2, 2).t()), RuntimeError, "stride 1"),
        (lambda m: m.view_as_complex(m.ones(2, 2, dtype=m.int64)), RuntimeError, "Long"),
        (lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)), RuntimeError, "scalar type"),
        (lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2)), RuntimeError, "Half, Float"),
        (lambda m: m.tensor([1j]).sign(), RuntimeError, "torch.sgn"),
        (lambda m: m.tensor([1j]) < 1, NotImplementedError, "not implemented for 'ComplexFloat'"),
        (lambda m: m.tensor([1.0]) >= m.tensor([1j]), NotImplementedError, '"ge_cpu"'),
        (lambda m: m.ones(2, dtype=m.int64).requires_grad_(), RuntimeError, "require gradients"),
    ],
)
def test_errors_match_torch(call: object, exc: type, msg: str | None) -> None:
    with pytest.raises(exc) as te:
        call(torch)  # type: ignore[operator]
    with pytest.raises(exc) as ce:
        call(cr)  # type: ignore[operator]
    if msg is not None:
        assert msg in str(te.value) and msg in str(ce.value)


def test_cast_to_real_warns_and_keeps_real_part() -> None:
    for m in (cr, torch):
        x = m.tensor([1 + 2j], requires_grad=True)
        with pytest.warns(UserWarning, match="discards the imaginary part"):
            y = x.to(m.float32)
        assert y.tolist() == [1.0]
        y.sum().backward()
        assert x.grad.tolist() == [1 + 0j]


def test_predicates_and_parts() -> None:
    a = _c(2, 3)
    for fn in (
        lambda m, x: m.isreal(x),
        lambda m, x: m.angle(x),
        lambda m, x: m.sgn(x),
        lambda m, x: x.conj_physical(),
        lambda m, x: x.abs(),
        lambda m, x: m.polar(x.abs(), x.angle()),
        lambda m, x: m.view_as_real(x),
        lambda m, x: x.adjoint(),
    ):
        _same(fn(cr, cr.tensor(a)), fn(torch, torch.tensor(a)))
    assert cr.tensor(a).is_complex() and not cr.tensor([1.0]).is_complex()
    assert not cr.tensor(a).conj().is_conj()
    x = cr.tensor([1 + 1j])
    x.conj_physical_()
    assert x.tolist() == [1 - 1j]


LOSSES = {
    "mul_abs": lambda m, a, b, r: (a * b).abs().sum(),
    "div_parts": lambda m, a, b, r: (a / b).real.sum() + 2 * (a / b).imag.sum(),
    "exp_log": lambda m, a, b, r: (m.exp(a).abs() + m.log(b).imag).sum(),
    "sqrt_recip": lambda m, a, b, r: m.view_as_real(m.sqrt(a) + b.reciprocal()).pow(2).sum(),
    "matmul": lambda m, a, b, r: (a @ b).abs().sum(),
    "pow": lambda m, a, b, r: ((a**3).abs() + (a**b).real + (a ** (2 + 1j)).imag).sum(),
    "angle": lambda m, a, b, r: (a.angle() * r).sum(),
    "real_times_complex": lambda m, a, b, r: ((a * r).abs() + (r + a).imag).sum(),
    "complex_polar": lambda m, a, b, r: (m.complex(r, 2 * r) * m.polar(r.abs(), r) * a).abs().sum(),
    "conj": lambda m, a, b, r: (a.conj() * b).real.sum(),
    "trig": lambda m, a, b, r: (m.sin(a) * m.cos(b) + m.tanh(a)).abs().sum(),
    "mean_sum": lambda m, a, b, r: (a.mean() * b.sum()).abs(),
    "sub_rsub": lambda m, a, b, r: ((a - b - 1j).abs() + (2j - a).real).sum(),
    "abs_sq": lambda m, a, b, r: (a.abs() ** 2).sum(),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_wirtinger_gradients_match_torch(name: str) -> None:
    f = LOSSES[name]
    vals = (_c(3, 3), _c(3, 3), RNG.standard_normal((3, 3)))
    ct = [cr.tensor(v, requires_grad=True) for v in vals]
    tt = [torch.tensor(v, requires_grad=True) for v in vals]
    lc, lt = f(cr, *ct), f(torch, *tt)
    _same(lc, lt)
    lc.backward()
    lt.backward()
    for c, t in zip(ct, tt):
        if t.grad is None:
            assert c.grad is None
        else:
            _same(c.grad, t.grad)


def test_abs_squared_gradient_is_2z() -> None:
    # PyTorch's convention: for L = |z|**2, grad = dL/dx + i dL/dy = 2z.
    z = cr.tensor([1 + 2j, -3 + 0.5j], dtype=cr.complex128, requires_grad=True)
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(z.grad._data, 2 * z._data)


def test_gradcheck_complex_inputs() -> None:
    a = cr.tensor(_c(2, 2), requires_grad=True)
    b = cr.tensor(_c(2, 2), requires_grad=True)
    assert gradcheck(lambda x, y: x * y + x.exp() / y, (a, b))
    assert gradcheck(lambda x, y: (x @ y).abs(), (a, b))
    assert gradcheck(lambda x, y: (x @ y.conj()).angle(), (a, b), fast_mode=True)
    assert gradgradcheck(lambda x, y: x * y.conj() + x.sqrt(), (a, b))


def test_gradcheck_catches_a_wrong_complex_vjp() -> None:
    # Without the conjugate (grad = g * b), the Jacobian of a * b is wrong, and gradcheck says so.
    class BadMul(cr.autograd.Function):
        @staticmethod
        def forward(ctx: object, a: object, b: object) -> object:
            ctx.save_for_backward(a, b)  # type: ignore[attr-defined]
            return a * b  # type: ignore[operator]

        @staticmethod
        def backward(ctx: object, g: object) -> object:
            a, b = ctx.saved_tensors  # type: ignore[attr-defined]
            return g * b, g * a  # type: ignore[operator]

    a = cr.tensor(_c(3), requires_grad=True)
    b = cr.tensor(_c(3), requires_grad=True)
    assert not gradcheck(BadMul.apply, (a, b), raise_exception=False)
    assert gradcheck(BadMul.apply, (a.real.detach().requires_grad_(), b.real.detach()))


def test_randn_complex_variance() -> None:
    z = cr.randn(20000, dtype=cr.cfloat, generator=cr.Generator().manual_seed(0))
    assert z.dtype is cr.complex64
    assert abs(float((z.abs() ** 2).mean()) - 1.0) < 0.05
    assert abs(float(z.real.var()) - 0.5) < 0.05
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cr.rand(3, dtype=cr.cdouble).dtype is cr.complex128


def test_make_tensor_complex() -> None:
    from chainrule.testing import assert_close, make_tensor

    t = make_tensor(2, 3, dtype=cr.cfloat, low=-1, high=1)
    assert t.dtype is cr.complex64
    d = np.asarray(t._data)
    assert np.all(np.abs(d.real) <= 1) and np.all(np.abs(d.imag) <= 1) and np.any(d.imag != 0)
    assert_close(t, t.clone())
    with pytest.raises(AssertionError):
        assert_close(t, t + 0.1j)


def test_save_and_load_complex(tmp_path: object) -> None:
    import pathlib

    p = pathlib.Path(str(tmp_path))
    t = cr.tensor([1 + 2j, 3 - 1j])
    cr.save({"a": t}, p / "c.pt")
    assert cr.load(p / "c.pt")["a"].tolist() == [1 + 2j, 3 - 1j]
    with pytest.raises(TypeError, match="no code for"):
        cr.save({"a": t.cdouble()}, p / "d.pt")
    for dt in (torch.cfloat, torch.cdouble):
        torch.save({"a": torch.tensor([1 + 2j], dtype=dt)}, p / "t.pt")
        got = cr.load(p / "t.pt")["a"]
        assert got.dtype.name == str(dt).split(".")[-1] and got.tolist() == [1 + 2j]
