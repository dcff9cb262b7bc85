"""OpInfo rows for the binary family, chainrule/ops/binary/ (one table for its modules)."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample, samples_of
from tests.opinfo.core import binary_samples as _binary_samples


def binary_samples(
    low: float = -3.0,
    high: float = 3.0,
    low_b: float | None = None,
    high_b: float | None = None,
    **kw,
):
    """core.binary_samples plus a non-contiguous pair (both operands transposed views) and an
    empty pair."""
    base = _binary_samples(low, high, low_b, high_b, **kw)
    lb = low if low_b is None else low_b
    hb = high if high_b is None else high_b

    def gen(rng: np.random.Generator) -> list[Sample]:
        out = base(rng)
        out.append(
            Sample(
                (rng.uniform(low, high, (3, 2)).T, rng.uniform(lb, hb, (3, 2)).T), name="transposed"
            )
        )
        out.append(
            Sample((rng.uniform(low, high, (0, 3)), rng.uniform(lb, hb, (3,))), name="empty")
        )
        return out

    return gen


OPS = (
    [
        OpInfo("add", lambda m, a, b: a + b, ref=np.add, samples=binary_samples()),
        OpInfo(
            "add_alpha",
            lambda m, a, b: m.add(a, b, alpha=2.0),
            ref=lambda a, b: a + 2 * b,
            samples=binary_samples(scalar=None),
            covers=(),
        ),
        OpInfo(
            "radd",
            lambda m, a: 2.5 + a,
            ref=lambda a: 2.5 + a,
            samples=lambda rng: [Sample((rng.uniform(-1, 1, (3,)),))],
            covers=(),
        ),
        OpInfo("sub", lambda m, a, b: a - b, ref=np.subtract, samples=binary_samples()),
        OpInfo(
            "rsub",
            lambda m, a: 2.5 - a,
            ref=lambda a: 2.5 - a,
            samples=lambda rng: [Sample((rng.uniform(-1, 1, (3,)),))],
        ),
        OpInfo("mul", lambda m, a, b: a * b, ref=np.multiply, samples=binary_samples()),
        OpInfo(
            "div",
            lambda m, a, b: a / b,
            ref=np.divide,
            samples=binary_samples(low_b=0.5, high_b=2.0),
        ),
        OpInfo(
            "rdiv",
            lambda m, a: 2.0 / a,
            ref=lambda a: 2.0 / a,
            samples=lambda rng: [Sample((rng.uniform(0.5, 2, (3,)),))],
        ),
        OpInfo(
            "div_rounded",
            lambda m, a, b: m.div(a, b, rounding_mode="floor"),
            ref=lambda a, b: np.floor(a / b),
            gradgradcheck=False,
            samples=binary_samples(low_b=0.5, high_b=2.0, scalar=None),
        ),
        OpInfo(
            "div_trunc",
            lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
            ref=lambda a, b: np.trunc(a / b),
            gradgradcheck=False,
            covers=(),
            samples=binary_samples(low_b=0.5, high_b=2.0, scalar=None),
        ),
        OpInfo(
            "pow",
            lambda m, a, b: a**b,
            ref=np.power,
            samples=binary_samples(low=0.5, high=2.0, scalar=3.0),
        ),
        OpInfo(
            "pow_scalar_exp",
            lambda m, a: a**2,
            ref=lambda a: a**2,
            covers=("pow_scalar",),
            samples=lambda rng: [
                Sample((rng.uniform(-2, 2, (2, 3)),)),
                Sample((rng.uniform(-2, 2, (3, 2)).T,), name="transposed"),
                Sample((rng.uniform(-2, 2, (0, 2)),), name="empty"),
            ],
        ),
        OpInfo(
            "pow_scalar_frac",
            lambda m, a: m.pow(a, -1.5),
            ref=lambda a: a**-1.5,
            covers=(),
            samples=lambda rng: [Sample((rng.uniform(0.5, 2, (2, 3)),))],
        ),
        OpInfo(
            "float_power",
            lambda m, a, b: m.float_power(a, b),
            ref=np.power,
            covers=(),
            samples=binary_samples(low=0.5, high=2.0, scalar=2.0),
        ),
        OpInfo(
            "maximum",
            lambda m, a, b: m.maximum(a, b),
            ref=np.maximum,
            samples=binary_samples(scalar=None),
        ),
        OpInfo(
            "minimum",
            lambda m, a, b: a.minimum(b),
            ref=np.minimum,
            samples=binary_samples(scalar=None),
        ),
        OpInfo(
            "fmax", lambda m, a, b: m.fmax(a, b), ref=np.fmax, samples=binary_samples(scalar=None)
        ),
        OpInfo(
            "fmin", lambda m, a, b: m.fmin(a, b), ref=np.fmin, samples=binary_samples(scalar=None)
        ),
        OpInfo(
            "atan2",
            lambda m, a, b: m.atan2(a, b),
            ref=np.arctan2,
            samples=binary_samples(low_b=0.5, high_b=2.0, scalar=None),
        ),
        OpInfo(
            "lerp",
            lambda m, a, b, w: m.lerp(a, b, w),
            ref=lambda a, b, w: a + w * (b - a),
            samples=lambda rng: [
                Sample(
                    (
                        rng.uniform(-2, 2, (2, 3)),
                        rng.uniform(-2, 2, (2, 3)),
                        rng.uniform(-0.5, 1.5, (2, 3)),
                    ),
                    name="same",
                ),
                Sample(
                    (
                        rng.uniform(-2, 2, (2, 3)),
                        rng.uniform(-2, 2, (3,)),
                        rng.uniform(0, 1, (2, 1)),
                    ),
                    name="bcast",
                ),
            ],
        ),
        OpInfo(
            "lerp_scalar",
            lambda m, a, b, w: a.lerp(b, w),
            ref=lambda a, b, w: a + w * (b - a),
            samples=lambda rng: [
                Sample((rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (2, 3)), 0.3), name="lo"),
                Sample((rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (3,)), 0.8), name="hi"),
            ],
        ),
        OpInfo(
            "remainder",
            lambda m, a, b: m.remainder(a, b),
            ref=np.remainder,
            samples=binary_samples(low=0.1, high=2.9, low_b=0.7, high_b=0.9, scalar=None),
        ),
        OpInfo(
            "remainder_neg",
            lambda m, a, b: a % b,
            ref=np.remainder,
            covers=(),
            samples=binary_samples(low=-2.9, high=-0.1, low_b=0.7, high_b=0.9, scalar=None),
        ),
        OpInfo(
            "remainder_scalar",
            lambda m, a: a % 0.75,
            ref=lambda a: np.remainder(a, 0.75),
            samples=lambda rng: [Sample((rng.uniform(0.05, 0.7, (2, 3)) + 0.75,))],
        ),
        OpInfo(
            "fmod",
            lambda m, a, b: m.fmod(a, b),
            ref=np.fmod,
            samples=binary_samples(low=0.1, high=2.9, low_b=0.7, high_b=0.9, scalar=None),
        ),
        OpInfo(
            "fmod_scalar",
            lambda m, a: a.fmod(-0.75),
            ref=lambda a: np.fmod(a, -0.75),
            samples=lambda rng: [Sample((-rng.uniform(0.05, 0.7, (2, 3)) - 0.75,))],
        ),
        OpInfo(
            "floor_divide",
            lambda m, a, b: a // b,
            ref=np.floor_divide,
            differentiable=False,
            covers=(),
            samples=binary_samples(low_b=0.5, high_b=2.0),
        ),
        OpInfo(
            "isclose",
            lambda m, a, b: m.isclose(a, b, rtol=0.1, atol=0.05),
            differentiable=False,
            ref=lambda a, b: np.isclose(a, b, rtol=0.1, atol=0.05),
            samples=lambda rng: [
                Sample(
                    (
                        np.array([1.0, 1.05, 2.0, np.inf, np.nan]),
                        np.array([1.0, 1.0, 1.0, np.inf, np.nan]),
                    )
                )
            ],
        ),
        OpInfo(
            "rpow",
            lambda m, a: 2.0**a,
            ref=lambda a: 2.0**a,
            samples=lambda rng: [Sample((rng.uniform(-2, 2, (2, 3)),))],
        ),
        OpInfo(
            "where",
            lambda m, c, a, b: m.where(c, a, b),
            ref=np.where,
            samples=lambda rng: [
                Sample(
                    (rng.random((2, 3)) < 0.5, rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3,)))
                ),
            ],
        ),
    ]
    + [
        OpInfo(
            n,
            (lambda op: lambda m, a, b: op(a, b))(f),
            ref=r,
            differentiable=False,
            samples=samples_of(
                Sample((np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0]))),
                Sample((np.array([1.0, 2.0, 3.0]), 2.0)),
            ),
        )
        for n, f, r in [
            ("eq", lambda a, b: a == b, np.equal),
            ("ne", lambda a, b: a != b, np.not_equal),
            ("lt", lambda a, b: a < b, np.less),
            ("le", lambda a, b: a <= b, np.less_equal),
            ("gt", lambda a, b: a > b, np.greater),
            ("ge", lambda a, b: a >= b, np.greater_equal),
        ]
    ]
    + [
        OpInfo(
            n,
            (lambda op: lambda m, a, b: op(m, a > 0, b > 0))(f),
            ref=r,
            differentiable=False,
            samples=samples_of(
                Sample((np.array([1.0, -2.0, 3.0, -1.0]), np.array([2.0, 2.0, -2.0, -1.0])))
            ),
        )
        for n, f, r in [
            ("bitwise_and", lambda m, a, b: a & b, lambda a, b: (a > 0) & (b > 0)),
            ("bitwise_or", lambda m, a, b: a | b, lambda a, b: (a > 0) | (b > 0)),
            ("bitwise_xor", lambda m, a, b: a ^ b, lambda a, b: (a > 0) ^ (b > 0)),
            ("bitwise_not", lambda m, a, b: ~a, lambda a, b: ~(a > 0)),
            ("logical_and", lambda m, a, b: m.logical_and(a, b), lambda a, b: (a > 0) & (b > 0)),
            ("logical_or", lambda m, a, b: m.logical_or(a, b), lambda a, b: (a > 0) | (b > 0)),
            ("logical_xor", lambda m, a, b: m.logical_xor(a, b), lambda a, b: (a > 0) ^ (b > 0)),
        ]
    ]
    + [
        OpInfo(
            n + "_float",
            (lambda n: lambda m, a, b: getattr(m, n)(a, b))(n),
            covers=(),
            ref=r,
            differentiable=False,
            samples=samples_of(
                Sample((np.array([1.0, 0.0, 3.0, 0.0]), np.array([2.0, 2.0, 0.0, 0.0])))
            ),
        )
        for n, r in [
            ("logical_and", np.logical_and),
            ("logical_or", np.logical_or),
            ("logical_xor", np.logical_xor),
        ]
    ]
    + [
        OpInfo(
            n + "_method",
            (lambda n: lambda m, a, b: getattr(a, n)(b))(n),
            covers=(),
            ref=r,
            differentiable=False,
            samples=samples_of(
                Sample((np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0]))),
                Sample((np.array([[1.0], [2.0]]), np.array([2.0, 3.0, 1.0]))),
            ),
        )
        for n, r in [
            ("eq", np.equal),
            ("ne", np.not_equal),
            ("lt", np.less),
            ("le", np.less_equal),
            ("gt", np.greater),
            ("ge", np.greater_equal),
        ]
    ]
)
