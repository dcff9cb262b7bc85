"""float16 matrix products on the CPU computed in float32 and rounded once, as PyTorch's
(Note [float16 products in float32] in ops/linalg/products.py; issue #15)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
import chainrule.nn.functional as CF

Product = Callable[[Any, Any, list[Any]], Any]
PRODUCTS: dict[str, tuple[list[tuple[int, ...]], Product]] = {
    "matmul": ([(5, 7), (7, 3)], lambda m, F, t: m.matmul(t[0], t[1])),
    "@_batched": ([(2, 1, 4, 9), (3, 9, 2)], lambda m, F, t: t[0] @ t[1]),
    "mm": ([(6, 40), (40, 5)], lambda m, F, t: m.mm(t[0], t[1])),
    "bmm": ([(3, 4, 50), (3, 50, 6)], lambda m, F, t: m.bmm(t[0], t[1])),
    "mv": ([(4, 30), (30,)], lambda m, F, t: m.mv(t[0], t[1])),
    "dot": ([(60,), (60,)], lambda m, F, t: m.dot(t[0], t[1])),
    "matmul_1d_2d": ([(9,), (9, 4)], lambda m, F, t: m.matmul(t[0], t[1])),
    "linear": ([(5, 20), (7, 20)], lambda m, F, t: F.linear(t[0], t[1])),
    "linear_bias": ([(5, 20), (7, 20), (7,)], lambda m, F, t: F.linear(t[0], t[1], t[2])),
    "linear_3d_bias": ([(2, 3, 20), (7, 20), (7,)], lambda m, F, t: F.linear(*t)),
    "addmm": ([(4, 6), (4, 30), (30, 6)], lambda m, F, t: m.addmm(t[0], t[1], t[2])),
    "addmm_alpha_beta": (
        [(4, 6), (4, 30), (30, 6)],
        lambda m, F, t: m.addmm(t[0], t[1], t[2], beta=0.5, alpha=3.0),
    ),
    "addmv": ([(4,), (4, 30), (30,)], lambda m, F, t: m.addmv(t[0], t[1], t[2])),
    "baddbmm": ([(2, 3, 4), (2, 3, 25), (2, 25, 4)], lambda m, F, t: m.baddbmm(*t, alpha=2.0)),
}


def _inputs(shapes: list[tuple[int, ...]], seed: int, integers: bool = False) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if integers:  # every float32 sum exact, in any order; float16 partial sums would round
        return [rng.integers(-60, 61, s).astype(np.float16) for s in shapes]
    return [rng.standard_normal(s).astype(np.float16) for s in shapes]


def _both(name: str, xs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    f = PRODUCTS[name][1]
    want = f(torch, TF, [torch.tensor(x) for x in xs]).numpy()
    got = f(cr, CF, [cr.tensor(x) for x in xs]).numpy()
    assert got.dtype == np.float16 and got.shape == want.shape
    return got, want


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_half_products_bitwise_as_torch(name: str, seed: int) -> None:
    # Integer inputs: the float32 accumulation is exact whatever its order, so PyTorch's
    # float32-then-round-once result is one set of bits (sums reach 10^5: float16 partial sums,
    # NumPy's old loop, round at 2048)
    got, want = _both(name, _inputs(PRODUCTS[name][0], seed, integers=True))
    assert np.abs(want).max() > 2048
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_half_products_random_within_one_ulp_of_torch(name: str) -> None:
    # Random inputs: the float32 sums of two BLAS orders can round to neighbouring float16s
    got, want = _both(name, _inputs(PRODUCTS[name][0], 11))
    ulp = np.spacing(np.abs(want)).astype(np.float64)
    assert np.all(np.abs(got.astype(np.float64) - want) <= ulp)
    assert np.mean(got != want) < 0.05


@pytest.mark.parametrize("m, k, n", [(8, 4096, 8), (2, 20000, 3), (64, 768, 96)])
def test_large_half_products_round_the_float32_product_once(m: int, k: int, n: int) -> None:
    a, b = _inputs([(m, k), (k, n)], 7)
    got = (cr.tensor(a) @ cr.tensor(b)).numpy()
    # the float32 product rounded once (not float16 partial sums)
    once = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(got.view(np.uint16), once.view(np.uint16))
    # and PyTorch's: equal but for rare one-ulp differences of the float32 summation order
    want = (torch.tensor(a) @ torch.tensor(b)).numpy()
    ulp = np.spacing(np.abs(want)).astype(np.float64)
    assert np.all(np.abs(got.astype(np.float64) - want) <= ulp)
    assert np.mean(got != want) < 0.01


def test_half_product_gradients_as_torch() -> None:
    a, b = _inputs([(6, 40), (40, 5)], 3, integers=True)
    g = _inputs([(6, 5)], 4, integers=True)[0]
    grads = []
    for m in (torch, cr):
        ta, tb = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        (ta @ tb).backward(m.tensor(g))
        grads.append((ta.grad.numpy(), tb.grad.numpy()))
    for got, want in zip(grads[1], grads[0]):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_bfloat16_products_as_torch() -> None:
    a, b = (x.astype(np.float32) for x in _inputs([(5, 300), (300, 4)], 5))
    want = (torch.tensor(a).bfloat16() @ torch.tensor(b).bfloat16()).float().numpy()
    got = (cr.tensor(a).bfloat16() @ cr.tensor(b).bfloat16()).float().numpy()
    np.testing.assert_array_equal(got, want)
