"""Ops PyTorch refuses on complex input (chainrule/ops/_complex_refusals.py): the same
exception type and message for complex64 and complex128, where NumPy/SciPy would compute."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.ops._complex_guard import PUBLIC_REFUSALS
from chainrule.ops._complex_refusals import _REFUSALS

_CALLS = {
    "erf": lambda L, x: L.erf(x),
    "erfc": lambda L, x: L.erfc(x),
    "erfinv": lambda L, x: L.erfinv(x),
    "lgamma": lambda L, x: L.lgamma(x),
    "digamma": lambda L, x: L.digamma(x),
    "polygamma": lambda L, x: L.polygamma(2, x),
    "i0": lambda L, x: L.i0(x),
    "i0e": lambda L, x: L.special.i0e(x),
    "i1": lambda L, x: L.special.i1(x),
    "i1e": lambda L, x: L.special.i1e(x),
    "erfcx": lambda L, x: L.special.erfcx(x),
    "ndtri": lambda L, x: L.special.ndtri(x),
    "log_ndtr": lambda L, x: L.special.log_ndtr(x),
    "frac": lambda L, x: L.frac(x),
    "trunc": lambda L, x: L.trunc(x),
    "floor": lambda L, x: L.floor(x),
    "ceil": lambda L, x: L.ceil(x),
    "round": lambda L, x: L.round(x),
    "entr": lambda L, x: L.special.entr(x),
    "xlog1py": lambda L, x: L.special.xlog1py(x, x),
    "xlogy": lambda L, x: L.xlogy(x, x),
    "igamma": lambda L, x: L.igamma(x, x),
    "igammac": lambda L, x: L.igammac(x, x),
    "nextafter": lambda L, x: L.nextafter(x, x),
    "fmod": lambda L, x: L.fmod(x, x),
    "remainder": lambda L, x: L.remainder(x, x),
    "atan2": lambda L, x: L.atan2(x, x),
    "fmax": lambda L, x: L.fmax(x, x),
    "fmin": lambda L, x: L.fmin(x, x),
    "maximum": lambda L, x: L.maximum(x, x),
    "minimum": lambda L, x: L.minimum(x, x),
    "amax": lambda L, x: L.amax(x),
    "amin": lambda L, x: L.amin(x),
    "argmax": lambda L, x: L.argmax(x),
    "argmin": lambda L, x: L.argmin(x),
    "sort": lambda L, x: L.sort(x),
    "topk": lambda L, x: L.topk(x, 1),
    "kthvalue": lambda L, x: L.kthvalue(x, 1),
    "cummax": lambda L, x: L.cummax(x, 0),
    "cummin": lambda L, x: L.cummin(x, 0),
    "clamp": lambda L, x: L.clamp(x, min=0.5),
    "clamp_tensor": lambda L, x: L.clamp(x, min=x, max=x),
    "clamp_min": lambda L, x: L.clamp_min(x, 0.5),
    "clamp_max": lambda L, x: L.clamp_max(x, 0.5),
    "relu": lambda L, x: L.relu(x),
    "gcd": lambda L, x: L.gcd(x, x),
    "lcm": lambda L, x: L.lcm(x, x),
    "max_dim": lambda L, x: L.max(x, 0),
    "min_dim": lambda L, x: L.min(x, 0),
    "max": lambda L, x: L.max(x),
    "min": lambda L, x: L.min(x),
    "mode": lambda L, x: L.mode(x),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x),
    "logsigmoid": lambda L, x: L.nn.functional.logsigmoid(x),
}

# Public functions refused at their definition (chainrule/ops/_complex_guard.py).
_PUBLIC_CALLS = {
    "logit": lambda L, x: L.logit(x),
    "ndtr": lambda L, x: L.special.ndtr(x),
    "mvlgamma": lambda L, x: L.mvlgamma(x, 1),
    "copysign": lambda L, x: L.copysign(x, x),
    "hypot": lambda L, x: L.hypot(x, x),
    "logaddexp2": lambda L, x: L.logaddexp2(x, x),
    "heaviside": lambda L, x: L.heaviside(x, x),
    "floor_divide": lambda L, x: L.floor_divide(x, x),
    "signbit": lambda L, x: L.signbit(x),
    "isposinf": lambda L, x: L.isposinf(x),
    "isneginf": lambda L, x: L.isneginf(x),
    "median": lambda L, x: L.median(x),
    "nanmedian": lambda L, x: L.nanmedian(x),
    "histc": lambda L, x: L.histc(x),
    "bincount": lambda L, x: L.bincount(x),
    "searchsorted": lambda L, x: L.searchsorted(x, x),
    "bucketize": lambda L, x: L.bucketize(x, x),
    "isin": lambda L, x: L.isin(x, x),
    "aminmax": lambda L, x: L.aminmax(x),
    "nansum": lambda L, x: L.nansum(x),
    "nanmean": lambda L, x: L.nanmean(x),
    "unique": lambda L, x: L.unique(x),
    "unique_consecutive": lambda L, x: L.unique_consecutive(x),
    "glu": lambda L, x: L.nn.functional.glu(x),
    "hardshrink": lambda L, x: L.nn.functional.hardshrink(x),
    "softshrink": lambda L, x: L.nn.functional.softshrink(x),
    "threshold": lambda L, x: L.nn.functional.threshold(x, 0.1, 0.0),
    "prelu": lambda L, x: L.nn.functional.prelu(x, L.tensor([0.25 + 0j], dtype=x.dtype)),
    "gumbel_softmax": lambda L, x: L.nn.functional.gumbel_softmax(x),
    "fmod": lambda L, x: L.fmod(x, 2.0),
    "remainder": lambda L, x: L.remainder(x, 2.0),
    "xlogy": lambda L, x: L.xlogy(x, 2.0),
    "xlog1py": lambda L, x: L.special.xlog1py(x, 2.0),
    "div_floor": lambda L, x: L.div(x, 2.0, rounding_mode="floor"),
    "div_trunc": lambda L, x: L.div(x, 2.0, rounding_mode="trunc"),
}

# Other spellings: aliases, Tensor methods, a complex second argument, params that change
# PyTorch's kernel name, and functions refused through the ops they are built from.
_MORE_CALLS = {
    "special.logit": lambda L, x: L.special.logit(x),
    "logit_eps": lambda L, x: L.logit(x, 1e-6),
    "Tensor.logit": lambda L, x: x.logit(),
    "Tensor.logit_": lambda L, x: x.clone().logit_(),
    "special.multigammaln": lambda L, x: L.special.multigammaln(x, 2),
    "Tensor.mvlgamma": lambda L, x: x.mvlgamma(1),
    "copysign_real_first": lambda L, x: L.copysign(x.real, x),
    "copysign_scalar": lambda L, x: L.copysign(x, 1.0),
    "Tensor.copysign_": lambda L, x: x.clone().copysign_(x),
    "hypot_real_first": lambda L, x: L.hypot(x.real, x),
    "Tensor.hypot": lambda L, x: x.hypot(x),
    "Tensor.hypot_": lambda L, x: x.clone().hypot_(x),
    "Tensor.logaddexp2": lambda L, x: x.logaddexp2(x),
    "heaviside_real_first": lambda L, x: L.heaviside(x.real, x),
    "Tensor.heaviside_": lambda L, x: x.clone().heaviside_(x),
    "floor_divide_scalar": lambda L, x: L.floor_divide(x, 2),
    "floordiv_operator": lambda L, x: x // x,
    "rfloordiv_operator": lambda L, x: 2 // x,
    "Tensor.floor_divide_": lambda L, x: x.clone().floor_divide_(x),
    "median_dim": lambda L, x: L.median(x, 0),
    "nanmedian_dim": lambda L, x: L.nanmedian(x, 0),
    "Tensor.median_dim": lambda L, x: x.median(dim=0),
    "Tensor.nanmedian": lambda L, x: x.nanmedian(),
    "histc_range": lambda L, x: L.histc(x, 10, 0, 1),
    "Tensor.histc": lambda L, x: x.histc(),
    "searchsorted_real_sequence": lambda L, x: L.searchsorted(x.real, x),
    "bucketize_scalar": lambda L, x: L.bucketize(1.0, x),
    "isin_real_elements": lambda L, x: L.isin(x.real, x),
    "isin_scalar_elements": lambda L, x: L.isin(1.0, x),
    "Tensor.aminmax": lambda L, x: x.aminmax(),
    "Tensor.nansum": lambda L, x: x.nansum(),
    "nansum_dim": lambda L, x: L.nansum(x, 0),
    "Tensor.max": lambda L, x: x.max(),
    "msort": lambda L, x: L.msort(x),
    "unique_dim": lambda L, x: L.unique(x, dim=0),
    "unique_dim_positional": lambda L, x: L.unique(x, True, False, False, 0),
    "unique_consecutive_dim": lambda L, x: L.unique_consecutive(x, dim=0),
    "unique_consecutive_dim_2d": lambda L, x: L.unique_consecutive(x[None], dim=0),
    "Tensor.unique_inverse": lambda L, x: x.unique(return_inverse=True),
    "softmax": lambda L, x: L.softmax(x, 0),
    "softmax_not_last": lambda L, x: L.softmax(x[None], 0),
    "log_softmax": lambda L, x: L.log_softmax(x, -1),
    "log_softmax_not_last": lambda L, x: L.nn.functional.log_softmax(x[None], 0),
    "special.softmax": lambda L, x: L.special.softmax(x, 0),
    "special.log_softmax": lambda L, x: L.special.log_softmax(x, 0),
    "Tensor.softmax": lambda L, x: x.softmax(-1),
    "nanquantile": lambda L, x: L.nanquantile(x, 0.5),
    "histogram": lambda L, x: L.histogram(x),
    "cdist": lambda L, x: L.cdist(x[:, None], x[:, None]),
    "cdist_second": lambda L, x: L.cdist(x.real[:, None], x[:, None]),
    "sign": lambda L, x: L.sign(x),
    "Tensor.sign_": lambda L, x: x.clone().sign_(),
    "polygamma0": lambda L, x: L.polygamma(0, x),
    "polygamma1": lambda L, x: L.special.polygamma(1, x),
    "polygamma3": lambda L, x: L.polygamma(3, x),
    "special.zeta": lambda L, x: L.special.zeta(x, x),
    "special.gammainc": lambda L, x: L.special.gammainc(x, x),
    "special.gammaincc": lambda L, x: L.special.gammaincc(x, x),
    "special.xlog1py_complex_other": lambda L, x: L.special.xlog1py(x.real, x),
    "special.xlogy_complex_other": lambda L, x: L.special.xlogy(x.real, x),
    "special.entr": lambda L, x: L.special.entr(x),
    **{
        f"special.{n}": (lambda n: lambda L, x: getattr(L.special, n)(x))(n)
        for n in (
            "airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 "
            "modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 "
            "scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0"
        ).split()
    },
    **{
        f"special.{n}": (lambda n: lambda L, x: getattr(L.special, n)(x, 2))(n)
        for n in (
            "chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v "
            "chebyshev_polynomial_w shifted_chebyshev_polynomial_t "
            "shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
            "shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he "
            "laguerre_polynomial_l legendre_polynomial_p"
        ).split()
    },
}


def test_every_refusal_has_a_call() -> None:
    assert set(_CALLS) == set(_REFUSALS)
    assert set(_PUBLIC_CALLS) == set(PUBLIC_REFUSALS)


_ALL_CALLS = {**_CALLS, **{f"public.{k}": v for k, v in _PUBLIC_CALLS.items()}, **_MORE_CALLS}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(_ALL_CALLS))
def test_complex_refused_as_torch(name: str, dtype: str) -> None:
    errs = []
    for L in (cr, torch):
        x = L.tensor([1 + 1j, 0.5 - 0.25j], dtype=getattr(L, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as e:
                _ALL_CALLS[name](L, x)
        errs.append((type(e.value).__name__, str(e.value).split("\n")[0]))
    assert errs[0] == errs[1]


def test_real_inputs_still_computed() -> None:
    x = cr.tensor([1.5, -0.25])
    assert cr.floor(x).tolist() == [1.0, -1.0]
    assert cr.sort(x).values.tolist() == [-0.25, 1.5]
    assert abs(cr.erf(x)[0].item() - 0.9661051464753108) < 1e-6


def test_real_inputs_of_guarded_functions_still_computed() -> None:
    x = cr.tensor([0.25, 0.5, 0.75], dtype=cr.float64)
    t = torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)
    for name, call in {
        **_PUBLIC_CALLS,
        "max": _CALLS["max"],
        "polygamma1": _MORE_CALLS["polygamma1"],
    }.items():
        if name in ("gumbel_softmax", "prelu"):  # random; a complex weight: tests/nn
            continue
        if name == "bincount":
            got, want = call(cr, (x * 4).long()), call(torch, (t * 4).long())
        elif name == "glu":  # (an even size)
            got, want = call(cr, x[1:]), call(torch, t[1:])
        else:
            got, want = call(cr, x), call(torch, t)
        for g, w in zip(
            got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)
        ):
            assert g.tolist() == pytest.approx(w.tolist(), nan_ok=True), name


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_logaddexp_computes_complex_as_torch(dtype: str) -> None:
    """PyTorch computes logaddexp on complex input (not refused): values and gradients."""
    inf = float("inf")
    a = [1 + 1j, -2 + 0.5j, 3 - 4j, 0j, complex(-inf, 0), complex(-inf, 0)]
    b = [0.5 - 1j, 2 + 3j, -1 + 0j, 0j, complex(-inf, 0), 2 + 1j]
    res = []
    for L in (cr, torch):
        x = L.tensor(a, dtype=getattr(L, dtype), requires_grad=True)
        y = L.tensor(b, dtype=getattr(L, dtype), requires_grad=True)
        r = L.logaddexp(x, y)
        # gradients at the finite entries (PyTorch's are NaN at the infinite ones)
        gx, gy = L.autograd.grad(r[:4].abs().sum(), (x, y))
        res.append(
            (r.detach().numpy(), gx[:4].resolve_conj().numpy(), gy[:4].resolve_conj().numpy())
        )
    for got, want in zip(*res):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    r = cr.logaddexp(cr.tensor([1.0, -2.0]), cr.tensor([1 + 2j, 3j]))
    w = torch.logaddexp(torch.tensor([1.0, -2.0]), torch.tensor([1 + 2j, 3j]))
    np.testing.assert_allclose(r.numpy(), w.numpy(), rtol=1e-6)
