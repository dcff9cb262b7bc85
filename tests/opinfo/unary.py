"""OpInfo rows for chainrule/ops/unary/."""

from __future__ import annotations

import math

import numpy as np

from tests.opinfo.core import OpInfo, Sample, elementwise, samples_of


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


def _erfc(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erfc, otypes=[x.dtype])(x) if x.size else x.copy()


def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _softplus(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def _elu(x: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


_SA, _SS = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_K = math.sqrt(2 / math.pi)

# Kinks of piecewise activations that samples must stay away from.
_NEAR0 = elementwise(avoid=(0.0,))

OPS = [
    OpInfo("neg", lambda m, x: -x, ref=np.negative, samples=elementwise()),
    OpInfo("exp", lambda m, x: m.exp(x), ref=np.exp, samples=elementwise()),
    OpInfo("expm1", lambda m, x: m.expm1(x), ref=np.expm1, samples=elementwise()),
    OpInfo("log", lambda m, x: m.log(x), ref=np.log, samples=elementwise(low=0.1, high=5)),
    OpInfo("log1p", lambda m, x: x.log1p(), ref=np.log1p, samples=elementwise(low=-0.8, high=5)),
    OpInfo("log2", lambda m, x: m.log2(x), ref=np.log2, samples=elementwise(low=0.1, high=5)),
    OpInfo("log10", lambda m, x: m.log10(x), ref=np.log10, samples=elementwise(low=0.1, high=5)),
    OpInfo("sqrt", lambda m, x: m.sqrt(x), ref=np.sqrt, samples=elementwise(low=0.1, high=5)),
    OpInfo(
        "rsqrt",
        lambda m, x: m.rsqrt(x),
        ref=lambda x: 1 / np.sqrt(x),
        samples=elementwise(low=0.2, high=5),
    ),
    OpInfo("square", lambda m, x: m.square(x), ref=np.square, samples=elementwise(), covers=()),
    OpInfo(
        "reciprocal",
        lambda m, x: x.reciprocal(),
        ref=np.reciprocal,
        samples=elementwise(low=0.3, high=3),
    ),
    OpInfo(
        "reciprocal_neg",
        lambda m, x: m.reciprocal(x),
        ref=np.reciprocal,
        covers=(),
        samples=elementwise(low=-3, high=-0.3, shapes=((4,),), transposed=False),
    ),
    OpInfo("sin", lambda m, x: m.sin(x), ref=np.sin, samples=elementwise()),
    OpInfo("cos", lambda m, x: m.cos(x), ref=np.cos, samples=elementwise()),
    OpInfo("tan", lambda m, x: m.tan(x), ref=np.tan, samples=elementwise(low=-1.2, high=1.2)),
    OpInfo("asin", lambda m, x: m.asin(x), ref=np.arcsin, samples=elementwise(low=-0.9, high=0.9)),
    OpInfo("acos", lambda m, x: x.acos(), ref=np.arccos, samples=elementwise(low=-0.9, high=0.9)),
    OpInfo("atan", lambda m, x: m.atan(x), ref=np.arctan, samples=elementwise()),
    OpInfo("sinh", lambda m, x: m.sinh(x), ref=np.sinh, samples=elementwise()),
    OpInfo("cosh", lambda m, x: x.cosh(), ref=np.cosh, samples=elementwise()),
    OpInfo("tanh", lambda m, x: m.tanh(x), ref=np.tanh, samples=elementwise()),
    OpInfo("sigmoid", lambda m, x: m.sigmoid(x), ref=_sig, samples=elementwise(low=-8, high=8)),
    OpInfo(
        "logsigmoid",
        lambda m, x: _act(m, "logsigmoid")(x),
        ref=lambda x: -np.log1p(np.exp(-x)),
        samples=elementwise(low=-8, high=8),
    ),
    OpInfo(
        "softplus",
        lambda m, x: _act(m, "softplus")(x),
        ref=_softplus,
        samples=elementwise(low=-5, high=5),
    ),
    OpInfo(
        "softplus_beta",
        lambda m, x: _act(m, "softplus")(x, beta=2.0, threshold=3.0),
        ref=lambda x: _softplus(x, 2.0, 3.0),
        covers=(),
        samples=elementwise(low=-4, high=4, avoid=(1.5,)),
    ),
    OpInfo(
        "relu",
        lambda m, x: m.relu(x),
        ref=lambda x: np.maximum(x, 0),
        samples=_NEAR0,
        covers=("relu", "threshold_backward"),
    ),  # its VJP, run by the gradgradcheck
    OpInfo(
        "relu6",
        lambda m, x: _act(m, "relu6")(x),
        ref=lambda x: np.clip(x, 0, 6),
        samples=elementwise(low=-3, high=8, avoid=(0.0, 6.0)),
        covers=(),
    ),
    OpInfo(
        "hardtanh",
        lambda m, x: _act(m, "hardtanh")(x),
        ref=lambda x: np.clip(x, -1, 1),
        samples=elementwise(avoid=(-1.0, 1.0)),
    ),
    OpInfo(
        "hardtanh_bounds",
        lambda m, x: _act(m, "hardtanh")(x, -0.5, 2.0),
        covers=(),
        ref=lambda x: np.clip(x, -0.5, 2),
        samples=elementwise(avoid=(-0.5, 2.0)),
    ),
    OpInfo(
        "leaky_relu",
        lambda m, x: _act(m, "leaky_relu")(x),
        ref=lambda x: np.where(x > 0, x, 0.01 * x),
        samples=_NEAR0,
    ),
    OpInfo(
        "leaky_relu_slope",
        lambda m, x: _act(m, "leaky_relu")(x, 0.2),
        covers=(),
        ref=lambda x: np.where(x > 0, x, 0.2 * x),
        samples=_NEAR0,
    ),
    OpInfo("elu", lambda m, x: _act(m, "elu")(x), ref=_elu, samples=_NEAR0),
    OpInfo(
        "elu_alpha",
        lambda m, x: _act(m, "elu")(x, alpha=0.5),
        covers=(),
        ref=lambda x: _elu(x, 0.5),
        samples=_NEAR0,
    ),
    OpInfo(
        "selu",
        lambda m, x: _act(m, "selu")(x),
        ref=lambda x: _SS * _elu(x, _SA),
        samples=_NEAR0,
        covers=(),
    ),
    OpInfo(
        "celu",
        lambda m, x: _act(m, "celu")(x, alpha=2.0),
        covers=(),
        ref=lambda x: np.maximum(x, 0) + np.minimum(0, 2 * np.expm1(np.minimum(x, 0) / 2)),
        samples=_NEAR0,
    ),
    OpInfo(
        "gelu",
        lambda m, x: _act(m, "gelu")(x),
        ref=lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
        samples=elementwise(),
        covers=("gelu", "gelu_backward"),
    ),  # gelu's VJP is gelu_backward: gradgradcheck
    OpInfo(
        "gelu_tanh",
        lambda m, x: _act(m, "gelu")(x, approximate="tanh"),
        covers=(),
        ref=lambda x: 0.5 * x * (1 + np.tanh(_K * (x + 0.044715 * x**3))),
        samples=elementwise(),
    ),
    OpInfo(
        "silu",
        lambda m, x: _act(m, "silu")(x),
        ref=lambda x: x * _sig(x),
        samples=elementwise(low=-6, high=6),
    ),
    OpInfo(
        "mish",
        lambda m, x: _act(m, "mish")(x),
        ref=lambda x: x * np.tanh(np.log1p(np.exp(x))),
        samples=elementwise(low=-6, high=6),
    ),
    OpInfo(
        "hardsigmoid",
        lambda m, x: _act(m, "hardsigmoid")(x),
        ref=lambda x: np.clip(x / 6 + 0.5, 0, 1),
        samples=elementwise(-5, 5, avoid=(-3, 3)),
    ),
    OpInfo(
        "hardswish",
        lambda m, x: _act(m, "hardswish")(x),
        ref=lambda x: x * np.clip(x + 3, 0, 6) / 6,
        samples=elementwise(-5, 5, avoid=(-3, 3)),
    ),
    OpInfo("erf", lambda m, x: m.erf(x), ref=_erf, samples=elementwise()),
    OpInfo(
        "erf_wide",
        lambda m, x: m.erf(x),
        ref=_erf,
        covers=(),
        samples=samples_of(
            Sample(
                (
                    np.array(
                        [
                            -7.0,
                            -3.1,
                            -2.0,
                            -1.0,
                            -0.5,
                            -1e-3,
                            0.0,
                            0.3,
                            0.9,
                            1.1,
                            1.3,
                            2.5,
                            3.0,
                            5.9,
                            6.5,
                        ]
                    ),
                )
            )
        ),
    ),
    OpInfo("erfc", lambda m, x: x.erfc(), ref=_erfc, samples=elementwise()),
    OpInfo(
        "erfc_wide",
        lambda m, x: m.erfc(x),
        ref=_erfc,
        covers=(),
        gc_rtol=1e-2,
        samples=samples_of(
            Sample(
                (np.array([-7.0, -2.0, -1.0, -0.5, 0.1, 0.3, 0.9, 1.1, 2.0, 3.0, 5.0, 8.0, 12.0]),)
            )
        ),
    ),
    OpInfo("abs", lambda m, x: m.abs(x), ref=np.abs, samples=_NEAR0),
    OpInfo("sign", lambda m, x: m.sign(x), ref=np.sign, samples=_NEAR0),
    OpInfo(
        "floor",
        lambda m, x: m.floor(x),
        ref=np.floor,
        samples=elementwise(avoid=(-2, -1, 0, 1, 2)),
        gradgradcheck=False,
    ),
    OpInfo(
        "ceil",
        lambda m, x: x.ceil(),
        ref=np.ceil,
        samples=elementwise(avoid=(-2, -1, 0, 1, 2)),
        gradgradcheck=False,
    ),
    OpInfo(
        "trunc",
        lambda m, x: m.trunc(x),
        ref=np.trunc,
        samples=elementwise(avoid=(-2, -1, 0, 1, 2)),
        gradgradcheck=False,
    ),
    OpInfo(
        "round",
        lambda m, x: m.round(x),
        ref=np.round,
        samples=elementwise(avoid=(-2.5, -1.5, -0.5, 0.5, 1.5, 2.5)),
        gradgradcheck=False,
    ),
    OpInfo(
        "round_decimals",
        lambda m, x: m.round(x, decimals=1),
        covers=(),
        ref=lambda x: np.round(x, 1),
        gradgradcheck=False,
        samples=samples_of(Sample((np.array([0.123, -1.26, 2.0, 0.349]),))),
    ),
    OpInfo(
        "frac",
        lambda m, x: m.frac(x),
        ref=lambda x: x - np.trunc(x),
        samples=elementwise(avoid=(-2, -1, 0, 1, 2)),
    ),
    OpInfo(
        "clamp",
        lambda m, x, **kw: m.clamp(x, **kw),
        ref=lambda x, min=None, max=None: np.clip(x, min, max),
        samples=lambda rng: [
            Sample((rng.uniform(-3, 3, (2, 3)),), {"min": -1.05, "max": 1.05}, name="both"),
            Sample((rng.uniform(-3, 3, (4,)),), {"min": 0.05}, name="min"),
            Sample((rng.uniform(-3, 3, (3, 2)).T,), {"max": 0.05}, name="max_t"),
            Sample((rng.uniform(-3, 3, ()),), {"min": -0.5, "max": 0.55}, name="0d"),
        ],
    ),
    OpInfo(
        "clamp_tensor",
        lambda m, x, lo, hi: x.clip(lo, hi),
        ref=lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
        samples=lambda rng: [
            Sample(
                (
                    rng.uniform(-3, 3, (2, 3)),
                    rng.uniform(-2, -0.5, (3,)),
                    rng.uniform(0.5, 2, (2, 1)),
                ),
                name="bcast",
            ),
            Sample(
                (rng.uniform(-3, 3, (4,)), rng.uniform(0.5, 1, (4,)), rng.uniform(-1, -0.5, (4,))),
                name="min_gt_max",
            ),
        ],
    ),
    OpInfo(
        "clamp_tensor_min",
        lambda m, x, lo: m.clamp(x, min=lo),
        covers=(),
        ref=lambda x, lo: np.maximum(x, lo),
        samples=lambda rng: [
            Sample((rng.uniform(-3, 3, (2, 3)), rng.uniform(-1, 1, (2, 3)) + 0.01))
        ],
    ),
    OpInfo(
        "clamp_tensor_max",
        lambda m, x, hi: m.clamp(x, max=hi),
        covers=(),
        ref=lambda x, hi: np.minimum(x, hi),
        samples=lambda rng: [Sample((rng.uniform(-3, 3, (2, 3)), rng.uniform(-1, 1, ()) + 0.01))],
    ),
    OpInfo(
        "clamp_min",
        lambda m, x: m.clamp_min(x, 0.25),
        ref=lambda x: np.maximum(x, 0.25),
        samples=elementwise(avoid=(0.25,)),
    ),
    OpInfo(
        "clamp_max",
        lambda m, x: x.clamp_max(-0.25),
        ref=lambda x: np.minimum(x, -0.25),
        samples=elementwise(avoid=(-0.25,)),
    ),
    OpInfo(
        "clamp_min_tensor",
        lambda m, x, lo: x.clamp_min(lo),
        covers=(),
        ref=lambda x, lo: np.maximum(x, lo),
        samples=lambda rng: [Sample((rng.uniform(-3, 3, (2, 3)), rng.uniform(-1, 1, (3,)) + 0.01))],
    ),
    OpInfo(
        "nan_to_num",
        lambda m, x: m.nan_to_num(x, nan=0.5, posinf=7.0),
        ref=lambda x: np.nan_to_num(x, nan=0.5, posinf=7.0),
        samples=lambda rng: [
            Sample((np.array([1.0, np.nan, np.inf, -np.inf, -2.0]),), name="special"),
            Sample((rng.uniform(-3, 3, (2, 3)),), name="finite"),
        ],
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpInfo(
        "nan_to_num_finite",
        lambda m, x: x.nan_to_num(),
        ref=np.nan_to_num,
        covers=(),
        samples=elementwise(shapes=((2, 3),)),
    ),
] + [
    OpInfo(
        n,
        (lambda n: lambda m, x: getattr(m, n)(x))(n),
        ref=r,
        differentiable=False,
        samples=samples_of(Sample((np.array([1.0, np.nan, np.inf, -np.inf, 0.0]),))),
    )
    for n, r in [
        ("isnan", np.isnan),
        ("isinf", np.isinf),
        ("isfinite", np.isfinite),
        ("logical_not", np.logical_not),
    ]
]


def _act(m, name):
    """An activation from nn.functional in torch; from chainrule.ops here (the nn.functional
    wrappers are another family's)."""
    import chainrule

    if m is chainrule:
        return getattr(chainrule.ops, name)
    return getattr(m.nn.functional, name)
