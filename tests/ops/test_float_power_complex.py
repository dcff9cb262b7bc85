"""float_power computes in complex128 when either operand is complex, as PyTorch (it cast
complex input to float64, dropping the imaginary part)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

CASES = [
    (lambda m: m.tensor([1 + 2j, -0.5 + 0.1j]), lambda m: 2),
    (lambda m: m.tensor([2.0, 0.5]), lambda m: 1j),
    (lambda m: m.tensor([2.0, 0.5]), lambda m: m.tensor([1 + 2j, -0.5 + 0.1j])),
    (lambda m: m.tensor([1 + 2j, -0.5 + 0.1j]), lambda m: m.tensor([2.0, 0.5])),
    (lambda m: m.tensor([2.0, 0.5]), lambda m: 3),
    (lambda m: 2.0, lambda m: m.tensor([1 + 1j, 0.5j])),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_float_power_dtype_and_values_as_torch(i):
    a, b = CASES[i]
    t = torch.float_power(a(torch), b(torch))
    c = cr.float_power(a(cr), b(cr))
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def test_float_power_complex_gradient_as_torch():
    def run(m):
        x = m.tensor([1 + 2j, -0.5 + 0.1j], dtype=m.complex128, requires_grad=True)
        y = m.float_power(x, 1.5)
        (y.real.sum() + 2 * y.imag.sum()).backward()
        return x.grad.numpy()

    np.testing.assert_allclose(run(cr), run(torch), rtol=1e-12, atol=1e-12)
