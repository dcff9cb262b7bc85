"""OpInfo rows for chainrule/ops/shape.py."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _x(shape):
    return lambda rng: [Sample((rng.uniform(-1, 1, shape),))]


OPS = [
    OpInfo("reshape", lambda m, x: x.reshape(4, -1), ref=lambda x: x.reshape(4, -1),
           samples=lambda rng: [Sample((rng.uniform(-1, 1, (2, 6)),)),
                                Sample((rng.uniform(-1, 1, (6, 2)).T,), name="noncontig")]),
    OpInfo("view", lambda m, x: x.view(3, 2, 2), ref=lambda x: x.reshape(3, 2, 2),
           samples=_x((2, 6))),
    OpInfo("flatten", lambda m, x: m.flatten(x, 1), ref=lambda x: x.reshape(2, -1),
           samples=_x((2, 3, 2)), covers=()),
    OpInfo("transpose", lambda m, x: x.transpose(0, 2), ref=lambda x: np.swapaxes(x, 0, 2),
           samples=_x((2, 3, 4))),
    OpInfo("t", lambda m, x: x.t(), ref=lambda x: x.T, samples=_x((2, 3))),
    OpInfo("permute", lambda m, x: x.permute(2, 0, 1), ref=lambda x: np.transpose(x, (2, 0, 1)),
           samples=_x((2, 3, 4))),
    OpInfo("T", lambda m, x: x.T, ref=lambda x: x.T, samples=_x((2, 3)), covers=()),
    OpInfo("squeeze", lambda m, x: x.squeeze(), ref=np.squeeze, samples=_x((2, 1, 3, 1))),
    OpInfo("squeeze_dim", lambda m, x: x.squeeze(1), ref=lambda x: np.squeeze(x, 1),
           samples=_x((2, 1, 3, 1)), covers=()),
    OpInfo("unsqueeze", lambda m, x: x.unsqueeze(-1), ref=lambda x: x[..., None],
           samples=_x((2, 3))),
    OpInfo("expand", lambda m, x: x.expand(4, 2, 3), ref=lambda x: np.broadcast_to(x, (4, 2, 3)),
           samples=_x((2, 1))),
    OpInfo("stack", lambda m, a, b: m.stack([a, b], 1), ref=lambda a, b: np.stack([a, b], 1),
           samples=lambda rng: [Sample((rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))))]),
    OpInfo("unbind", lambda m, x: m.unbind(x, 1), ref=lambda x: tuple(np.moveaxis(x, 1, 0)),
           samples=_x((2, 3))),
    OpInfo("clone", lambda m, x: x.clone(), ref=np.copy, samples=_x((2, 3))),
    OpInfo("to_dtype", lambda m, x: x.to(m.float32 if x.dtype == m.float64 else m.float64),
           ref=None, samples=_x((2, 3)), gradcheck=False, gradgradcheck=False),
]
