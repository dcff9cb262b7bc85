"""LU of a batch of square matrices on the GPU: one cuBLAS ``getrfBatched`` call (the stand-in
models it through its arrays' pointers), equal to LAPACK's on the CPU (issue 17)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr


def _host(t: Any) -> np.ndarray:
    return cr.backends.backend_of(t._data).to_host(t._data)


@pytest.mark.parametrize(
    "shape, dtype",
    [
        ((3, 4, 4), cr.float64),
        ((2, 3, 5, 5), cr.float32),
        ((4, 3, 3), cr.complex128),
        ((2, 6, 6), cr.complex64),
    ],
)
def test_batched_square_lu_is_one_call_and_equals_the_cpu(
    fake_cuda: Any, shape: tuple[int, ...], dtype: Any
) -> None:
    cr.manual_seed(0)
    a = cr.randn(*shape, dtype=dtype)
    a[0, 1] = a[0, 0]  # a singular matrix in the batch: info > 0, as LAPACK's
    a[0, 2] = 0
    calls = fake_cuda.cuda.CUBLAS_CALLS
    calls.clear()
    g = a.to("cuda")
    lu, piv, info = cr.linalg.lu_factor_ex(g)
    count = int(np.prod(shape[:-2]))
    assert calls == [(np.dtype(dtype.np).char + "getrfBatched", count)]
    assert lu.device.type == "cuda" and piv.dtype == cr.int32
    clu, cpiv, cinfo = cr.linalg.lu_factor_ex(a)
    tol = 1e-5 if dtype in (cr.float32, cr.complex64) else 1e-12
    np.testing.assert_allclose(_host(lu), clu.numpy(), rtol=tol, atol=tol)
    np.testing.assert_array_equal(_host(piv), cpiv.numpy())
    np.testing.assert_array_equal(_host(info), cinfo.numpy())
    assert (cinfo.numpy() > 0).any()
    np.testing.assert_array_equal(_host(g), a.numpy())  # the input is not overwritten
    # Solving and the gradient go through it too, equal to the CPU's.
    if dtype is cr.float64:
        b = cr.randn(*shape[:-1], 2, dtype=dtype)
        x = g.clone().requires_grad_()
        ok = cr.eye(shape[-1], dtype=dtype) * 3
        y = cr.linalg.solve(x + ok.to("cuda"), b.to("cuda"))
        y.sum().backward()
        xc = a.clone().requires_grad_()
        cr.linalg.solve(xc + ok, b).sum().backward()
        np.testing.assert_allclose(_host(x.grad), xc.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_single_and_rectangular_matrices_take_cusolver(fake_cuda: Any) -> None:
    calls = fake_cuda.cuda.CUBLAS_CALLS
    calls.clear()
    for shape in ((5, 5), (3, 4, 6), (1, 4, 4)):
        a = cr.randn(*shape, dtype=cr.float64)
        lu, piv = cr.linalg.lu_factor(a.to("cuda"))
        clu, cpiv = cr.linalg.lu_factor(a)
        np.testing.assert_allclose(_host(lu), clu.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(_host(piv), cpiv.numpy())
    assert calls == []
