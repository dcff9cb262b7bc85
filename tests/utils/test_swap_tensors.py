"""``torch.utils.swap_tensors`` (the swap_tensors recipe of pytorch/tutorials): contents swap,
identities stay; PyTorch's errors for weak references and for running a graph recorded
before the swap. Compared with torch."""

from __future__ import annotations

import weakref

import pytest
import torch

import chainrule as cr


def _basic(m):
    t1, t2 = m.arange(2), m.arange(3)
    i1, i2 = id(t1), id(t2)
    m.utils.swap_tensors(t1, t2)
    return (
        id(t1) == i1,
        id(t2) == i2,
        t1.tolist(),
        t2.tolist(),
        tuple(t1.shape),
        str(t2.dtype).split(".")[1],
    )


def test_swap_values_and_shapes():
    assert _basic(cr) == _basic(torch)


def _param_and_tensor(m):
    p = m.nn.Parameter(m.tensor([1.0, 2.0]))
    t = m.tensor([[5.0], [6.0]], dtype=m.float64)
    t.note = "plain"
    opt = m.optim.SGD([p], lr=0.5)
    m.utils.swap_tensors(p, t)
    out = [type(p).__name__, type(t).__name__, p.requires_grad, t.requires_grad, p.note]
    out += [hasattr(t, "note"), str(p.dtype).split(".")[1], p.tolist(), t.tolist()]
    # The optimizer holds the object ``p``, which now has t's contents (not a leaf that
    # requires grad), while ``t`` is the Parameter.
    out.append(opt.param_groups[0]["params"][0] is p)
    t.sum().backward()
    out.append(t.grad.tolist())
    return out


def test_swap_parameter_with_plain_tensor():
    assert _param_and_tensor(cr) == _param_and_tensor(torch)


def test_weakly_referenced_tensor_is_refused():
    for m in (torch, cr):
        a, b = m.ones(1), m.zeros(1)
        r = weakref.ref(b)
        with pytest.raises(
            RuntimeError, match="^Cannot swap t2 because it has weakref associated with it$"
        ):
            m.utils.swap_tensors(a, b)
        assert r() is b and a.tolist() == [1.0]


def test_a_graph_recorded_before_the_swap_fails():
    msgs = []
    for m in (torch, cr):
        w = m.ones(2, requires_grad=True)
        loss = (w * 3).sum()
        other = m.zeros(2, requires_grad=True)
        m.utils.swap_tensors(w, other)
        with pytest.raises(RuntimeError) as e:
            loss.backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert msgs[1].startswith("Trying to execute AccumulateGrad node that was poisoned")


def test_after_a_backward_the_swapped_tensor_trains_again():
    outs = []
    for m in (torch, cr):
        w = m.ones(2, requires_grad=True)
        (w * 2).sum().backward()
        w2 = m.full((2,), 4.0, requires_grad=True)
        m.utils.swap_tensors(w, w2)
        w.grad = None
        (w * w).sum().backward()
        outs.append((w.grad.tolist(), w2.grad.tolist()))
    assert outs[0] == outs[1]
