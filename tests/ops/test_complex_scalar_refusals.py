"""Complex Python scalars and 0-d complex tensors given to ops on real tensors, and complex
input to ops without complex kernels: chainrule fails as PyTorch 2.13 does (the same exception
type and message) or, where PyTorch computes, gives its values and dtype. Each case runs in
both libraries (``L`` is ``torch`` or ``chainrule``)."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import chainrule as cr

Case = Callable[[Any], Any]

_DTYPES = ("float32", "float64", "int64")


def _x(L: Any, dt: str = "float32") -> Any:
    return L.tensor([1.0, 2.0, 3.0], dtype=getattr(L, dt))


def _m(L: Any) -> Any:
    return L.tensor([True, False, True])


def _iadd(L: Any, dt: str, v: Any) -> Any:
    x = _x(L, dt)
    x += v
    return x


def _setitem(L: Any, dt: str, key: Any, v: Any) -> Any:
    x = _x(L, dt)
    x[key(L) if callable(key) else key] = v(L) if callable(v) else v
    return x


def _per_dtype(name: str, fn: Callable[[Any, str], Any]) -> list[Any]:
    return [pytest.param(lambda L, dt=dt: fn(L, dt), id=f"{name}-{dt}") for dt in _DTYPES]


FILL: list[Any] = [
    *_per_dtype("fill_1j", lambda L, dt: _x(L, dt).fill_(1j)),
    *_per_dtype("fill_nanj", lambda L, dt: _x(L, dt).fill_(complex(0, float("nan")))),
    *_per_dtype("fill_real_complex", lambda L, dt: _x(L, dt).fill_(2 + 0j)),
    *_per_dtype("zero_dim_fill_", lambda L, dt: L.zeros((), dtype=getattr(L, dt)).fill_(1j)),
    *_per_dtype("full_like", lambda L, dt: L.full_like(_x(L, dt), 1j)),
    *_per_dtype("full_like_dtype", lambda L, dt: L.full_like(_x(L, dt), 1j, dtype=L.float32)),
    *_per_dtype("full", lambda L, dt: L.full((2,), 1j, dtype=getattr(L, dt))),
    *_per_dtype("new_full", lambda L, dt: _x(L, dt).new_full((2,), 1j)),
    *_per_dtype("masked_fill", lambda L, dt: _x(L, dt).masked_fill(_m(L), 1j)),
    *_per_dtype("masked_fill_", lambda L, dt: _x(L, dt).masked_fill_(_m(L), 1j)),
    *_per_dtype("masked_fill_zero_imag", lambda L, dt: _x(L, dt).masked_fill(_m(L), 2 + 0j)),
    *_per_dtype("torch_masked_fill", lambda L, dt: L.masked_fill(_x(L, dt), _m(L), 1j)),
    *_per_dtype("masked_fill_0d_complex", lambda L, dt: _x(L, dt).masked_fill(_m(L), L.tensor(1j))),
    *_per_dtype(
        "masked_fill__0d_complex", lambda L, dt: _x(L, dt).masked_fill_(_m(L), L.tensor(1j))
    ),
    *_per_dtype(
        "masked_fill_0d_zero_imag", lambda L, dt: _x(L, dt).masked_fill(_m(L), L.tensor(2 + 0j))
    ),
    pytest.param(lambda L: L.full((2,), 1j), id="full-default-complex"),
    pytest.param(lambda L: L.full_like(_x(L), 1j, dtype=L.complex64), id="full_like-complex"),
    pytest.param(lambda L: L.tensor([True]).fill_(1j), id="fill_-bool"),
    pytest.param(lambda L: L.tensor([True, False]).masked_fill(_m(L)[:2], 0j), id="masked-bool"),
    pytest.param(lambda L: _x(L, "complex64").masked_fill(_m(L), 1j), id="masked_fill-complex"),
    pytest.param(
        lambda L: _x(L).requires_grad_().masked_fill(_m(L), 1j), id="masked_fill-requires_grad"
    ),
    pytest.param(
        lambda L: L.zeros(2, 2).masked_fill(L.tensor([[True, False], [False, True]]), 1j),
        id="masked_fill-2d",
    ),
]

CASES: list[Any] = FILL


def _outcome(L: Any, fn: Case) -> tuple[Any, ...]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(L)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return ("raises", type(e).__name__, str(e))
    if isinstance(r, tuple):
        r = r[0]
    a = r.detach().numpy()
    return ("value", str(a.dtype), a)


@pytest.mark.parametrize("fn", CASES)
def test_as_torch(fn: Case) -> None:
    want = _outcome(torch, fn)
    got = _outcome(cr, fn)
    if want[0] == "raises":
        assert got[:3] == want, f"torch raised {want[1]}: {want[2]!r}, chainrule gave {got[:2]}"
        return
    assert got[0] == "value", f"chainrule raised {got[1]}: {got[2]!r}; torch computed"
    assert got[1] == want[1]
    np.testing.assert_array_equal(got[2], want[2])
    # signed zeros too
    np.testing.assert_array_equal(np.signbit(got[2].real), np.signbit(want[2].real))
