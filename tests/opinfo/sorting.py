"""OpInfo rows for chainrule/ops/sorting.py.

Random float samples have distinct values, so every index (and gradient) is determined; ties are
covered by the rows marked ``ties`` (exact values, compared with PyTorch) and by
tests/ops/test_sorting.py.
"""

from __future__ import annotations

import numpy as np

from tests.opinfo.core import OpInfo, Sample


def _u(rng, *shape):
    return rng.uniform(-2.0, 2.0, shape)


def _dims(shape=(3, 4), dims=(0, 1, -1)):
    def gen(rng):
        out = [Sample((_u(rng, *shape),), {"dim": d}, name=f"dim={d}") for d in dims]
        out.append(Sample((_u(rng, 4, 3).T,), {"dim": 0}, name="noncontig"))
        out.append(Sample((_u(rng, 5),), {"dim": 0}, name="1d"))
        out.append(Sample((_u(rng),), {"dim": 0}, name="0d"))
        return out

    return gen


def _keep(gen):
    def g(rng):
        out = []
        for s in gen(rng):
            out.append(s)
            if s.args[0].ndim:
                out.append(Sample(s.args, {**s.kwargs, "keepdim": True}, name=s.name + ",keep"))
        return out

    return g


def _ties(rng):
    a = np.array([[3.0, 1.0, 3.0, 2.0, 1.0, 3.0, 2.0], [0.0, 0.0, 1.0, 1.0, 1.0, 5.0, 5.0]])
    return [Sample((a,), {"dim": 1}, name="ties")]


def _nan(rng):
    a = np.array([[3.0, np.nan, 1.0, 2.0], [0.5, 1.5, -1.0, 4.0], [np.nan, 2.0, np.nan, 1.0]])
    return [Sample((a,), {"dim": 1}, name="nan"), Sample((a.T.copy(),), {"dim": 0}, name="nanT")]


def _sorted_seq(rng):
    seq = np.sort(rng.uniform(-2, 2, 6))
    seq2 = np.sort(rng.uniform(-2, 2, (2, 5)), axis=-1)
    vals = np.concatenate([rng.uniform(-3, 3, 4), seq[:2]])
    return [
        Sample((seq, vals), {}, name="1d"),
        Sample((seq, vals.reshape(2, 3)), {"right": True}, name="right"),
        Sample((seq2, rng.uniform(-3, 3, (2, 3))), {}, name="batched"),
        Sample((seq, vals), {"side": "right", "out_int32": True}, name="side"),
    ]


def _cat(*gens):
    return lambda rng: [s for g in gens for s in g(rng)]


def _int_samples(rng):
    a = rng.integers(0, 4, (3, 5)).astype(np.int64)
    return [Sample((a,), {}, name="int")]


# NaN inputs: values, indices and gradients against PyTorch (no finite differences through NaN).
_NAN_ROWS = [
    ("sort_nan", lambda m, x, dim: tuple(m.sort(x, dim)), "sort"),
    ("sort_descending_nan", lambda m, x, dim: tuple(m.sort(x, dim, descending=True)), "sort"),
    ("median_dim_nan", lambda m, x, dim: tuple(m.median(x, dim)), "median_dim"),
    ("median_all_nan", lambda m, x, dim: m.median(x), "median_all"),
    ("nanmedian_nan", lambda m, x, dim: tuple(m.nanmedian(x, dim)), "median_dim"),
    ("nanmedian_all_nan", lambda m, x, dim: m.nanmedian(x), "median_all"),
    ("cummax_nan", lambda m, x, dim: tuple(m.cummax(x, dim)), "cummax"),
    ("cummin_nan", lambda m, x, dim: tuple(m.cummin(x, dim)), "cummin"),
    ("topk_nan", lambda m, x, dim: tuple(m.topk(x, 2, dim)), "topk"),
]

