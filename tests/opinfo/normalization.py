"""OpInfo rows for chainrule/ops/normalization.py (the fused training BatchNorm), against the
same statistics and affine map written with torch ops. All three outputs (y, batch mean,
biased batch variance) are compared and differentiated, so the VJP's terms for the mean and
variance outputs are checked too."""

from __future__ import annotations

from tests.opinfo.core import OpInfo, Sample


def _bn_train(m, x, w=None, b=None):
    if m.__name__ != "torch":
        from chainrule.ops.normalization import batch_norm_train

        return batch_norm_train(x, w, b, 1e-5)
    dims = (0,) + tuple(range(2, x.ndim))
    mean = x.mean(dims)
    var = x.var(dims, correction=0)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean.view(shape)) / (var.view(shape) + 1e-5).sqrt()
    if w is not None:
        y = y * w.view(shape)
    if b is not None:
        y = y + b.view(shape)
    return y, mean, var


def _samples(rng):
    def u(*shape, scale=1.0, shift=0.0):
        return rng.standard_normal(shape) * scale + shift

    return [
        Sample((u(4, 3, 5, scale=2.0, shift=1.0), u(3), u(3)), name="affine_3d"),
        Sample((u(3, 2, 2, 2), u(2)), name="weight_only_4d"),
        Sample((u(5, 4),), name="plain_2d"),
    ]


OPS = [
    OpInfo("batch_norm_train", _bn_train, samples=_samples),
]
