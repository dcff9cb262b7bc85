"""OpInfo rows for chainrule/ops/scattering.py (values and gradients vs PyTorch, gradcheck in
float64)."""

from __future__ import annotations

import warnings

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _u(rng, *shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape)


def _idx(*rows):
    return np.array(rows, dtype=np.int64)


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # index_reduce is "in beta", both warn
        return f(*a, **k)


def _scatter_reduce_samples(
    reduce: str, include_self: bool, ties: bool = False, partial: bool = False
):
    def gen(rng):
        kw = {"reduce": reduce, "include_self": include_self}
        idx = _idx([0, 1, 0, 2], [0, 0, 2, 2])  # repeated targets, an untouched row
        if partial:
            # src larger than index: PyTorch's backward fails there (it returns a gradient of
            # index's shape), so these rows are checked by gradcheck, and their values against
            # PyTorch in tests/test_names.py.
            return [
                Sample(
                    (_u(rng, 3, 4), 1, _idx([0, 0], [3, 1], [2, 2]), _u(rng, 3, 3)),
                    kw,
                    name="dim1_larger_src",
                )
            ]
        out = [
            Sample((_u(rng, 3, 4), 0, idx, _u(rng, 2, 4)), kw, name="dim0"),
            Sample(
                (_u(rng, 3, 4), 1, _idx([0, 0], [3, 1], [2, 1]), _u(rng, 3, 2)), kw, name="dim1"
            ),
        ]
        if reduce in ("amax", "amin") and ties:
            # ties among the contributors and with self share the gradient (not differentiable
            # there: no gradcheck)
            x = np.array([[1.0, 2.0], [0.5, -1.0]])
            src = np.array([[1.0, 2.0], [1.0, 3.0]])
            return [Sample((x, 0, _idx([0, 0], [0, 1]), src), kw, name="ties")]
        if reduce == "prod":
            x = np.array([[0.0, 2.0, 1.5], [0.5, -1.0, 0.0]])
            src = np.array([[3.0, 0.0, 0.0], [1.0, 0.5, 2.0]])
            out.append(Sample((x, 0, _idx([0, 0, 0], [0, 0, 1]), src), kw, name="zeros"))
        return out

    return gen


def _scatter_reduce_rows():
    rows = []
    for r in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            rows.append(
                OpInfo(
                    f"scatter_reduce_{r}_{'self' if inc else 'noself'}",
                    lambda m, x, d, i, s, **k: m.scatter_reduce(x, d, i, s, **k),
                    covers=("scatter_reduce",),
                    samples=_scatter_reduce_samples(r, inc),
                    gradgradcheck=r != "prod",  # prod's second derivative at zeros is a constant
                )
            )
            rows.append(
                OpInfo(
                    f"scatter_reduce_{r}_{'self' if inc else 'noself'}_partial",
                    lambda m, x, d, i, s, **k: m.scatter_reduce(x, d, i, s, **k),
                    covers=(),
                    samples=_scatter_reduce_samples(r, inc, partial=True),
                    torch=False,
                    gradgradcheck=r != "prod",
                )
            )
            if r in ("amax", "amin"):
                rows.append(
                    OpInfo(
                        f"scatter_reduce_{r}_{'self' if inc else 'noself'}_ties",
                        lambda m, x, d, i, s, **k: m.scatter_reduce(x, d, i, s, **k),
                        covers=(),
                        samples=_scatter_reduce_samples(r, inc, ties=True),
                        gradcheck=False,
                        gradgradcheck=False,
                    )
                )
    return rows


def _index_reduce_samples(reduce):
    def gen(rng):
        return [
            Sample(
                (_u(rng, 3, 4), 0, _idx(0, 2, 0), _u(rng, 3, 4)), {"reduce": reduce}, name="dim0"
            ),
            Sample(
                (_u(rng, 2, 3), 1, _idx(2, 2), _u(rng, 2, 2)),
                {"reduce": reduce, "include_self": False},
                name="dim1_noself",
            ),
        ]

    return gen


