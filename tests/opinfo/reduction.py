"""OpInfo rows for chainrule/ops/reduction/."""

from __future__ import annotations

import math
import warnings

import numpy as np

from tests.opinfo.core import OpInfo, Sample, reductions


def _np_red(f):
    def ref(x, dim=None, keepdim=False):
        if x.ndim == 0:
            dim = None
        return f(x, axis=tuple(dim) if isinstance(dim, (list, tuple)) else dim, keepdims=keepdim)

    return ref


def _np_mean(x, axis=None, keepdims=False):
    # NumPy warns about the mean of an empty slice (NaN); PyTorch is silent.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.mean(x, axis=axis, keepdims=keepdims)


def _u(rng, *shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape)


def red(
    dims=(None, 0, -1, (0, 2), (-1, 1)), extra=True, empty=True, low=-2.0, high=2.0, int_dim=False
):
    """Reduction samples on a (2, 3, 4) input: dims incl. tuples and negatives, keepdim, a
    non-contiguous input, size-1 dims, a 0-d input and (optionally) an empty one."""

    def gen(rng):
        out = []
        for d in dims:
            if int_dim and isinstance(d, tuple):
                continue
            for k in (False, True):
                if d is None and k:
                    continue
                kw = {} if d is None else {"dim": d, "keepdim": k}
                out.append(
                    Sample((_u(rng, 2, 3, 4, low=low, high=high),), kw, name=f"dim={d},k={k}")
                )
        if extra:
            out.append(Sample((_u(rng, 4, 3, low=low, high=high).T,), {"dim": 1}, name="noncontig"))
            out.append(
                Sample(
                    (_u(rng, 1, 3, 1, low=low, high=high),),
                    {"dim": 0, "keepdim": True},
                    name="size1",
                )
            )
            out.append(Sample((_u(rng, low=low, high=high),), {"dim": 0}, name="0d"))
        if empty:
            out.append(Sample((_u(rng, 0, 3),), {"dim": 0}, name="empty"))
        return out

    return gen


def _with_zeros(dim_kw):
    def gen(rng):
        one = _u(rng, 3, 4)
        one[1, 2] = 0.0
        two = _u(rng, 3, 4)
        two[0, 1] = two[0, 3] = 0.0
        two[2, 0] = 0.0
        three = _u(rng, 2, 4)
        three[1, :3] = 0.0
        return [
            Sample((one,), dim_kw, name="one_zero"),
            Sample((two,), dim_kw, name="two_zeros"),
            Sample((three,), dim_kw, name="three_zeros"),
        ]

    return gen


def _cat(*gens):
    return lambda rng: [s for g in gens for s in g(rng)]


def _norm_samples(rng):
    out = []
    for p in (2, 1, 3, 1.5, 0.5, math.inf, -math.inf, 0, "fro"):
        out.append(Sample((_u(rng, 3, 4),), {"p": p}, name=f"p={p}"))
        if p != "fro":
            out.append(
                Sample(
                    (_u(rng, 2, 3, 4),),
                    {"p": p, "dim": (0, -1), "keepdim": True},
                    name=f"p={p},dims",
                )
            )
    out.append(Sample((_u(rng, 4, 3).T,), {"dim": 1}, name="noncontig"))
    out.append(Sample((_u(rng, 3, 4),), {"p": 2, "dim": -1}, name="dim=-1"))
    out.append(Sample((_u(rng),), {}, name="0d"))
    return out


def _var_samples(rng):
    out = red(dims=(None, 0, -1, (0, 2)), empty=False, extra=False)(rng)
    out.append(Sample((_u(rng, 4, 3).T,), {"dim": 1}, name="noncontig"))
    out.append(Sample((_u(rng, 2, 1, 3),), {"dim": -1, "keepdim": True}, name="size1"))
    out += [
        Sample((_u(rng, 3, 4),), {"dim": 1, "correction": 0}, name="correction=0"),
        Sample((_u(rng, 3, 4),), {"dim": 0, "correction": 2}, name="correction=2"),
        Sample((_u(rng, 3, 4),), {"dim": 1, "unbiased": False}, name="unbiased=False"),
        Sample((_u(rng, 3, 4),), {"unbiased": True}, name="unbiased=True"),
    ]
    return out


