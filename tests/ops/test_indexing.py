"""Indexing and gather/scatter ops beyond the op table: error messages, gradient accumulation,
dtypes, grad_fn names and the backend scatter-add, against PyTorch."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from chainrule.backends.numpy_backend import NumpyBackend
from tests.ops._compare import arange_tensor, assert_same_failure, assert_same_grad_fn

torch = pytest.importorskip("torch")

_x = arange_tensor


def _i(m: Any, v: Any, dt: str = "int64") -> Any:
    return m.tensor(np.asarray(v, dtype=dt))


ERRORS = {
    # getitem / setitem
    "int_range": lambda m: _x(m, 3, 4)[3],
    "int_neg_range": lambda m: _x(m, 3, 4)[-4],
    "int_second_dim": lambda m: _x(m, 3, 4)[0, 4],
    "tensor_range": lambda m: _x(m, 3, 4)[_i(m, [0, 3])],
    "tensor_neg_range": lambda m: _x(m, 3, 4)[_i(m, [0, -4])],
    "tensor_after_slice": lambda m: _x(m, 2, 3, 4)[:, :, _i(m, [9])],
    "second_tensor": lambda m: _x(m, 2, 3, 4)[_i(m, [0]), :, _i(m, [9])],
    "too_many": lambda m: _x(m, 3, 4)[0, 0, 0],
    "too_many_ellipsis": lambda m: _x(m, 3, 4)[0, ..., 0, 0],
    "mask_shape": lambda m: _x(m, 3, 4)[_i(m, [True, False], "bool")],
    "mask_after_int": lambda m: _x(m, 2, 3, 4)[1, :, m.ones(3, 5, dtype=m.bool)],
    "float_index": lambda m: _x(m, 3, 4)[_i(m, [1.0], "float32")],
    "negative_step": lambda m: _x(m, 3, 4)[::-1],
    "zero_dim": lambda m: _x(m)[0],
    "setitem_range": lambda m: _x(m, 3, 4).__setitem__(5, 1.0),
    "setitem_tensor_range": lambda m: _x(m, 3, 4).__setitem__(_i(m, [5]), 1.0),
    # gather / scatter
    "gather_ndim": lambda m: _x(m, 3, 4).gather(1, _i(m, [0, 1])),
    "gather_size": lambda m: _x(m, 3, 4).gather(1, m.zeros(4, 1, dtype=m.int64)),
    "gather_range": lambda m: _x(m, 3, 4).gather(1, _i(m, [[5], [1], [2]])),
    "gather_negative": lambda m: _x(m, 3, 4).gather(1, _i(m, [[-1], [1], [2]])),
    "gather_dim": lambda m: _x(m, 3, 4).gather(2, _i(m, [[0]])),
    "gather_float": lambda m: _x(m, 3, 4).gather(1, _i(m, [[0]], "float32")),
    "scatter_range": lambda m: _x(m, 3, 4).scatter(1, _i(m, [[5], [1], [2]]), 1.0),
    "scatter_src_small": lambda m: _x(m, 3, 4).scatter(
        1, m.zeros(3, 2, dtype=m.int64), _x(m, 3, 1)
    ),
    "scatter_src_0d": lambda m: _x(m, 3, 4).scatter(1, _i(m, [[0]]), m.tensor(2.0)),
    "gather_0d_range": lambda m: _x(m).gather(0, _i(m, [1])),
    "index_select_0d_many": lambda m: _x(m).index_select(0, _i(m, [0, 0])),
    "scatter_ndim": lambda m: _x(m, 3, 4).scatter(1, _i(m, [0, 1]), _x(m, 3, 4)),
    "scatter_size": lambda m: _x(m, 3, 4).scatter(1, m.zeros(4, 1, dtype=m.int64), _x(m, 3, 4)),
    "scatter_add_dtype": lambda m: _x(m, 3, 4).scatter_add(1, _i(m, [[0]]), _x(m, 3, 4).double()),
    "scatter_add_range": lambda m: _x(m, 3, 4).scatter_add(1, _i(m, [[5], [1], [2]]), _x(m, 3, 4)),
    "index_select_matrix": lambda m: _x(m, 3, 4).index_select(0, m.zeros(2, 2, dtype=m.int64)),
    "index_select_float": lambda m: _x(m, 3, 4).index_select(0, m.zeros(2)),
    "index_select_range": lambda m: _x(m, 3, 4).index_select(0, _i(m, [3])),
    "index_select_neg": lambda m: _x(m, 3, 4).index_select(1, _i(m, [-1])),
    "index_select_dim1": lambda m: _x(m, 3, 4).index_select(1, _i(m, [0, 4])),
    "index_select_neg0": lambda m: _x(m, 3, 4).index_select(0, _i(m, [-1])),
    "scatter_float_index": lambda m: _x(m, 3, 4).scatter(1, m.zeros(3, 1), 1.0),
    "scatter_add_float_index": lambda m: _x(m, 3, 4).scatter_add(1, m.zeros(3, 1), _x(m, 3, 4)),
    "index_add_range": lambda m: _x(m, 3, 4).index_add(0, _i(m, [3]), _x(m, 1, 4)),
    "index_add_count": lambda m: _x(m, 3, 4).index_add(0, _i(m, [0]), _x(m, 2, 4)),
    "index_add_dtype": lambda m: _x(m, 3, 4).index_add(0, _i(m, [0]), _x(m, 1, 4).double()),
    "index_add_index_dtype": lambda m: _x(m, 3, 4).index_add(0, _i(m, [0], "float32"), _x(m, 1, 4)),
    "masked_fill_float_mask": lambda m: _x(m, 3, 4).masked_fill(m.ones(3, 4), 1.0),
    "masked_fill_value_dim": lambda m: _x(m, 3, 4).masked_fill(_x(m, 3, 4) > 0, m.ones(2)),
    "masked_fill_bcast": lambda m: _x(m, 3, 4).masked_fill(m.ones(5, dtype=m.bool), 1.0),
    "masked_fill__bcast": lambda m: _x(m, 4).masked_fill_(m.ones(3, 4, dtype=m.bool), 1.0),
    "masked_select_float": lambda m: _x(m, 3, 4).masked_select(m.ones(3, 4)),
    "take_along_dim_int32": lambda m: _x(m, 3, 4).take_along_dim(_i(m, [[0]], "int32"), 1),
    "take_along_dim_ndim": lambda m: _x(m, 3, 4).take_along_dim(_i(m, [0]), 1),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_matches_torch(name: str) -> None:
    assert_same_failure(ERRORS[name])


GRAD_FNS = {
    "gather": lambda m, x: x.gather(1, _i(m, [[0], [1], [2]])),
    "scatter": lambda m, x: x.scatter(1, _i(m, [[0], [1], [2]]), x),
    "scatter_value": lambda m, x: x.scatter(1, _i(m, [[0], [1], [2]]), 2.0),
    "scatter_add": lambda m, x: x.scatter_add(1, _i(m, [[0], [1], [2]]), x),
    "index_select": lambda m, x: x.index_select(0, _i(m, [0, 0])),
    "index_add": lambda m, x: x.index_add(0, _i(m, [0, 0]), x[:2]),
    "masked_fill": lambda m, x: x.masked_fill(x > 5, 1.0),
    "masked_fill_tensor": lambda m, x: x.masked_fill(x > 5, m.tensor(1.0)),
    "masked_select": lambda m, x: x.masked_select(x > 5),
    "take_along_dim": lambda m, x: x.take_along_dim(_i(m, [[0], [1], [2]]), 1),
    "take_along_dim_flat": lambda m, x: m.take_along_dim(x, _i(m, [0, 1])),
    "index": lambda m, x: x[_i(m, [0, 2])],
    "slice": lambda m, x: x[1:],
    "select": lambda m, x: x[1],
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_grad_fn_name_matches_torch(name: str) -> None:
    assert_same_grad_fn(GRAD_FNS[name])


def _grad(m: Any, f: Callable[[Any, Any], Any], *shape: int) -> np.ndarray:
    x = _x(m, *shape, grad=True)
    out = f(m, x)
    out.backward(m.ones_like(out) if out.ndim else None)
    return x.grad.numpy()


ACCUMULATE = {
    "getitem_repeat": lambda m, x: x[_i(m, [0, 0, 2, 0])],
    "getitem_2d_repeat": lambda m, x: x[_i(m, [[1, 1], [1, 0]]), _i(m, [2, 2])],
    "getitem_list": lambda m, x: x[[0, 0], 1],
    "gather_repeat": lambda m, x: x.gather(0, _i(m, [[2, 2, 0, 2], [2, 0, 0, 0]])),
    "index_select_repeat": lambda m, x: x.index_select(1, _i(m, [3, 3, 3])),
    "take_along_dim_repeat": lambda m, x: m.take_along_dim(x, _i(m, [5, 5, 0])),
    "masked_select_bcast": lambda m, x: x[0].masked_select(x > 3),
}


@pytest.mark.parametrize("name", sorted(ACCUMULATE))
def test_repeated_indices_accumulate(name: str) -> None:
    f = ACCUMULATE[name]
    got, want = _grad(cr, f, 3, 4), _grad(torch, f, 3, 4)
    np.testing.assert_array_equal(got, want)
    assert want.max() > 1  # the case really repeats an index


def test_scatter_goes_through_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    orig = NumpyBackend.scatter_add

    def spy(self: Any, target: Any, index: Any, values: Any) -> None:
        calls.append(target.shape)
        orig(self, target, index, values)

    monkeypatch.setattr(NumpyBackend, "scatter_add", spy)
    x = _x(cr, 3, 4, grad=True)
    x[cr.tensor([0, 0])].sum().backward()
    x.scatter_add(1, cr.tensor([[0], [0]]), x[:2, :1])
    x.index_add(0, cr.tensor([1]), x[:1])
    assert len(calls) == 3
    np.testing.assert_array_equal(x.grad.numpy()[0], [2, 2, 2, 2])


def test_masked_fill_dtypes_match_torch() -> None:
    cases = [(np.int64, 1.5), (np.float32, 2), (np.bool_, True), (np.float64, -1)]
    for dt, v in cases:
        a = np.arange(4).astype(dt)
        k = np.array([True, False, True, False])
        got = cr.tensor(a).masked_fill(cr.tensor(k), v)
        want = torch.tensor(a).masked_fill(torch.tensor(k), v)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_masked_fill_tensor_value_gradient() -> None:
    grads = []
    for m in (cr, torch):
        x = _x(m, 2, 3, grad=True)
        v = m.tensor(2.0, requires_grad=True)
        (x.masked_fill(x > 2, v) * _x(m, 2, 3)).sum().backward()
        grads.append((x.grad.numpy(), v.grad.numpy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


def test_scatter_reduce_with_tensor_src_warns_and_has_no_derivative() -> None:
    msgs = []
    for m in (cr, torch):
        x = _x(m, 3, 2, grad=True)
        with pytest.warns(UserWarning, match="reduce argument of torch.scatter"):
            y = x.scatter(0, _i(m, [[0, 2]]), _x(m, 1, 2), reduce="add")
        np.testing.assert_array_equal(y.detach().numpy(), [[0, 1], [2, 3], [4, 6]])
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_inplace_scatter_variants_bump_version() -> None:
    x = _x(cr, 3, 4)
    x.scatter_(1, cr.tensor([[0]]), 9.0)
    x.scatter_add_(0, cr.tensor([[1]]), cr.ones(1, 1))
    x.index_add_(1, cr.tensor([3]), cr.ones(3, 1), alpha=2)
    x.masked_fill_(x > 10, -1.0)
    t = _x(torch, 3, 4)
    t.scatter_(1, torch.tensor([[0]]), 9.0)
    t.scatter_add_(0, torch.tensor([[1]]), torch.ones(1, 1))
    t.index_add_(1, torch.tensor([3]), torch.ones(3, 1), alpha=2)
    t.masked_fill_(t > 10, -1.0)
    assert x._version == t._version == 4
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_index_put_out_of_place_leaves_input() -> None:
    x = _x(cr, 3)
    y = x.index_put((cr.tensor([0, 0]),), cr.tensor([1.0, 2.0]), accumulate=True)
    np.testing.assert_array_equal(x.numpy(), [0, 1, 2])
    np.testing.assert_array_equal(y.numpy(), [3, 1, 2])


def test_setitem_bool_mask_and_ellipsis_none_match_torch() -> None:
    outs = []
    for m in (cr, torch):
        x = _x(m, 2, 3, 4)
        x[..., _i(m, [True, False, True, False], "bool")] = -1.0
        x[None, 1, ..., 0] = 7.0
        x[_i(m, [0, 0]), _i(m, [1, 1])] = _x(m, 2, 4)
        outs.append(x.numpy())
    np.testing.assert_array_equal(outs[0], outs[1])


def test_no_warnings_in_plain_indexing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _x(cr, 3, 4)[[0, 1], [1, 2]]
        _x(cr, 3, 4)[cr.tensor([[0, 1]]), 1:]


ZERO_DIM = {
    "gather": lambda m, x: x.gather(0, _i(m, [0, 0])),
    "gather_0d_index": lambda m, x: x.gather(0, _i(m, 0)),
    "index_select": lambda m, x: x.index_select(0, _i(m, [0])),
    "masked_fill": lambda m, x: x.masked_fill(_i(m, True, "bool"), 1.0),
    "flip": lambda m, x: x.flip(0),
    "movedim": lambda m, x: x.movedim(0, 0),
    "roll": lambda m, x: x.roll(1),
    "repeat": lambda m, x: x.repeat(2, 3),
}


@pytest.mark.parametrize("name", sorted(ZERO_DIM))
def test_zero_dim_inputs_match_torch(name: str) -> None:
    f = ZERO_DIM[name]
    res = []
    for m in (cr, torch):
        x = m.tensor(3.0, requires_grad=True)
        out = f(m, x)
        (out * 2).sum().backward()
        res.append((tuple(out.shape), out.detach().numpy(), x.grad.numpy()))
    assert res[0][0] == res[1][0]
    np.testing.assert_array_equal(res[0][1], res[1][1])
    np.testing.assert_array_equal(res[0][2], res[1][2])
