"""Rows for ops/complex_numbers.py and the Wirtinger VJPs of the core ops on complex tensors.

The op table's samples are real arrays, so each row builds its complex tensor inside the call:
an input of shape (..., 2) is viewed as complex (``view_as_complex``), and a complex result
is viewed back as real (``view_as_real``). gradcheck in float64 then runs every VJP on
complex128 tensors, and the PyTorch comparison checks the Wirtinger gradients as PyTorch
defines them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def c(m: Any, x: Any) -> Any:
    """The complex view of a (..., 2) real tensor."""
    return m.view_as_complex(x)


def r(m: Any, y: Any) -> Any:
    """A complex result viewed as real (..., 2); a real one as it is."""
    return m.view_as_real(y.resolve_conj()) if y.is_complex() else y


def cplx(*shapes: tuple[int, ...], low: float = -2.0, high: float = 2.0, name: str = "") -> Any:
    """Samples of complex inputs (as (..., 2) real arrays) of the given shapes."""

    def gen(rng: np.random.Generator) -> list[Sample]:
        args = tuple(rng.uniform(low, high, s + (2,)) for s in shapes)
        return [Sample(args, name=name or "x".join(map(str, shapes[0])) or "scalar")]

    return gen


def _away_from_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    mag = rng.uniform(0.5, 2.0, shape)
    ang = rng.uniform(-3.0, 3.0, shape)
    return np.stack([mag * np.cos(ang), mag * np.sin(ang)], -1)


def nonzero(*shapes: tuple[int, ...]) -> Any:
    def gen(rng: np.random.Generator) -> list[Sample]:
        return [Sample(tuple(_away_from_zero(rng, s) for s in shapes))]

    return gen


OPS = [
    OpInfo("real", lambda m, x: r(m, c(m, x).real * 1.0), samples=cplx((3, 2))),
    OpInfo("imag", lambda m, x: r(m, c(m, x).imag * 1.0), samples=cplx((3, 2))),
    OpInfo(
        "view_as_real",
        lambda m, x: m.view_as_real(c(m, x) * 2.0),
        covers=("view_as_real", "view_as_complex"),
        samples=cplx((2, 3)),
    ),
    OpInfo(
        "view_as_real_copy",
        lambda m, x: m.view_as_real_copy(c(m, x) * (1 + 1j)),
        covers=(),
        samples=cplx((3,)),
    ),
    OpInfo(
        "complex",
        lambda m, a, b: r(m, m.complex(a, b)),
        samples=lambda rng: [
            Sample((rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (2, 3)))),
            Sample((rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (3,))), name="bcast"),
        ],
    ),
    OpInfo(
        "polar",
        lambda m, a, b: r(m, m.polar(a, b)),
        covers=(),
        samples=lambda rng: [Sample((rng.uniform(0.5, 2, (2, 3)), rng.uniform(-3, 3, (2, 3))))],
    ),
    OpInfo("conj", lambda m, x: r(m, c(m, x).conj() * 1.0), samples=cplx((4,))),
    OpInfo("conj_physical", lambda m, x: r(m, m.conj_physical(c(m, x))), samples=cplx((4,))),
    # The core ops on complex tensors (Note [Wirtinger gradients]).
    OpInfo(
        "complex_mul", lambda m, a, b: r(m, c(m, a) * c(m, b)), covers=(), samples=cplx((3,), (3,))
    ),
    OpInfo(
        "complex_mul_real",
        lambda m, a, b: r(m, c(m, a) * b),
        covers=(),
        samples=lambda rng: [Sample((rng.uniform(-2, 2, (3, 2)), rng.uniform(-2, 2, (3,))))],
    ),
    OpInfo(
        "complex_add",
        lambda m, a, b: r(m, c(m, a) + c(m, b) - 1j),
        covers=(),
        samples=cplx((3,), (3,)),
    ),
    OpInfo(
        "complex_div",
        lambda m, a, b: r(m, c(m, a) / c(m, b)),
        covers=(),
        samples=nonzero((3,), (3,)),
    ),
    OpInfo("complex_rdiv", lambda m, a: r(m, (2 - 1j) / c(m, a)), covers=(), samples=nonzero((3,))),
    OpInfo("complex_exp", lambda m, a: r(m, m.exp(c(m, a))), covers=(), samples=cplx((3,))),
    OpInfo("complex_log", lambda m, a: r(m, m.log(c(m, a))), covers=(), samples=nonzero((3,))),
    OpInfo("complex_sqrt", lambda m, a: r(m, m.sqrt(c(m, a))), covers=(), samples=nonzero((3,))),
    OpInfo(
        "complex_reciprocal",
        lambda m, a: r(m, m.reciprocal(c(m, a))),
        covers=(),
        samples=nonzero((3,)),
    ),
    OpInfo("complex_abs", lambda m, a: m.abs(c(m, a)), covers=(), samples=nonzero((2, 3))),
    OpInfo("complex_angle", lambda m, a: m.angle(c(m, a)), covers=(), samples=nonzero((2, 3))),
    OpInfo(
        "complex_trig",
        lambda m, a: r(m, m.sin(c(m, a)) + m.cos(c(m, a)) * m.tanh(c(m, a))),
        covers=(),
        samples=cplx((3,), low=-1, high=1),
    ),
    OpInfo(
        "complex_more_unary",
        lambda m, a: r(
            m,
            m.expm1(c(m, a))
            + m.log1p(c(m, a))
            + m.log2(c(m, a))
            + m.log10(c(m, a))
            + m.rsqrt(c(m, a))
            + m.tan(c(m, a))
            + m.sinh(c(m, a))
            + m.cosh(c(m, a))
            + m.asin(c(m, a) * 0.5)
            + m.acos(c(m, a) * 0.5)
            + m.atan(c(m, a) * 0.5),
        ),
        covers=(),
        samples=nonzero((3,)),
    ),
    OpInfo(
        "complex_pow",
        lambda m, a, b: r(m, c(m, a) ** 3 + c(m, a) ** (0.5 + 1j) + c(m, a) ** c(m, b)),
        covers=(),
        samples=nonzero((3,), (3,)),
    ),
    OpInfo(
        "complex_sum_mean",
        lambda m, a: r(m, c(m, a).sum(0) * c(m, a).mean()),
        covers=(),
        samples=cplx((3, 2)),
    ),
    OpInfo(
        "complex_matmul",
        lambda m, a, b: r(m, c(m, a) @ c(m, b)),
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (2, 3, 2)), rng.uniform(-1, 1, (3, 4, 2))), name="mm"),
            Sample((rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (2, 3, 2, 2))), name="vec_bmm"),
            Sample((rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 2))), name="dot"),
        ],
    ),
    OpInfo(
        "complex_matmul_t",
        lambda m, a, b: r(m, c(m, a) @ c(m, b).transpose(0, 1)),
        covers=(),
        samples=lambda rng: [
            Sample((rng.uniform(-1, 1, (2, 3, 2)), rng.uniform(-1, 1, (4, 3, 2))))
        ],
    ),
    OpInfo(
        "complex_sgn_adjoint",
        lambda m, a: r(m, m.sgn(c(m, a)).adjoint()),
        covers=(),
        samples=nonzero((2, 3)),
    ),
]

# Complex gradients of the activations, inverse hyperbolic functions and products
# (docs/complex.md, "Gradients").
OPS += [
    OpInfo(
        "complex_sigmoid_exp2_sinc",
        lambda m, a: r(m, m.sigmoid(c(m, a)) + m.exp2(c(m, a)) * m.sinc(c(m, a) * 0.5)),
        covers=(),
        samples=cplx((3,), low=-1, high=1),
    ),
    OpInfo(
        "complex_inverse_hyperbolic",
        lambda m, a: r(m, m.asinh(c(m, a)) + m.acosh(c(m, a) + 2.0) * m.atanh(c(m, a) * 0.5)),
        covers=(),
        samples=nonzero((3,)),
    ),
    OpInfo(
        "complex_prod",
        lambda m, a: r(m, m.prod(c(m, a)) + m.prod(c(m, a), 0).sum() * m.prod(c(m, a), 1)),
        covers=(),
        samples=nonzero((3, 4)),
    ),
    OpInfo(
        "complex_prod_zeros",
        # one zero in column 0, two in column 1, none elsewhere: every branch of the VJP
        lambda m, a: r(
            m,
            m.prod(c(m, a) * m.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]), 0),
        ),
        covers=(),
        samples=nonzero((3, 3)),
    ),
    OpInfo(
        "complex_cumprod",
        lambda m, a: r(
            m,
            m.cumprod(c(m, a), 1)
            + m.cumprod(c(m, a) * m.tensor([[1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]), 1),
        ),
        covers=(),
        samples=nonzero((2, 4)),
    ),
    OpInfo(
        "complex_logsumexp",
        lambda m, a: r(m, m.logsumexp(c(m, a), 1)),
        covers=(),
        samples=cplx((2, 3), low=-1, high=1),
    ),
]
