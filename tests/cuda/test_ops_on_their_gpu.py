"""Ops run on their inputs' GPU, whatever GPU is current (issue 17; Note [the inputs' device
is current] in ops/_apply.py).

The stand-in models CuPy's rule (``_kernel.pyx``'s ``_check_peer_access``): a kernel runs on
the current device, and an operand on another device is a ``ValueError`` (its two fake devices
have no peer access). So everything below fails unless chainrule makes the inputs' GPU current
for the forward of each op and for each node of the backward, as PyTorch's device guards do.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn

PEER = r"is different from the current device \(0\)\. Peer access is unavailable"


def _host(t: Any) -> np.ndarray:
    return cr.backends.backend_of(t._data).to_host(t._data)


def test_the_stand_in_refuses_a_kernel_on_another_gpu(fake_cuda: Any) -> None:
    cp = fake_cuda
    with cp.cuda.Device(1):
        a = cp.arange(6.0).reshape(2, 3)
    assert a.device.id == 1 and cp.cuda.runtime.getDevice() == 0
    for kernel in (lambda: a + 1, lambda: cp.exp(a), lambda: a.sum(), lambda: a[cp.asarray([1])]):
        with pytest.raises(ValueError, match=PEER):
            kernel()
    with pytest.raises(ValueError, match=PEER):
        a[0] = 1.0
    v = a.T  # views launch no kernel: allowed, and stay on their base's device
    assert v.device.id == 1
    assert cp.ones_like(a).device.id == 0  # *_like allocates on the current device
    b = a.copy()  # a copy is made on the current device, from any device
    assert b.device.id == 0 and cp.asarray(a).device.id == 0
    with cp.cuda.Device(1):
        assert (a + 1).device.id == 1


def test_forward_runs_on_the_inputs_gpu(fake_cuda: Any) -> None:
    x = cr.arange(6.0).reshape(2, 3).to("cuda:1")
    assert cr.cuda.current_device() == 0
    y = (x * 2 + 1).exp().sum(dim=0)
    assert y.device == cr.device("cuda", 1)
    assert cr.cuda.current_device() == 0  # the caller's device is left as it was
    np.testing.assert_allclose(_host(y), np.exp(np.arange(6.0).reshape(2, 3) * 2 + 1).sum(0))
    # A 0-d CPU tensor joins the op on cuda:1 (copied there).
    z = x * cr.tensor(3.0)
    assert z.device.index == 1
    # Under another current device, ops on cuda:0 tensors run on cuda:0.
    w = cr.ones(3, device="cuda:0")
    with cr.cuda.device(1):
        assert (w + w).device.index == 0


def test_backward_runs_each_node_on_its_gpu(fake_cuda: Any) -> None:
    cr.manual_seed(0)
    a = cr.randn(4, 3, dtype=cr.float64)
    b = cr.randn(3, dtype=cr.float64)  # broadcast: the engine sums its gradient back
    ga = a.to("cuda:1").requires_grad_()
    gb = b.to("cuda:1").requires_grad_()
    ca, cb = a.clone().requires_grad_(), b.clone().requires_grad_()
    for x, y in ((ga, gb), (ca, cb)):
        out = ((x * y).tanh() + x * y).sum() + (x.cpu() ** 2).to(x.device).sum() + (x * x).sum()
        if out.device.type == "cuda":
            out = out.cpu()
        out.backward()
        out2 = (x * y).sum()  # a second use of x: its leaf's gradient is accumulated in place
        out2.backward()
    assert cr.cuda.current_device() == 0
    assert ga.grad.device.index == 1 and gb.grad.device.index == 1
    np.testing.assert_allclose(_host(ga.grad), ca.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(_host(gb.grad), cb.grad.numpy(), rtol=1e-12)
    # Double backward (create_graph: the backward is itself made of Tensor ops).
    x = a.to("cuda:1").requires_grad_()
    (g,) = cr.autograd.grad((x**3).sum(), x, create_graph=True)
    (gg,) = cr.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_host(gg), 6 * a.numpy(), rtol=1e-12)
    assert cr.autograd.gradgradcheck(
        lambda t: (t.cuda(1) ** 3 * t.cuda(1)).cpu(), (a[0].clone().requires_grad_(),)
    )


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_training_on_cuda1_while_cuda0_is_current(fake_cuda: Any, opt: str) -> None:
    # Forward, backward and the optimizer's step on cuda:1 with cuda:0 current.
    cr.manual_seed(1)
    model = nn.Sequential(
        nn.Conv2d(2, 3, 3, padding=1), nn.Tanh(), nn.Flatten(), nn.Linear(48, 2)
    ).double()
    gpu = copy.deepcopy(model).to("cuda:1")
    x = cr.randn(5, 2, 4, 4, dtype=cr.float64)
    t = cr.randn(5, 2, dtype=cr.float64)

    def make(m: nn.Module) -> Any:
        if opt == "sgd":
            return cr.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
        return cr.optim.Adam(m.parameters(), lr=0.01)

    for m, xx, tt in ((model, x, t), (gpu, x.to("cuda:1"), t.to("cuda:1"))):
        o = make(m)
        for _ in range(2):
            o.zero_grad()
            loss = ((m(xx) - tt) ** 2).mean()
            loss.backward()
            assert cr.cuda.current_device() == 0
            o.step()
            assert cr.cuda.current_device() == 0
    for p, q in zip(model.parameters(), gpu.parameters()):
        assert q.device.index == 1 and q.grad.device.index == 1
        np.testing.assert_allclose(_host(q.grad), p.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(_host(q), p.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_a_deep_copy_stays_on_its_tensors_gpu(fake_cuda: Any) -> None:
    # PyTorch keeps copy.deepcopy on the tensor's device; CuPy's copy() allocates on the
    # current one, so the copy must run with the array's GPU current.
    w = cr.ones(3, device="cuda:1", requires_grad=True)
    w.grad = cr.full((3,), 2.0, device="cuda:1")
    c = copy.deepcopy(w)
    assert str(c.device) == "cuda:1" and str(c.grad.device) == "cuda:1"
    assert c._data.device.id == 1 and c.grad._data.device.id == 1
    np.testing.assert_array_equal(_host(c), np.ones(3))
    model = nn.Linear(2, 2).to("cuda:1")
    m2 = copy.deepcopy(model)
    assert {str(p.device) for p in m2.parameters()} == {"cuda:1"}
    np.testing.assert_array_equal(_host(m2.weight), _host(model.weight))
