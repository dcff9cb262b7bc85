"""OpInfo rows for chainrule/ops/stacking.py (composites: values and gradients vs PyTorch,
gradcheck in float64)."""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _u(rng, *shape):
    return rng.uniform(-2.0, 2.0, shape)


def _s(*shapes, kw=None, name=""):
    return lambda rng: [Sample(tuple(_u(rng, *s) for s in shapes), kw or {}, name=name)]


def _cat(*gens):
    return lambda rng: [s for g in gens for s in g(rng)]


def _tup(f):
    return lambda m, *a, **k: tuple(f(m, *a, **k))


OPS = [
    OpInfo(
        "hstack",
        lambda m, a, b: m.hstack([a, b]),
        samples=_cat(_s((2, 3), (2, 1)), _s((3,), (2,)), _s((), (2,))),
    ),
    OpInfo(
        "vstack", lambda m, a, b: m.vstack((a, b)), samples=_cat(_s((2, 3), (1, 3)), _s((3,), (3,)))
    ),
    OpInfo("row_stack", lambda m, a, b: m.row_stack((a, b)), samples=_s((3,), (2, 3))),
    OpInfo(
        "dstack", lambda m, a, b: m.dstack([a, b]), samples=_cat(_s((2, 3), (2, 3)), _s((3,), (3,)))
    ),
    OpInfo(
        "column_stack",
        lambda m, a, b: m.column_stack([a, b]),
        samples=_cat(_s((3,), (3, 2)), _s((), ())),
    ),
    OpInfo(
        "tensor_split",
        _tup(lambda m, x, ios, **k: m.tensor_split(x, ios, **k)),
        samples=lambda rng: [
            Sample((_u(rng, 7, 2), 3), {}, name="sections"),
            Sample((_u(rng, 7, 2), [1, 5]), {"dim": 0}, name="idx"),
            Sample((_u(rng, 2, 5), (2, 9)), {"dim": -1}, name="past_end"),
        ],
    ),
    OpInfo("hsplit", _tup(lambda m, x: x.hsplit(2)), samples=_s((3, 4))),
    OpInfo("vsplit", _tup(lambda m, x: m.vsplit(x, [1])), samples=_s((3, 4))),
    OpInfo("dsplit", _tup(lambda m, x: m.dsplit(x, 2)), samples=_s((2, 1, 4))),
    OpInfo(
        "atleast_3d", _tup(lambda m, a, b, c: m.atleast_3d(a, b, c)), samples=_s((), (3,), (2, 3))
    ),
    OpInfo("atleast_2d", lambda m, a: m.atleast_2d(a), samples=_s((3,))),
    OpInfo("atleast_1d", lambda m, a: m.atleast_1d(a), samples=_s(())),
    OpInfo(
        "meshgrid",
        _tup(lambda m, a, b, **k: m.meshgrid(a, b, **k)),
        samples=lambda rng: [
            Sample((_u(rng, 3), _u(rng, 2)), {"indexing": ix}, name=ix) for ix in ("ij", "xy")
        ],
    ),
    OpInfo("cartesian_prod", lambda m, a, b: m.cartesian_prod(a, b), samples=_s((3,), (2,))),
    OpInfo(
        "combinations",
        lambda m, a, **k: m.combinations(a, **k),
        samples=lambda rng: [
            Sample((_u(rng, 4),), {"r": 2}, name="r2"),
            Sample((_u(rng, 3),), {"r": 2, "with_replacement": True}, name="repl"),
            Sample((_u(rng, 4),), {"r": 3}, name="r3"),
        ],
    ),
    OpInfo("block_diag", lambda m, a, b, c: m.block_diag(a, b, c), samples=_s((2, 3), (), (2,))),
    OpInfo(
        "rot90",
        lambda m, x, **k: m.rot90(x, **k),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3, 2),), {"k": k, "dims": d}, name=f"{k}{d}")
            for k, d in ((1, (0, 1)), (2, (1, 2)), (3, (0, 2)), (-1, (2, 0)), (4, (0, 1)))
        ],
    ),
    OpInfo("fliplr", lambda m, x: m.fliplr(x), samples=_s((2, 3))),
    OpInfo("flipud", lambda m, x: x.flipud(), samples=_s((2, 3))),
    OpInfo(
        "diag_embed",
        lambda m, x, **k: m.diag_embed(x, **k),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3),), k, name=str(k))
            for k in (
                {},
                {"offset": 1},
                {"offset": -2, "dim1": 0, "dim2": 2},
                {"dim1": 2, "dim2": 0},
            )
        ],
    ),
    OpInfo(
        "diagflat",
        lambda m, x, **k: m.diagflat(x, **k),
        samples=lambda rng: [Sample((_u(rng, 2, 2),), {}), Sample((_u(rng, 3),), {"offset": -1})],
    ),
    OpInfo(
        "kron", lambda m, a, b: m.kron(a, b), samples=_cat(_s((2, 3), (3, 2)), _s((2,), (2, 1, 2)))
    ),
    OpInfo(
        "repeat_interleave",
        lambda m, x, **k: m.repeat_interleave(x, **k),
        samples=lambda rng: [
            Sample((_u(rng, 2, 3),), {"repeats": 2}, name="flat"),
            Sample((_u(rng, 2, 3),), {"repeats": 3, "dim": 1}, name="dim"),
        ],
    ),
    OpInfo(
        "repeat_interleave_tensor",
        lambda m, x: x.repeat_interleave(m.tensor([1, 0, 2], device=x.device), dim=0),
        covers=("repeat_interleave",),
        samples=_s((3, 2)),
    ),
    OpInfo("broadcast_to", lambda m, x: m.broadcast_to(x, (2, -1, 3)), samples=_s((4, 1))),
    OpInfo(
        "broadcast_tensors",
        _tup(lambda m, a, b: m.broadcast_tensors(a, b)),
        samples=_s((3, 1), (1, 4)),
    ),
]


def _ints(rng):
    return [Sample((np.arange(6).reshape(2, 3),), {}, name="int")]


OPS += [
    OpInfo(
        "hstack_int",
        lambda m, a: m.hstack([a, a]),
        covers=("hstack",),
        differentiable=False,
        samples=_ints,
    ),
    OpInfo(
        "repeat_interleave_counts",
        lambda m, a: m.repeat_interleave(a.reshape(-1)),
        covers=("repeat_interleave",),
        differentiable=False,
        samples=_ints,
    ),
]
