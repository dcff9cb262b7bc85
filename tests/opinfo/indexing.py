"""OpInfo rows for chainrule/ops/indexing/ and ops/inplace.py / ops/views.py."""

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
    OpInfo(
        "getitem",
        lambda m, x: x[1, 1:3],
        ref=lambda x: x[1, 1:3],
        samples=_x((3, 4)),
        covers=("getitem", "index_grad"),
    ),
    OpInfo("getitem_int", lambda m, x: x[0], ref=lambda x: x[0], samples=_x((3,)), covers=()),
    OpInfo(
        "getitem_none_ellipsis",
        lambda m, x: x[None, ..., 1],
        ref=lambda x: x[None, ..., 1],
        samples=_x((2, 3)),
        covers=(),
    ),
    OpInfo(
        "index", lambda m, x: x[m.tensor([0, 2, 0])], ref=lambda x: x[[0, 2, 0]], samples=_x((3, 2))
    ),
    OpInfo(
        "index_mask", lambda m, x: x[x > 0], ref=lambda x: x[x > 0], samples=_x((3, 4)), covers=()
    ),
    OpInfo(
        "setitem",
        _setitem,
        ref=None,
        samples=lambda rng: [Sample((rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3,))))],
        covers=("copy_slices", "zero_view", "copy"),
    ),
    OpInfo(
        "inplace_on_view",
        _inplace_on_view,
        ref=None,
        samples=lambda rng: [Sample((rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (4,))))],
        covers=(),
    ),
    OpInfo(
        "index_put",
        _index_put,
        ref=None,
        samples=lambda rng: [Sample((rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3,))))],
    ),
    OpInfo("fill", _fill, ref=None, samples=_x((3, 2))),
    OpInfo(
        "add_",
        _add_,
        ref=None,
        samples=lambda rng: [Sample((rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3,))))],
        covers=(),
    ),
]


def _u(rng, *shape):
    return rng.uniform(-1, 1, shape)


def _nc(rng, *shape):
    return rng.uniform(-1, 1, shape[::-1]).T


_I = np.array


def _tensor_value_fill(m, x, mask, v):
    return x.masked_fill(mask, v.sum())  # a 0-dim tensor value that requires grad


def _masked_fill_(m, x, mask, v):
    y = x * 1
    y.masked_fill_(mask, v)
    return y


def _scatter_(m, x, idx, src):
    y = x * 1
    y.scatter_(1, idx, src)
    return y


def _scatter_add_(m, x, idx, src):
    y = x * 1
    y.scatter_add_(0, idx, src)
    return y


def _index_add_(m, x, idx, src):
    y = x * 1
    y.index_add_(0, idx, src, alpha=-2)
    return y


def _getitem_setitem_view(m, x, v):
    y = x * 1
    y.diagonal()[...] = v
    y.narrow(1, 0, 2).select(0, 1).mul_(v[:2])
    return y


