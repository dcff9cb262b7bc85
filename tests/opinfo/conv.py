"""OpInfo rows for chainrule/ops/conv.py and the poolings/resizing in nn.functional."""

from __future__ import annotations

from tests.opinfo.core import OpInfo, Sample


def F(m):
    return m.nn.functional


def _u(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape)


def _conv2d_samples(rng):
    return [
        Sample((_u(rng, (2, 2, 5, 5)), _u(rng, (3, 2, 3, 3)), _u(rng, (3,))), name="bias"),
        Sample(
            (_u(rng, (2, 2, 5, 5)), _u(rng, (3, 2, 3, 2))),
            {"stride": 2, "padding": 1},
            name="stride_pad",
        ),
        Sample(
            (_u(rng, (1, 4, 5, 5)), _u(rng, (4, 2, 2, 2))),
            {"padding": "same", "dilation": 2, "groups": 2},
            name="same_dil_groups",
        ),
        Sample(
            (_u(rng, (2, 5, 4)), _u(rng, (2, 2, 2, 2))),
            {"stride": (1, 2), "padding": (0, 1)},
            name="unbatched",
        ),
        # C >= 4, O <= 2C, stride 1: the forward takes the shifted-products path.
        Sample(
            (_u(rng, (2, 4, 5, 6)), _u(rng, (3, 4, 3, 2)), _u(rng, (3,))),
            {"padding": (1, 0), "dilation": (2, 1)},
            name="shifted_dil",
        ),
    ]


def _conv2d(m, x, w, b=None, **kw):
    return F(m).conv2d(x, w, b, **kw)


def _conv1d_samples(rng):
    return [
        Sample((_u(rng, (2, 2, 6)), _u(rng, (3, 2, 3)), _u(rng, (3,))), {"padding": 1}),
        Sample(
            (_u(rng, (2, 4, 7)), _u(rng, (4, 2, 2))),
            {"stride": 2, "dilation": 2, "groups": 2},
            name="groups",
        ),
    ]


def _convt_samples(rng):
    return [
        Sample((_u(rng, (2, 3, 3, 3)), _u(rng, (3, 2, 3, 3)), _u(rng, (2,))), name="bias"),
        Sample(
            (_u(rng, (2, 2, 3, 2)), _u(rng, (2, 2, 2, 3))),
            {"stride": 2, "padding": 1, "output_padding": 1},
            name="stride_op",
        ),
        Sample(
            (_u(rng, (1, 4, 3, 3)), _u(rng, (4, 1, 2, 2))),
            {"groups": 2, "dilation": 2, "padding": (1, 0)},
            name="groups_dil",
        ),
    ]


def _convt(m, x, w, b=None, **kw):
    return F(m).conv_transpose2d(x, w, b, **kw)


def _distinct(rng, shape):
    # Distinct values, so the argmax (and the gradient) is well defined under perturbation.
    import numpy as np

    n = int(np.prod(shape))
    return rng.permutation(n).reshape(shape) / n * 2 - 1


