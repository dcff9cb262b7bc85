"""OpInfo rows for the ops that give nn.functional calls PyTorch's nodes: the scalar overloads
(chainrule/ops/scalar_overloads.py), the in-place threshold and the composite nodes
(chainrule/ops/composite_node.py) with 2 and 3 inputs."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def F(m):
    return m.nn.functional


def _u(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape)


def _threshold_(m, x):
    y = x * 1.0
    F(m).threshold_(y, 0.1, 20.0)
    return y


OPS = [
    OpInfo(
        "margin_ranking_loss",
        lambda m, a, b, t: F(m).margin_ranking_loss(a, b, t, margin=0.3),
        covers=("add_scalar",),
        samples=lambda rng: [
            Sample(
                (_u(rng, (5,)), _u(rng, (5,)), np.array([1.0, -1.0, 1.0, 1.0, -1.0])), no_grad=(2,)
            )
        ],
    ),
    OpInfo(
        "pairwise_distance",
        lambda m, a, b, p=2.0: F(m).pairwise_distance(a, b, p),
        covers=("norm_dim",),
        samples=lambda rng: [
            Sample((_u(rng, (3, 4)), _u(rng, (3, 4))), name="p2"),
            Sample((_u(rng, (2, 3, 4)), _u(rng, (4,))), {"p": 3.0}, name="p3_broadcast"),
        ],
    ),
    OpInfo(
        "threshold_",
        _threshold_,
        covers=("threshold_inplace",),
        samples=lambda rng: [
            Sample((_u(rng, (3, 4), 0.15, 2) * rng.choice([-1.0, 1.0], (3, 4)),), name="mixed")
        ],
    ),
    OpInfo(
        "multi_margin_loss_weight",
        lambda m, x, t, w: F(m).multi_margin_loss(x, t, p=2, margin=0.7, weight=w),
        covers=("composite3",),
        samples=lambda rng: [
            Sample((_u(rng, (4, 3)), np.array([0, 2, 1, 1]), _u(rng, (3,), 0.5, 2)), no_grad=(1, 2))
        ],
    ),
    OpInfo(
        "group_norm_bias_only",
        lambda m, x, b: F(m).group_norm(x, 2, None, b),
        # PyTorch 2.13's CPU kernel raises "tensor does not have a device" for a bias
        # without a weight; chainrule computes it (checked by gradcheck only).
        ref=None,
        torch=False,
        covers=("composite_affine2",),
        samples=lambda rng: [Sample((_u(rng, (2, 4, 3)), _u(rng, (4,))))],
    ),
    OpInfo(
        "group_norm_affine",
        lambda m, x, w, b: F(m).group_norm(x, 2, w, b),
        covers=("composite_affine3",),
        samples=lambda rng: [Sample((_u(rng, (2, 4, 3)), _u(rng, (4,)), _u(rng, (4,))))],
    ),
    OpInfo(
        "soft_margin_loss",
        lambda m, x, t: F(m).soft_margin_loss(x, t),
        covers=("composite2",),
        samples=lambda rng: [
            Sample((_u(rng, (3, 4)), rng.choice([-1.0, 1.0], (3, 4))), no_grad=(1,))
        ],
    ),
    OpInfo(
        "scaled_dot_product_attention",
        lambda m, q, k, v: F(m).scaled_dot_product_attention(q, k, v, is_causal=True),
        covers=("composite3",),
        samples=lambda rng: [
            Sample((_u(rng, (1, 2, 3, 4)), _u(rng, (1, 2, 3, 4)), _u(rng, (1, 2, 3, 4))))
        ],
    ),
    OpInfo(
        "embedding_bag_per_sample_weights",
        lambda m, idx, w, off, psw: F(m).embedding_bag(
            idx, w, off, mode="sum", per_sample_weights=psw
        ),
        covers=("composite_bilinear2",),
        samples=lambda rng: [
            Sample(
                (np.array([0, 2, 1, 3, 2]), _u(rng, (4, 3)), np.array([0, 2]), _u(rng, (5,))),
                no_grad=(0, 2),
            )
        ],
    ),
]
