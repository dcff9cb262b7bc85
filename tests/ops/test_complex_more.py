"""Complex input against PyTorch 2.13 (issue #15): the activations PyTorch refuses are refused
with its exception type and message, silu computes (and refuses to record a graph out of
place, as PyTorch); see docs/complex.md."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import chainrule as cr


def _z(L: Any, dtype: str) -> Any:
    return L.tensor([1 + 2j, -0.5 - 1j, 0.3 + 0.1j, 2 - 3j], dtype=getattr(L, dtype))


def _F(L: Any) -> Any:
    return L.nn.functional


_REFUSED: dict[str, Callable[[Any, Any], Any]] = {
    "hardtanh": lambda L, z: _F(L).hardtanh(z),
    "hardtanh_": lambda L, z: _F(L).hardtanh_(z),
    "relu6": lambda L, z: _F(L).relu6(z),
    "ReLU6": lambda L, z: L.nn.ReLU6()(z),
    "leaky_relu": lambda L, z: _F(L).leaky_relu(z),
    "leaky_relu_": lambda L, z: _F(L).leaky_relu_(z),
    "rrelu_eval": lambda L, z: _F(L).rrelu(z),
    "rrelu_": lambda L, z: _F(L).rrelu_(z),
    "logsigmoid": lambda L, z: _F(L).logsigmoid(z),
    "LogSigmoid": lambda L, z: L.nn.LogSigmoid()(z),
    "glu": lambda L, z: _F(L).glu(z),
    "GLU": lambda L, z: L.nn.GLU()(z),
    "hardshrink": lambda L, z: _F(L).hardshrink(z),
    "torch.hardshrink": lambda L, z: L.hardshrink(z),
    "Tensor.hardshrink": lambda L, z: z.hardshrink(),
    "softshrink": lambda L, z: _F(L).softshrink(z),
    "Softshrink": lambda L, z: L.nn.Softshrink()(z),
    "threshold": lambda L, z: _F(L).threshold(z, 0.1, 0.0),
    "threshold_": lambda L, z: _F(L).threshold_(z, 0.1, 0.0),
    "threshold_inplace": lambda L, z: _F(L).threshold(z, 0.1, 0.0, inplace=True),
    "torch.threshold": lambda L, z: L.threshold(z, 0.1, 0.0),
    "Threshold": lambda L, z: L.nn.Threshold(0.1, 0.0)(z),
    "prelu_same_dtype": lambda L, z: _F(L).prelu(z, L.tensor([0.25 + 0j], dtype=z.dtype)),
    "prelu_real_weight": lambda L, z: _F(L).prelu(z, L.tensor([0.25])),
    "prelu_real_input": lambda L, z: _F(L).prelu(z.real.contiguous(), L.tensor([0.25 + 0j])),
    "PReLU": lambda L, z: L.nn.PReLU()(z),
    "Tensor.prelu": lambda L, z: z.prelu(L.tensor([0.25 + 0j], dtype=z.dtype)),
    "gumbel_softmax": lambda L, z: _F(L).gumbel_softmax(z),
    # already refused before; kept here so that the whole list of activations is checked
    "relu": lambda L, z: _F(L).relu(z),
    "elu": lambda L, z: _F(L).elu(z),
    "selu": lambda L, z: _F(L).selu(z),
    "celu": lambda L, z: _F(L).celu(z),
    "gelu": lambda L, z: _F(L).gelu(z),
    "mish": lambda L, z: _F(L).mish(z),
    "softplus": lambda L, z: _F(L).softplus(z),
    "hardswish": lambda L, z: _F(L).hardswish(z),
    "hardsigmoid": lambda L, z: _F(L).hardsigmoid(z),
    "softmax": lambda L, z: _F(L).softmax(z, 0),
    "log_softmax": lambda L, z: _F(L).log_softmax(z, 0),
    "softmin": lambda L, z: _F(L).softmin(z, 0),
}


def _error(fn: Callable[[], Any]) -> tuple[type[BaseException], str]:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e), str(e)
    raise AssertionError("no error")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(_REFUSED))
def test_activation_refuses_complex_as_torch(name: str, dtype: str) -> None:
    fn = _REFUSED[name]
    want_t, want = _error(lambda: fn(torch, _z(torch, dtype)))
    got_t, got = _error(lambda: fn(cr, _z(cr, dtype)))
    assert got_t is want_t and got == want


_COMPUTED: dict[str, Callable[[Any, Any], Any]] = {
    "silu": lambda L, z: _F(L).silu(z),
    "silu_inplace": lambda L, z: _F(L).silu(z, inplace=True),
    "SiLU": lambda L, z: L.nn.SiLU()(z),
    "tanhshrink": lambda L, z: _F(L).tanhshrink(z),
    "softsign": lambda L, z: _F(L).softsign(z),
    "sigmoid": lambda L, z: _F(L).sigmoid(z),
    "tanh": lambda L, z: _F(L).tanh(z),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(_COMPUTED))
def test_activation_computes_complex_as_torch(name: str, dtype: str) -> None:
    want = _COMPUTED[name](torch, _z(torch, dtype)).numpy()
    got = _COMPUTED[name](cr, _z(cr, dtype)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "complex64" else 1e-13)


def test_silu_complex_refuses_a_graph_out_of_place() -> None:
    msg = "silu does not support automatic differentiation for outputs with complex dtype."
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.silu(_z(torch, "complex64").requires_grad_())
    assert str(want.value) == msg
    with pytest.raises(RuntimeError, match="^silu does not support automatic differentiation"):
        cr.nn.functional.silu(_z(cr, "complex64").requires_grad_())
    with cr.no_grad():  # no graph: computed
        out = cr.nn.functional.silu(_z(cr, "complex64").requires_grad_())
    assert out.dtype == cr.complex64


def test_silu_complex_inplace_gradient_as_torch() -> None:
    # PyTorch records the in-place form, with its real VJP g s (1 + x (1 - s)) unconjugated
    def grad(L: Any) -> np.ndarray:
        w = _z(L, "complex128").requires_grad_()
        y = _F(L).silu(w * 1, inplace=True)
        y.abs().sum().backward()
        return w.grad.numpy()

    np.testing.assert_allclose(grad(cr), grad(torch), rtol=1e-12)


# logcumsumexp ---------------------------------------------------------------------------------

_INF, _NAN = float("inf"), float("nan")
_LCSE_CASES = [
    [1 + 2j, -0.5 - 1j, 0.3 + 0.1j, 2 - 3j],
    [1 + 5j, complex(-_INF, 3), 1 + 5j, 1 - 5j],  # imaginary parts past pi, as PyTorch's scan
    [complex(-_INF, 3), 1 + 5j, 2 + 7j, complex(_INF, 1), 1j],
    [1 + 5j, complex(_NAN, 3), 1 + 5j],
    [1 + 5j, complex(_INF, 3), complex(_INF, -3), 1 + 5j],
    [1 + 1j, 1 + 2j, 1 + 3j],  # ties of real parts
    [100 + 1j, 200 - 2j, -300 + 1j, 1000 + 4j],  # exp would overflow
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("case", range(len(_LCSE_CASES)))
def test_logcumsumexp_complex_values_as_torch(case: int, dtype: str) -> None:
    want = torch.logcumsumexp(torch.tensor(_LCSE_CASES[case], dtype=getattr(torch, dtype)), 0)
    got = cr.logcumsumexp(cr.tensor(_LCSE_CASES[case], dtype=getattr(cr, dtype)), 0)
    assert got.dtype == getattr(cr, dtype)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=0)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_logcumsumexp_complex_gradient_as_torch(dim: int) -> None:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((3, 5, 4)) + 1j * rng.standard_normal((3, 5, 4))) * 3
    w = rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)
    res = []
    for L in (torch, cr):
        z = L.tensor(x, requires_grad=True)
        y = L.logcumsumexp(z, dim)
        assert type(y.grad_fn).__name__ == "LogcumsumexpBackward0"
        (g1,) = L.autograd.grad((y * L.tensor(w)).real.sum(), z, retain_graph=True)
        (g2,) = L.autograd.grad(y.abs().sum(), z)
        res.append([y.detach().numpy(), g1.resolve_conj().numpy(), g2.resolve_conj().numpy()])
    for want, got in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_logcumsumexp_complex_gradcheck() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 2)) + 1j * rng.standard_normal((2, 3, 2))
    z = cr.tensor(x, requires_grad=True)
    assert cr.autograd.gradcheck(lambda t: cr.logcumsumexp(t, 1), (z,))
    assert cr.autograd.gradgradcheck(lambda t: cr.logcumsumexp(t, 1), (z,))


def test_logcumsumexp_complex_scalar_and_empty() -> None:
    assert cr.logcumsumexp(cr.tensor(1 + 2j), 0).item() == 1 + 2j
    assert cr.logcumsumexp(cr.zeros(0, 3, dtype=cr.complex64), 0).shape == (0, 3)


# median / nanmedian of an empty complex tensor -------------------------------------------------


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    return "ok", repr(r.tolist()) + str(r.dtype).split(".")[-1]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "shape,dim",
    [((0,), None), ((0, 3), None), ((0, 3), 0), ((0, 3), 1), ((3, 0), 0), ((3, 0), -1),
     ((0,), 0), ((), None), ((2,), None), ((2, 2), 0)],
)  # fmt: skip
@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_of_complex_as_torch(
    name: str, shape: tuple[int, ...], dim: Any, dtype: str
) -> None:
    def call(L: Any) -> Callable[[], Any]:
        x = L.zeros(shape, dtype=getattr(L, dtype))
        return lambda: getattr(L, name)(x) if dim is None else getattr(L, name)(x, dim)

    want, got = _outcome(call(torch)), _outcome(call(cr))
    assert got == want


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_of_empty_complex_refuses_a_graph(name: str) -> None:
    errs = []
    for L in (torch, cr):
        x = L.zeros(0, dtype=L.complex64, requires_grad=True)
        errs.append(_outcome(lambda: getattr(x, name)()))
        with L.no_grad():
            errs.append(_outcome(lambda: getattr(x, name)()))
    assert errs[2:] == errs[:2]
    assert errs[0][0] == "RuntimeError" and errs[1][0] == "ok"


def test_nanmedian_empty_dim_message_names_median() -> None:
    for L in (torch, cr):
        with pytest.raises(IndexError, match=r"^median\(\): Expected reduction dim 0 to have"):
            L.zeros(0, 3).nanmedian(0)


# complex LU and QR: values and gradients against PyTorch ----------------------------------------


def _cm(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


_RNG = np.random.default_rng(0)
_A = _cm(_RNG, 2, 4, 4)
_B = _cm(_RNG, 2, 4, 3)
_W = _cm(_RNG, 2, 4, 4)
_W3 = _cm(_RNG, 2, 4, 3)

_LU_LOSSES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "lu_factor": lambda L, a, b: (L.linalg.lu_factor(a).LU * L.tensor(_W)).real.sum(),
    "lu_factor_abs": lambda L, a, b: L.linalg.lu_factor(a).LU.abs().sum(),
    "lu_factor_ex": lambda L, a, b: L.linalg.lu_factor_ex(a).LU.imag.sum(),
    "lu": lambda L, a, b: sum((t * L.tensor(_W)).real.sum() for t in L.linalg.lu(a)[1:]),
    "lu_solve": lambda L, a, b: (
        L.linalg.lu_solve(*L.linalg.lu_factor(a), b) * L.tensor(_W3)
    ).real.sum(),
    "lu_solve_adjoint": lambda L, a, b: (
        L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True).abs().sum()
    ),
    "lu_solve_right": lambda L, a, b: (
        L.linalg.lu_solve(*L.linalg.lu_factor(a), b.mT, left=False).abs().sum()
    ),
    "det_from_lu": lambda L, a, b: (
        L.linalg.lu_factor(a).LU.diagonal(dim1=-2, dim2=-1).prod(-1).abs().sum()
    ),
}


@pytest.mark.parametrize("name", sorted(_LU_LOSSES))
def test_complex_lu_gradient_as_torch(name: str) -> None:
    res = []
    for L in (torch, cr):
        a = L.tensor(_A, requires_grad=True)
        b = L.tensor(_B, requires_grad=True)
        y = _LU_LOSSES[name](L, a, b)
        grads = L.autograd.grad(y, (a, b), allow_unused=True)
        res.append([y.item()] + [None if g is None else g.resolve_conj().numpy() for g in grads])
    assert res[1][0] == pytest.approx(res[0][0], rel=1e-12)
    for want, got in zip(res[0][1:], res[1][1:]):
        assert (want is None) == (got is None)
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_complex_lu_factor_values_and_gradcheck() -> None:
    lu_t, piv_t = torch.linalg.lu_factor(torch.tensor(_A))
    lu_c, piv_c = cr.linalg.lu_factor(cr.tensor(_A))
    np.testing.assert_allclose(lu_c.numpy(), lu_t.numpy(), rtol=1e-12, atol=1e-14)
    assert piv_c.tolist() == piv_t.tolist()
    a = cr.tensor(_A[0, :3, :3].copy(), requires_grad=True)
    assert cr.autograd.gradcheck(lambda t: cr.linalg.lu_factor(t).LU, (a,))
    assert cr.autograd.gradgradcheck(lambda t: cr.linalg.lu_factor(t).LU, (a,))


_QR_SHAPES = [(4, 3), (3, 3), (3, 5), (2, 4, 3), (2, 3, 5)]


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", _QR_SHAPES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_qr_values_as_torch(shape: tuple[int, ...], mode: str, dtype: str) -> None:
    a = _cm(np.random.default_rng(3), *shape)
    qt, rt = torch.linalg.qr(torch.tensor(a, dtype=getattr(torch, dtype)), mode=mode)
    qc, rc = cr.linalg.qr(cr.tensor(a, dtype=getattr(cr, dtype)), mode=mode)
    tol = 1e-5 if dtype == "complex64" else 1e-12
    for got, want in ((qc, qt), (rc, rt)):
        assert tuple(got.shape) == tuple(want.shape) and got.dtype == getattr(cr, dtype)
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=tol)


@pytest.mark.parametrize("mode", ["reduced", "complete"])
@pytest.mark.parametrize("shape", _QR_SHAPES)
def test_complex_qr_gradient_as_torch(shape: tuple[int, ...], mode: str) -> None:
    if mode == "complete" and shape[-2] > shape[-1]:
        pytest.skip("not differentiable (PyTorch raises, tested with real input)")
    a0 = _cm(np.random.default_rng(4), *shape)
    res = []
    for L in (torch, cr):
        a = L.tensor(a0, requires_grad=True)
        q, r = L.linalg.qr(a, mode=mode)
        wq = _cm(np.random.default_rng(5), *q.shape)
        wr = _cm(np.random.default_rng(6), *r.shape)
        # LAPACK's R has a real diagonal, which makes Q and R unique: any loss is well defined
        y = (q * L.tensor(wq)).real.sum() + (r * L.tensor(wr)).real.sum() + q.abs().sum()
        (g,) = L.autograd.grad(y, a)
        res.append(g.resolve_conj().numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_complex_qr_gradcheck(shape: tuple[int, ...]) -> None:
    a = cr.tensor(_cm(np.random.default_rng(7), *shape), requires_grad=True)
    assert cr.autograd.gradcheck(lambda t: cr.linalg.qr(t), (a,))
    assert cr.autograd.gradgradcheck(lambda t: cr.linalg.qr(t), (a,))


# a Python complex as the only complex operand -------------------------------------------------

_SCALAR_CALLS: dict[str, Callable[[Any], Any]] = {
    "div_floor": lambda L: L.div(L.tensor([1.0, 2.0], dtype=L.float64), 1j, rounding_mode="floor"),
    "div_trunc": lambda L: L.div(L.tensor([1.0, 2.0]), 1j, rounding_mode="trunc"),
    "div_floor_complex": lambda L: L.div(L.tensor([1 + 1j]), 2, rounding_mode="floor"),
    "fmod": lambda L: L.fmod(L.tensor([1.0, 2.0], dtype=L.float64), 1j),
    "mod": lambda L: L.tensor([1.0, 2.0]) % 1j,
    "floordiv": lambda L: L.tensor([1.0, 2.0]) // 1j,
    "xlogy": lambda L: L.xlogy(1j, L.tensor([1.0, 2.0])),
    "xlog1py": lambda L: L.special.xlog1py(L.tensor([1.0, 2.0]), 1j),
    "copysign": lambda L: L.tensor([1.0, 2.0]).copysign(1j),
}


@pytest.mark.parametrize("name", sorted(_SCALAR_CALLS))
def test_complex_scalar_refused_as_torch(name: str) -> None:
    want = _error(lambda: _SCALAR_CALLS[name](torch))
    got = _error(lambda: _SCALAR_CALLS[name](cr))
    assert got == want
