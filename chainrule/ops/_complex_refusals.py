"""Ops that PyTorch refuses on complex input, refused here too with PyTorch's error.

NumPy and SciPy compute many of these on complex arrays (``np.floor`` raises a TypeError,
SciPy's ``erf`` and ``gammaln`` accept complex, others drop the imaginary part with a
warning), so without this table a complex input gave a number PyTorch never gives, or an
internal error. Each listed op's forward is wrapped once, at import, with a check of its
array operands' kind, which every general, out=, in-place and compiled call runs; the eager
fast paths (ops/_apply.py) call the unwrapped forward for real operands (``op.max_cat``), so
real input costs one comparison (relu on float32[16]: 2.25 -> 1.72-1.77 us per call, the
cost before the table was 1.94; load 2-3). Ops not listed pay nothing.
The messages are PyTorch 2.13's (``{t}``:
its name of the dtype, ``ComplexFloat`` or ``ComplexDouble``).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from chainrule.ops._opdef import REGISTRY

__all__: list[str] = []


def _polygamma_msg(n: int) -> str:
    kernel = {0: "digamma", 1: "trigamma"}.get(n, "polygamma")
    return f"\"{kernel}\" not implemented for '{{t}}'"


# A message may be a function of the op's params where PyTorch's kernel name depends on them.
_REFUSALS: dict[str, tuple[type[Exception], str | Callable[[dict[str, Any]], str]]] = {
    "erf": (NotImplementedError, "\"erf_vml_cpu\" not implemented for '{t}'"),
    "erfc": (NotImplementedError, "\"erfc_vml_cpu\" not implemented for '{t}'"),
    "erfinv": (NotImplementedError, "\"erfinv_vml_cpu\" not implemented for '{t}'"),
    "lgamma": (NotImplementedError, "\"lgamma_vml_cpu\" not implemented for '{t}'"),
    "digamma": (NotImplementedError, "\"digamma\" not implemented for '{t}'"),
    "polygamma": (NotImplementedError, lambda p: _polygamma_msg(p["n"])),
    "i0": (NotImplementedError, "\"i0_vml_cpu\" not implemented for '{t}'"),
    "i0e": (NotImplementedError, "\"i0e_cpu\" not implemented for '{t}'"),
    "i1": (NotImplementedError, "\"i1_cpu\" not implemented for '{t}'"),
    "i1e": (NotImplementedError, "\"i1e_cpu\" not implemented for '{t}'"),
    "erfcx": (NotImplementedError, "\"erfcx_cpu\" not implemented for '{t}'"),
    "ndtri": (NotImplementedError, "\"ndtri_cpu\" not implemented for '{t}'"),
    "log_ndtr": (NotImplementedError, "\"log_ndtr_cpu\" not implemented for '{t}'"),
    "frac": (NotImplementedError, "\"frac_cpu\" not implemented for '{t}'"),
    "trunc": (NotImplementedError, "trunc is not supported for complex inputs"),
    "floor": (NotImplementedError, "floor is not supported for complex inputs"),
    "ceil": (NotImplementedError, "ceil is not supported for complex inputs"),
    "round": (NotImplementedError, "\"round_vml_cpu\" not implemented for '{t}'"),
    "entr": (NotImplementedError, "\"entr_cpu\" not implemented for '{t}'"),
    "xlog1py": (NotImplementedError, "\"xlog1py_cpu\" not implemented for '{t}'"),
    "xlogy": (NotImplementedError, "\"xlogy_cpu\" not implemented for '{t}'"),
    "igamma": (NotImplementedError, "\"igamma_cpu\" not implemented for '{t}'"),
    "igammac": (NotImplementedError, "\"igammac_cpu\" not implemented for '{t}'"),
    "nextafter": (NotImplementedError, "\"nextafter_cpu\" not implemented for '{t}'"),
    "fmod": (NotImplementedError, "\"fmod_cpu\" not implemented for '{t}'"),
    "remainder": (NotImplementedError, "\"remainder_cpu\" not implemented for '{t}'"),
    "atan2": (NotImplementedError, "\"atan2_cpu\" not implemented for '{t}'"),
    "fmax": (RuntimeError, "fmax not implemented for complex tensors."),
    "fmin": (RuntimeError, "fmin not implemented for complex tensors."),
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
    "amax": (NotImplementedError, "\"max_values_cpu\" not implemented for '{t}'"),
    "amin": (NotImplementedError, "\"min_values_cpu\" not implemented for '{t}'"),
    "argmax": (RuntimeError, "argmax(): does not support complex input"),
    "argmin": (RuntimeError, "argmin(): does not support complex input"),
    "sort": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    "topk": (RuntimeError, " topk does not support complex dtypes on CPU"),
    "kthvalue": (NotImplementedError, "\"kthvalue_cpu\" not implemented for '{t}'"),
    "cummax": (NotImplementedError, "\"cummax_cpu\" not implemented for '{t}'"),
    "cummin": (NotImplementedError, "\"cummin_cpu\" not implemented for '{t}'"),
    "clamp": (NotImplementedError, "clamp is not supported for complex types"),
    "clamp_min": (NotImplementedError, "clamp is not supported for complex types"),
    "clamp_max": (NotImplementedError, "clamp is not supported for complex types"),
    # with tensor bounds (PyTorch names maximum/minimum for clamp_min/clamp_max then)
    "clamp_tensor": (NotImplementedError, "clamp is not supported for complex types"),
    "relu": (NotImplementedError, "clamp is not supported for complex types"),
    "gcd": (NotImplementedError, "\"gcd_cpu\" not implemented for '{t}'"),
    "lcm": (NotImplementedError, "\"lcm_cpu\" not implemented for '{t}'"),
    "max_dim": (RuntimeError, "max(): does not support complex input"),
    "min_dim": (RuntimeError, "min(): does not support complex input"),
    "max": (NotImplementedError, "\"max_all\" not implemented for '{t}'"),
    "min": (NotImplementedError, "\"min_all\" not implemented for '{t}'"),
    "mode": (NotImplementedError, "\"mode_cpu\" not implemented for '{t}'"),
    "hardtanh": (NotImplementedError, "clamp is not supported for complex types"),
    "leaky_relu": (NotImplementedError, "\"leaky_relu_cpu\" not implemented for '{t}'"),
    "logsigmoid": (NotImplementedError, "\"log_sigmoid_cpu\" not implemented for '{t}'"),
}

_TORCH_NAME = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _refusing(
    forward: Callable[..., Any],
    exc: type[Exception],
    msg: str | Callable[[dict[str, Any]], str],
) -> Callable[..., Any]:
    def checked(xp: Any, *arrays: Any, **params: Any) -> Any:
        for a in arrays:
            dt = getattr(a, "dtype", None)
            if dt is not None and dt.kind == "c":
                text = msg if isinstance(msg, str) else msg(params)
                raise exc(text.format(t=_TORCH_NAME.get(dt.name, dt.name)))
        return forward(xp, *arrays, **params)

    checked.__name__ = getattr(forward, "__name__", "forward")
    checked.__doc__ = forward.__doc__
    return checked


for _name, (_exc, _msg) in _REFUSALS.items():
    _op = REGISTRY[_name]
    _raw = _op.forward
    _op.forward = _refusing(_raw, _exc, _msg)
    # The fast paths of ops/_apply.py give np_forward real operands only (``max_cat``): real
    # input runs the unchecked forward (no Python frame of the check), complex input goes
    # the general way, to the checked forward, as do out=, in-place and compiled calls.
    _op.max_cat = 2
    if _op.np_forward is None:
        _op.np_forward = functools.partial(_raw, np)
