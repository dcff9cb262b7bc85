"""Custom autograd Functions, run side by side with PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _np(x: Any) -> Any:
    return None if x is None else np.array(x.detach().numpy())


def _cmp(a: Any, b: Any, tol: float = 1e-6) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
        else:
            np.testing.assert_allclose(_np(x), _np(y), rtol=tol, atol=tol)


def make_scaled_exp(m: Any) -> Any:
    class ScaledExp(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: float, w: Any) -> Any:
            ctx.k = k
            y = x.exp()
            out = y * k * w
            ctx.save_for_backward(x, w, out)
            return out, x.sum()

        @staticmethod
        def backward(ctx: Any, g1: Any, g2: Any) -> Any:
            x, w, out = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False, ctx.needs_input_grad[2])
            gx = g1 * out + g2
            gw = g1 * x.exp() * ctx.k if ctx.needs_input_grad[2] else None
            return gx, None, gw

    return ScaledExp


@pytest.mark.parametrize("w_grad", [True, False])
def test_several_outputs_non_tensor_args_and_none_grads(w_grad: bool) -> None:
    res = []
    for m in (cr, torch):
        F = make_scaled_exp(m)
        x = m.tensor([0.5, 1.0, -0.5], dtype=m.float64, requires_grad=True)
        w = m.tensor([2.0, 3.0, 1.0], dtype=m.float64, requires_grad=w_grad)
        a, b = F.apply(x, 3.0, w)
        assert a.grad_fn.name() == "ScaledExpBackward"
        assert type(a.grad_fn).__name__ == "ScaledExpBackward"
        (a.sum() * 2 + b * 5).backward()
        res.append([a, b, x.grad, w.grad])
    _cmp(*res)


def test_double_backward_through_differentiable_backward() -> None:
    res = []
    for m in (cr, torch):

        class Cube(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (x,) = ctx.saved_tensors
                return 3 * x**2 * g

        x = m.tensor([0.5, 2.0], dtype=m.float64, requires_grad=True)
        (gx,) = m.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        (ggx,) = m.autograd.grad(gx.sum(), x)
        with m.autograd.graph.save_on_cpu():
            y = Cube.apply(x * 1)
        (gx2,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (ggx2,) = m.autograd.grad(gx2.sum(), x)
        res.append([gx, ggx, gx2, ggx2])
    _cmp(*res)
    x = cr.tensor([0.3, -1.2], dtype=cr.float64, requires_grad=True)

    class Sq(cr.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            out = x * x
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, out = ctx.saved_tensors
            return 2 * x * g + 0 * out

    assert cr.autograd.gradcheck(Sq.apply, (x,))
    assert cr.autograd.gradgradcheck(Sq.apply, (x,))


def test_saved_tensors_are_version_checked_and_freed() -> None:
    errs = []
    for m in (cr, torch):

        class Id(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (x,) = ctx.saved_tensors
                return g * 2

        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        z = Id.apply(y)
        y.add_(1)
        with pytest.raises(RuntimeError) as ei:
            z.sum().backward()
        errs.append(str(ei.value))
        y2 = x * 1
        z2 = Id.apply(y2)
        z2.sum().backward()
        with pytest.raises(RuntimeError) as ei:
            z2.sum().backward()
        assert "Trying to backward through the graph a second time" in str(ei.value)
    for e in errs:
        assert "modified by an inplace operation" in e
        assert "is at version 1; expected version 0 instead" in e


def test_mark_dirty_mark_non_differentiable_materialize() -> None:
    res = []
    for m in (cr, torch):

        class AddOneInplace(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g

        class SortIdx(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                vals = x * 2
                half = x * 0.5
                ctx.mark_non_differentiable(half)
                ctx.set_materialize_grads(False)
                return vals, half

            @staticmethod
            def backward(ctx: Any, g_vals: Any, g_half: Any) -> Any:
                assert g_half is None  # not materialized
                return g_vals * 2

        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        z = AddOneInplace.apply(y)
        assert z is y
        assert y.grad_fn.name() == "AddOneInplaceBackward"
        v, h = SortIdx.apply(z)
        assert not h.requires_grad
        (v * v).sum().backward()
        res.append([y, v, h, x.grad, m.tensor(float(y._version))])
        leaf = m.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            AddOneInplace.apply(leaf)
    _cmp(*res)


def test_materialized_zero_grads_and_wrong_gradient_count() -> None:
    msgs = []
    for m in (cr, torch):

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x * 2, x * 3

            @staticmethod
            def backward(ctx: Any, ga: Any, gb: Any) -> Any:
                assert gb is not None and float(gb.abs().sum()) == 0.0
                return ga * 2 + gb * 3

        x = m.tensor([1.0, 2.0], requires_grad=True)
        a, b = Two.apply(x)
        a.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]

        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any, y: Any) -> Any:
                return x + y

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g

        with pytest.raises(RuntimeError) as ei:
            Bad.apply(x, x).sum().backward()
        msgs.append(str(ei.value))
    assert msgs[0] == msgs[1]


def test_once_differentiable() -> None:
    for m in (cr, torch):
        from_mod = (
            m.autograd.function.once_differentiable
            if m is torch
            else (cr.autograd.once_differentiable)
        )

        class Sq(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @from_mod
            def backward(ctx: Any, g: Any) -> Any:
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = m.tensor([1.0, 3.0], requires_grad=True)
        (g,) = m.autograd.grad(Sq.apply(x).sum(), x)
        assert g.tolist() == [2.0, 6.0]
        (g,) = m.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
        assert not g.requires_grad  # no grad_output required grad (as in PyTorch)
        v = m.tensor([1.0, 1.0], requires_grad=True)
        (g,) = m.autograd.grad(Sq.apply(x), x, grad_outputs=v, create_graph=True)
        assert g.requires_grad and g.tolist() == [2.0, 6.0]
        with pytest.raises(RuntimeError, match="once_differentiable"):
            g.sum().backward()


def test_setup_context_style() -> None:
    res = []
    for m in (cr, torch):

        class Mul(m.autograd.Function):
            @staticmethod
            def forward(x: Any, y: Any, scale: float) -> Any:
                return x * y * scale

            @staticmethod
            def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
                x, y, scale = inputs
                ctx.save_for_backward(x, y)
                ctx.scale = scale

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                x, y = ctx.saved_tensors
                return g * y * ctx.scale, g * x * ctx.scale, None

        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([3.0, -1.0], requires_grad=True)
        Mul.apply(x, y, 0.5).sum().backward()
        res.append([x.grad, y.grad])
    _cmp(*res)


def test_function_without_grad_inputs_records_nothing() -> None:
    class F(cr.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    y = F.apply(cr.tensor([1.0]))
    assert y.grad_fn is None and not y.requires_grad
    x = cr.tensor([1.0], requires_grad=True)
    with cr.no_grad():
        assert F.apply(x).grad_fn is None
    assert cr.autograd.Function is cr.autograd.function.Function
