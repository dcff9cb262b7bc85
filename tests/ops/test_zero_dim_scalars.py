"""0-d chains, where NumPy's ufuncs return NumPy scalars instead of arrays: the results are
wrapped as 0-d arrays (``backends.as_array``'s NumPy-scalar path) and the VJPs conjugate the
saved scalars of complex products (``complex_numbers.cj``'s real-scalar path must not catch
complex ones). Values and gradients against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr


def _chain(lib, x0, w0):
    x = lib.tensor(x0, requires_grad=True)
    w = lib.tensor(w0, requires_grad=True)
    y = x * (2 + 3j if isinstance(x0, complex) else 3.0)
    z = y * w / (1 - 2j if isinstance(x0, complex) else 2.0)
    out = z.abs() + (x / w).abs() + ((x - 1) * 0).abs() + 7 * x.abs() ** 2
    out.backward()
    return out, x.grad, w.grad


@pytest.mark.parametrize(
    "x0, w0",
    [(1 + 2j, 0.5 - 1j), (-0.3 + 0.1j, 2.0 + 0.0j), (1.5, -0.5), (2.0, 4.0)],
)
def test_zero_dim_chain_matches_torch(x0, w0):
    got = _chain(cr, x0, w0)
    want = _chain(torch, x0, w0)
    for g, t in zip(got, want):
        assert g.shape == () and str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_zero_dim_results_are_arrays_of_their_dtype():
    for dt in (cr.float32, cr.float64, cr.int64, cr.complex64, cr.bool):
        a = cr.tensor(1, dtype=dt)
        r = a * a if dt is not cr.bool else a & a
        assert type(r._data) is np.ndarray and r._data.shape == () and r.dtype == dt


def test_walkthrough_index_views_keep_their_node_names():
    X = cr.tensor([4.0, 3.0, 2.0], requires_grad=True)
    tX = torch.tensor([4.0, 3.0, 2.0], requires_grad=True)
    for idx in (0, -1, (1,), (Ellipsis, 2)):
        assert type(X[idx].grad_fn).__name__ == type(tX[idx].grad_fn).__name__
