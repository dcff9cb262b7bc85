"""A 0-d CPU tensor as an operand of a CUDA op (PyTorch allows it, as a scalar): its gradient
comes back on the CPU, as PyTorch's engine copies it (Note [0-d CPU tensors in a CUDA op] in
ops/_apply.py). Compared with the same computation on the CPU, and gradcheck in float64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr


def _host(t: Any) -> np.ndarray:
    return cr.backends.get_backend("cuda").to_host(t.detach()._data)


def _f(x: Any, s: Any, dev: str) -> Any:
    xd = x.to(dev)
    y = xd * s + s.exp() - cr.where(xd > 0, xd, s) / (s + 3)
    return (y * y).sum().cpu()


@pytest.mark.parametrize("dev", ["cuda:0", "cuda:1"])
def test_the_gradient_of_a_0d_cpu_tensor_comes_back_on_the_cpu(fake_cuda: Any, dev: str) -> None:
    x0 = cr.randn(3, 4, dtype=cr.float64)
    grads = []
    for d in ("cpu", dev):
        x = x0.clone().requires_grad_()
        s = cr.tensor(0.7, dtype=cr.float64, requires_grad=True)
        out = _f(x, s, d)
        out.backward()
        assert s.grad is not None and s.grad.device.type == "cpu" and s.grad.ndim == 0
        assert x.grad is not None and x.grad.device.type == "cpu"
        grads.append((out.item(), s.grad.item(), x.grad.numpy()))
    assert cr.cuda.current_device() == 0
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-12)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-12)
    np.testing.assert_allclose(grads[1][2], grads[0][2], rtol=1e-12)


def test_gradcheck_through_a_cuda_op_with_a_0d_cpu_operand(fake_cuda: Any) -> None:
    x = cr.randn(2, 3, dtype=cr.float64, requires_grad=True)
    s = cr.tensor(-0.4, dtype=cr.float64, requires_grad=True)
    assert cr.autograd.gradcheck(lambda a, b: _f(a, b, "cuda:1"), (x, s))
    assert cr.autograd.gradgradcheck(lambda a, b: _f(a, b, "cuda:1"), (x, s))


def test_a_0d_cpu_operand_without_grad_and_the_mixed_device_error(fake_cuda: Any) -> None:
    x = cr.randn(4, dtype=cr.float64, requires_grad=True)
    s = cr.tensor(3.0, dtype=cr.float64)
    xc = x.cuda(1)
    (xc * s).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 3.0))
    out = xc.detach() + s
    assert out.device == cr.device("cuda:1")
    np.testing.assert_allclose(_host(out), x.detach().numpy() + 3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        xc * cr.ones(4, dtype=cr.float64)
