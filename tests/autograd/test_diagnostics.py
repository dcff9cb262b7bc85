"""Error messages that say where: sites of forward ops, backward calls and in-place writes
(Note [sites] in chainrule/autograd/_sites.py), shape errors of hooks and custom Functions, and
the memory a graph keeps (saved_bytes)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from chainrule.autograd.graph import (
    FREED_MSG,
    is_record_sites_enabled,
    saved_bytes,
    set_record_sites,
)

HERE = os.path.relpath(__file__) if not os.path.relpath(__file__).startswith("..") else __file__


def next_line() -> int:
    """The line after the caller's: put it just above the statement it names."""
    return sys._getframe(1).f_lineno + 1


def site(line: int, func: str, text: str) -> str:
    return f"{HERE}:{line} in {func}: {text}"


def error(fn) -> str:
    with pytest.raises(RuntimeError) as e:
        fn()
    return str(e.value)


@pytest.fixture
def sites():
    with set_record_sites(True):
        yield


# --- a second backward -----------------------------------------------------------------------


def test_second_backward_names_node_forward_and_freeing_call(sites) -> None:
    x = cr.ones(2, requires_grad=True)
    y = x**2
    fwd = next_line()
    z = y * 4
    bwd = next_line()
    z.mean().backward()
    msg = error(lambda: z.sum().backward())
    func = "test_second_backward_names_node_forward_and_freeing_call"
    assert msg == (
        f"{FREED_MSG}\n  The saved values of MulBackward0 (created by the forward at "
        f"{site(fwd, func, 'z = y * 4')}) were freed by the backward call at "
        f"{site(bwd, func, 'z.mean().backward()')}. Pass retain_graph=True to that call if this "
        "graph is to be backpropagated again, or run the forward again to build a fresh graph "
        "for this backward."
    )


def test_second_backward_without_forward_sites_still_names_the_call() -> None:
    assert not is_record_sites_enabled()  # off by default
    x = cr.ones(2, requires_grad=True)
    z = (x**2) * 4
    bwd = next_line()
    z.mean().backward()
    msg = error(lambda: z.sum().backward())
    func = "test_second_backward_without_forward_sites_still_names_the_call"
    assert (
        f"The saved values of MulBackward0 were freed by the backward call at "
        f"{site(bwd, func, 'z.mean().backward()')}." in msg
    )
    assert "set_record_sites(True) or anomaly mode would also name" in msg
    assert "created by the forward" not in msg


def test_retain_graph_records_no_freeing_call(sites) -> None:
    x = cr.ones(2, requires_grad=True)
    z = (x**2) * 4
    z.sum().backward(retain_graph=True)
    assert getattr(z.grad_fn, "_freed_at", None) is None
    z.sum().backward()
    assert z.grad_fn._freed_at is not None
    assert x.grad.tolist() == [16.0, 16.0]


def test_second_backward_through_custom_function(sites) -> None:
    class Square(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    a = cr.tensor([3.0], requires_grad=True)
    fwd = next_line()
    y = Square.apply(a)
    bwd = next_line()
    y.backward()
    msg = error(lambda: y.backward())
    func = "test_second_backward_through_custom_function"
    assert (
        f"SquareBackward (created by the forward at {site(fwd, func, 'y = Square.apply(a)')})"
        f" were freed by the backward call at {site(bwd, func, 'y.backward()')}" in msg
    )


def test_anomaly_mode_records_forward_sites() -> None:
    assert not is_record_sites_enabled()
    with cr.autograd.detect_anomaly():
        x = cr.ones(2, requires_grad=True)
        line = next_line()
        y = x.exp()
    assert y.grad_fn._site is not None
    y.sum().backward()
    msg = error(lambda: y.sum().backward())
    assert (
        f"ExpBackward0 (created by the forward at "
        f"{site(line, 'test_anomaly_mode_records_forward_sites', 'y = x.exp()')})" in msg
    )


def test_set_record_sites_toggles_and_restores() -> None:
    assert not is_record_sites_enabled()
    with set_record_sites(True):
        assert is_record_sites_enabled()
        y = cr.ones(2, requires_grad=True) * 2
        with set_record_sites(False):
            w = cr.ones(2, requires_grad=True) * 2
    assert not is_record_sites_enabled()
    assert y.grad_fn._site is not None
    assert getattr(w.grad_fn, "_site", None) is None
    set_record_sites(True)
    try:
        assert is_record_sites_enabled()
    finally:
        set_record_sites(False)


# --- modified by an inplace operation -----------------------------------------------------


def test_modified_output_names_save_and_inplace_lines(sites) -> None:
    a = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    fwd = next_line()
    b = a.sigmoid()
    ip = next_line()
    b.mul_(2)
    msg = error(lambda: b.sum().backward())
    func = "test_modified_output_names_save_and_inplace_lines"
    assert msg.startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]], which is output 0 of Sigmoid, is at version 1; "
        "expected version 0 instead."
    )
    assert msg.endswith(
        f"\n  saved for SigmoidBackward0 by the forward at {site(fwd, func, 'b = a.sigmoid()')}"
        f"\n  modified in place at {site(ip, func, 'b.mul_(2)')}"
    )


