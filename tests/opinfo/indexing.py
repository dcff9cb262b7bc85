"""OpInfo rows for chainrule/ops/indexing.py and ops/inplace.py / ops/views.py."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _x(shape):
    return lambda rng: [Sample((rng.uniform(-1, 1, shape),))]


def _setitem(m, x, v):
    y = x * 1
    y[1:3] = v
    return y


def _inplace_on_view(m, x, v):
    y = x * 1
    y.t()[0].mul_(v)
    return y


def _index_put(m, x, v):
    y = x * 1
    y[m.tensor([0, 2])] = v
    return y


def _fill(m, x):
    y = x * 2
    y[0].fill_(3.0)
    return y


def _add_(m, x, v):
    y = x * 2
    y.add_(v)
    return y


OPS = [
    OpInfo("getitem", lambda m, x: x[1, 1:3], ref=lambda x: x[1, 1:3], samples=_x((3, 4)),
           covers=("getitem", "index_grad")),
    OpInfo("getitem_int", lambda m, x: x[0], ref=lambda x: x[0], samples=_x((3,)), covers=()),
    OpInfo("getitem_none_ellipsis", lambda m, x: x[None, ..., 1], ref=lambda x: x[None, ..., 1],
           samples=_x((2, 3)), covers=()),
    OpInfo("index", lambda m, x: x[m.tensor([0, 2, 0])], ref=lambda x: x[[0, 2, 0]],
           samples=_x((3, 2))),
    OpInfo("index_mask", lambda m, x: x[x > 0], ref=lambda x: x[x > 0], samples=_x((3, 4)),
           covers=()),
    OpInfo("setitem", _setitem, ref=None, samples=lambda rng: [
        Sample((rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3,))))],
        covers=("copy_slices", "zero_view", "copy")),
    OpInfo("inplace_on_view", _inplace_on_view, ref=None, samples=lambda rng: [
        Sample((rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (4,))))], covers=()),
    OpInfo("index_put", _index_put, ref=None, samples=lambda rng: [
        Sample((rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3,))))]),
    OpInfo("fill", _fill, ref=None, samples=_x((3, 2))),
    OpInfo("add_", _add_, ref=None, samples=lambda rng: [
        Sample((rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3,))))], covers=()),
]