def _pool_samples(rng):
    return [
        Sample((_distinct(rng, (2, 2, 5, 5)),), {"kernel_size": 2}, name="k2"),
        Sample(
            (_distinct(rng, (1, 2, 6, 5)),),
            {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
            name="ceil_pad",
        ),
        Sample(
            (_distinct(rng, (2, 5, 6)),),
            {"kernel_size": (2, 3), "stride": 1, "dilation": 2},
            name="dil_unbatched",
        ),
    ]


def _avg_samples(rng):
    return [
        Sample((_u(rng, (2, 2, 5, 5)),), {"kernel_size": 2}, name="k2"),
        Sample(
            (_u(rng, (1, 2, 6, 5)),),
            {
                "kernel_size": 3,
                "stride": 2,
                "padding": 1,
                "ceil_mode": True,
                "count_include_pad": False,
            },
            name="ceil_nopad",
        ),
        Sample(
            (_u(rng, (1, 2, 5, 5)),),
            {"kernel_size": 3, "stride": 2, "padding": 1, "divisor_override": 4},
            name="divisor",
        ),
    ]


def _interp_samples(rng):
    return [
        Sample((_u(rng, (1, 2, 3, 4)),), {"scale_factor": 2, "mode": "nearest"}, name="nearest2"),
        Sample((_u(rng, (1, 2, 4, 3)),), {"size": (3, 5), "mode": "nearest"}, name="nearest_size"),
        Sample(
            (_u(rng, (1, 2, 3, 4)),),
            {"size": (5, 3), "mode": "bilinear", "align_corners": True},
            name="bil_ac",
        ),
        Sample(
            (_u(rng, (2, 1, 3, 4)),),
            {"scale_factor": 1.5, "mode": "bilinear", "align_corners": False},
            name="bil_sf",
        ),
        Sample((_u(rng, (2, 2, 5)),), {"size": 7, "mode": "linear"}, name="linear"),
    ]


OPS = [
    OpInfo(
        "conv2d",
        _conv2d,
        samples=_conv2d_samples,
        covers=("conv2d", "conv2d_weight", "conv_transpose2d"),
    ),
    OpInfo(
        "conv2d_toplevel",
        lambda m, x, w: m.conv2d(x, w, None, 1, 1),
        covers=(),
        samples=lambda rng: [Sample((_u(rng, (1, 2, 4, 4)), _u(rng, (2, 2, 3, 3))))],
    ),
    OpInfo(
        "conv1d",
        lambda m, x, w, b=None, **kw: F(m).conv1d(x, w, b, **kw),
        samples=_conv1d_samples,
        covers=(),
    ),
    OpInfo("conv_transpose2d", _convt, samples=_convt_samples, covers=()),
    OpInfo(
        "conv_transpose1d",
        lambda m, x, w, b=None, **kw: F(m).conv_transpose1d(x, w, b, **kw),
        samples=lambda rng: [
            Sample((_u(rng, (2, 3, 4)), _u(rng, (3, 2, 3)), _u(rng, (2,))), name="bias"),
            Sample(
                (_u(rng, (2, 4, 5)), _u(rng, (4, 1, 2))),
                {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2},
                name="stride_groups",
            ),
            Sample(
                (_u(rng, (2, 3)), _u(rng, (2, 2, 3))),
                {"stride": 2, "dilation": 2, "output_padding": 1},
                name="unbatched_dil",
            ),
        ],
    ),
    OpInfo(
        "max_pool2d", lambda m, x, **kw: F(m).max_pool2d(x, **kw), samples=_pool_samples, covers=()
    ),
    OpInfo(
        "max_pool2d_indices",
        lambda m, x, **kw: F(m).max_pool2d(x, return_indices=True, **kw),
        samples=_pool_samples,
        covers=(),
    ),
    OpInfo(
        "avg_pool2d",
        lambda m, x, **kw: F(m).avg_pool2d(x, **kw),
        samples=_avg_samples,
        covers=("composite_linear",),  # one AvgPool2DBackward0 node (ops/composite_node.py)
    ),
    OpInfo(
        "adaptive_avg_pool2d",
        lambda m, x, s: F(m).adaptive_avg_pool2d(x, s),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, (2, 2, 5, 7)), (3, 4))),
            Sample((_u(rng, (2, 5, 4)), (2, None)), name="none"),
        ],
    ),
    OpInfo(
        "adaptive_max_pool2d",
        lambda m, x, s: F(m).adaptive_max_pool2d(x, s, return_indices=True),
        covers=("composite1",),  # one AdaptiveMaxPool2DBackward0 node (ops/composite_node.py)
        samples=lambda rng: [
            Sample((_distinct(rng, (2, 2, 5, 7)), (3, 4))),
            Sample((_distinct(rng, (2, 5, 4)), 2), name="unbatched"),
        ],
    ),
    OpInfo(
        "pixel_shuffle",
        lambda m, x: F(m).pixel_shuffle(x, 2),
        covers=(),
        samples=lambda rng: [Sample((_u(rng, (2, 8, 2, 3)),))],
    ),
    OpInfo(
        "pixel_unshuffle",
        lambda m, x: F(m).pixel_unshuffle(x, 2),
        covers=(),
        samples=lambda rng: [Sample((_u(rng, (1, 2, 4, 6)),))],
    ),
    OpInfo(
        "interpolate",
        lambda m, x, **kw: F(m).interpolate(x, **kw),
        covers=(),
        samples=_interp_samples,
    ),
]
