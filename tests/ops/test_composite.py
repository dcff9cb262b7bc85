"""Errors and edge cases of the composite and stacking families, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from tests.ops._compare import outcome

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.tensordot(m.ones(2, 3), m.ones(4, 2), dims=1),
        lambda m: m.trace(m.ones(2, 2, 2)),
        lambda m: m.cdist(m.ones(3), m.ones(2, 3)),
        lambda m: m.cdist(m.ones(2, 3), m.ones(2, 4)),
        lambda m: m.diff(m.tensor(1.0)),
        lambda m: m.rot90(m.ones(2, 2), 1, (0, 0)),
        lambda m: m.rot90(m.ones(2), 1, (0, 1)),
        lambda m: m.fliplr(m.ones(3)),
        lambda m: m.vsplit(m.ones(3), 1),
        lambda m: m.hsplit(m.ones(2, 3), 2),
        lambda m: m.block_diag(m.ones(1, 1, 1)),
        lambda m: m.combinations(m.ones(2, 2)),
        lambda m: m.bincount(m.tensor([-1, 2])),
        lambda m: m.take(m.ones(2, 2), m.tensor([4])),
        lambda m: m.hstack(m.ones(2)),
        lambda m: m.meshgrid(m.ones(2), m.ones(3), indexing="yx"),
        lambda m: m.positive(m.tensor([True])),
        lambda m: m.tensor_split(m.ones(3), 0),
    ],
)
def test_errors_as_torch(call):
    ours, theirs = outcome(cr, call), outcome(torch, call)
    assert theirs[0] != "ok"
    assert ours[0] == theirs[0], (ours, theirs)
    assert ours[1] == theirs[1] or ours[1].split(":")[0] == theirs[1].split(":")[0], (ours, theirs)


def test_meshgrid_without_indexing_warns_as_torch():
    with pytest.warns(UserWarning, match="indexing argument"):
        a, b = cr.meshgrid(cr.arange(2), cr.arange(3))
    assert a.shape == (2, 3) and b.tolist() == [[0, 1, 2], [0, 1, 2]]


def test_nonzero_and_bincount_dtypes():
    assert cr.nonzero(cr.tensor([0, 3, 0, 1])).dtype == cr.int64
    w = cr.bincount(cr.tensor([0, 2]), weights=cr.tensor([0.5, 1.5]))
    wt = torch.bincount(torch.tensor([0, 2]), weights=torch.tensor([0.5, 1.5]))
    assert str(w.dtype).split(".")[-1] == str(wt.dtype).split(".")[-1]
    np.testing.assert_array_equal(w.numpy(), wt.numpy())


def test_addcmul_in_place_keeps_the_graph():
    for m in (cr, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        y.addcmul_(x, x, value=2)
        y.sum().backward()
        assert x.grad.tolist() == [5.0, 9.0]
