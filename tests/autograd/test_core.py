"""The core autograd semantics of issue #2, each checked against PyTorch where it defines them."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def both(fn):
    """Run ``fn(module)`` with chainrule and with torch; return both results."""
    return fn(cr), fn(torch)


def err(fn, m):
    with pytest.raises(Exception) as e:
        fn(m)
    return type(e.value), str(e.value)


def same_error(fn):
    (ct, cm), (tt, tm) = err(fn, cr), err(fn, torch)
    assert ct.__name__ == tt.__name__, (ct, tt)
    return cm, tm


# --- the walkthroughs --------------------------------------------------------------------------


def index_assignment(m, calls=1, retain=True):
    X = m.tensor([4.0, 3.0, 2.0], requires_grad=True)
    x0, x1, x2 = X[0], X[1], X[2]
    y0 = 3 * x0 + 7 * x1**2 + 6 * x2**3
    y1 = 4 * x0 + 8 * x1**2 + 3 * x2**3
    y2 = 5 * x0 + 9 * x1**2 + 1 * x2**3
    Y = m.zeros(3)
    Y[0], Y[1], Y[2] = y0, y1, y2
    for _ in range(calls):
        Y.backward(gradient=m.tensor([10.0, 100.0, 1000.0]), retain_graph=retain)
    return X, Y


def test_index_assignment_walkthrough_values():
    X, Y = index_assignment(cr)
    assert repr(Y) == "tensor([123., 112., 109.], grad_fn=<CopySlices>)"
    assert X.grad.tolist() == [5430.0, 59220.0, 16320.0]
    X, _ = index_assignment(cr, calls=3)
    assert X.grad.tolist() == [16290.0, 177660.0, 48960.0]
    X.grad.zero_()
    assert X.grad.tolist() == [0.0, 0.0, 0.0]


def test_index_assignment_second_backward_without_retain_fails_like_torch():
    def f(m):
        X, Y = index_assignment(m, calls=1, retain=False)
        Y.backward(gradient=m.tensor([10.0, 100.0, 1000.0]))

    cm, tm = same_error(f)
    assert cm.startswith(tm[:100])
    assert "retain_graph=True" in cm


def test_mean_then_sum_walkthrough():
    def f(m, retain):
        x = m.ones(2, requires_grad=True)
        y = x**2
        z = y * 4
        z.mean().backward(retain_graph=retain)
        z.sum().backward()
        return x.grad.tolist()

    assert f(cr, True) == f(torch, True) == [12.0, 12.0]
    cm, tm = same_error(lambda m: f(m, False))
    assert cm.startswith(tm)  # PyTorch's text, then which node was freed and by which call


# --- seeding and root gradients -----------------------------------------------------------------


def test_nonscalar_backward_needs_gradient():
    cm, tm = same_error(lambda m: (m.ones(3, requires_grad=True) * 2).backward())
    assert cm == tm == "grad can be implicitly created only for scalar outputs"


def test_gradient_shape_mismatch_names_both_shapes():
    cm, tm = same_error(lambda m: (m.ones(3, requires_grad=True) * 2).backward(m.ones(2)))
    assert "[2]" in cm and "[3]" in cm and cm.startswith("Mismatch in shape: grad_output[0]")


def test_backward_on_tensor_without_grad():
    cm, tm = same_error(lambda m: m.zeros(3).sum().backward())
    assert cm == tm


def test_one_element_nonscalar_root_is_seeded_with_ones():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().reshape(1, 1).backward()
        return x.grad.tolist()

    c, t = both(f)
    assert c == t == [3.0, 3.0]


# --- accumulation, leaves, non-leaves ----------------------------------------------------------


def test_gradients_accumulate_in_leaves_and_broadcast_sums_back():
    def f(m):
        a = m.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        b = m.tensor([[1.0], [2.0]], requires_grad=True)
        (a * b).sum().backward()
        (a + b).sum().backward()
        return a.grad.tolist(), b.grad.tolist()

    c, t = both(f)
    assert c == t


def test_non_leaf_grad_is_none_with_warning_and_retain_grad_keeps_it():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y * 3
        y.retain_grad()
        z.sum().backward()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            g = z.grad
        return y.grad.tolist(), g, len(w), y.is_leaf, x.is_leaf, y.retains_grad

    c, t = both(f)
    assert c == t == ([3.0, 3.0], None, 1, False, True, True)


def test_requires_grad_on_integer_tensor_fails():
    cm, tm = same_error(lambda m: m.tensor([1, 2], requires_grad=True))
    assert cm == tm == "Only Tensors of floating point and complex dtype can require gradients"
    cm, tm = same_error(lambda m: m.tensor([1, 2]).requires_grad_())
    assert "floating point" in cm


def test_setting_requires_grad_on_non_leaf():
    def f(m):
        y = m.ones(2, requires_grad=True) * 2
        y.requires_grad = False

    cm, tm = same_error(f)
    assert cm == tm


def test_numpy_refuses_tensor_requiring_grad():
    cm, tm = same_error(lambda m: m.ones(2, requires_grad=True).numpy())
    assert cm == tm


def test_grad_fn_names_and_next_functions():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 2).sum()
        n = y.grad_fn
        mul = n.next_functions[0][0]
        acc = mul.next_functions[0][0]
        return (
            n.name(),
            mul.name(),
            type(acc).__name__,
            acc.name(),
            repr(acc).split(" object")[0],
            mul.next_functions[1],
            acc.variable is x,
        )

    c, t = both(f)
    assert c[:5] == t[:5]
    assert c[:5] == (
        "SumBackward0",
        "MulBackward0",
        "AccumulateGrad",
        "torch::autograd::AccumulateGrad",
        "<AccumulateGrad",
    )
    assert c[5] == (None, 0) and c[6]


@pytest.mark.parametrize(
    "expr",
    [
        lambda x: x[0],
        lambda x: x[1:],
        lambda x: x[[0, 1]],
        lambda x: x[x > 1],
        lambda x: x.reshape(3, 1),
        lambda x: x.view(3, 1),
        lambda x: x.expand(2, 3),
        lambda x: x @ x,
        lambda x: x.mean(),
        lambda x: x.unsqueeze(0).squeeze(0),
        lambda x: -x,
        lambda x: x - 1,
        lambda x: 1 - x,
        lambda x: x / 2,
        lambda x: x.sum(0),
        lambda x: x.exp(),
    ],
)
def test_grad_fn_names_match_torch(expr):
    def f(m):
        x = m.tensor([4.0, 3.0, 2.0], requires_grad=True)
        return expr(x).grad_fn.name()

    c, t = both(f)
    assert c == t


# --- create_graph ------------------------------------------------------------------------------


def test_second_and_third_derivatives():
    def f(m):
        x = m.tensor([0.5, 1.5], requires_grad=True)
        y = (x**3 * x.sin()).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = m.autograd.grad(gg.sum(), x)
        return g.tolist(), gg.tolist(), ggg.tolist()

    c, t = both(f)
    np.testing.assert_allclose(c, t, rtol=1e-5)


def test_backward_create_graph_makes_grad_differentiable():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with pytest.warns(UserWarning, match="reference cycle"):
            (x**2).sum().backward(create_graph=True)
        g = x.grad
        assert g.requires_grad
        (h,) = m.autograd.grad(g.sum(), x)
        return h.tolist()

    c, t = both(f)
    assert c == t == [2.0, 2.0]


# --- autograd.grad ------------------------------------------------------------------------------


def test_grad_does_not_touch_dot_grad_and_allow_unused():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        z = m.tensor([1.0], requires_grad=True)
        y = (x * x).sum()
        (gx, gz) = m.autograd.grad(y, [x, z], allow_unused=True)
        return gx.tolist(), gz, x.grad

    c, t = both(f)
    assert c == t == ([2.0, 4.0], None, None)

    def g(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        z = m.tensor([1.0], requires_grad=True)
        m.autograd.grad((x * x).sum(), [x, z])

    cm, tm = same_error(g)
    assert cm.startswith(tm[:60])


def test_grad_wrt_non_leaf_and_backward_inputs():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0, 4.0], requires_grad=True)
        h = x * w
        y = (h * h).sum()
        (gh,) = m.autograd.grad(y, h, retain_graph=True)
        y.backward(inputs=[w])
        return gh.tolist(), x.grad, w.grad.tolist()

    c, t = both(f)
    assert c == t


def test_backward_inputs_empty_fails():
    cm, tm = same_error(lambda m: (m.ones(1, requires_grad=True) * 2).sum().backward(inputs=[]))
    assert cm == tm


# --- engine structure ---------------------------------------------------------------------------


def test_diamond_and_reused_input():
    def f(m):
        x = m.tensor([1.0, -2.0], requires_grad=True)
        a = x * 2
        b = a.exp()
        c = a.sin()
        y = (b * c + a * x).sum()
        y.backward()
        return x.grad.tolist()

    c, t = both(f)
    np.testing.assert_allclose(c, t, rtol=1e-6)


def test_deep_chain_has_no_recursion():
    x = cr.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


# --- grad modes ---------------------------------------------------------------------------------


def test_no_grad_enable_grad_set_grad_enabled():
    x = cr.ones(2, requires_grad=True)
    with cr.no_grad():
        assert (x * 2).requires_grad is False
        with cr.enable_grad():
            assert (x * 2).requires_grad is True
    with cr.set_grad_enabled(False):
        assert not cr.is_grad_enabled()
    assert cr.is_grad_enabled()

    @cr.no_grad()
    def f(t):
        return t * 2

    @cr.no_grad
    def f2(t):
        return t * 2

    assert f(x).requires_grad is False and f2(x).requires_grad is False
    cr.set_grad_enabled(False)
    try:
        assert (x * 2).requires_grad is False
    finally:
        cr.set_grad_enabled(True)


def test_grad_mode_is_thread_local():
    seen = []

    def worker():
        seen.append(cr.is_grad_enabled())

    with cr.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        th.join()
    assert seen == [True]


# --- detach and hooks ---------------------------------------------------------------------------


def test_detach_shares_data_not_history():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.grad_fn is None and not d.requires_grad
    d[0] = 10.0
    assert y.tolist() == [10.0, 4.0]
    assert y._version == d._version == 1
    y.detach_()
    assert y.is_leaf and not y.requires_grad


def test_register_hook_doubles_gradient_and_handle_removes_it():
    def f(m):
        v = m.tensor([0.0, 0.0, 0.0], requires_grad=True)
        h = v.register_hook(lambda grad: grad * 2)
        v.backward(m.tensor([1.0, 1.0, 1.0]))
        first = v.grad.tolist()
        h.remove()
        v.grad = None
        v.backward(m.tensor([1.0, 1.0, 1.0]))
        return first, v.grad.tolist()

    c, t = both(f)
    assert c == t == ([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])


def test_hook_on_non_leaf_changes_downstream_gradient():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.register_hook(lambda g: g + 1)
        (y * y).sum().backward()
        return x.grad.tolist()

    c, t = both(f)
    assert c == t


def test_hook_on_tensor_without_grad_fails():
    cm, tm = same_error(lambda m: m.zeros(3).register_hook(lambda g: g))
    assert cm == tm


def test_variable_legacy_wrapper():
    v = cr.autograd.Variable(cr.tensor([1.0, 2.0]), requires_grad=True)
    assert isinstance(v, cr.Tensor) and v.requires_grad and v.is_leaf
    with pytest.warns(UserWarning, match="no_grad"):
        cr.autograd.Variable(cr.tensor([1.0]), volatile=True)


def test_comparisons_return_bool_outside_graph():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    c = x > 1
    assert c.dtype == cr.bool and not c.requires_grad and c.grad_fn is None
