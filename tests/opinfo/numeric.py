"""OpInfo rows for chainrule/ops/numeric.py (values and gradients vs PyTorch, gradcheck in
float64)."""

from __future__ import annotations

import warnings

import numpy as np

from tests.opinfo.core import OpInfo, Sample, binary_samples, elementwise


def _ints(rng: np.random.Generator, shape: tuple[int, ...], lo: int, hi: int) -> np.ndarray:
    return rng.integers(lo, hi, shape).astype(np.int64)


def _int_pairs(lo: int, hi: int, lo_b: int, hi_b: int):
    def gen(rng: np.random.Generator) -> list[Sample]:
        return [
            Sample((_ints(rng, (2, 3), lo, hi), _ints(rng, (2, 3), lo_b, hi_b)), name="same"),
            Sample((_ints(rng, (4, 1), lo, hi), _ints(rng, (3,), lo_b, hi_b)), name="bcast"),
            Sample((_ints(rng, (5,), lo, hi), _ints(rng, (), lo_b, hi_b)), name="0d"),
            Sample(
                (np.array([0, 0, -6, 7], dtype=np.int64), np.array([0, 5, 4, -21])),
                name="zeros_negatives",
            ),
        ]

    return gen


def _shift_samples(rng: np.random.Generator) -> list[Sample]:
    return [
        Sample((_ints(rng, (2, 3), -50, 50), _ints(rng, (2, 3), 0, 8)), name="same"),
        Sample((_ints(rng, (4,), -50, 50), 2), name="scalar"),
        # counts past the bit width and negative counts: PyTorch's 0 / sign fill
        Sample(
            (np.array([5, -5, 7, -1], dtype=np.int64), np.array([64, 70, -1, 100])), name="wide"
        ),
        Sample(
            (np.array([1, 2, 3], dtype=np.int8), np.array([1, 9, 7], dtype=np.int8)), name="int8"
        ),
    ]


def _ldexp_samples(rng: np.random.Generator) -> list[Sample]:
    # Integer exponents >= 0 only: PyTorch's gradient for a negative integer exponent is 0 (it
    # computes 2**other in integers); chainrule's is 2**other (tests/test_names.py).
    return [
        Sample((rng.uniform(-2, 2, (2, 3)), _ints(rng, (2, 3), 0, 4)), name="int_exp"),
        Sample((rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (3,))), name="float_exp"),
        Sample((rng.uniform(-2, 2, (4,)), _ints(rng, (), 1, 3)), name="0d_exp"),
    ]


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # cross without dim warns in both
        return f(*a, **k)


OPS = [
    OpInfo("asinh", lambda m, x: m.asinh(x), ref=np.arcsinh, samples=elementwise()),
    OpInfo("acosh", lambda m, x: m.acosh(x), ref=np.arccosh, samples=elementwise(low=1.1, high=4)),
    OpInfo(
        "atanh", lambda m, x: m.atanh(x), ref=np.arctanh, samples=elementwise(low=-0.9, high=0.9)
    ),
    OpInfo(
        "arcsinh_method",
        lambda m, x: x.arcsinh() + x.arccosh().nan_to_num(0) + (x / 4).arctanh(),
        covers=("asinh", "acosh", "atanh"),
        samples=elementwise(low=1.2, high=3.5, shapes=((5,),)),
        gradgradcheck=False,
    ),
    OpInfo(
        "gcd",
        lambda m, a, b: m.gcd(a, b),
        ref=np.gcd,
        samples=_int_pairs(-30, 30, -30, 30),
        differentiable=False,
    ),
    OpInfo(
        "lcm",
        lambda m, a, b: m.lcm(a, b),
        ref=np.lcm,
        samples=_int_pairs(-12, 12, -12, 12),
        differentiable=False,
    ),
    OpInfo(
        "bitwise_left_shift",
        lambda m, a, b: m.bitwise_left_shift(a, b),
        samples=_shift_samples,
        differentiable=False,
    ),
    OpInfo(
        "bitwise_right_shift", lambda m, a, b: a >> b, samples=_shift_samples, differentiable=False
    ),
    OpInfo(
        "nextafter",
        lambda m, a, b: m.nextafter(a, b),
        ref=np.nextafter,
        samples=binary_samples(scalar=None),
        differentiable=False,
    ),
    OpInfo(
        "frexp",
        lambda m, x: tuple(m.frexp(x)),
        ref=lambda x: (np.frexp(x)[0], np.frexp(x)[1].astype(np.int32)),
        samples=lambda rng: (
            elementwise(low=-1e3, high=1e3)(rng)
            + [Sample((np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]),), name="special")]
        ),
        differentiable=False,
    ),
    OpInfo("ldexp", lambda m, a, b: m.ldexp(a, b), samples=_ldexp_samples),
    OpInfo(
        "vdot",
        lambda m, a, b: m.vdot(a, b),
        samples=lambda rng: [Sample((rng.uniform(-2, 2, (4,)), rng.uniform(-2, 2, (4,))))],
        covers=(),
    ),
    OpInfo(
        "cross",
        lambda m, a, b, **k: _quiet(m.cross, a, b, **k),
        covers=(),
        samples=lambda rng: [
            Sample(
                (rng.uniform(-2, 2, (4, 3)), rng.uniform(-2, 2, (4, 3))), {"dim": 1}, name="dim1"
            ),
            Sample(
                (rng.uniform(-2, 2, (3, 2)), rng.uniform(-2, 2, (3, 1))), {"dim": 0}, name="bcast"
            ),
            Sample((rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (2, 3))), name="no_dim"),
        ],
    ),
    OpInfo(
        "angle",
        lambda m, x: m.angle(x),
        ref=lambda x: np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0)).astype(x.dtype),
        samples=lambda rng: (
            elementwise()(rng)
            + [Sample((np.array([-np.inf, np.inf, 0.0, -0.0, np.nan, -1.0]),), name="special")]
        ),
        gradcheck=False,  # piecewise constant: finite differences across the jump at 0
    ),
    OpInfo(
        "angle_smooth",
        lambda m, x: x.angle(),
        covers=(),
        samples=elementwise(low=0.5, high=3, shapes=((3,),), transposed=False),
    ),
]
