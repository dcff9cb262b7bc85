"""Final callbacks of a backward pass (``autograd._callbacks.queue_callback``), against
PyTorch's ``Variable._execution_engine.queue_callback``."""

from __future__ import annotations

import pytest

import chainrule as cr
from chainrule.autograd._callbacks import queue_callback

torch = pytest.importorskip("torch")


def _run(lib, queue):
    """A hook on the first leaf queues a callback that reads both leaves' grads."""
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    seen = []

    def hook(p):
        queue(lambda: seen.append((a.grad.tolist(), b.grad.tolist())))

    a.register_post_accumulate_grad_hook(hook)
    ((a * b).sum() + (b * b).sum()).backward()
    seen.append("returned")
    return seen


def test_callback_runs_after_the_graph_and_before_backward_returns() -> None:
    ours = _run(cr, queue_callback)
    theirs = _run(torch, torch.autograd.Variable._execution_engine.queue_callback)
    assert ours == theirs == [([3.0, 4.0], [7.0, 10.0]), "returned"]


def test_outside_backward_is_an_error_as_torch() -> None:
    with pytest.raises(RuntimeError) as theirs:
        torch.autograd.Variable._execution_engine.queue_callback(lambda: None)
    with pytest.raises(RuntimeError, match="^Final callbacks can only be installed") as ours:
        queue_callback(lambda: None)
    assert str(ours.value) == str(theirs.value)


def test_a_failed_backward_drops_its_callbacks() -> None:
    ran = []
    x = cr.tensor([1.0], requires_grad=True)

    def hook(g):
        queue_callback(lambda: ran.append(1))
        raise ValueError("stop")

    y = x * 2
    y.register_hook(hook)
    with pytest.raises(ValueError, match="stop"):
        y.sum().backward()
    x.sum().backward()  # the next backward runs no stale callback
    assert ran == []
