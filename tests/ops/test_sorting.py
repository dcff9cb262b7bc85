"""Edge cases of the sorting family that an op-table row cannot express: errors, ties, NaN."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from tests.ops._compare import outcome

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.topk(m.tensor([[1.0, 2.0, 3.0]]), 4),
        lambda m: m.topk(m.tensor([[1.0, 2.0, 3.0]]), -1),
        lambda m: m.kthvalue(m.tensor([[1.0, 2.0, 3.0]]), 0),
        lambda m: m.kthvalue(m.tensor([[1.0, 2.0, 3.0]]), 4, dim=-1),
        lambda m: m.median(m.zeros(1, 0), 1),
        lambda m: m.sort(m.ones(2, 3), 2),
        lambda m: m.searchsorted(m.tensor([1.0, 2.0]), m.tensor([1.0]), side="mid"),
        lambda m: m.searchsorted(m.tensor([1.0, 2.0]), m.tensor([1.0]), side="left", right=True),
        lambda m: m.bucketize(m.tensor([1.0]), m.tensor([[1.0, 2.0]])),
        lambda m: m.searchsorted(m.ones(2, 3), m.ones(3, 1)),
    ],
)
def test_errors_as_torch(call):
    ours, theirs = outcome(cr, call), outcome(torch, call)
    assert theirs[0] != "ok"
    assert ours == theirs


def test_median_without_dim_splits_the_gradient_among_ties_as_torch():
    vals = [[1.0, 2.0, 2.0, 3.0], [2.0, 0.0, np.nan, 1.0]]
    for row in vals:
        grads = []
        for m in (cr, torch):
            x = m.tensor(row, dtype=m.float64, requires_grad=True)
            m.median(x).backward()
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1])
    assert cr.median(cr.tensor([])).isnan().item()


def test_sort_is_stable_and_puts_nan_as_torch():
    x = [3.0, 1.0, 3.0, 2.0, 1.0, 3.0, float("nan"), 2.0, float("-inf"), float("inf")]
    for desc in (False, True):
        ours = cr.sort(cr.tensor(x), descending=desc)
        theirs = torch.sort(torch.tensor(x), descending=desc, stable=True)
        assert ours.indices.tolist() == theirs.indices.tolist()
    b = [True, False, True, False]
    assert (
        cr.sort(cr.tensor(b), descending=True).indices.tolist()
        == torch.sort(torch.tensor(b), descending=True, stable=True).indices.tolist()
    )


def test_sort_graph_and_second_derivative():
    x = cr.tensor([[0.3, -1.2, 2.0]], dtype=cr.float64, requires_grad=True)
    v, i = cr.sort(x, descending=True)
    assert v.grad_fn.name() == "SortBackward0" and i.requires_grad is False
    (g,) = cr.autograd.grad((v**2 * cr.tensor([1.0, 2.0, 3.0])).sum(), x, create_graph=True)
    g.sum().backward()
    xt = torch.tensor([[0.3, -1.2, 2.0]], dtype=torch.float64, requires_grad=True)
    vt, _ = torch.sort(xt, descending=True)
    (gt,) = torch.autograd.grad(
        (vt**2 * torch.tensor([1.0, 2.0, 3.0])).sum(), xt, create_graph=True
    )
    gt.sum().backward()
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


def test_return_types_and_int_inputs():
    r = cr.topk(cr.tensor([4, 1, 7, 3]), 2)
    assert (
        type(r).__name__ == "topk" and r.values.tolist() == [7, 4] and r.indices.tolist() == [2, 0]
    )
    assert "torch.return_types.sort(" in repr(cr.sort(cr.tensor([2, 1])))
    assert cr.unique(cr.tensor([3, 1, 3])).tolist() == [1, 3]
    assert cr.searchsorted(cr.tensor([1.0, 2.0, 3.0]), 2.5).item() == 2
    assert cr.argsort(cr.tensor([2.0, 1.0])).dtype == cr.int64