OPS += [
    # getitem / index: mixed, negative, masks, repeats -----------------------------------------
    OpInfo(
        "getitem_neg",
        lambda m, x: x[-1, -3:-1],
        ref=lambda x: x[-1, -3:-1],
        samples=_x((3, 4)),
        covers=(),
    ),
    OpInfo(
        "getitem_step",
        lambda m, x: x[::2, 1::2],
        ref=lambda x: x[::2, 1::2],
        samples=lambda rng: [Sample((_u(rng, 5, 4),)), Sample((_nc(rng, 5, 4),), name="nc")],
        covers=(),
    ),
    OpInfo(
        "getitem_empty", lambda m, x: x[2:2], ref=lambda x: x[2:2], samples=_x((3, 4)), covers=()
    ),
    OpInfo(
        "index_mixed",
        lambda m, x: x[1:, m.tensor([2, 0, 2])],
        ref=lambda x: x[1:, [2, 0, 2]],
        samples=_x((3, 4)),
        covers=(),
    ),
    OpInfo(
        "index_mixed_split",
        lambda m, x: x[m.tensor([0, 1]), :, m.tensor([1, 1])],
        ref=lambda x: x[[0, 1], :, [1, 1]],
        samples=_x((2, 3, 4)),
        covers=(),
    ),
    OpInfo(
        "index_neg_repeat",
        lambda m, x: x[m.tensor([[-1, 0], [-1, -1]])],
        ref=lambda x: x[[[-1, 0], [-1, -1]]],
        samples=_x((3, 2)),
        covers=(),
    ),
    OpInfo(
        "index_list",
        lambda m, x: x[[0, 0, 2], 1],
        ref=lambda x: x[[0, 0, 2], 1],
        samples=_x((3, 2)),
        covers=(),
    ),
    OpInfo(
        "index_mask_partial",
        lambda m, x, k: x[k],
        ref=lambda x, k: x[k],
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), _I([True, False, True])), name="rank1"),
            Sample((_u(rng, 3, 4), _I([False] * 3)), name="none"),
        ],
        covers=(),
    ),
    OpInfo(
        "index_mask_ellipsis_none",
        lambda m, x, k: x[None, ..., k],
        ref=lambda x, k: x[None, ..., k],
        samples=lambda rng: [Sample((_u(rng, 2, 4), _I([True, False, True, True])))],
        covers=(),
    ),
    OpInfo(
        "index_bool_scalar",
        lambda m, x: x[True],
        ref=lambda x: x[True],
        samples=_x((2,)),
        covers=(),
    ),
    OpInfo(
        "index_put_accumulate",
        lambda m, x, v: x.index_put((m.tensor([0, 2, 0]),), v, True),
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 4, 3), _u(rng, 3, 3)))],
    ),
    OpInfo(
        "setitem_mask",
        lambda m, x, k, v: _setitem_mask(m, x, k, v),
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 3, 2), _I([True, False, True]), _u(rng, 2)))],
    ),
    OpInfo(
        "setitem_views",
        _getitem_setitem_view,
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 3, 3), _u(rng, 3)))],
    ),
    # gather / scatter --------------------------------------------------------------------------
    OpInfo(
        "gather",
        lambda m, x, d, i: m.gather(x, d, i),
        ref=None,
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 1, _I([[0, 0], [3, 1], [2, 2]]))),
            Sample((_u(rng, 3, 4), 0, _I([[2, 0, 2, 1]])), name="dim0"),
            Sample((_nc(rng, 3, 4), -1, _I([[1], [1]])), name="neg_smaller"),
            Sample((_u(rng, 3, 4), 1, np.zeros((3, 0), np.int64)), name="empty"),
        ],
    ),
    OpInfo(
        "gather_method",
        lambda m, x, i: x.gather(-2, i),
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 2, 3, 2), _I([[[2, 0]], [[1, 1]]])))],
    ),
    OpInfo(
        "scatter",
        lambda m, x, d, i, s: m.scatter(x, d, i, s),
        ref=None,
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 1, _I([[0, 1], [3, 2], [1, 0]]), _u(rng, 3, 2))),
            Sample((_nc(rng, 3, 4), -1, _I([[3], [0]]), _nc(rng, 2, 1)), name="noncontig"),
        ],
    ),
    # src larger than index: PyTorch's own backward rejects the gradient shape it computes
    # (ScatterBackward0 returned an invalid gradient); chainrule returns zeros outside index.
    OpInfo(
        "scatter_src_larger",
        lambda m, x, i, s: x.scatter(0, i, s),
        ref=None,
        torch=False,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 3, 4), _I([[2, 0, 1]]), _u(rng, 2, 4)))],
    ),
    OpInfo(
        "scatter_add_src_larger",
        lambda m, x, i, s: x.scatter_add(0, i, s),
        ref=None,
        torch=False,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), _I([[2, 0, 2, 2], [2, 1, 0, 0]]), _u(rng, 3, 4)))
        ],
    ),
    OpInfo(
        "scatter_value",
        lambda m, x, i: x.scatter(1, i, 2.5),
        ref=None,
        samples=lambda rng: [Sample((_u(rng, 3, 4), _I([[0, 1], [3, 2], [1, 0]])))],
    ),
    OpInfo(
        "scatter_value_kw",
        lambda m, x, i: m.scatter(x, 0, i, value=-1),
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 3, 2), _I([[2, 0]])))],
    ),
    OpInfo(
        "scatter_",
        _scatter_,
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 3, 4), _I([[0], [3], [1]]), _u(rng, 3, 1)))],
    ),
    OpInfo(
        "scatter_reduce_legacy",
        lambda m, x, i, r: x.detach().scatter(0, i, 1.5, reduce=r),
        ref=None,
        differentiable=False,
        covers=("scatter_reduce_legacy",),
        samples=lambda rng: [
            Sample((_u(rng, 3, 2), _I([[0, 2], [0, 1]]), "multiply"), name="mul"),
            Sample((_u(rng, 3, 2), _I([[0, 2], [0, 1]]), "add"), name="add"),
        ],
    ),
    OpInfo(
        "scatter_add",
        lambda m, x, d, i, s: m.scatter_add(x, d, i, s),
        ref=None,
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 1, _I([[0, 0], [3, 3], [1, 0]]), _u(rng, 3, 2)), name="repeats"),
            Sample((_nc(rng, 3, 4), -2, _I([[1], [1]]), _u(rng, 2, 1)), name="noncontig"),
        ],
    ),
    OpInfo(
        "scatter_add_",
        _scatter_add_,
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 3, 2), _I([[0, 0], [0, 2]]), _u(rng, 2, 2)))],
    ),
    OpInfo(
        "take_along_dim",
        lambda m, x, i, d: m.take_along_dim(x, i, d),
        ref=None,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), _I([[0, 3], [1, 1], [2, 0]]), 1)),
            Sample((_u(rng, 3, 4), _I([[0, 2]]), 1), name="bcast_index"),
            Sample((_u(rng, 1, 4), _I([[0], [2], [3]]), 1), name="bcast_x"),
            Sample((_u(rng, 3, 4), _I([11, 0, 5, 5]), None), name="flat"),
        ],
    ),
    # index_select / index_add ------------------------------------------------------------------
    OpInfo(
        "index_select",
        lambda m, x, d, i: m.index_select(x, d, i),
        ref=None,
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 0, _I([2, 0, 2]))),
            Sample((_nc(rng, 3, 4), -1, _I([3, 3, 1, 0, 0])), name="nc"),
            Sample((_u(rng, 3, 4), 1, np.zeros(0, np.int64)), name="empty"),
            Sample((_u(rng, 3, 4), 1, _I(2)), name="0d_index"),
        ],
    ),
    OpInfo(
        "index_add",
        lambda m, x, d, i, s: m.index_add(x, d, i, s),
        ref=None,
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), 0, _I([2, 0, 2]), _u(rng, 3, 4))),
            Sample((_nc(rng, 3, 4), -1, _I([1, 1]), _u(rng, 3, 2)), name="nc_repeat"),
        ],
    ),
    OpInfo(
        "index_add_alpha",
        lambda m, x, i, s: x.index_add(1, i, s, alpha=0.5),
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 2, 3), _I([0, 2]), _u(rng, 2, 2)))],
    ),
    OpInfo(
        "index_add_",
        _index_add_,
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 3, 2), _I([0, 0]), _u(rng, 2, 2)))],
    ),
    # masks -------------------------------------------------------------------------------------
    OpInfo(
        "masked_fill",
        lambda m, x, k: m.masked_fill(x, k, -2.0),
        ref=None,
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), rng.uniform(size=(3, 4)) > 0.5)),
            Sample((_u(rng, 3, 4), _I([True, False, False, True])), name="bcast_mask"),
            Sample((_u(rng, 4), rng.uniform(size=(2, 4)) > 0.5), name="bcast_x"),
            Sample((_nc(rng, 3, 4), np.ones((3, 4), bool)), name="all"),
            Sample((_u(rng, 0, 2), np.ones((0, 2), bool)), name="empty"),
        ],
    ),
    OpInfo(
        "masked_fill_tensor",
        _tensor_value_fill,
        ref=None,
        samples=lambda rng: [Sample((_u(rng, 3, 4), rng.uniform(size=(3, 4)) > 0.5, _u(rng, 2)))],
    ),
    OpInfo(
        "masked_fill_",
        _masked_fill_,
        ref=None,
        covers=(),
        samples=lambda rng: [Sample((_u(rng, 3, 4), _I([True, False, False, True]), 1.5))],
    ),
    OpInfo(
        "masked_select",
        lambda m, x, k: m.masked_select(x, k),
        ref=lambda x, k: x[k],
        samples=lambda rng: [
            Sample((_u(rng, 3, 4), rng.uniform(size=(3, 4)) > 0.5)),
            Sample((_nc(rng, 3, 4), np.zeros((3, 4), bool)), name="none"),
        ],
    ),
    OpInfo(
        "masked_select_bcast",
        lambda m, x, k: x.masked_select(k),
        ref=None,
        covers=(),
        samples=lambda rng: [
            Sample((_u(rng, 4), _I([[True, False, True, True], [False, False, True, False]])))
        ],
    ),
]


def _setitem_mask(m, x, k, v):
    y = x * 1
    y[k] = v
    return y
