"""relu, hardtanh, relu6 and threshold (out of place and in place) give PyTorch's gradient bit
for bit: its threshold_backward and hardtanh_backward select (where(mask, g, 0)), so a masked
element is +0 even for a negative, infinite or NaN incoming gradient (a product g * mask gives
-0 and NaN there). leaky_relu multiplies (g * slope), as PyTorch's leaky_relu_backward."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

_X = [-1.0, 0.5, 2.0, -3.0, 0.0, 7.0, float("nan"), -0.0, 1.0, -1.0]
_G = [-1.0, -2.0, float("inf"), float("nan"), -5.0, -6.0, -7.0, -8.0, float("-inf"), -0.0]
# PyTorch's hardtanh_backward gives a NaN x g in its scalar loop and 0 in its vector loop (the
# chunk a NaN falls in depends on its position and the CPU's vector width): no NaN x for it
_HARD = ("hardtanh", "hardtanh_", "relu6", "relu6_module")

_FNS = {
    "relu": lambda L, F, x: F.relu(x),
    "relu_method": lambda L, F, x: x.relu(),
    "relu_": lambda L, F, x: F.relu_(x * 1),
    "relu_inplace": lambda L, F, x: F.relu(x * 1, inplace=True),
    "hardtanh": lambda L, F, x: F.hardtanh(x),
    "hardtanh_": lambda L, F, x: F.hardtanh_(x * 1, -0.5, 1.5),
    "relu6": lambda L, F, x: F.relu6(x),
    "relu6_module": lambda L, F, x: L.nn.ReLU6()(x),
    "threshold": lambda L, F, x: F.threshold(x, 0.6, 9.0),
    "threshold_": lambda L, F, x: F.threshold_(x * 1, 0.6, 9.0),
    "threshold_inplace": lambda L, F, x: F.threshold(x * 1, 0.6, 9.0, inplace=True),
    "leaky_relu_0": lambda L, F, x: F.leaky_relu(x, 0.0),
    "leaky_relu": lambda L, F, x: F.leaky_relu(x, 0.1),
}


def _grad(lib: object, name: str, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    L: object = lib
    F = L.nn.functional  # type: ignore[attr-defined]
    dt = getattr(L, dtype)
    n = int(np.prod(shape))
    reps = -(-n // len(_X))
    xs = [4.0 if name in _HARD and v != v else v for v in _X]
    x = L.tensor((xs * reps)[:n], dtype=dt).reshape(shape).requires_grad_()  # type: ignore[attr-defined]
    g = L.tensor((_G * reps)[:n], dtype=dt).reshape(shape)  # type: ignore[attr-defined]
    _FNS[name](L, F, x).backward(g)  # type: ignore[operator]
    return x.grad.detach().numpy()


@pytest.mark.parametrize("shape", [(10,), (8, 32, 33)])  # small (where) and large (bit mask)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", sorted(_FNS))
def test_mask_grad_bits_match_torch(name: str, dtype: str, shape: tuple[int, ...]) -> None:
    if name == "leaky_relu" and dtype == "float16":
        pytest.skip("PyTorch multiplies a half g by the slope in float32 (its opmath type)")
    want = _grad(torch, name, dtype, shape)
    got = _grad(cr, name, dtype, shape)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_second_derivative_still_zeros() -> None:
    # the selection is still an op of x (Note [connected masks]): d/dx of relu's gradient is 0
    x = cr.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    (gx,) = cr.autograd.grad(cr.relu(x).mul(3).sum(), x, create_graph=True)
    assert gx.tolist() == [0.0, 3.0, 3.0]
    (ggx,) = cr.autograd.grad(gx.sum(), x, allow_unused=True)
    assert ggx is not None and ggx.tolist() == [0.0, 0.0, 0.0]
