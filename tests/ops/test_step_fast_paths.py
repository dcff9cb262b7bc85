"""The large-array fast paths of the SRGAN step's elementwise work (issue 19): LeakyReLU's
forward into its temporary and its backward as ``g * f`` (no per-element branch), checked bit
for bit against PyTorch on arrays above the size where they switch on, with the awkward values
(signed zeros, infinities, NaNs) in both the input and the gradient."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule.ops.unary import elementwise

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(19)
SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40, -1e-40]


def _data(shape: tuple[int, ...], dt: type) -> tuple[np.ndarray, np.ndarray]:
    x = RNG.standard_normal(shape).astype(dt)
    g = RNG.standard_normal(shape).astype(dt)
    x.flat[: len(SPECIAL)] = SPECIAL
    g.flat[len(SPECIAL) : 2 * len(SPECIAL)] = SPECIAL
    g.flat[: len(SPECIAL)] = SPECIAL[::-1]
    return x, g


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True)
    assert np.array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("slope", [0.2, 0.01, 1.0, 3.0, -0.5, 0.0])
def test_leaky_relu_large_matches_torch_bitwise(dt: type, slope: float) -> None:
    shape = (4, 8, 16, 16)
    assert np.prod(shape) >= elementwise._FACTOR_MIN
    x, g = _data(shape, dt)
    a = cr.tensor(x, requires_grad=True)
    ya = cr.nn.functional.leaky_relu(a, slope)
    ya.backward(cr.tensor(g))
    b = torch.tensor(x, requires_grad=True)
    yb = torch.nn.functional.leaky_relu(b, slope)
    yb.backward(torch.tensor(g))
    _same(ya.detach().numpy(), yb.detach().numpy())
    assert a.grad is not None and b.grad is not None
    _same(a.grad.numpy(), b.grad.numpy())


def test_slope_select_is_where() -> None:
    """The factor form against the ``where`` it replaces, float16 included (where PyTorch
    rounds differently, so NumPy's own ``where`` is the reference)."""
    for dt in (np.float16, np.float32, np.float64):
        x, g = _data((64, 128), dt)
        for slope in (0.2, 0.3, 1e-3, 0.999):
            got = elementwise._slope_select(np, x > 0, g, slope)
            _same(got, np.where(x > 0, g, g * slope))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("channels", [1, 8])
def test_prelu_large_matches_torch(dt: type, channels: int) -> None:
    """PReLU's input gradient as ``g * f`` with per-channel slopes (bit for bit, as PyTorch's
    select), the slope gradient to rounding."""
    x, g = _data((4, 8, 16, 16), dt)
    slopes = np.linspace(-0.5, 1.5, channels).astype(dt)
    if channels > 1:
        slopes[1] = 0.25
    a = cr.tensor(x, requires_grad=True)
    wa = cr.tensor(slopes, requires_grad=True)
    ya = cr.nn.functional.prelu(a, wa)
    ya.backward(cr.tensor(g))
    b = torch.tensor(x, requires_grad=True)
    wb = torch.tensor(slopes, requires_grad=True)
    yb = torch.nn.functional.prelu(b, wb)
    yb.backward(torch.tensor(g))
    # (the forward's sign of a zero times a negative slope is not PyTorch's: not this change)
    assert np.array_equal(ya.detach().numpy(), yb.detach().numpy(), equal_nan=True)
    assert a.grad is not None and b.grad is not None
    _same(a.grad.numpy(), b.grad.numpy())
    assert wa.grad is not None and wb.grad is not None
    np.testing.assert_allclose(wa.grad.numpy(), wb.grad.numpy(), rtol=1e-5, equal_nan=True)


def test_slope_select_array_slopes_is_where() -> None:
    x, g = _data((4, 8, 32), np.float32)
    for slopes in ([0.25] * 8, list(np.linspace(-2, 3, 8)), [0.1, np.nan, np.inf] + [0.3] * 5):
        a = np.asarray(slopes, np.float32)[:, None]
        _same(elementwise._slope_select(np, x > 0, g, a), np.where(x > 0, g, g * a))