def _logical_samples(rng):
    a = rng.uniform(-1, 1, (3, 4)) > 0
    z = _u(rng, 2, 3, 4)
    z[0, 1] = 0.0
    z[1, :, 2] = 0.0
    return [
        Sample((a,), {}, name="bool"),
        Sample((a,), {"dim": 1}, name="bool_dim"),
        Sample((a,), {"dim": 0, "keepdim": True}, name="bool_keep"),
        Sample((z,), {"dim": (0, -1)}, name="float_dims"),
        Sample((z,), {}, name="float_all"),
        Sample((np.zeros((0, 3), bool),), {"dim": 0}, name="empty"),
    ]


def _cnz_samples(rng):
    z = _u(rng, 2, 3, 4)
    z[0, 1] = 0.0
    z[1, :, 2] = 0.0
    return [
        Sample((z,), {}, name="all"),
        Sample((z,), {"dim": 1}, name="dim"),
        Sample((z,), {"dim": (0, -1)}, name="dims"),
        Sample((np.array([[0, 3], [2, 0]]),), {"dim": 0}, name="int"),
    ]


def _scan_samples(rng):
    return [
        Sample((_u(rng, 3, 4),), {"dim": 1}, name="dim1"),
        Sample((_u(rng, 2, 3, 4),), {"dim": -2}, name="dim-2"),
        Sample((_u(rng, 4, 3).T,), {"dim": 0}, name="noncontig"),
        Sample((_u(rng),), {"dim": 0}, name="0d"),
        Sample((_u(rng, 0, 3),), {"dim": 1}, name="empty"),
    ]


def _cumprod_zeros(rng):
    one = _u(rng, 3, 5)
    one[0, 2] = 0.0
    one[2, 0] = 0.0
    two = _u(rng, 2, 5)
    two[0, 1] = two[0, 3] = 0.0
    last = _u(rng, 4)
    last[3] = 0.0
    return [
        Sample((one,), {"dim": 1}, name="one_zero"),
        Sample((two,), {"dim": 1}, name="two_zeros"),
        Sample((last,), {"dim": 0}, name="last_zero"),
    ]


