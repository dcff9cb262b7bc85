"""Complex gradients of the linalg primitives beyond the op table's rows (tests/opinfo/
complex_numbers.py): PyTorch's svd gauge error, its absence under create_graph for a
gauge-invariant loss, and the 0-d gradients that reach view_as_real as NumPy scalars."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1515)


def _c(shape: tuple[int, ...]) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


GAUGE_DEPENDENT: list[Callable[[Any, Any], Any]] = [
    lambda m, a: m.linalg.svd(a)[0].real.sum(),
    lambda m, a: m.linalg.svd(a, full_matrices=False)[2].imag.sum(),
    lambda m, a: m.linalg.svd(a[:, :2], full_matrices=False)[0].sum().abs(),
]


@pytest.mark.parametrize("f", GAUGE_DEPENDENT, ids=["U_real", "Vh_imag", "tall_U_sum"])
def test_svd_phase_dependent_loss_raises_as_torch(f: Callable[[Any, Any], Any]) -> None:
    a = _c((3, 3))
    msgs = []
    for m in (torch, cr):
        x = m.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            f(m, x).backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert msgs[1].startswith("svd_backward: The singular vectors in the complex case")


def test_svd_gauge_invariant_losses_match_torch_to_second_order() -> None:
    a = _c((4, 3))

    def loss(m: Any, x: Any) -> Any:
        U, S, Vh = m.linalg.svd(x, full_matrices=False)  # noqa: N806
        # U diag(S) Vh and |U|^2 (times S) depend on no phase
        return ((U * S.unsqueeze(-2)) @ Vh).abs().sum() + ((U * U.conj()).real * S).sum()

    grads = []
    for m in (torch, cr):
        x = m.tensor(a, requires_grad=True)
        (g,) = m.autograd.grad(loss(m, x), x, create_graph=True)
        (gg,) = m.autograd.grad((g.abs() ** 2).sum(), x)
        grads.append((g.detach(), gg))
    for t, c in zip(grads[0], grads[1]):
        np.testing.assert_allclose(np.asarray(c._data), t.numpy(), atol=1e-8)
    x = cr.tensor(a, requires_grad=True)
    assert gradcheck(lambda x: loss(cr, x), (x,))
    assert gradgradcheck(lambda x: loss(cr, x), (x,))


def test_zero_dim_complex_gradient_through_view_as_real() -> None:
    # mul of two 0-d complex tensors hands its VJP a NumPy scalar; view_as_real of it once
    # read memory outside the scalar (the imaginary part came back as garbage)
    g0 = np.array([0.5, -0.2])
    out = []
    for m in (torch, cr):
        g = m.tensor(g0, requires_grad=True)
        y = m.view_as_real(m.view_as_complex(g) * m.tensor(2.0 + 1j))
        (gg,) = m.autograd.grad((y * m.tensor([1.0, 3.0])).sum(), g)
        out.append(np.asarray(gg._data) if hasattr(gg, "_data") else gg.numpy())
    np.testing.assert_array_equal(out[1], out[0])


def test_det_second_derivative_complex() -> None:
    a = _c((3, 3)) + 3 * np.eye(3)
    x = cr.tensor(a, requires_grad=True)
    assert gradgradcheck(lambda x: cr.view_as_real(cr.linalg.det(x)), (x,))
