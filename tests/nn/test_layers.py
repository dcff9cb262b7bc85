"""Layers against torch.nn: repr, parameter/buffer layout, forward values and gradients.

Each case builds the layer in both libraries, copies torch's parameters and buffers into the
chainrule layer through ``load_state_dict``, runs the same input and compares outputs, the
input's gradient and the parameters' gradients.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn

R = np.random.default_rng(0)


def _x(*shape):
    return R.standard_normal(shape).astype(np.float32)


# (constructor call written against the torch.nn API, input arrays)
CASES = {
    "Linear": (lambda m: m.nn.Linear(3, 4), [_x(2, 3)]),
    "Linear-nobias": (lambda m: m.nn.Linear(3, 4, bias=False), [_x(5, 2, 3)]),
    "Bilinear": (lambda m: m.nn.Bilinear(2, 3, 4), [_x(5, 2), _x(5, 3)]),
    "Conv1d": (lambda m: m.nn.Conv1d(2, 4, 3, stride=2, padding=1), [_x(2, 2, 7)]),
    "Conv2d": (lambda m: m.nn.Conv2d(2, 4, 3, padding=1, bias=False), [_x(1, 2, 5, 5)]),
    "Conv2d-groups": (
        lambda m: m.nn.Conv2d(4, 4, (3, 2), stride=(2, 1), groups=2, dilation=1),
        [_x(2, 4, 6, 5)],
    ),
    "Conv2d-same": (lambda m: m.nn.Conv2d(2, 3, 3, padding="same", dilation=2), [_x(1, 2, 6, 6)]),
    "Conv2d-reflect": (
        lambda m: m.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
        [_x(1, 2, 5, 5)],
    ),
    "ConvTranspose2d": (
        lambda m: m.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
        [_x(1, 3, 4, 4)],
    ),
    "BatchNorm1d": (lambda m: m.nn.BatchNorm1d(3), [_x(4, 3)]),
    "BatchNorm1d-3d": (lambda m: m.nn.BatchNorm1d(3, momentum=None), [_x(4, 3, 2)]),
    "BatchNorm2d": (lambda m: m.nn.BatchNorm2d(2, affine=False), [_x(3, 2, 2, 2)]),
    "BatchNorm2d-nostats": (
        lambda m: m.nn.BatchNorm2d(2, track_running_stats=False),
        [_x(3, 2, 2, 2)],
    ),
    "LayerNorm": (lambda m: m.nn.LayerNorm([2, 3]), [_x(4, 2, 3)]),
    "LayerNorm-nobias": (lambda m: m.nn.LayerNorm(3, bias=False, eps=1e-3), [_x(4, 3)]),
    "GroupNorm": (lambda m: m.nn.GroupNorm(2, 4), [_x(2, 4, 3)]),
    "Embedding": (
        lambda m: m.nn.Embedding(5, 3, padding_idx=1),
        [np.array([[0, 1, 4], [1, 2, 2]])],
    ),
    "ReLU": (lambda m: m.nn.ReLU(), [_x(3, 4)]),
    "LeakyReLU": (lambda m: m.nn.LeakyReLU(0.2), [_x(3, 4)]),
    "PReLU": (lambda m: m.nn.PReLU(3), [_x(2, 3, 4)]),
    "ELU": (lambda m: m.nn.ELU(alpha=0.5), [_x(3, 4)]),
    "GELU": (lambda m: m.nn.GELU(), [_x(3, 4)]),
    "GELU-tanh": (lambda m: m.nn.GELU(approximate="tanh"), [_x(3, 4)]),
    "SiLU": (lambda m: m.nn.SiLU(), [_x(3, 4)]),
    "Sigmoid": (lambda m: m.nn.Sigmoid(), [_x(3, 4)]),
    "Tanh": (lambda m: m.nn.Tanh(), [_x(3, 4)]),
    "Softmax": (lambda m: m.nn.Softmax(dim=1), [_x(3, 4)]),
    "LogSoftmax": (lambda m: m.nn.LogSoftmax(dim=-1), [_x(3, 4)]),
    "Flatten": (lambda m: m.nn.Flatten(), [_x(2, 3, 4)]),
    "Unflatten": (lambda m: m.nn.Unflatten(1, (2, 3)), [_x(4, 6)]),
    "PixelShuffle": (lambda m: m.nn.PixelShuffle(2), [_x(1, 8, 2, 3)]),
    "PixelUnshuffle": (lambda m: m.nn.PixelUnshuffle(2), [_x(1, 2, 4, 6)]),
    "Upsample": (lambda m: m.nn.Upsample(scale_factor=2), [_x(1, 2, 3, 3)]),
    "Upsample-bilinear": (
        lambda m: m.nn.Upsample(size=(5, 4), mode="bilinear", align_corners=False),
        [_x(1, 2, 3, 3)],
    ),
    "MaxPool2d": (lambda m: m.nn.MaxPool2d(2), [_x(1, 2, 4, 5)]),
    "MaxPool2d-pad": (
        lambda m: m.nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
        [_x(1, 2, 5, 5)],
    ),
    "AvgPool2d": (lambda m: m.nn.AvgPool2d(2, stride=1), [_x(1, 2, 4, 4)]),
    "AdaptiveAvgPool2d": (lambda m: m.nn.AdaptiveAvgPool2d((2, 3)), [_x(1, 2, 5, 7)]),
    "Identity": (lambda m: m.nn.Identity(3, unused=True), [_x(2, 2)]),
    "Dropout-eval": (lambda m: m.nn.Dropout(0.3).eval(), [_x(3, 4)]),
    "Dropout2d-eval": (lambda m: m.nn.Dropout2d(0.3).eval(), [_x(1, 3, 2, 2)]),
}

T = R.standard_normal((4, 5)).astype(np.float32)
LOSSES = {
    "MSELoss": (lambda m: m.nn.MSELoss(), [_x(4, 5), T]),
    "L1Loss": (lambda m: m.nn.L1Loss(reduction="sum"), [_x(4, 5), T]),
    "SmoothL1Loss": (lambda m: m.nn.SmoothL1Loss(beta=0.5), [_x(4, 5), T]),
    "HuberLoss": (lambda m: m.nn.HuberLoss(delta=0.7, reduction="none"), [_x(4, 5), T]),
    "CrossEntropyLoss": (
        lambda m: m.nn.CrossEntropyLoss(label_smoothing=0.1),
        [_x(4, 5), np.array([0, 3, 4, 1])],
    ),
    "CrossEntropyLoss-weight": (
        lambda m: m.nn.CrossEntropyLoss(weight=m.tensor([1.0, 2.0, 0.5, 1.0, 1.0]), ignore_index=1),
        [_x(4, 5), np.array([0, 1, 4, 2])],
    ),
    "NLLLoss": (lambda m: m.nn.NLLLoss(reduction="sum"), [_x(4, 5), np.array([0, 3, 4, 1])]),
    "BCELoss": (
        lambda m: m.nn.BCELoss(),
        [
            R.uniform(0.05, 0.95, (4, 5)).astype(np.float32),
            R.uniform(0, 1, (4, 5)).astype(np.float32),
        ],
    ),
    "BCEWithLogitsLoss": (
        lambda m: m.nn.BCEWithLogitsLoss(pos_weight=m.full((5,), 2.0)),
        [_x(4, 5), R.uniform(0, 1, (4, 5)).astype(np.float32)],
    ),
    "KLDivLoss": (
        lambda m: m.nn.KLDivLoss(reduction="batchmean"),
        [_x(4, 5), R.uniform(0.1, 1, (4, 5)).astype(np.float32)],
    ),
}


def _norm(s):
    return s.replace("chainrule.", "torch.")


def _pair(make):
    torch.manual_seed(0)
    b = make(torch)
    a = make(chainrule)
    return a, b


def _copy_state(a, b):
    sd = {k: chainrule.tensor(v.detach().numpy().copy()) for k, v in b.state_dict().items()}
    a.load_state_dict(sd)


def _inputs(m, arrays, grad_first=True):
    out = []
    for i, arr in enumerate(arrays):
        t = m.tensor(arr)
        if arr.dtype.kind == "f" and (i == 0 or not grad_first):
            t.requires_grad_(True)
        out.append(t)
    return out


def _check_forward(a, b, arrays, rtol=1e-5, atol=1e-6):
    xa, xb = _inputs(chainrule, arrays), _inputs(torch, arrays)
    ya, yb = a(*xa), b(*xb)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=rtol, atol=atol)
    assert ya.dtype == chainrule.float32
    if yb.requires_grad:
        gw = R.standard_normal(tuple(yb.shape)).astype(np.float32)
        (ya * chainrule.tensor(gw)).sum().backward()
        (yb * torch.tensor(gw)).sum().backward()
        for ta, tb in zip(xa, xb):
            if tb.requires_grad:
                np.testing.assert_allclose(ta.grad.numpy(), tb.grad.numpy(), rtol=1e-4, atol=1e-5)
        for (n, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
            np.testing.assert_allclose(
                pa.grad.numpy(), pb.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=n
            )
    for (n, ba), (_, bb) in zip(a.named_buffers(), b.named_buffers()):
        np.testing.assert_allclose(ba.numpy(), bb.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)


@pytest.mark.parametrize("name", list(CASES) + list(LOSSES))
def test_layout_and_repr_match_torch(name):
    make, _ = {**CASES, **LOSSES}[name]
    a, b = _pair(make)
    assert _norm(repr(a)) == repr(b)
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for k in sb:
        assert tuple(sa[k].shape) == tuple(sb[k].shape), k
        assert _norm(repr(sa[k].dtype)) == repr(sb[k].dtype), k
    assert [n for n, _ in a.named_parameters()] == [n for n, _ in b.named_parameters()]
    assert [p.requires_grad for p in a.parameters()] == [p.requires_grad for p in b.parameters()]


@pytest.mark.parametrize("name", list(CASES))
def test_forward_and_grads_match_torch(name):
    make, arrays = CASES[name]
    a, b = _pair(make)
    _copy_state(a, b)
    _check_forward(a, b, arrays)


@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_matches_torch(name):
    make, arrays = LOSSES[name]
    a, b = _pair(make)
    _check_forward(a, b, arrays)


def test_batchnorm_running_stats_and_eval():
    for momentum in (0.1, None):
        a, b = _pair(lambda m: m.nn.BatchNorm2d(3, momentum=momentum))
        for _ in range(3):
            x = _x(4, 3, 2, 2)
            a(chainrule.tensor(x))
            b(torch.tensor(x))
        assert int(a.num_batches_tracked) == 3 and a.num_batches_tracked.dtype == chainrule.int64
        for k in ("running_mean", "running_var"):
            np.testing.assert_allclose(getattr(a, k).numpy(), getattr(b, k).numpy(), rtol=1e-5)
        a.eval()
        b.eval()
        _check_forward(a, b, [_x(2, 3, 2, 2)])
        assert int(a.num_batches_tracked) == 3


def test_batchnorm_input_dim_errors_match_torch():
    msgs = []
    for m in (chainrule, torch):
        with pytest.raises(ValueError) as e:
            m.nn.BatchNorm2d(3)(m.zeros(2, 3))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == "expected 4D input (got 2D input)"


def test_dropout_train_mode():
    chainrule.manual_seed(0)
    d = nn.Dropout(0.5)
    y = d(chainrule.ones(1000)).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert 350 < (y == 0).sum() < 650
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    d.eval()
    np.testing.assert_array_equal(d(chainrule.ones(3)).numpy(), np.ones(3, np.float32))


def test_dropout2d_train_mode():
    chainrule.manual_seed(0)
    d2 = nn.Dropout2d(0.5)
    y2 = d2(chainrule.ones(2, 50, 3, 3)).numpy()
    per_channel = y2.reshape(100, 9)
    assert all(len(set(row)) == 1 for row in per_channel)
    assert set(np.unique(y2)) <= {0.0, 2.0}


def test_embedding_padding_row_zero_and_from_pretrained():
    e = nn.Embedding(4, 2, padding_idx=-1)
    assert e.padding_idx == 3
    np.testing.assert_array_equal(e.weight.detach().numpy()[3], [0, 0])
    w = chainrule.arange(6.0).reshape(3, 2)
    f = nn.Embedding.from_pretrained(w)
    assert not f.weight.requires_grad and f.weight.shape == (3, 2)


def test_convtranspose_output_size():
    a, b = _pair(lambda m: m.nn.ConvTranspose2d(2, 2, 3, stride=2))
    _copy_state(a, b)
    x = _x(1, 2, 3, 3)
    ya = a(chainrule.tensor(x), output_size=[8, 8])
    yb = b(torch.tensor(x), output_size=[8, 8])
    assert tuple(ya.shape) == tuple(yb.shape) == (1, 2, 8, 8)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_constructor_errors_match_torch():
    def errs(m):
        out = []
        for bad in (
            lambda: m.nn.Conv2d(3, 4, 3, groups=2),
            lambda: m.nn.Conv2d(4, 3, 3, groups=2),
            lambda: m.nn.Conv2d(2, 2, 3, padding="full"),
            lambda: m.nn.Conv2d(2, 2, 3, stride=2, padding="same"),
            lambda: m.nn.GroupNorm(3, 4),
        ):
            with pytest.raises(ValueError) as e:
                bad()
            out.append(str(e.value))
        return out

    assert errs(chainrule) == errs(torch)


def test_linear_reset_parameters_bounds():
    lin = nn.Linear(50, 400)
    bound = 1 / np.sqrt(50)
    w = lin.weight.detach().numpy()
    b = lin.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound
    # U(-a, a) has std a / sqrt(3).
    assert abs(w.std() - bound / np.sqrt(3)) < 0.05 * bound
    conv = nn.Conv2d(4, 8, 3)
    cb = 1 / np.sqrt(4 * 9)
    assert np.abs(conv.weight.detach().numpy()).max() <= cb
    assert np.abs(conv.bias.detach().numpy()).max() <= cb
