"""OpInfo rows for chainrule/ops/composite/ (values and gradients vs PyTorch, gradcheck in
float64)."""

from __future__ import annotations

import warnings

import numpy as np

from tests.opinfo.core import OpInfo, Sample, binary_samples, elementwise


def _u(rng, *shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape)


def _s(*shapes, kw=None, name="", lo=-2.0, hi=2.0):
    return lambda rng: [
        Sample(tuple(_u(rng, *s, lo=lo, hi=hi) for s in shapes), kw or {}, name=name)
    ]


def _cat(*gens):
    return lambda rng: [s for g in gens for s in g(rng)]


def _fixed(*arrays, kw=None, name=""):
    return lambda rng: [
        Sample(tuple(np.asarray(a, dtype=float) for a in arrays), kw or {}, name=name)
    ]


def _quiet(f, *args):
    # chain_matmul warns that it is deprecated, in both libraries.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return f(*args)


OPS = [
    OpInfo(
        "addcmul",
        lambda m, a, b, c: m.addcmul(a, b, c, value=0.5),
        samples=_cat(_s((2, 3), (2, 3), (3,)), _s((3,), (2, 1), (1, 3))),
    ),
    OpInfo(
        "addcdiv",
        lambda m, a, b, c: a.addcdiv(b, c, value=-2),
        samples=lambda rng: [Sample((_u(rng, 2, 3), _u(rng, 2, 3), _u(rng, 2, 3, lo=0.5)))],
    ),
    OpInfo(
        "addcmul_",
        lambda m, a, b, c: a.clone().addcmul_(b, c, value=2),
        covers=("addcmul",),
        samples=_s((2, 3), (2, 3), (2, 3)),
    ),
    OpInfo(
        "addr",
        lambda m, a, b, c: m.addr(a, b, c, beta=0.5, alpha=2),
        samples=_cat(_s((2, 3), (2,), (3,)), _s((3,), (2,), (3,))),
    ),
    OpInfo(
        "addr_beta0",
        lambda m, a, b, c: m.addr(a, b, c, beta=0),
        covers=("addr",),
        samples=_s((2, 3), (2,), (3,)),
    ),
    OpInfo(
        "addbmm",
        lambda m, a, b, c: a.addbmm(b, c, beta=2),
        samples=_s((2, 4), (3, 2, 5), (3, 5, 4)),
    ),
    OpInfo(
        "tensordot",
        lambda m, a, b, **k: m.tensordot(a, b, **k),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3, 4), _u(rng, 3, 4, 2)), {"dims": 2}, name="int"),
            Sample((_u(rng, 2, 3, 4), _u(rng, 4, 3)), {"dims": ([1, 2], [1, 0])}, name="lists"),
            Sample((_u(rng, 2, 3), _u(rng, 4)), {"dims": 0}, name="outer"),
        ],
    ),
    OpInfo(
        "inner",
        lambda m, a, b: m.inner(a, b),
        samples=_cat(_s((2, 3), (4, 3)), _s((3,), (3,)), _s((), (2,))),
    ),
    OpInfo("ger", lambda m, a, b: m.ger(a, b), samples=_s((2,), (3,))),
    OpInfo(
        "chain_matmul",
        lambda m, a, b, c: _quiet(m.chain_matmul, a, b, c),
        samples=_s((2, 3), (3, 4), (4, 2)),
    ),
    OpInfo(
        "matrix_power",
        lambda m, a, **k: m.matrix_power(a, **k),
        samples=lambda rng: (
            [Sample((_u(rng, 3, 3, lo=-0.8, hi=0.8),), {"n": n}, name=str(n)) for n in (0, 1, 3, 6)]
            + [Sample((_u(rng, 2, 2, 2, lo=-0.8, hi=0.8) + 2 * np.eye(2),), {"n": -2}, name="neg")]
        ),
    ),
    OpInfo("trace", lambda m, a: m.trace(a), samples=_cat(_s((3, 3)), _s((2, 4)))),
    # torch's own vander cannot backpropagate (an in-place write in its formula): values only.
    OpInfo(
        "vander",
        lambda m, x, **k: m.vander(x, **k),
        differentiable=False,
        samples=lambda rng: [
            Sample((_u(rng, 3),), {}, name="default"),
            Sample((_u(rng, 3),), {"N": 4, "increasing": True}, name="inc"),
        ],
    ),
    OpInfo(
        "cdist",
        lambda m, a, b, **k: m.cdist(a, b, **k),
        samples=lambda rng: (
            [
                Sample((_u(rng, 3, 2), _u(rng, 4, 2)), {"p": p}, name=str(p))
                for p in (1.0, 2.0, 3.0, float("inf"))
            ]
            + [Sample((_u(rng, 2, 3, 2), _u(rng, 2, 2, 2)), {}, name="batched")]
        ),
    ),
    OpInfo(
        "dist",
        lambda m, a, b, **k: m.dist(a, b, **k),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3), _u(rng, 3)), {"p": p}, name=str(p))
            for p in (1, 2, 3.5, float("inf"))
        ],
    ),
    OpInfo(
        "renorm",
        lambda m, a, **k: m.renorm(a, **k),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4),), {"p": 2, "dim": 0, "maxnorm": 1.0}),
            Sample((_u(rng, 3, 4),), {"p": 1, "dim": 1, "maxnorm": 2.5}, name="p1"),
        ],
    ),
    OpInfo(
        "trapezoid",
        lambda m, y, **k: m.trapezoid(y, **k),
        samples=lambda rng: [
            Sample((_u(rng, 3, 5),), {}, name="unit"),
            Sample((_u(rng, 3, 5),), {"dx": 0.5, "dim": 0}, name="dx"),
        ],
    ),
    OpInfo(
        "trapezoid_x",
        lambda m, y, x: m.trapezoid(y, x),
        covers=("trapezoid",),
        samples=lambda rng: [Sample((_u(rng, 2, 4), np.sort(_u(rng, 4))), no_grad=(1,))],
    ),
    OpInfo(
        "cumulative_trapezoid",
        lambda m, y, **k: m.cumulative_trapezoid(y, **k),
        samples=lambda rng: [Sample((_u(rng, 3, 5),), {"dx": 2.0})],
    ),
    OpInfo(
        "cov",
        lambda m, x, **k: m.cov(x, **k),
        samples=lambda rng: [
            Sample((_u(rng, 3, 6),), {}, name="rows"),
            Sample((_u(rng, 6),), {"correction": 0}, name="1d"),
        ],
    ),
    OpInfo(
        "cov_weights",
        lambda m, x, a: m.cov(x, fweights=m.tensor([1, 2, 1, 3, 1], device=x.device), aweights=a),
        covers=("cov",),
        samples=lambda rng: [Sample((_u(rng, 2, 5), _u(rng, 5, lo=0.5)), no_grad=(1,))],
    ),
    OpInfo("corrcoef", lambda m, x: m.corrcoef(x), samples=_s((3, 6))),
    OpInfo(
        "diff",
        lambda m, x, **k: m.diff(x, **k),
        samples=lambda rng: [
            Sample((_u(rng, 3, 5),), {}, name="default"),
            Sample((_u(rng, 3, 5),), {"n": 2, "dim": 0}, name="n2"),
        ],
    ),
    OpInfo(
        "diff_pend",
        lambda m, x, p, a: x.diff(prepend=p, append=a),
        covers=("diff",),
        samples=_s((2, 3), (2, 1), (2, 2)),
    ),
    OpInfo(
        "nansum",
        lambda m, x, **k: m.nansum(x, **k),
        samples=_cat(
            _fixed([[1.0, np.nan, 2.0], [np.nan, 0.5, -1.0]]),
            _fixed([[1.0, np.nan, 2.0], [np.nan, 0.5, -1.0]], kw={"dim": 1}, name="dim"),
        ),
    ),
    OpInfo(
        "nanmean",
        lambda m, x, **k: x.nanmean(**k),
        samples=_cat(
            _fixed([[1.0, np.nan, 2.0], [np.nan, np.nan, -1.0]]),
            _fixed([[1.0, np.nan, 2.0], [np.nan, np.nan, -1.0]], kw={"dim": 1}, name="dim"),
        ),
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpInfo("nansum_gc", lambda m, x: m.nansum(x, 0), covers=("nansum",), samples=_s((3, 2))),
    OpInfo(
        "aminmax",
        lambda m, x, **k: tuple(m.aminmax(x, **k)),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4),), {}, name="all"),
            Sample((_u(rng, 3, 4),), {"dim": 1, "keepdim": True}, name="dim"),
        ],
    ),
    OpInfo("hypot", lambda m, a, b: m.hypot(a, b), samples=binary_samples(scalar=None)),
    OpInfo("sinc", lambda m, x: m.sinc(x), samples=elementwise(avoid=(0.0, 1.0, -1.0, 2.0, -2.0))),
    OpInfo(
        "sinc_zero",
        lambda m, x: m.sinc(x),
        covers=("sinc",),
        samples=_fixed([0.0, 0.5, -1.5]),
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpInfo(
        "heaviside",
        lambda m, a, b: m.heaviside(a, b),
        differentiable=False,
        samples=_fixed([-1.0, 0.0, 2.0, 0.0], [0.5, 0.25, 0.5, 0.75]),
    ),
    OpInfo(
        "copysign",
        lambda m, a: m.copysign(a, m.tensor([1.0, -1.0, -0.0, 2.0], device=a.device)),
        samples=_fixed([1.5, 2.0, -3.0, -0.5]),
    ),
    OpInfo("logaddexp", lambda m, a, b: m.logaddexp(a, b), samples=binary_samples(scalar=None)),
    OpInfo(
        "logaddexp_inf",
        lambda m, a, b: m.logaddexp(a, b),
        covers=("logaddexp",),
        samples=_fixed([-np.inf, np.inf, 1.0], [-np.inf, np.inf, -np.inf]),
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpInfo("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), samples=binary_samples(scalar=None)),
    OpInfo(
        "logcumsumexp",
        lambda m, x, **k: m.logcumsumexp(x, **k),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4, lo=-20, hi=20),), {"dim": d}, name=str(d)) for d in (0, 1, -1)
        ],
    ),
    OpInfo("exp2", lambda m, x: m.exp2(x), samples=elementwise()),
    OpInfo("deg2rad", lambda m, x: m.deg2rad(x), samples=elementwise()),
    OpInfo("rad2deg", lambda m, x: x.rad2deg(), samples=elementwise()),
    OpInfo("positive", lambda m, x: m.positive(x), samples=elementwise()),
    # torch's sgn backward hands out a ZeroTensor, which the harness cannot read: values only.
    OpInfo("sgn", lambda m, x: m.sgn(x), samples=elementwise(avoid=(0.0,)), differentiable=False),
    OpInfo(
        "signbit",
        lambda m, x: m.signbit(x),
        differentiable=False,
        samples=_fixed([-1.0, -0.0, 0.0, 2.0, -np.inf]),
    ),
    OpInfo(
        "isposinf",
        lambda m, x: m.isposinf(x),
        differentiable=False,
        samples=_fixed([-np.inf, np.inf, 1.0, np.nan]),
    ),
    OpInfo(
        "isneginf",
        lambda m, x: x.isneginf(),
        differentiable=False,
        samples=_fixed([-np.inf, np.inf, 1.0, np.nan]),
    ),
    OpInfo("isreal", lambda m, x: m.isreal(x), differentiable=False, samples=_fixed([1.0, 2.0])),
    OpInfo(
        "nonzero",
        lambda m, x: m.nonzero(x),
        differentiable=False,
        samples=_cat(
            _fixed([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]),
            _fixed(0.0, name="0d"),
            _fixed(1.0, name="0d1"),
        ),
    ),
    OpInfo(
        "nonzero_tuple",
        lambda m, x: x.nonzero(as_tuple=True),
        covers=("nonzero",),
        differentiable=False,
        samples=_cat(_fixed([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]), _fixed(1.0, name="0d")),
    ),
    OpInfo(
        "argwhere",
        lambda m, x: m.argwhere(x),
        differentiable=False,
        samples=_fixed([[0.0, 1.0], [2.0, 0.0]]),
    ),
    OpInfo(
        "take",
        lambda m, x: m.take(x, m.tensor([[0, 5], [-1, 2]], device=x.device)),
        samples=_s((2, 3)),
    ),
    OpInfo(
        "isin",
        lambda m, a, b: m.isin(a, b),
        differentiable=False,
        samples=_fixed([[1.0, 2.0], [3.0, 4.0]], [2.0, 4.0, 7.0]),
    ),
    OpInfo(
        "isin_invert",
        lambda m, a: m.isin(a, 2.0, invert=True),
        covers=("isin",),
        differentiable=False,
        samples=_fixed([1.0, 2.0, 3.0]),
    ),
    OpInfo(
        "bincount",
        lambda m: m.bincount(m.tensor([0, 1, 1, 4]), minlength=6),
        differentiable=False,
        samples=lambda rng: [Sample(())],
    ),
    OpInfo(
        "bincount_weights",
        lambda m, w: m.bincount(m.tensor([0, 1, 1, 4], device=w.device), w),
        covers=("bincount",),
        differentiable=False,
        samples=_s((4,)),
    ),
    OpInfo(
        "histc",
        lambda m, x, **k: m.histc(x, **k),
        differentiable=False,
        samples=lambda rng: [
            Sample((_u(rng, 20),), {"bins": 5}, name="auto"),
            Sample((_u(rng, 20),), {"bins": 4, "min": -1, "max": 1}, name="range"),
        ],
    ),
    OpInfo(
        "tril_indices",
        lambda m: m.tril_indices(3, 4, 1),
        differentiable=False,
        samples=lambda rng: [Sample(())],
    ),
    OpInfo(
        "triu_indices",
        lambda m: m.triu_indices(4, 3, -1),
        differentiable=False,
        samples=lambda rng: [Sample(())],
    ),
]
