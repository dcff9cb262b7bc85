"""OpInfo rows for chainrule/ops/binary.py."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample, binary_samples, samples_of

OPS = [
    OpInfo("add", lambda m, a, b: a + b, ref=np.add, samples=binary_samples()),
    OpInfo("add_alpha", lambda m, a, b: m.add(a, b, alpha=2.0),
           ref=lambda a, b: a + 2 * b, samples=binary_samples(scalar=None), covers=()),
    OpInfo("radd", lambda m, a: 2.5 + a, ref=lambda a: 2.5 + a,
           samples=lambda rng: [Sample((rng.uniform(-1, 1, (3,)),))], covers=()),
    OpInfo("sub", lambda m, a, b: a - b, ref=np.subtract, samples=binary_samples()),
    OpInfo("rsub", lambda m, a: 2.5 - a, ref=lambda a: 2.5 - a,
           samples=lambda rng: [Sample((rng.uniform(-1, 1, (3,)),))]),
    OpInfo("mul", lambda m, a, b: a * b, ref=np.multiply, samples=binary_samples()),
    OpInfo("div", lambda m, a, b: a / b, ref=np.divide,
           samples=binary_samples(low_b=0.5, high_b=2.0)),
    OpInfo("rdiv", lambda m, a: 2.0 / a, ref=lambda a: 2.0 / a,
           samples=lambda rng: [Sample((rng.uniform(0.5, 2, (3,)),))]),
    OpInfo("div_rounded", lambda m, a, b: m.div(a, b, rounding_mode="floor"),
           ref=lambda a, b: np.floor(a / b), gradgradcheck=False,
           samples=binary_samples(low_b=0.5, high_b=2.0, scalar=None)),
    OpInfo("div_trunc", lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
           ref=lambda a, b: np.trunc(a / b), gradgradcheck=False, covers=(),
           samples=binary_samples(low_b=0.5, high_b=2.0, scalar=None)),
    OpInfo("pow", lambda m, a, b: a ** b, ref=np.power,
           samples=binary_samples(low=0.5, high=2.0, scalar=3.0)),
    OpInfo("pow_scalar_exp", lambda m, a: a ** 2, ref=lambda a: a ** 2, covers=(),
           samples=lambda rng: [Sample((rng.uniform(-2, 2, (2, 3)),))]),
    OpInfo("rpow", lambda m, a: 2.0 ** a, ref=lambda a: 2.0 ** a,
           samples=lambda rng: [Sample((rng.uniform(-2, 2, (2, 3)),))]),
    OpInfo("where", lambda m, c, a, b: m.where(c, a, b), ref=np.where,
           samples=lambda rng: [
               Sample((rng.random((2, 3)) < 0.5, rng.uniform(-1, 1, (2, 3)),
                       rng.uniform(-1, 1, (3,)))),
           ]),
] + [
    OpInfo(n, (lambda op: lambda m, a, b: op(a, b))(f), ref=r, differentiable=False,
           samples=samples_of(Sample((np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0]))),
                              Sample((np.array([1.0, 2.0, 3.0]), 2.0))))
    for n, f, r in [
        ("eq", lambda a, b: a == b, np.equal),
        ("ne", lambda a, b: a != b, np.not_equal),
        ("lt", lambda a, b: a < b, np.less),
        ("le", lambda a, b: a <= b, np.less_equal),
        ("gt", lambda a, b: a > b, np.greater),
        ("ge", lambda a, b: a >= b, np.greater_equal),
    ]
] + [
    OpInfo(n, (lambda op: lambda m, a, b: op(m, a > 0, b > 0))(f), ref=r, differentiable=False,
           samples=samples_of(Sample((np.array([1.0, -2.0, 3.0, -1.0]),
                                      np.array([2.0, 2.0, -2.0, -1.0])))))
    for n, f, r in [
        ("bitwise_and", lambda m, a, b: a & b, lambda a, b: (a > 0) & (b > 0)),
        ("bitwise_or", lambda m, a, b: a | b, lambda a, b: (a > 0) | (b > 0)),
        ("bitwise_xor", lambda m, a, b: a ^ b, lambda a, b: (a > 0) ^ (b > 0)),
        ("bitwise_not", lambda m, a, b: ~a, lambda a, b: ~(a > 0)),
    ]
]
