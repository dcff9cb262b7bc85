"""utils.checkpoint: real recomputation, gradients equal to the plain run and to torch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule
from chainrule import nn
from chainrule.autograd.graph import saved_bytes
from chainrule.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")
tcp = pytest.importorskip("torch.utils.checkpoint")

MODES = [True, False]


def _pair(dropout=0.0):
    """The same MLP in torch and chainrule (chainrule's weights copied from torch's)."""
    torch.manual_seed(0)
    layers = [
        torch.nn.Linear(6, 16),
        torch.nn.Tanh(),
        torch.nn.Dropout(dropout),
        torch.nn.Linear(16, 16),
        torch.nn.GELU(),
        torch.nn.Linear(16, 3),
    ]
    tm = torch.nn.Sequential(*layers).double()
    cm = nn.Sequential(
        nn.Linear(6, 16),
        nn.Tanh(),
        nn.Dropout(dropout),
        nn.Linear(16, 16),
        nn.GELU(),
        nn.Linear(16, 3),
    ).double()
    with chainrule.no_grad():
        for p, q in zip(cm.parameters(), tm.parameters()):
            p.copy_(chainrule.from_numpy(q.detach().numpy().copy()))
    return tm, cm


def _grads(model, x):
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]


def _clear(model, x):
    x.grad = None
    model.zero_grad()


@pytest.mark.parametrize("reentrant", MODES)
def test_gradients_equal_plain_run_and_torch(reentrant):
    tm, cm = _pair()
    xt = torch.randn(5, 6, dtype=torch.float64, requires_grad=True)
    tcp.checkpoint(tm, xt, use_reentrant=reentrant).pow(2).sum().backward()
    want = [xt.grad.numpy()] + [p.grad.numpy() for p in tm.parameters()]
    x = chainrule.from_numpy(xt.detach().numpy().copy()).requires_grad_()
    cm(x).pow(2).sum().backward()
    plain = _grads(cm, x)
    _clear(cm, x)
    y = checkpoint(cm, x, use_reentrant=reentrant)
    np.testing.assert_allclose(y.detach().numpy(), tm(xt).detach().numpy(), rtol=1e-12)
    y.pow(2).sum().backward()
    for a, b, c in zip(_grads(cm, x), plain, want):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reentrant", MODES)
def test_activations_are_not_kept(reentrant):
    _, cm = _pair()
    x = chainrule.randn(64, 6, dtype=chainrule.float64, requires_grad=True)
    plain = saved_bytes(cm(x))
    y = checkpoint(cm, x, use_reentrant=reentrant)
    assert plain > 64 * 16 * 8  # the plain graph keeps hidden activations
    # Reentrant: one node that keeps only its input; non-reentrant: the same graph as the
    # plain run, whose saved values are handles holding no arrays.
    assert saved_bytes(y) == (x.numel() * 8 if reentrant else 0)
    if reentrant:
        assert y.grad_fn.name() == "CheckpointFunctionBackward"
        # One edge per Tensor argument, as in PyTorch (the function and the preserve flag
        # get none): x's, to its AccumulateGrad; the segment's layers are not in the graph.
        nexts = [f.name() if f is not None else None for f, _ in y.grad_fn.next_functions]
        assert nexts == ["torch::autograd::AccumulateGrad"]
    else:
        assert y.grad_fn.name() == cm(x).grad_fn.name()


@pytest.mark.parametrize("reentrant", MODES)
def test_recomputation_runs_the_function_again_each_backward(reentrant):
    def counted(lib):
        calls = [0]

        def f(a):
            calls[0] += 1
            return a.sin().exp()

        return f, calls

    for lib, ck, x in (
        (torch, tcp.checkpoint, torch.randn(4, requires_grad=True)),
        (chainrule, checkpoint, chainrule.randn(4, requires_grad=True)),
    ):
        f, calls = counted(lib)
        y = ck(f, x, use_reentrant=reentrant)
        assert calls == [1]
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        if lib is torch:
            want = calls[0]
        else:
            assert calls[0] == want == 3


def test_dropout_mask_is_the_same_in_the_recomputation():
    _, cm = _pair(dropout=0.5)
    x = chainrule.randn(8, 6, dtype=chainrule.float64, requires_grad=True)
    chainrule.manual_seed(7)
    cm(x).sum().backward()
    plain = _grads(cm, x)
    for reentrant in MODES:
        _clear(cm, x)
        chainrule.manual_seed(7)
        checkpoint(cm, x, use_reentrant=reentrant).sum().backward()
        for a, b in zip(_grads(cm, x), plain):
            np.testing.assert_array_equal(a, b)
        # Without preserving the RNG state the recomputation draws another mask.
        _clear(cm, x)
        chainrule.manual_seed(7)
        checkpoint(cm, x, use_reentrant=reentrant, preserve_rng_state=False).sum().backward()
        assert not np.array_equal(_grads(cm, x)[0], plain[0])
        # The random stream after the backward is where the plain run leaves it.
        _clear(cm, x)
        chainrule.manual_seed(7)
        checkpoint(cm, x, use_reentrant=reentrant).sum().backward()
        after_ckpt = chainrule.rand(3).tolist()
        chainrule.manual_seed(7)
        cm(x).sum().backward()
        assert after_ckpt == chainrule.rand(3).tolist()


def test_non_reentrant_supports_grad_inputs_and_double_backward():
    x = chainrule.randn(5, dtype=chainrule.float64, requires_grad=True)
    w = chainrule.randn(5, dtype=chainrule.float64, requires_grad=True)

    def f(a, b, *, scale):
        return (a * b).tanh() * scale

    (g_plain,) = chainrule.autograd.grad(f(x, w, scale=2.0).sum(), x, create_graph=True)
    (gg_plain,) = chainrule.autograd.grad(g_plain.sum(), w)
    y = checkpoint(f, x, w, use_reentrant=False, scale=2.0)
    (g,) = chainrule.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = chainrule.autograd.grad(g.sum(), w)
    np.testing.assert_array_equal(g.detach().numpy(), g_plain.detach().numpy())
    np.testing.assert_allclose(gg.numpy(), gg_plain.numpy(), rtol=1e-12)
    assert w.grad is None  # autograd.grad accumulates nothing
    assert chainrule.autograd.gradcheck(
        lambda a, b: checkpoint(f, a, b, use_reentrant=False, scale=2.0), (x, w)
    )
    assert chainrule.autograd.gradgradcheck(
        lambda a, b: checkpoint(f, a, b, use_reentrant=False, scale=2.0), (x, w)
    )


@pytest.mark.parametrize("reentrant", MODES)
def test_several_outputs_and_non_tensor_arguments(reentrant):
    def f(a, k, b):
        return a * k, (a + b).sigmoid(), "tag"

    xs = [np.random.default_rng(1).standard_normal(4) for _ in range(2)]
    res = []
    for lib, ck in ((torch, tcp.checkpoint), (chainrule, checkpoint)):
        a = lib.tensor(xs[0], requires_grad=True)
        b = lib.tensor(xs[1], requires_grad=True)
        u, v, tag = ck(f, a, 3.0, b, use_reentrant=reentrant)
        assert tag == "tag"
        (u.sum() + (v * v).sum()).backward()
        res.append((a.grad.numpy(), b.grad.numpy()))
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_warnings_and_errors_as_torch():
    x = chainrule.randn(3, requires_grad=True)
    xt = torch.randn(3, requires_grad=True)
    for ck, a in ((tcp.checkpoint, xt), (checkpoint, x)):
        with pytest.warns(UserWarning) as rec:
            ck(lambda v: v.sin(), a)
        msgs = [str(r.message) for r in rec]
        if ck is tcp.checkpoint:
            want = msgs
        else:
            assert msgs == want
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(lambda v: v.sin(), chainrule.randn(3), use_reentrant=True)
    assert not y.requires_grad
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint(lambda v: v, x, use_reentrant=True, foo=1)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda v: v, x, use_reentrant=True, context_fn=lambda: (None, None))
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(lambda v: v, x, use_reentrant=False, determinism_check="yes")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with chainrule.no_grad():
            for reentrant in MODES:
                assert not checkpoint(lambda v: v * 2, x, use_reentrant=reentrant).requires_grad


def test_determinism_check():
    calls = [0]

    def changing(a):
        calls[0] += 1
        return a[: calls[0]].sin().sum()

    x = chainrule.randn(5, requires_grad=True)
    with pytest.raises(CheckpointError) as e:
        checkpoint(changing, x, use_reentrant=False).backward()
    xt = torch.randn(5, requires_grad=True)
    calls[0] = 0
    with pytest.raises(tcp.CheckpointError) as et:
        tcp.checkpoint(changing, xt, use_reentrant=False).backward()
    first = str(et.value).split("tensor at position")[0]
    assert str(e.value).startswith(first)
    assert "saved metadata: {'shape': chainrule.Size([1])" in str(e.value)


def test_context_fn_wraps_forward_and_recomputation():
    seen = []

    class Ctx:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            seen.append(self.name)

        def __exit__(self, *exc):
            pass

    x = chainrule.randn(3, requires_grad=True)
    y = checkpoint(
        lambda a: a.exp(), x, use_reentrant=False, context_fn=lambda: (Ctx("fwd"), Ctx("re"))
    )
    assert seen == ["fwd"]
    y.sum().backward()
    assert seen == ["fwd", "re"]
    np.testing.assert_allclose(x.grad.numpy(), x.exp().detach().numpy())


@pytest.mark.parametrize("reentrant", MODES)
@pytest.mark.parametrize("segments", [1, 2, 3, 6])
def test_checkpoint_sequential_matches_torch(reentrant, segments):
    tm, cm = _pair()
    xt = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    tcp.checkpoint_sequential(tm, segments, xt, use_reentrant=reentrant).sum().backward()
    x = chainrule.from_numpy(xt.detach().numpy().copy()).requires_grad_()
    y = checkpoint_sequential(cm, segments, x, use_reentrant=reentrant)
    y.sum().backward()
    want = [xt.grad.numpy()] + [p.grad.numpy() for p in tm.parameters()]
    for a, b in zip(_grads(cm, x), want):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    # Every segment but the last keeps no activations.
    if segments == 6 and not reentrant:
        assert saved_bytes(y) < saved_bytes(cm(x)) / 4
    with pytest.raises(ValueError, match="range"):
        checkpoint_sequential([cm[0]], 2, x, use_reentrant=reentrant)
    with pytest.raises(ValueError, match="range"):
        tcp.checkpoint_sequential([tm[0]], 2, xt, use_reentrant=reentrant)


def test_reachable_as_torch_utils_checkpoint():
    assert chainrule.utils.checkpoint.checkpoint is checkpoint


def test_reentrant_refuses_grad_and_backward_inputs_as_torch():
    import torch

    def seg(lib):
        return lambda a: (a * a).sin()

    msgs = []
    for lib in (chainrule, torch):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        from_lib = lib.utils.checkpoint.checkpoint
        errs = []
        y = from_lib(seg(lib), x, use_reentrant=True).sum()
        with pytest.raises(RuntimeError) as e:
            lib.autograd.grad(y, x)
        errs.append(str(e.value))
        y = from_lib(seg(lib), x, use_reentrant=True).sum()
        with pytest.raises(RuntimeError) as e:
            y.backward(inputs=[x])
        errs.append(str(e.value))
        assert x.grad is None  # nothing accumulated before the refusal
        # a plain backward still works, and the flag is back to true after the failures
        assert lib.autograd._is_checkpoint_valid()
        y = from_lib(seg(lib), x, use_reentrant=True).sum()
        y.backward()
        np.testing.assert_allclose(
            np.asarray(x.grad.tolist()),
            2 * np.array([0.5, -1.0, 2.0]) * np.cos([0.25, 1.0, 4.0]),
            rtol=1e-6,
        )
        msgs.append(errs)
    assert msgs[0] == msgs[1]
    assert "use_reentrant=True" in msgs[0][0]