def test_inplace_site_is_recorded_without_forward_sites() -> None:
    a = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 2
    c = b * b
    ip = next_line()
    b[1] = 0.0  # through indexing: a view and copy_
    msg = error(lambda: c.sum().backward())
    func = "test_inplace_site_is_recorded_without_forward_sites"
    text = "b[1] = 0.0  # through indexing: a view and copy_"
    assert msg.endswith(
        "\n  (chainrule.autograd.graph.set_record_sites(True) or anomaly mode would also name "
        "the forward line that created the node.)"
        f"\n  modified in place at {site(ip, func, text)}"
    )


def test_inplace_on_a_view_changes_a_saved_input(sites) -> None:
    a = cr.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a * 1
    fwd = next_line()
    c = b * b
    v = b[1:3]
    ip = next_line()
    v.add_(1)
    msg = error(lambda: c.sum().backward())
    func = "test_inplace_on_a_view_changes_a_saved_input"
    assert f"\n  saved for MulBackward0 by the forward at {site(fwd, func, 'c = b * b')}" in msg
    assert f"\n  modified in place at {site(ip, func, 'v.add_(1)')}" in msg


def test_gan_step_ordering_names_parameter_step_and_forward(sites) -> None:
    cr.manual_seed(0)
    netG = nn.Sequential(nn.Linear(2, 2))
    netD = nn.Sequential(nn.Linear(2, 1))
    optimizerD = optim.SGD(netD.parameters(), lr=0.1)
    fake = netG(cr.randn(4, 2))
    fwd = next_line()
    fake_out = netD(fake)
    d_loss = fake_out.mean()
    d_loss.backward(retain_graph=True)
    step = next_line()
    optimizerD.step()
    g_loss = (1 - fake_out).mean()
    msg = error(lambda: g_loss.backward())
    func = "test_gan_step_ordering_names_parameter_step_and_forward"
    assert "(the parameter '0.weight') is at version 2; expected version 1 instead" in msg
    assert msg.endswith(
        f"\n  saved for AddmmBackward0 by the forward at {site(fwd, func, 'fake_out = netD(fake)')}"
        f"\n  modified in place at {site(step, func, 'optimizerD.step()')}"
    )


def test_fresh_counter_has_no_write_and_bumps_record_one() -> None:
    t = cr.ones(2, requires_grad=True)
    y = t * 2  # saves nothing of t's, but makes y's counter lazily when saved
    vc = y._get_vc()
    assert vc.value == 0 and getattr(vc, "last_write", None) is None
    with cr.no_grad():
        line = next_line()
        y.add_(1)
    assert vc.value == 1
    code, _ = vc.last_write
    assert (
        code.co_filename == __file__
        and code.co_name == "test_fresh_counter_has_no_write_and_bumps_record_one"
    )
    from chainrule.autograd.graph import site_line

    assert site_line(vc.last_write) == line


# --- shape errors in hooks and custom Functions ---------------------------------------------


def test_tensor_hook_shape_error_names_node(sites) -> None:
    x = cr.ones(3, requires_grad=True)
    fwd = next_line()
    y = x * 2
    y.register_hook(lambda g: g[:2])
    msg = error(lambda: y.sum().backward())
    assert msg == (
        "hook '<lambda>' has changed the size of value: expected [3], got [2]. The hook is "
        "registered on output 0 of MulBackward0 (created by the forward at "
        f"{site(fwd, 'test_tensor_hook_shape_error_names_node', 'y = x * 2')}); it must return a "
        "gradient of the shape it was given (or None to keep it)."
    )


def test_leaf_hook_shape_error_names_parameter() -> None:
    lin = nn.Linear(3, 2)
    lin.weight.register_hook(lambda g: g[0])
    msg = error(lambda: lin(cr.ones(1, 3)).sum().backward())
    assert msg.startswith(
        "hook '<lambda>' has changed the size of value: expected [2, 3], got [3]."
    )
    assert "The hook is registered on the parameter 'weight';" in msg

    def halve(g):
        return g[:1]

    x = cr.ones(2, requires_grad=True)
    x.register_hook(halve)
    msg = error(lambda: (x * 2).sum().backward())
    assert msg.startswith("hook 'halve' has changed the size of value: expected [2], got [1].")
    assert "registered on a leaf tensor of shape [2]" in msg


