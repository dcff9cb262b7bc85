"""The channel-last input-gradient plan of stride-1 convs (``ops/_conv_inputgrad.py``) against
torch: the SRGAN shapes, odd shapes, and gradcheck in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
from chainrule.ops import _conv_inputgrad

CASES = [
    # x shape, weight shape, padding, dilation, groups
    ((8, 32, 16, 16), (64, 32, 3, 3), 1, 1, 1),  # SRGAN discriminator 32 -> 64
    ((8, 32, 16, 16), (128, 32, 3, 3), 1, 1, 1),  # SRGAN upsampling conv
    ((1, 4, 7, 5), (9, 4, 3, 3), 0, 1, 1),  # batch 1, no padding, odd sizes
    ((2, 4, 6, 9), (8, 4, 3, 2), (2, 0), 1, 1),  # padding wider than k - 1 on rows
    ((2, 5, 8, 8), (12, 5, 5, 5), 2, 1, 1),
    ((2, 4, 9, 9), (8, 4, 3, 3), 1, 2, 1),  # dilation: the conv2d-forward plan
    ((2, 8, 6, 6), (16, 4, 3, 3), 1, 1, 2),  # groups: the conv2d-forward plan
    ((2, 8, 6, 6), (8, 8, 3, 3), 1, 1, 1),  # O = C: the conv2d-forward plan
]


def _grads(lib, x, w, g, padding, dilation, groups, transpose_x):
    xt = lib.tensor(x, requires_grad=True)
    wt = lib.tensor(w, requires_grad=True)
    xin = xt.transpose(2, 3).contiguous().transpose(2, 3) if transpose_x else xt
    y = lib.nn.functional.conv2d(xin, wt, padding=padding, dilation=dilation, groups=groups)
    y.backward(lib.tensor(g))
    return xt.grad.numpy(), wt.grad.numpy()


@pytest.mark.parametrize("xs,ws,padding,dilation,groups", CASES)
@pytest.mark.parametrize("transpose_x", [False, True])
def test_input_grad_matches_torch(xs, ws, padding, dilation, groups, transpose_x):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    y = torch.nn.functional.conv2d(
        torch.tensor(x), torch.tensor(w), padding=padding, dilation=dilation, groups=groups
    )
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    got = _grads(chainrule, x, w, g, padding, dilation, groups, transpose_x)
    ref = _grads(torch, x, w, g, padding, dilation, groups, transpose_x)
    for a, b in zip(got, ref):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * np.abs(b).max())


def test_plan_is_reached(monkeypatch):
    """The SRGAN 32 -> 64 input gradient goes through transpose_shifted (counted)."""
    calls = []
    real = _conv_inputgrad.transpose_shifted

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(_conv_inputgrad, "transpose_shifted", spy)
    rng = np.random.default_rng(1)
    x = chainrule.tensor(rng.standard_normal((2, 4, 6, 6)), requires_grad=True)
    w = chainrule.tensor(rng.standard_normal((8, 4, 3, 3)))
    chainrule.nn.functional.conv2d(x, w, padding=1).sum().backward()
    assert calls


@pytest.mark.parametrize("padding", [0, 1, 3])
def test_gradcheck_float64(padding):
    rng = np.random.default_rng(2)
    x = chainrule.tensor(rng.standard_normal((2, 4, 5, 6)), requires_grad=True)
    w = chainrule.tensor(rng.standard_normal((8, 4, 3, 2)), requires_grad=True)
    assert chainrule.autograd.gradcheck(
        lambda a, b: chainrule.nn.functional.conv2d(a, b, padding=padding), (x, w)
    )
    assert chainrule.autograd.gradgradcheck(
        lambda a, b: chainrule.nn.functional.conv2d(a, b, padding=padding), (x, w)
    )


STRIDED = [
    # x shape, weight shape, stride, padding
    ((8, 64, 16, 16), (64, 64, 3, 3), 2, 1),  # SRGAN discriminator's last strided conv
    ((1, 3, 7, 9), (5, 3, 3, 3), 2, 0),  # batch 1, no padding, odd sizes (rows left over)
    ((2, 4, 8, 8), (6, 4, 2, 3), (3, 2), (1, 0)),
    ((2, 4, 10, 10), (6, 4, 3, 3), 2, 2),  # padding > kernel reach
]


@pytest.mark.parametrize("xs,ws,stride,padding", STRIDED)
@pytest.mark.parametrize("transpose_x", [False, True])
def test_strided_input_grad_matches_torch(xs, ws, stride, padding, transpose_x):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)

    def grads(lib):
        xt = lib.tensor(x, requires_grad=True)
        wt = lib.tensor(w, requires_grad=True)
        xin = xt.transpose(2, 3).contiguous().transpose(2, 3) if transpose_x else xt
        y = lib.nn.functional.conv2d(xin, wt, stride=stride, padding=padding)
        g = lib.tensor(np.random.default_rng(4).standard_normal(tuple(y.shape)).astype(np.float32))
        y.backward(g)
        return xt.grad.numpy(), wt.grad.numpy()

    for a, b in zip(grads(chainrule), grads(torch)):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * np.abs(b).max())


def test_strided_plan_is_reached(monkeypatch):
    calls = []
    real = _conv_inputgrad.transpose_strided
    monkeypatch.setattr(
        _conv_inputgrad, "transpose_strided", lambda *a: calls.append(1) or real(*a)
    )
    x = chainrule.tensor(np.ones((2, 4, 8, 8)), requires_grad=True)
    w = chainrule.tensor(np.ones((4, 4, 3, 3)))
    chainrule.nn.functional.conv2d(x, w, stride=2, padding=1).sum().backward()
    assert calls


@pytest.mark.parametrize("stride,padding", [(2, 0), (2, 1), ((3, 2), (2, 1))])
def test_strided_gradcheck_float64(stride, padding):
    rng = np.random.default_rng(5)
    x = chainrule.tensor(rng.standard_normal((2, 3, 7, 6)), requires_grad=True)
    w = chainrule.tensor(rng.standard_normal((4, 3, 3, 2)), requires_grad=True)

    def f(a, b):
        return chainrule.nn.functional.conv2d(a, b, stride=stride, padding=padding)

    assert chainrule.autograd.gradcheck(f, (x, w))
    assert chainrule.autograd.gradgradcheck(f, (x, w))
