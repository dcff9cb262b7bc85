"""chainrule.fft against torch.fft: values, dtypes, gradients, node names and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
X = RNG.standard_normal((4, 6))
Z = X + 1j * RNG.standard_normal((4, 6))

CASES = [
    ("fft", Z, {}),
    ("fft", X, {"n": 8}),
    ("fft", Z, {"n": 3, "dim": 0, "norm": "ortho"}),
    ("ifft", Z, {"norm": "forward"}),
    ("ifft", X, {"n": 9}),
    ("rfft", X, {}),
    ("rfft", X, {"n": 5, "norm": "ortho"}),
    ("irfft", Z, {}),
    ("irfft", Z, {"n": 7, "norm": "forward"}),
    ("irfft", Z, {"n": 4, "dim": 0}),
    ("irfft", X, {}),
    ("hfft", Z, {}),
    ("hfft", Z, {"n": 5, "norm": "ortho"}),
    ("ihfft", X, {}),
    ("ihfft", X, {"norm": "forward", "n": 4}),
    ("fft2", Z, {}),
    ("fft2", X, {"norm": "ortho"}),
    ("ifft2", Z, {"s": (3, 8)}),
    ("rfft2", X, {}),
    ("irfft2", Z, {}),
    ("irfft2", Z, {"s": (4, 5)}),
    ("hfft2", Z, {}),
    ("ihfft2", X, {}),
    ("fftn", Z, {"dim": (0,)}),
    ("fftn", Z, {}),
    ("ifftn", Z, {"s": (5,)}),
    ("ifftn", Z, {"s": (-1, 3)}),
    ("rfftn", X, {"s": (3, 4), "norm": "ortho"}),
    ("irfftn", Z, {"dim": 0}),
    ("hfftn", Z, {"s": (2, 6)}),
    ("ihfftn", X, {"dim": (1, 0)}),
    ("fftshift", Z, {}),
    ("ifftshift", X, {"dim": 1}),
    ("fftshift", X, {"dim": (0,)}),
    ("ifftshift", X, {"dim": -1}),
]


def _np(t: Any) -> np.ndarray:
    if hasattr(t, "_data"):
        return np.asarray(t._data)
    return t.detach().resolve_conj().numpy()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,value,kw", CASES, ids=[f"{n}-{k}" for n, _, k in CASES])
def test_values_and_gradients_match_torch(name: str, value: Any, kw: Any, dtype: str) -> None:
    if value.dtype.kind == "c":
        v = value.astype(np.complex64 if dtype == "float32" else np.complex128)
    else:
        v = value.astype(dtype)
    ct = cr.tensor(v, requires_grad=True)
    tt = torch.tensor(v, requires_grad=True)
    co = getattr(cr.fft, name)(ct, **kw)
    to = getattr(torch.fft, name)(tt, **kw)
    assert co.dtype.name == str(to.dtype).split(".")[-1]
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    np.testing.assert_allclose(_np(co), _np(to), **tol)
    assert co.grad_fn.name() == to.grad_fn.name() or name in ("ihfft2", "ihfftn")
    g = RNG.standard_normal(tuple(to.shape))
    if to.is_complex():
        g = g + 1j * RNG.standard_normal(tuple(to.shape))
    g = g.astype(_np(co).dtype)
    (cg,) = cr.autograd.grad(co, ct, cr.tensor(g))
    (tg,) = torch.autograd.grad(to, tt, torch.tensor(g))
    np.testing.assert_allclose(_np(cg), _np(tg), **tol)


@pytest.mark.parametrize(
    "f",
    [
        lambda m, x: m.fft.fft(x, n=5, norm="ortho"),
        lambda m, x: m.fft.irfft(x, n=6),
        lambda m, x: m.fft.hfft(x, n=5, norm="forward"),
        lambda m, x: m.fft.ifft2(x, s=(2, 5)),
        lambda m, x: m.fft.irfftn(x, s=(3, 5), norm="ortho"),
    ],
)
def test_gradcheck_complex_input(f: Any) -> None:
    z = cr.tensor(Z[:3, :4], requires_grad=True)
    assert gradcheck(lambda x: f(cr, x), (z,))


@pytest.mark.parametrize(
    "f",
    [
        lambda m, x: m.fft.rfft(x, n=7),
        lambda m, x: m.fft.ihfft(x, norm="ortho"),
        lambda m, x: m.fft.fft(x),
        lambda m, x: m.fft.rfft2(x, s=(5, 3), norm="forward"),
        lambda m, x: m.fft.ihfftn(x, dim=(0, 1)),
    ],
)
def test_gradcheck_real_input(f: Any) -> None:
    x = cr.tensor(X[:3, :4], requires_grad=True)
    assert gradcheck(lambda t: f(cr, t), (x,))


def test_round_trips_and_integer_inputs() -> None:
    x = cr.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_allclose(_np(cr.fft.irfft(cr.fft.rfft(x), n=5)), _np(x), atol=1e-6)
    np.testing.assert_allclose(_np(cr.fft.ifft(cr.fft.fft(x)).real), _np(x), atol=1e-6)
    for name in ("fft", "rfft", "ihfft"):
        c = getattr(cr.fft, name)(cr.arange(6))
        t = getattr(torch.fft, name)(torch.arange(6))
        assert c.dtype.name == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(_np(c), _np(t), atol=1e-5)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.fft.fft(m.ones(4), norm="bad"),
        lambda m: m.fft.fft(m.ones(4), n=0),
        lambda m: m.fft.irfft(m.ones(1, dtype=m.complex64)),
        lambda m: m.fft.rfft(m.ones(4, dtype=m.complex64)),
        lambda m: m.fft.ihfft(m.ones(4, dtype=m.complex64)),
        lambda m: m.fft.fftn(m.ones(4, 4), s=(2,), dim=(0, 1)),
        lambda m: m.fft.fftn(m.ones(4, 4), dim=(0, 0)),
        lambda m: m.fft.fft(m.ones(4), dim=2),
        lambda m: m.fft.fftn(m.ones(4), s=(2, 2)),
    ],
)
def test_errors_match_torch(call: Any) -> None:
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(Exception) as ce:
        call(cr)
    assert type(ce.value) is type(te.value)
    first = str(te.value).splitlines()[0]
    assert first.split(" (")[0] in str(ce.value) or str(ce.value) in first


def test_frequencies_match_torch() -> None:
    for n, d in ((5, 1.0), (8, 0.25), (1, 2.0)):
        for name in ("fftfreq", "rfftfreq"):
            c = getattr(cr.fft, name)(n, d)
            t = getattr(torch.fft, name)(n, d)
            assert c.dtype is cr.float32
            np.testing.assert_allclose(_np(c), _np(t), rtol=1e-6)
    c = cr.fft.fftfreq(4, dtype=cr.float64, requires_grad=True)
    assert c.dtype is cr.float64 and c.requires_grad


def test_out_argument() -> None:
    out = cr.empty(3, dtype=cr.complex64)
    res = cr.fft.rfft(cr.tensor([1.0, 2.0, 3.0, 4.0]), out=out)
    assert res is out
    np.testing.assert_allclose(_np(out), np.fft.rfft([1.0, 2.0, 3.0, 4.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        cr.fft.fft(cr.ones(2, requires_grad=True), out=cr.empty(2, dtype=cr.complex64))


def test_double_backward_matches_torch() -> None:
    vals = []
    for m in (cr, torch):
        x = m.tensor(X[:2, :4], requires_grad=True)
        y = (m.fft.rfft(x * x).abs() ** 2).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        vals.append((_np(g), _np(gg)))
    np.testing.assert_allclose(vals[0][0], vals[1][0], rtol=1e-9)
    np.testing.assert_allclose(vals[0][1], vals[1][1], rtol=1e-9)
