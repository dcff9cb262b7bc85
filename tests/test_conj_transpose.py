"""``Tensor.mH`` and ``Tensor.H`` conjugate as well as transpose (values and gradients as torch)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule


@pytest.mark.parametrize("attr", ["mH", "H"])
def test_conjugate_transpose_values_and_gradient_match_torch(attr: str) -> None:
    a = np.array([[1 + 2j, 3 - 1j, 0.25], [0.5j, 2, -1 - 1j]])
    g = np.array([[1 + 1j, 2], [3j, 4], [-2, 1 - 1j]])
    x = chainrule.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    ours, theirs = getattr(x, attr), getattr(t, attr)
    np.testing.assert_allclose(
        ours.detach().resolve_conj().numpy(), theirs.detach().resolve_conj().numpy()
    )
    (ours * chainrule.tensor(g)).real.sum().backward()
    (theirs * torch.tensor(g)).real.sum().backward()
    assert x.grad is not None and t.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_batched_mH_of_a_real_tensor_is_the_transpose() -> None:
    x = chainrule.randn(2, 3, 4)
    np.testing.assert_array_equal(x.mH.numpy(), np.swapaxes(x.numpy(), -1, -2))
