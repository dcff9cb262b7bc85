"""OpInfo rows for chainrule/ops/nn.py and the compositions in chainrule.nn.functional."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def F(m):
    return m.nn.functional


def _u(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape)


def _idx(rng, shape, c):
    return rng.integers(0, c, shape).astype(np.int64)


def _shrink_input(rng, shape, lambd):
    # Values kept 0.1 away from the kinks at +-lambd, so finite differences see one branch.
    x = rng.uniform(-2.5, 2.5, shape)
    near = np.abs(np.abs(x) - lambd) < 0.1
    return np.where(near, x + 0.3 * np.sign(x), x)


def _softmax_samples(rng):
    return [
        Sample((_u(rng, (3, 4), -3, 3),), {"dim": 1}, name="2d"),
        Sample((_u(rng, (2, 3, 4), -3, 3),), {"dim": 0}, name="dim0"),
        Sample((_u(rng, (5,), -3, 3),), {"dim": -1}, name="1d"),
        Sample((_u(rng, (), -3, 3),), {"dim": 0}, name="0d"),
    ]


def _ce_samples(rng):
    t = _idx(rng, (4,), 3)
    t2 = t.copy()
    t2[1] = -100
    tig = t.copy()
    tig[2] = 1
    return [
        Sample((_u(rng, (4, 3), -2, 2), t), name="idx"),
        Sample(
            (_u(rng, (4, 3), -2, 2), t2, rng.uniform(0.5, 2, (3,))),
            {"reduction": "mean", "label_smoothing": 0.2},
            no_grad=(2,),
            name="w_ls_ign",
        ),
        Sample(
            (_u(rng, (4, 3), -2, 2), tig, rng.uniform(0.5, 2, (3,))),
            {"ignore_index": 1, "reduction": "sum"},
            no_grad=(2,),
            name="w_ign_sum",
        ),
        Sample(
            (_u(rng, (4, 3), -2, 2), rng.dirichlet(np.ones(3), 4)),
            {"label_smoothing": 0.1},
            name="probs",
        ),
        Sample(
            (_u(rng, (2, 3, 2, 2), -2, 2), _idx(rng, (2, 2, 2), 3)),
            {"reduction": "none"},
            name="spatial",
        ),
    ]


def _ce(m, x, t, w=None, **kw):
    return F(m).cross_entropy(x, t, weight=w, **kw)


def _nll_samples(rng):
    t = _idx(rng, (5,), 4)
    t[0] = 2
    return [
        Sample(
            (_u(rng, (5, 4), -2, 0), t, rng.uniform(0.5, 2, (4,))),
            {"ignore_index": 2},
            no_grad=(2,),
            name="w_ign",
        ),
        Sample((_u(rng, (2, 3, 2, 2), -2, 0), _idx(rng, (2, 2, 2), 3)), name="4d"),
        Sample((_u(rng, (4,), -2, 0), np.array(1, dtype=np.int64)), name="1d"),
        Sample((_u(rng, (2, 3, 4), -2, 0), _idx(rng, (2, 4), 3)), {"reduction": "none"}, name="3d"),
        Sample((_u(rng, (2, 3, 2, 1, 2), -2, 0), _idx(rng, (2, 2, 1, 2), 3)), name="5d"),
    ]


def _nll(m, x, t, w=None, **kw):
    return F(m).nll_loss(x, t, weight=w, **kw)


def _pair(rng, shape=(3, 4), **kw):
    return lambda rng: [
        Sample(
            (_u(rng, shape, -2, 2), _u(rng, shape, -2, 2)),
            dict(kw),
            name=str(kw.get("reduction", "mean")),
        )
        for kw in ({}, {"reduction": "sum"}, {"reduction": "none"})
    ]


def _bce_samples(rng):
    return [
        Sample((_u(rng, (3, 4), 0.1, 0.9), _u(rng, (3, 4), 0, 1)), name="plain"),
        Sample(
            (_u(rng, (3, 4), 0.1, 0.9), _u(rng, (3, 4), 0, 1), _u(rng, (4,), 0.5, 2)),
            {"reduction": "sum"},
            no_grad=(2,),
            name="weight",
        ),
    ]


def _bce(m, x, t, w=None, **kw):
    return F(m).binary_cross_entropy(x, t, weight=w, **kw)


def _bcel_samples(rng):
    return [
        Sample((_u(rng, (3, 4), -3, 3), _u(rng, (3, 4), 0, 1)), name="plain"),
        Sample(
            (
                _u(rng, (3, 4), -3, 3),
                _u(rng, (3, 4), 0, 1),
                _u(rng, (4,), 0.5, 2),
                _u(rng, (4,), 0.5, 3),
            ),
            {"reduction": "none"},
            no_grad=(2, 3),
            name="w_pw",
        ),
    ]


def _bcel(m, x, t, w=None, pw=None, **kw):
    return F(m).binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw, **kw)


def _kl_samples(rng):
    t = rng.dirichlet(np.ones(4), 3)
    t[0, 1] = 0.0
    return [
        Sample(
            (np.log(rng.dirichlet(np.ones(4), 3)), t),
            {"reduction": "batchmean"},
            no_grad=(1,),
            name="batchmean",
        ),
        Sample(
            (np.log(rng.dirichlet(np.ones(4), 3)), np.log(rng.dirichlet(np.ones(4), 3))),
            {"reduction": "sum", "log_target": True},
            name="log_target",
        ),
    ]


def _bn(m, x, w, b, rm=None, rv=None, training=True):
    return F(m).batch_norm(x, rm, rv, w, b, training=training)


def _emb(m, idx, w, padding_idx=None):
    return F(m).embedding(idx, w, padding_idx=padding_idx)


def _safe_softmax(m, x, dim):
    # PyTorch's private _safe_softmax (sdpa's math path); chainrule's op of the same name
    if m.__name__ == "torch":
        return m._safe_softmax(x, dim)
    from chainrule.ops.nn import safe_softmax

    return safe_softmax(x, dim)


def _reshape_alias(m, x, shape):
    # chainrule's reshape recorded as ReshapeAliasBackward0 (sdpa's math path); PyTorch's
    # Tensor._reshape_alias takes strides too, so its values are compared through reshape
    if m.__name__ == "torch":
        return x.reshape(shape)
    from chainrule.ops.fused_nn import reshape_alias

    return reshape_alias(x, shape)


OPS = [
    OpInfo("safe_softmax", _safe_softmax, samples=_softmax_samples),
    OpInfo(
        "reshape_alias",
        _reshape_alias,
        samples=lambda rng: [
            Sample((_u(rng, (2, 3, 4)),), {"shape": (6, 4)}, name="merge"),
            Sample((_u(rng, (6,)),), {"shape": (2, 1, 3)}, name="split"),
            Sample((_u(rng, ()),), {"shape": (1,)}, name="0d"),
        ],
    ),
    OpInfo("softmax", lambda m, x, dim: m.softmax(x, dim), samples=_softmax_samples),
    OpInfo(
        "glu",
        lambda m, x, dim=-1: F(m).glu(x, dim),
        samples=lambda rng: [
            Sample((_u(rng, (3, 4), -3, 3),), name="last"),
            Sample((_u(rng, (2, 6, 3), -3, 3),), {"dim": 1}, name="dim1"),
        ],
    ),
    OpInfo(
        "hardshrink",
        lambda m, x, lambd=0.5: F(m).hardshrink(x, lambd),
        samples=lambda rng: [
            Sample((_shrink_input(rng, (3, 4), 0.5),), name="2d"),
            Sample((_shrink_input(rng, (5,), 1.0),), {"lambd": 1.0}, name="lambd"),
        ],
    ),
    OpInfo(
        "softshrink",
        lambda m, x, lambd=0.5: F(m).softshrink(x, lambd),
        samples=lambda rng: [
            Sample((_shrink_input(rng, (3, 4), 0.5),), name="2d"),
            Sample((_shrink_input(rng, (5,), 1.0),), {"lambd": 1.0}, name="lambd"),
        ],
    ),
    OpInfo("log_softmax", lambda m, x, dim: m.log_softmax(x, dim), samples=_softmax_samples),
    OpInfo(
        "softmax_method",
        lambda m, x, dim: x.softmax(dim) + x.log_softmax(dim),
        samples=_softmax_samples,
        covers=(),
    ),
    OpInfo(
        "cross_entropy",
        _ce,
        samples=_ce_samples,
        # mul_scalar, div_scalar: label smoothing, the mean over probabilities (MulBackward1...)
        covers=("gather_along", "scatter_along", "mul_scalar", "div_scalar"),
    ),
    OpInfo("nll_loss", _nll, samples=_nll_samples, covers=("nll_loss", "nll_loss2d")),
    OpInfo("mse_loss", lambda m, x, t, **kw: F(m).mse_loss(x, t, **kw), samples=_pair(None)),
    OpInfo(
        "l1_loss",
        lambda m, x, t, **kw: F(m).l1_loss(x, t, **kw),
        samples=_pair(None),
        covers=(),
        gradgradcheck=False,
    ),
    OpInfo(
        "smooth_l1_loss",
        lambda m, x, t, **kw: F(m).smooth_l1_loss(x, t, beta=0.7, **kw),
        samples=_pair(None),
    ),
    OpInfo(
        "huber_loss",
        lambda m, x, t, **kw: F(m).huber_loss(x, t, delta=0.6, **kw),
        samples=_pair(None),
    ),
    OpInfo("binary_cross_entropy", _bce, samples=_bce_samples),
    OpInfo(
        "binary_cross_entropy_with_logits",
        _bcel,
        samples=_bcel_samples,
        covers=("binary_cross_entropy_with_logits", "neg_log_sigmoid"),
    ),
    OpInfo("kl_div", lambda m, x, t, **kw: F(m).kl_div(x, t, **kw), samples=_kl_samples, covers=()),
    OpInfo(
        "linear",
        lambda m, x, w, b=None: F(m).linear(x, w, b),
        covers=("unsafe_view", "squeeze_linear"),
        samples=lambda rng: [
            Sample((_u(rng, (2, 3)), _u(rng, (4, 3)), _u(rng, (4,)))),
            Sample((_u(rng, (2, 2, 3)), _u(rng, (4, 3))), name="nobias"),
            Sample((_u(rng, (3,)), _u(rng, (4, 3))), name="1d_nobias"),
        ],
    ),
    OpInfo(
        "bilinear",
        lambda m, a, b, w, bias=None: F(m).bilinear(a, b, w, bias),
        covers=("composite_trilinear3",),  # one TrilinearBackward0 (ops/composite_node.py)
        samples=lambda rng: [
            Sample((_u(rng, (2, 3)), _u(rng, (2, 4)), _u(rng, (5, 3, 4)), _u(rng, (5,))))
        ],
    ),
    OpInfo(
        "dropout_eval",
        lambda m, x: F(m).dropout(x, 0.4, training=False) + F(m).dropout(x, 0.0),
        samples=lambda rng: [Sample((_u(rng, (3, 4)),))],
        covers=(),
    ),
    OpInfo(
        "batch_norm",
        _bn,
        covers=("batch_norm_eval",),
        samples=lambda rng: [
            Sample((_u(rng, (4, 3, 2)), _u(rng, (3,)), _u(rng, (3,))), name="train"),
            Sample(
                (
                    _u(rng, (3, 2, 2, 2)),
                    _u(rng, (2,)),
                    _u(rng, (2,)),
                    _u(rng, (2,)),
                    _u(rng, (2,), 0.5, 2),
                ),
                {"training": False},
                no_grad=(3, 4),
                name="eval",
            ),
        ],
    ),
    OpInfo(
        "layer_norm",
        lambda m, x, w=None, b=None, shape=(3, 4): F(m).layer_norm(x, shape, w, b),
        samples=lambda rng: [
            Sample((_u(rng, (2, 3, 4)), _u(rng, (3, 4)), _u(rng, (3, 4))), name="affine"),
            Sample((_u(rng, (3, 5)),), {"shape": (5,)}, name="plain"),
            Sample((_u(rng, (4,)), _u(rng, (4,))), {"shape": (4,)}, name="weight_1d"),
        ],
    ),
    OpInfo(
        "group_norm",
        lambda m, x, w, b: F(m).group_norm(x, 2, w, b),
        covers=(),
        samples=lambda rng: [Sample((_u(rng, (2, 4, 3)), _u(rng, (4,)), _u(rng, (4,))))],
    ),
    OpInfo(
        "threshold",
        lambda m, x, t=0.1, v=20.0: F(m).threshold(x, t, v),
        samples=lambda rng: [
            Sample((_u(rng, (3, 4), 0.15, 2) * rng.choice([-1.0, 1.0], (3, 4)),), name="mixed"),
            Sample((_u(rng, (5,), -2, 2),), {"t": 3.0, "v": -1.0}, name="all_below"),
        ],
    ),
    OpInfo(
        "embedding",
        _emb,
        samples=lambda rng: [
            Sample((np.array([[0, 2], [3, 2]]), _u(rng, (4, 3))), name="plain"),
            Sample((np.array(2), _u(rng, (3, 2))), name="scalar_index"),
        ],
    ),
    # The padding row's values still depend on the weight (numerically) but get no gradient,
    # so gradcheck cannot hold; the PyTorch comparison checks the gradient.
    OpInfo(
        "embedding_padding_idx",
        _emb,
        covers=(),
        gradcheck=False,
        gradgradcheck=False,
        samples=lambda rng: [Sample((np.array([0, 1, 1, 3]), _u(rng, (4, 3))), {"padding_idx": 1})],
    ),
    OpInfo(
        "normalize",
        lambda m, x, **kw: F(m).normalize(x, **kw),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, (3, 4)),)),
            Sample((_u(rng, (3, 4)),), {"p": 1.0, "dim": 0}, name="p1"),
            Sample((_u(rng, (3, 4)),), {"p": 3.0, "dim": -1}, name="p3"),
        ],
    ),
    OpInfo(
        "prelu",
        lambda m, x, w: F(m).prelu(x, w),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, (2, 3, 4)), _u(rng, (3,), 0, 0.5)), name="channels"),
            Sample((_u(rng, (5,)), _u(rng, (1,), 0, 0.5)), name="scalar"),
        ],
    ),
    OpInfo(
        "cosine_similarity",
        lambda m, a, b, **kw: F(m).cosine_similarity(a, b, **kw),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, (3, 4)), _u(rng, (3, 4)))),
            Sample((_u(rng, (2, 3, 4)), _u(rng, (3, 1))), {"dim": -2}, name="bcast"),
        ],
    ),
]