OPS = [
    *[
        OpInfo(n, f, covers=(c,), samples=_nan, gradcheck=False, gradgradcheck=False)
        for n, f, c in _NAN_ROWS
    ],
    OpInfo("sort", lambda m, x, dim: tuple(m.sort(x, dim)), samples=_dims()),
    OpInfo(
        "sort_descending",
        lambda m, x, dim: tuple(x.sort(dim, descending=True)),
        covers=("sort",),
        samples=_dims(),
    ),
    OpInfo(
        "sort_stable_ties",
        lambda m, x, dim: tuple(m.sort(x, dim=dim, stable=True)),
        covers=("sort",),
        samples=_ties,
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpInfo(
        "sort_descending_ties",
        lambda m, x, dim: tuple(m.sort(x, dim=dim, descending=True, stable=True)),
        covers=("sort",),
        samples=_ties,
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpInfo(
        "argsort",
        lambda m, x, dim: m.argsort(x, dim),
        covers=("sort",),
        differentiable=False,
        samples=_cat(_dims(), _nan),
    ),
    OpInfo("msort", lambda m, x, dim: m.msort(x), covers=("sort",), samples=_dims(dims=(0,))),
    OpInfo(
        "topk",
        lambda m, x, dim: tuple(m.topk(x, min(2, x.shape[dim] if x.ndim else 1), dim)),
        samples=_dims(),
    ),
    OpInfo(
        "topk_smallest",
        lambda m, x, dim: tuple(x.topk(1, dim, largest=False)),
        covers=("topk",),
        samples=_dims(),
    ),
    OpInfo(
        "kthvalue",
        lambda m, x, dim, keepdim=False: tuple(
            m.kthvalue(x, 1 if not x.ndim else x.shape[dim] // 2 + 1, dim, keepdim)
        ),
        samples=_keep(_dims()),
    ),
    OpInfo(
        "median_dim",
        lambda m, x, dim, keepdim=False: tuple(m.median(x, dim, keepdim)),
        covers=("median_dim",),
        samples=_keep(_dims()),
    ),
    OpInfo("median_all", lambda m, x, dim: x.median(), covers=("median_all",), samples=_dims()),
    OpInfo(
        "nanmedian",
        lambda m, x, dim, keepdim=False: tuple(m.nanmedian(x, dim, keepdim)),
        covers=("median_dim",),
        samples=_keep(_dims()),
    ),
    OpInfo(
        "nanmedian_all", lambda m, x, dim: m.nanmedian(x), covers=("median_all",), samples=_dims()
    ),
    OpInfo(
        "mode",
        lambda m, x, dim, keepdim=False: tuple(m.mode(x, dim, keepdim)),
        samples=_keep(_dims()),
    ),
    OpInfo(
        "mode_ties",
        lambda m, x, dim: tuple(x.mode(dim)),
        covers=("mode",),
        samples=_ties,
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpInfo("cummax", lambda m, x, dim: tuple(m.cummax(x, dim)), samples=_dims()),
    OpInfo("cummin", lambda m, x, dim: tuple(x.cummin(dim)), samples=_dims()),
    OpInfo(
        "cummax_ties",
        lambda m, x, dim: tuple(m.cummax(x, dim)),
        covers=("cummax",),
        samples=_ties,
        gradcheck=False,
        gradgradcheck=False,
    ),
    OpInfo(
        "unique",
        lambda m, x, dim: m.unique(x),
        covers=("unique1",),
        differentiable=False,
        samples=_ties,
    ),
    OpInfo(
        "unique_all",
        lambda m, x, dim: m.unique(x, return_inverse=True, return_counts=True),
        covers=("unique3",),
        differentiable=False,
        samples=_ties,
    ),
    OpInfo(
        "unique_dim",
        lambda m, x, dim: x.unique(return_inverse=True, dim=dim),
        covers=("unique2",),
        differentiable=False,
        samples=lambda rng: [Sample((np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0]]),), {"dim": 0})],
    ),
    OpInfo(
        "unique_int",
        lambda m, x: m.unique(x, return_counts=True),
        covers=("unique2",),
        differentiable=False,
        samples=_int_samples,
    ),
    OpInfo(
        "unique_consecutive",
        lambda m, x, dim: m.unique_consecutive(x),
        covers=("unique_consecutive1",),
        differentiable=False,
        samples=_ties,
    ),
    OpInfo(
        "unique_consecutive_all",
        lambda m, x, dim: x.unique_consecutive(return_inverse=True, return_counts=True),
        covers=("unique_consecutive3",),
        differentiable=False,
        samples=_ties,
    ),
    OpInfo(
        "unique_consecutive_dim",
        lambda m, x, dim: m.unique_consecutive(x, return_counts=True, dim=dim),
        covers=("unique_consecutive2",),
        differentiable=False,
        samples=lambda rng: [Sample((np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0]]),), {"dim": 0})],
    ),
    OpInfo(
        "searchsorted",
        lambda m, s, v, **kw: m.searchsorted(s, v, **kw),
        differentiable=False,
        samples=_sorted_seq,
    ),
    OpInfo(
        "bucketize",
        lambda m, s, v, **kw: m.bucketize(v.reshape(-1), s.reshape(-1)),
        covers=("searchsorted",),
        differentiable=False,
        samples=lambda rng: _sorted_seq(rng)[:1],
    ),
]
