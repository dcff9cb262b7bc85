"""``torch.dist`` records PyTorch's one ``DistBackward0`` node (the parametrizations tutorial
prints ``tensor(0., grad_fn=<DistBackward0>)``), with the same values, gradients (broadcast,
p = 1, 2, 3, inf, and the value for p = 0, a zero difference) and second derivatives as torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

A = np.array([[0.5, -1.25, 2.0], [0.0, 3.0, -0.75]])
B = np.array([1.0, -1.25, 0.5])


@pytest.mark.parametrize("p", [1, 2, 3, float("inf")])
def test_dist_node_value_and_gradients(p):
    res = []
    for m in (torch, cr):
        a = m.tensor(A, requires_grad=True)
        b = m.tensor(B, requires_grad=True)
        d = m.dist(a, b, p)
        d.backward()
        res.append(
            (type(d.grad_fn).__name__, d.grad_fn.name(), d.item(), a.grad.tolist(), b.grad.tolist())
        )
    assert res[1][:2] == res[0][:2] == ("DistBackward0", "DistBackward0")
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-12)
    np.testing.assert_allclose(res[1][3], res[0][3], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res[1][4], res[0][4], rtol=1e-12, atol=1e-15)


def test_dist_p0_counts_the_nonzero_differences():
    # (torch's DistBackward0 cannot run backward for p=0: it fails inside its engine)
    vals = [m.dist(m.tensor(A, requires_grad=True), m.tensor(B), 0) for m in (torch, cr)]
    assert vals[1].item() == vals[0].item() and vals[1].grad_fn.name() == vals[0].grad_fn.name()


def test_dist_zero_difference_and_repr():
    outs = []
    for m in (torch, cr):
        w = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        d = m.dist(w, w.detach())
        d.backward()
        outs.append((repr(d).replace("chainrule.", "torch."), w.grad.tolist()))
    assert outs[0] == outs[1]


def test_dist_second_derivative():
    outs = []
    for m in (torch, cr):
        a = m.tensor(A, requires_grad=True)
        (g,) = m.autograd.grad(m.dist(a, m.tensor(B)), a, create_graph=True)
        (h,) = m.autograd.grad((g * g.detach()).sum(), a)
        outs.append(h.numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-10, atol=1e-14)


def test_dist_without_grad_records_nothing():
    d = cr.dist(cr.tensor(A), cr.tensor(B))
    assert d.grad_fn is None
    np.testing.assert_allclose(d.item(), torch.dist(torch.tensor(A), torch.tensor(B)).item())