def test_node_pre_and_post_hook_shape_errors(sites) -> None:
    x = cr.ones(3, requires_grad=True)
    fwd = next_line()
    y = x * 2
    y.grad_fn.register_prehook(lambda gout: (gout[0][:2],))
    msg = error(lambda: y.sum().backward())
    func = "test_node_pre_and_post_hook_shape_errors"
    created = f"(created by the forward at {site(fwd, func, 'y = x * 2')})"
    assert msg.startswith("hook '<lambda>' has changed the size of value: expected [3], got [2].")
    assert f"The hook is a pre-hook of MulBackward0 {created}, at output 0;" in msg

    x = cr.ones(3, requires_grad=True)
    fwd = next_line()
    y = x * 2
    y.grad_fn.register_hook(lambda gin, gout: (cr.ones(4), None))
    msg = error(lambda: y.sum().backward())
    created = f"(created by the forward at {site(fwd, func, 'y = x * 2')})"
    assert msg.startswith("hook '<lambda>' has changed the size of value: expected [3], got [4].")
    assert f"The hook is a post-hook of MulBackward0 {created}, at input 0;" in msg


class WrongShape(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g[:2]


def test_custom_function_shape_error_names_node_and_backward(sites) -> None:
    x = cr.ones(3, requires_grad=True)
    fwd = next_line()
    y = WrongShape.apply(x)
    msg = error(lambda: y.sum().backward())
    back = WrongShape.backward.__code__.co_firstlineno
    func = "test_custom_function_shape_error_names_node_and_backward"
    assert msg == (
        "Function WrongShapeBackward returned an invalid gradient at index 0 - got [2] but "
        "expected shape compatible with [3]. WrongShapeBackward (created by the forward at "
        f"{site(fwd, func, 'y = WrongShape.apply(x)')}; its backward is WrongShape.backward at "
        f"{HERE}:{back})"
    )


def test_custom_function_shape_error_without_sites() -> None:
    msg = error(lambda: WrongShape.apply(cr.ones(3, requires_grad=True)).sum().backward())
    back = WrongShape.backward.__code__.co_firstlineno
    assert msg == (
        "Function WrongShapeBackward returned an invalid gradient at index 0 - got [2] but "
        "expected shape compatible with [3]. WrongShapeBackward (its backward is "
        f"WrongShape.backward at {HERE}:{back})"
    )


# --- memory: saved_bytes ---------------------------------------------------------------------


def _saved_arrays_sum(out) -> int:
    """Independent count: the nbytes of every distinct array reachable as a saved value."""
    seen, total, stack, done = set(), 0, [out.grad_fn], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in done:
            continue
        done.add(id(n))
        for s in n._saved_tensors():
            if s.data is not None and id(s.data) not in seen:
                seen.add(id(s.data))
                total += s.data.nbytes
        stack.extend(c for c, _ in n.next_functions)
    return total


def test_saved_bytes_is_the_sum_of_saved_arrays() -> None:
    x = cr.randn(4, 5, requires_grad=True)
    w = cr.randn(5, 3, requires_grad=True)
    h = (x @ w).tanh()  # mm saves x and w; tanh saves its output
    loss = (h * h).sum()  # mul saves h twice: one array
    expect = x._data.nbytes + w._data.nbytes + h._data.nbytes
    assert saved_bytes(loss) == _saved_arrays_sum(loss) == expect == 80 + 60 + 48
    loss.backward(retain_graph=True)
    assert saved_bytes(loss) == expect  # retained
    loss.backward()
    assert saved_bytes(loss) == 0


def test_saved_bytes_counts_aux_arrays() -> None:
    x = cr.randn(3, 4, requires_grad=True)
    vals, _ = x.max(dim=1)
    y = vals.sum()
    aux = y.grad_fn.next_functions[0][0]._aux
    arrays = [
        a
        for v in aux.values()
        for a in (v if isinstance(v, tuple) else (v,))
        if isinstance(a, np.ndarray)
    ]
    assert arrays
    assert saved_bytes(y) == sum(a.nbytes for a in arrays)
    y.backward()
    assert saved_bytes(y) == 0


def test_saved_bytes_counts_packed_values() -> None:
    x = cr.randn(10, requires_grad=True)

    def pack(t):
        return (t.detach().numpy().astype(np.float16), "tag")  # what the hook keeps: 20 bytes

    def unpack(p):
        return cr.from_numpy(p[0].astype(np.float32))

    with cr.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sum()  # two saved values, packed separately
    assert saved_bytes(y) == 2 * 20
    with cr.autograd.graph.save_on_cpu():
        z = x.exp().sum()  # exp saves its output: a host copy
    assert saved_bytes(z) == 40
    y.backward()
    z.backward()
    assert saved_bytes(y) == saved_bytes(z) == 0
    assert np.allclose(
        x.grad.numpy(), 2 * x.detach().numpy() + np.exp(x.detach().numpy()), rtol=1e-2
    )