OPS = [
    *_scatter_reduce_rows(),
    *[
        OpInfo(
            f"index_reduce_{r}",
            lambda m, x, d, i, s, **k: _quiet(m.index_reduce, x, d, i, s, **k),
            covers=(),
            samples=_index_reduce_samples(r),
            gradgradcheck=r != "prod",
        )
        for r in ("prod", "mean", "amax", "amin")
    ],
    OpInfo(
        "index_copy",
        lambda m, x, d, i, s: m.index_copy(x, d, i, s),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 4, 3), 0, _idx(3, 0), _u(rng, 2, 3)), name="dim0"),
            Sample((_u(rng, 2, 4), 1, _idx(1, 3, 0), _u(rng, 2, 3)), name="dim1"),
            Sample((_u(rng, 2, 4), -1, _idx(2), _u(rng, 2, 1)), name="neg_dim"),
        ],
    ),
    OpInfo(
        "index_copy_",
        lambda m, x, d, i, s: (x * 1).index_copy_(d, i, s),
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 4, 3), 0, _idx(3, 0), _u(rng, 2, 3)))],
    ),
    OpInfo(
        "index_fill",
        lambda m, x, d, i, v: x.index_fill(d, i, v),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 1, _idx(0, 2, -1), 2.5), name="number"),
            Sample((_u(rng, 3, 4), 0, _idx(1), np.array(0.7)), name="tensor_value"),
        ],
    ),
    OpInfo(
        "masked_scatter",
        lambda m, x, mask, s: x.masked_scatter(mask, s),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), _u(rng, 3, 4) > 0, _u(rng, 14)), name="same"),
            Sample(
                (_u(rng, 3, 4), np.array([True, False, False, True]), _u(rng, 3, 4)),
                name="bcast_mask",
            ),
        ],
    ),
    OpInfo(
        "masked_scatter_",
        lambda m, x, mask, s: (x * 1).masked_scatter_(mask, s),
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 3, 4), _u(rng, 3, 4) > 0, _u(rng, 14)))],
    ),
    OpInfo(
        "put",
        lambda m, x, i, s, **k: x.put(i, s, **k),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), _idx([0, 10], [-1, 5]), _u(rng, 2, 2)), name="plain"),
            Sample(
                (_u(rng, 3, 4), _idx(1, 1, 7), _u(rng, 3)), {"accumulate": True}, name="accumulate"
            ),
        ],
    ),
    OpInfo(
        "put_",
        lambda m, x, i, s: (x * 1).put_(i, s),
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 2, 3), _idx(0, 4), _u(rng, 2)))],
    ),
    OpInfo(
        "diagonal_scatter",
        lambda m, x, s, **k: m.diagonal_scatter(x, s, **k),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), _u(rng, 3)), name="main"),
            Sample((_u(rng, 3, 4), _u(rng, 3)), {"offset": 1}, name="offset"),
            Sample((_u(rng, 2, 3, 3), _u(rng, 2, 3)), {"dim1": 1, "dim2": 2}, name="batch"),
        ],
    ),
    OpInfo(
        "select_scatter",
        lambda m, x, s, d, i: m.select_scatter(x, s, d, i),
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 3, 4), _u(rng, 3), 1, -1))],
    ),
    OpInfo(
        "slice_scatter",
        lambda m, x, s, **k: m.slice_scatter(x, s, **k),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), _u(rng, 3, 2)), {"dim": 1, "start": 0, "step": 2}, name="step"),
            Sample((_u(rng, 5, 2), _u(rng, 2, 2)), {"start": 1, "end": 3}, name="dim0"),
        ],
    ),
    OpInfo(
        "fill_diagonal_",
        lambda m, x, **k: (x * 1).fill_diagonal_(-1.5, **k),
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 3, 3),), name="square"),
            Sample((_u(rng, 7, 3),), {"wrap": True}, name="wrap"),
            Sample((_u(rng, 7, 3),), name="tall"),
            Sample((_u(rng, 2, 2, 2),), name="cube"),
        ],
    ),
]
