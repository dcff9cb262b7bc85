"""In-place ops inside graphs, version counters, views of tensors in graphs (CopySlices and
stale views), and the GAN ordering error. PyTorch is the oracle: each snippet runs in both."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _np(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return [_np(e) for e in x]
    if isinstance(x, cr.Tensor):
        return np.array(x.detach().numpy())
    return x.detach().numpy()


def both(fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    return fn(cr), fn(torch)


def same(fn: Callable[[Any], Any], tol: float = 1e-6) -> None:
    a, b = both(fn)
    a, b = _np(a), _np(b)
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            if x is None or y is None:
                assert x is None and y is None
            else:
                np.testing.assert_allclose(x, y, rtol=tol, atol=tol)
    else:
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def error_of(fn: Callable[[Any], Any], m: Any) -> str:
    with pytest.raises(Exception) as ei:
        fn(m)
    return str(ei.value)


X = [0.5, -1.0, 2.0, 0.25]


@pytest.mark.parametrize(
    "method,args",
    [
        ("add_", (1.5,)),
        ("sub_", (0.5,)),
        ("mul_", (3.0,)),
        ("div_", (4.0,)),
        ("pow_", (2,)),
        ("relu_", ()),
        ("sigmoid_", ()),
        ("tanh_", ()),
        ("exp_", ()),
        ("zero_", ()),
        ("fill_", (2.0,)),
        ("neg_", ()),
        ("abs_", ()),
        ("sin_", ()),
        ("cos_", ()),
    ],
)
def test_inplace_method_in_graph(method: str, args: tuple[Any, ...]) -> None:
    def f(m: Any) -> Any:
        x = m.tensor(X, dtype=m.float64, requires_grad=True)
        y = x * 1.5
        r = getattr(y, method)(*args)
        assert r is y
        (y * m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)).sum().backward()
        return [y, x.grad, m.tensor(float(y._version))]

    same(f)


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/=", "**="])
def test_augmented_assignment(op: str) -> None:
    def f(m: Any) -> Any:
        x = m.tensor(X, dtype=m.float64, requires_grad=True)
        w = m.tensor([1.0, 2.0, -1.0, 0.5], dtype=m.float64, requires_grad=True)
        y = x * 2
        z = y
        ns = {"y": y, "w": w}
        exec(f"y {op} (w if '{op}' != '**=' else 2)", ns)
        assert ns["y"] is z
        ns["y"].sum().backward()
        return [ns["y"], x.grad, w.grad]

    same(f)


def test_tensor_operands_get_gradients() -> None:
    def f(m: Any) -> Any:
        x = m.tensor(X, dtype=m.float64, requires_grad=True)
        w = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        y = x * 1.0
        y.mul_(w).add_(w, alpha=2).div_(w + 1).sub_(x)
        y.pow_(w * 0.5)
        y.sum().backward()
        return [y, x.grad, w.grad]

    same(f)


def test_setitem_and_copy_into_buffer() -> None:
    def f(m: Any) -> Any:
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        buf = m.zeros(4, dtype=m.float64)
        buf[1:3] = x * 2
        buf[0] = x[1] ** 2
        out = buf.clone()
        out.copy_(buf * buf)
        (out * m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)).sum().backward()
        return [buf, out, x.grad]

    same(f)


def _names(node: Any) -> list[str]:
    # PyTorch's name() spells it torch::autograd::CopySlices; both print <CopySlices ...>.
    return [
        None if n is None else n.name().replace("torch::autograd::", "")
        for n, _ in node.next_functions
    ]


def test_setitem_graph_matches_torch() -> None:
    """``Y[i] = y`` gives CopySlices whose second edge is y's own node (no copy node between),
    a broadcast or wider-dtype source gets its gradient summed back and cast, and an explicit
    view written with copy_ keeps a working history."""

    def f(m: Any) -> Any:
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        s = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        Y = m.zeros(3, 4)  # float32
        Y[0] = x[0] * 3 + x[1]
        Y[1, 1:] = x * x  # float64 source into a float32 buffer
        Y[2] = s * 5  # a 0-d source broadcast to the row
        v = Y[:, :2]
        v.copy_(m.ones(3, 1, dtype=m.float64) * s)
        names = [_names(Y.grad_fn), _names(Y.grad_fn.next_functions[0][0])]
        (Y * m.arange(12.0).reshape(3, 4)).sum().backward(retain_graph=True)
        gx, gs = x.grad.clone(), s.grad.clone()
        x.grad = s.grad = None
        (v * v).sum().backward()
        return names, [Y, gx, gs, x.grad if x.grad is not None else m.zeros(3), s.grad]

    (na, va), (nb, vb) = both(f)
    assert na == nb == [["CopySlices", "MulBackward0"], ["CopySlices", "MulBackward0"]]
    for a, b in zip(_np(va), _np(vb)):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_setitem_and_copy_errors_match_torch(requires_grad: bool) -> None:
    cases = [
        lambda m: m.zeros(3, 4).__setitem__(0, m.ones(5, requires_grad=requires_grad)),
        lambda m: m.zeros(3, 4).__setitem__(0, m.ones(2, 4, requires_grad=requires_grad)),
        lambda m: m.zeros(3, 4)[0].copy_(m.ones(3, requires_grad=requires_grad)),
        lambda m: m.zeros(3, 4)[0].copy_(m.ones(2, 4, requires_grad=requires_grad)),
        lambda m: m.zeros(3, 4).copy_(m.ones(2, 4, requires_grad=requires_grad)),
        lambda m: m.zeros(3, 4).__setitem__(slice(None), [1.0, 2.0]),
        lambda m: m.zeros(3, 4).__setitem__(0, np.ones(4)),
        lambda m: m.zeros(3, 4).__setitem__(([0, 1],), None),
        lambda m: m.ones(3, requires_grad=True).copy_(m.ones(4)),
        lambda m: m.ones(3, requires_grad=True).__setitem__(slice(0, 2), m.ones(4)),
    ]
    for fn in cases:
        assert error_of(fn, cr) == error_of(fn, torch)

    def overlap(m: Any) -> Any:
        d = m.arange(5.0, requires_grad=requires_grad) * 1
        d[1:] = d[:-1]

    assert "refer to a single memory location" in error_of(overlap, torch)
    assert error_of(overlap, cr) == error_of(overlap, torch)

    def allowed(m: Any) -> Any:  # full or strided overlap and disjoint blocks are allowed
        b = m.arange(6.0)
        b.copy_(b)
        b[::2] = b[1::2]
        c = m.arange(6.0).reshape(2, 3)
        c[0] = c[1]
        return [b, c]

    same(allowed)


def test_version_counter_shared_by_views_and_detach() -> None:
    def f(m: Any) -> Any:
        a = m.zeros(4)
        v = a[1:3]
        d = a.detach()
        vv = v.view(2, 1)
        v.add_(1)
        d.mul_(2)
        vv.zero_()
        return [m.tensor([a._version, v._version, d._version, vv._version]), a]

    same(f)


def test_modified_saved_tensor_error_matches_torch() -> None:
    def f(m: Any) -> None:
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.sigmoid()
        b.mul_(2)
        b.sum().backward()  # SigmoidBackward0 saved its output, now modified

    e1, e2 = error_of(f, cr), error_of(f, torch)
    head = "one of the variables needed for gradient computation has been modified by an inplace"
    assert e1.startswith(head) and e2.startswith(head)
    # PyTorch's own text, up to its hint, starts ours.
    assert e1.startswith(e2.split(" Hint:")[0])
    assert (
        "[torch.FloatTensor [3]], which is output 0 of Sigmoid, is at version 1; "
        "expected version 0 instead" in e1
    )


def test_saved_input_version_error() -> None:
    def f(m: Any) -> None:
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * 2
        c = b * b
        b.add_(1)
        c.sum().backward()

    e1, e2 = error_of(f, cr), error_of(f, torch)
    assert "is at version 1; expected version 0 instead" in e1
    assert "is at version 1; expected version 0 instead" in e2
    # b's producer is now the in-place add, as PyTorch reports it
    assert "output 0 of Add," in e1 and e1.startswith(e2.split(" Hint:")[0])


def test_leaf_inplace_errors_and_no_grad_update() -> None:
    def f(m: Any) -> str:
        w = m.tensor([1.0, 2.0], requires_grad=True)
        w.add_(1)
        return ""

    assert (
        error_of(f, cr)
        == error_of(f, torch)
        == ("a leaf Variable that requires grad is being used in an in-place operation.")
    )

    def g(m: Any) -> Any:
        w = m.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        with m.no_grad():
            w.sub_(0.1 * w.grad)
            w.mul_(2)
        return [
            w,
            m.tensor(float(w._version)),
            m.tensor(float(w.is_leaf)),
            m.tensor(float(w.requires_grad)),
        ]

    same(g)

    def h(m: Any) -> None:
        w = m.tensor([1.0, 2.0], requires_grad=True)
        w[0].mul_(2)

    assert error_of(h, cr) == error_of(h, torch)


def test_inplace_on_view_rewrites_base_history() -> None:
    def f(m: Any) -> Any:
        a = m.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=m.float64, requires_grad=True)
        base = a * 1.0
        v = base.view(2, 3)
        v[0].mul_(a[:3])  # a view of a view, multiplied by a tensor in the graph
        v[:, 1:].exp_()
        (base * m.arange(6, dtype=m.float64)).sum().backward()
        return [base, a.grad, m.tensor(float(base._version))]

    same(f)


def test_other_views_of_modified_base_get_fresh_history() -> None:
    def f(m: Any) -> Any:
        a = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64, requires_grad=True)
        base = a * 1
        v1 = base[:2]
        v2 = base[1:3]
        v3 = v2[1:]
        v1.mul_(3)
        res = []
        for t in (v2, v3, base):
            a.grad = None
            (t * t).sum().backward(retain_graph=True)
            res.append(a.grad.clone())
        # A direct in-place change to the base is seen by its old views too.
        base.add_(a)
        a.grad = None
        (v2 * 10).sum().backward(retain_graph=True)
        res.append(a.grad.clone())
        return res

    same(f)


def test_data_and_detach_share_storage_not_history() -> None:
    def f(m: Any) -> Any:
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = a * 3
        d = b.detach()
        dd = b.data
        assert d.grad_fn is None and dd.grad_fn is None and not d.requires_grad
        dd.add_(1)  # not seen by version checks (as in PyTorch)
        b.sum().backward()
        return [b, a.grad, m.tensor(float(b._version)), m.tensor(float(d._version))]

    same(f)


def test_gan_step_between_forward_and_backward_is_rejected() -> None:
    def f(m: Any) -> None:
        w = m.tensor([[0.5, -0.3], [0.2, 0.4]], requires_grad=True)
        w._param_name = "discriminator.weight"
        g = m.tensor([[1.0, 2.0]], requires_grad=True)  # generator weights
        z = g * 1.5  # the generated sample, in the generator's graph
        fake_out = (z @ w).tanh()
        d_loss = fake_out.sum()
        d_loss.backward(retain_graph=True)
        with m.no_grad():
            w.sub_(0.1 * w.grad)  # optimizerD.step()
        g_loss = (1 - fake_out).pow(2).sum()
        g_loss.backward()

    e1 = error_of(f, cr)
    e2 = error_of(f, torch)
    head = "one of the variables needed for gradient computation has been modified by an inplace"
    assert e1.startswith(head) and e2.startswith(head)
    assert "is at version 1; expected version 0 instead" in e1
    assert "is at version 1; expected version 0 instead" in e2
    assert "discriminator.weight" in e1

    def g(m: Any) -> None:  # the weight saved through a view of it (as linear does)
        w = m.tensor([[0.5, -0.3], [0.2, 0.4]], requires_grad=True)
        w._param_name = "fc.weight"
        x = m.tensor([[1.0, 2.0]], requires_grad=True) * 1
        out = x @ w.t()
        with m.no_grad():
            w.mul_(0.5)
        out.sum().backward()

    e1, e2 = error_of(g, cr), error_of(g, torch)
    assert "fc.weight" in e1 and "is at version 1; expected version 0 instead" in e2


def test_gan_modern_ordering_works() -> None:
    def f(m: Any) -> Any:
        wd = m.tensor([[0.5, -0.3], [0.2, 0.4]], requires_grad=True)
        wg = m.tensor([[1.0, 0.1], [0.0, 1.0]], requires_grad=True)
        z = m.tensor([[1.0, 2.0]])
        fake = z @ wg
        d_loss = (fake.detach() @ wd).tanh().sum()
        d_loss.backward()
        with m.no_grad():
            wd.sub_(0.1 * wd.grad)
        wd.grad = None
        g_loss = (1 - (fake @ wd).tanh()).pow(2).sum()
        g_loss.backward()
        return [wd, wg.grad, wd.grad]

    same(f)


def test_inplace_ops_from_other_families() -> None:
    def f(m: Any) -> Any:
        x = m.tensor([0.5, -1.0, 2.0, 0.25], dtype=m.float64, requires_grad=True)
        s = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x * 2
        y.clamp_(-1.0, 3.0)
        y.masked_fill_(m.tensor([True, False, False, False]), 7.0)
        y.index_add_(0, m.tensor([1, 3]), s)
        y.scatter_(0, m.tensor([2]), s[:1] * 3)
        y.scatter_add_(0, m.tensor([0, 0]), s * s)
        y[1:].clamp_(min=0.5).clamp_max_(4.0)
        (y * m.arange(4, dtype=m.float64)).sum().backward()
        return [y, x.grad, s.grad]

    same(f)
