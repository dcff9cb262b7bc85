"""The engine's input buffers of nodes with several outputs (Note [monomorphic reads] in
chainrule/autograd/engine.py): a buffer begun by a gradient of output 0 holds that one
gradient and is sized to the node's outputs when the node runs, or when a gradient of a later
output arrives. Each case against PyTorch, through ``.backward()`` (the plain loop),
``autograd.grad`` (``inputs=``) and create_graph, and with hooks seeing the whole buffer."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

X = np.arange(1.0, 7.0).reshape(3, 2)


def _uses(m: Any, x: Any) -> dict[str, Callable[[], Any]]:
    """Losses reaching the three outputs of ``x.unbind()``: output 0 only (the short buffer),
    output 0 routed before output 1 (the buffer grows), a later output only (sized at once),
    all three."""

    def parts() -> Any:
        return (x * 2.0).unbind(0)  # a node of three outputs, fed by the mul

    return {
        "first": lambda: (parts()[0] ** 3).sum(),
        "first_then_second": lambda: (lambda p: (p[0] * p[1]).sum())(parts()),
        "last": lambda: parts()[2].exp().sum(),
        "all": lambda: (lambda p: (p[0] * p[1] + p[2] ** 2).sum())(parts()),
    }


@pytest.mark.parametrize("use", ["first", "first_then_second", "last", "all"])
@pytest.mark.parametrize("how", ["backward", "grad", "create_graph"])
def test_multi_output_buffers_match_torch(use: str, how: str) -> None:
    res = []
    for m in (cr, torch):
        x = m.tensor(X, requires_grad=True)
        loss = _uses(m, x)[use]()
        if how == "backward":
            loss.backward()
            g = x.grad
        elif how == "grad":
            (g,) = m.autograd.grad(loss, [x])
        else:
            (g,) = m.autograd.grad(loss, [x], create_graph=True)
            (g2,) = m.autograd.grad((g * g).sum(), [x], allow_unused=True)
            g = g if g2 is None else g + g2
        res.append(np.asarray(g.detach().numpy()))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)


@pytest.mark.parametrize("use", ["first", "last"])
def test_a_prehook_sees_every_output_of_the_node(use: str) -> None:
    seen = []
    for m in (cr, torch):
        x = m.tensor(X, requires_grad=True)
        p = (x * 2.0).unbind(0)
        out = p[0] if use == "first" else p[2]
        got: list[Any] = []
        out.grad_fn.register_prehook(lambda go, got=got: got.append([g is None for g in go]))
        out.sum().backward()
        seen.append(got)
    assert seen[0] == seen[1] and len(seen[0][0]) == 3, seen


def test_a_custom_function_of_two_outputs_gets_both_gradients() -> None:
    """Output 0 alone reaches the node: its backward still gets two gradients, the missing
    one materialized as zeros (PyTorch's default)."""
    got = []
    for m in (cr, torch):

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x * 2, x * 3

            @staticmethod
            def backward(ctx: Any, ga: Any, gb: Any) -> Any:
                got.append((ga.tolist(), None if gb is None else gb.tolist()))
                return ga * 2 + gb * 3

        x = m.tensor([1.0, 2.0], requires_grad=True)
        a, _ = Two.apply(x)
        a.sum().backward()
        got.append(x.grad.tolist())
    assert got[:2] == got[2:] and got[0] == ([1.0, 1.0], [0.0, 0.0]), got
