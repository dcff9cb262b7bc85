"""Run one case under PyTorch and under chainrule and compare what happened: the value (dtype
and elements) or the exception (type and message). A case is a function of the library
module ``L`` (``torch`` or ``chainrule``), e.g. ``lambda L: L.tensor([1], dtype=L.int8) + 300``.
Shared by the tests of scalar conversions, complex refusals and scalar operands."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import torch

import chainrule as cr

Case = Callable[[Any], Any]

__all__ = ["Case", "outcome", "check"]


def outcome(L: Any, fn: Case) -> tuple[Any, ...]:
    """``("raises", type name, message)`` or ``("value", dtype name, array)`` for ``fn(L)``
    (the first element of a tuple result)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(L)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return ("raises", type(e).__name__, str(e))
    if isinstance(r, tuple):
        r = r[0]
    name = str(r.dtype).split(".")[-1]
    if name == "bfloat16":  # (PyTorch's numpy() has no bfloat16)
        r = r.float()
    return ("value", name, r.detach().numpy())


def check(fn: Case, *, tol: float | None = None, signed_zeros: bool = False) -> None:
    """Assert that chainrule does what PyTorch does for ``fn``: the same exception type and
    message, or the same dtype and values (exactly, or within ``tol``; with ``signed_zeros``
    the signs of zeros too)."""
    want = outcome(torch, fn)
    got = outcome(cr, fn)
    if want[0] == "raises":
        assert got[:3] == want, f"torch raised {want[1]}: {want[2]!r}, chainrule gave {got[:2]}"
        return
    assert got[0] == "value", f"chainrule raised {got[1]}: {got[2]!r}; torch computed"
    assert got[1] == want[1]
    if tol is None:
        np.testing.assert_array_equal(got[2], want[2])
    else:
        np.testing.assert_allclose(got[2], want[2], rtol=tol, atol=tol)
    if signed_zeros:
        np.testing.assert_array_equal(np.signbit(got[2].real), np.signbit(want[2].real))