OPS = [
    OpInfo("sum", lambda m, x, **kw: m.sum(x, **kw), ref=_np_red(np.sum), samples=reductions()),
    OpInfo(
        "sum_more",
        lambda m, x, **kw: x.sum(**kw),
        ref=_np_red(np.sum),
        samples=red(),
        covers=("sum",),
    ),
    OpInfo(
        "sum_dtype",
        lambda m, x, **kw: m.sum(x, dtype=m.float64, **kw),
        covers=("sum",),
        samples=red(dims=(None, 1)),
    ),
    OpInfo(
        "sum_int_dtype",
        lambda m, x, **kw: m.sum(x, dtype=m.int32, **kw),
        covers=("sum",),
        samples=lambda rng: [Sample((np.array([[1, 2], [3, 4]]),), {"dim": 1})],
    ),
    OpInfo("mean", lambda m, x, **kw: x.mean(**kw), ref=_np_red(np.mean), samples=reductions()),
    OpInfo(
        "mean_more",
        lambda m, x, **kw: m.mean(x, **kw),
        ref=_np_red(_np_mean),
        samples=red(),
        covers=("mean",),
    ),
    OpInfo(
        "mean_dtype",
        lambda m, x, **kw: m.mean(x, dtype=m.float64, **kw),
        covers=("mean",),
        samples=lambda rng: (
            [Sample((np.array([[1, 2], [3, 5]]),), {"dim": 0})] + red(dims=(None, 1))(rng)
        ),
    ),
    OpInfo(
        "sum_to_size",
        lambda m, x: x.sum_to_size(1, 3),
        ref=lambda x: x.sum(0, keepdims=True),
        samples=lambda rng: [Sample((rng.uniform(-1, 1, (4, 3)),))],
    ),
    OpInfo(
        "prod",
        lambda m, x, **kw: m.prod(x, **kw),
        ref=_np_red(np.prod),
        samples=_cat(
            red(dims=(None, 0, -1), int_dim=True),
            _with_zeros({"dim": 1}),
            _with_zeros({}),
            _with_zeros({"dim": 0, "keepdim": True}),
        ),
    ),
    OpInfo(
        "prod_method_dtype",
        lambda m, x, **kw: x.prod(**kw, dtype=m.float64),
        covers=("prod",),
        samples=red(dims=(None, 1), extra=False, empty=False),
    ),
    OpInfo(
        "max",
        lambda m, x: m.max(x),
        ref=np.max,
        samples=lambda rng: [
            Sample((_u(rng, 3, 4),), name="2d"),
            Sample((_u(rng, 4, 3).T,), name="noncontig"),
            Sample((_u(rng),), name="0d"),
        ],
    ),
    OpInfo(
        "min",
        lambda m, x: x.min(),
        ref=np.min,
        samples=lambda rng: [
            Sample((_u(rng, 3, 4),), name="2d"),
            Sample((_u(rng, 4, 3).T,), name="noncontig"),
            Sample((_u(rng),), name="0d"),
        ],
    ),
    OpInfo(
        "max_dim",
        lambda m, x, **kw: tuple(m.max(x, **kw)),
        covers=("max_dim", "index_grad"),
        samples=red(dims=(0, -1, 1), empty=False, int_dim=True),
    ),
    OpInfo(
        "min_dim",
        lambda m, x, **kw: tuple(x.min(**kw)),
        covers=("min_dim",),
        samples=red(dims=(0, -1, 1), empty=False, int_dim=True),
    ),
    OpInfo(
        "amax",
        lambda m, x, **kw: m.amax(x, **kw),
        ref=_np_red(np.max),
        samples=red(dims=(None, 0, -1, (0, 2)), empty=False),
    ),
    OpInfo(
        "amin",
        lambda m, x, **kw: x.amin(**kw),
        ref=_np_red(np.min),
        samples=red(dims=(None, 0, -1, (0, 2)), empty=False),
    ),
    OpInfo(
        "argmax",
        lambda m, x, **kw: m.argmax(x, **kw),
        differentiable=False,
        samples=_cat(
            red(dims=(None, 0, -1), empty=False, int_dim=True),
            lambda rng: [Sample((_u(rng, 2, 3),), {"keepdim": True}, name="none_keep")],
        ),
    ),
    OpInfo(
        "argmin",
        lambda m, x, **kw: x.argmin(**kw),
        differentiable=False,
        samples=red(dims=(None, 0, -1), empty=False, int_dim=True),
    ),
    OpInfo("var", lambda m, x, **kw: m.var(x, **kw), samples=_var_samples),
    OpInfo("std", lambda m, x, **kw: x.std(**kw), samples=_var_samples),
    OpInfo(
        "var_mean",
        lambda m, x, **kw: m.var_mean(x, **kw),
        samples=_var_samples,
        covers=("var", "mean"),
    ),
    OpInfo(
        "std_mean",
        lambda m, x, **kw: m.std_mean(x, **kw),
        samples=_var_samples,
        covers=("std", "mean"),
    ),
    OpInfo(
        "var_positional",
        lambda m, x: (m.var(x, 1, False, True), x.std(0, True)),
        samples=lambda rng: [Sample((_u(rng, 3, 4),))],
        covers=("var", "std"),
    ),
    OpInfo(
        "norm", lambda m, x, **kw: m.norm(x, **kw), samples=_norm_samples, covers=("vector_norm",)
    ),
    OpInfo(
        "norm_method",
        lambda m, x, **kw: x.norm(**kw),
        covers=("vector_norm",),
        samples=lambda rng: _norm_samples(rng)[:6],
    ),
    OpInfo(
        "logsumexp",
        lambda m, x, **kw: m.logsumexp(x, **kw),
        samples=_cat(
            red(dims=(0, -1, (0, 2)), empty=False),
            lambda rng: [
                Sample((_u(rng, 0, 3),), {"dim": 1}, name="empty"),
                Sample((_u(rng, 3, 4, low=500, high=800),), {"dim": 1}, name="large"),
            ],
        ),
    ),
    OpInfo(
        "logsumexp_int",
        lambda m, x: x.logsumexp(0),
        covers=("logsumexp",),
        samples=lambda rng: [Sample((np.array([1, 2, 3]),))],
    ),
    OpInfo("cumsum", lambda m, x, **kw: m.cumsum(x, **kw), samples=_scan_samples),
    OpInfo(
        "cumsum_dtype",
        lambda m, x: (x.cumsum(0, dtype=m.float64), m.cumsum(x > 0, 1)),
        covers=("cumsum",),
        samples=lambda rng: [Sample((_u(rng, 3, 4),))],
    ),
    OpInfo(
        "cumprod", lambda m, x, **kw: x.cumprod(**kw), samples=_cat(_scan_samples, _cumprod_zeros)
    ),
    OpInfo(
        "all", lambda m, x, **kw: m.all(x, **kw), differentiable=False, samples=_logical_samples
    ),
    OpInfo("any", lambda m, x, **kw: x.any(**kw), differentiable=False, samples=_logical_samples),
    OpInfo(
        "count_nonzero",
        lambda m, x, **kw: m.count_nonzero(x, **kw),
        differentiable=False,
        samples=_cnz_samples,
    ),
]
