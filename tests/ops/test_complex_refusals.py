"""Ops PyTorch refuses on complex input (chainrule/ops/_complex_refusals.py): the same
exception type and message for complex64 and complex128, where NumPy/SciPy would compute."""

from __future__ import annotations

import warnings

import pytest
import torch

import chainrule as cr
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
}


def test_every_refusal_has_a_call() -> None:
    assert set(_CALLS) == set(_REFUSALS)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(_CALLS))
def test_complex_refused_as_torch(name: str, dtype: str) -> None:
    errs = []
    for L in (cr, torch):
        x = L.tensor([1 + 1j, 0.5 - 0.25j], dtype=getattr(L, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as e:
                _CALLS[name](L, x)
        errs.append((type(e.value).__name__, str(e.value).split("\n")[0]))
    assert errs[0] == errs[1]


def test_real_inputs_still_computed() -> None:
    x = cr.tensor([1.5, -0.25])
    assert cr.floor(x).tolist() == [1.0, -1.0]
    assert cr.sort(x).values.tolist() == [-0.25, 1.5]
    assert abs(cr.erf(x)[0].item() - 0.9661051464753108) < 1e-6
