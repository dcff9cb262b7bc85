"""Shape ops beyond the op table: error messages, grad_fn names and view semantics vs PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.ops import shape as shape_ops
from tests.ops._compare import arange_tensor, assert_same_failure, assert_same_grad_fn

torch = pytest.importorskip("torch")

_x = arange_tensor


class _F:
    """``m.nn.functional``; ``pad``/``one_hot`` fall back to chainrule.ops.shape until
    chainrule.nn.functional re-exports them."""

    def __init__(self, m: Any) -> None:
        self.m = m

    def __getattr__(self, name: str) -> Any:
        f = getattr(self.m.nn.functional, name, None)
        return f if f is not None else getattr(shape_ops, name)


ERRORS = {
    "reshape_bad": lambda m: _x(m, 2, 3).reshape(4, -1),
    "view_two_neg": lambda m: _x(m, 2, 3).view(-1, -1),
    "unflatten_bad": lambda m: _x(m, 2, 6).unflatten(1, (4, 2)),
    "unflatten_dim": lambda m: _x(m, 2, 6).unflatten(2, (3, 2)),
    "movedim_len": lambda m: _x(m, 2, 3).movedim((0, 1), (0,)),
    "movedim_repeat": lambda m: _x(m, 2, 3).movedim((0, 0), (0, 1)),
    "movedim_range": lambda m: _x(m, 2, 3).movedim(2, 0),
    "repeat_short": lambda m: _x(m, 2, 3).repeat(2),
    "repeat_negative": lambda m: _x(m, 2, 3).repeat(1, -2),
    "split_negative": lambda m: _x(m, 5).split(-1),
    "split_zero": lambda m: _x(m, 5).split(0),
    "flip_dup": lambda m: _x(m, 2, 3).flip(0, -2),
    "flip_range": lambda m: _x(m, 2, 3).flip(2),
    "roll_align": lambda m: m.roll(_x(m, 2, 3), (1, 2), 0),
    "roll_flat_align": lambda m: m.roll(_x(m, 2, 3), (1, 2)),
    "cat_empty": lambda m: m.cat([]),
    "cat_ndim": lambda m: m.cat([_x(m, 2, 3), _x(m, 3)]),
    "cat_size": lambda m: m.cat([_x(m, 2, 3), _x(m, 2, 4)]),
    "cat_0d": lambda m: m.cat([_x(m), _x(m)]),
    "cat_dim": lambda m: m.cat([_x(m, 2, 3), _x(m, 2, 3)], 2),
    "split_sizes": lambda m: _x(m, 5).split([2, 2]),
    "split_0d": lambda m: m.split(_x(m), 1),
    "chunk_zero": lambda m: _x(m, 4).chunk(0),
    "narrow_start": lambda m: _x(m, 3, 4).narrow(1, 5, 1),
    "narrow_len": lambda m: _x(m, 3, 4).narrow(1, 2, 3),
    "narrow_dim": lambda m: _x(m, 3, 4).narrow(2, 0, 1),
    "select_range": lambda m: _x(m, 3, 4).select(1, 4),
    "select_neg_range": lambda m: _x(m, 3, 4).select(0, -4),
    "tril_1d": lambda m: _x(m, 3).tril(),
    "triu_1d": lambda m: m.triu(_x(m, 3)),
    "diag_3d": lambda m: _x(m, 2, 2, 2).diag(),
    "diagonal_same": lambda m: _x(m, 2, 2).diagonal(0, 1, 1),
    "diagonal_range": lambda m: _x(m, 2, 2).diagonal(0, 0, 2),
    "expand_bad": lambda m: _x(m, 2, 3).expand(3, 3),
    "expand_few": lambda m: _x(m, 2, 3).expand(3),
    "permute_dup": lambda m: _x(m, 2, 3).permute(0, 0),
    "pad_odd": lambda m: _F(m).pad(_x(m, 2, 3), (1,)),
    "pad_long": lambda m: _F(m).pad(_x(m, 2, 3), (1, 1, 1, 1, 1, 1)),
    "pad_negative": lambda m: _F(m).pad(_x(m, 2, 3), (-2, -2)),
    "pad_reflect_big": lambda m: _F(m).pad(_x(m, 1, 2, 3), (3, 3), mode="reflect"),
    "pad_reflect_dims": lambda m: _F(m).pad(_x(m, 1, 1, 2, 3), (1, 1), mode="reflect"),
    "pad_replicate_1d": lambda m: _F(m).pad(_x(m, 3), (1, 1), mode="replicate"),
    "one_hot_float": lambda m: _F(m).one_hot(_x(m, 3)),
    "one_hot_neg": lambda m: _F(m).one_hot(m.tensor([0, -1])),
    "one_hot_big": lambda m: _F(m).one_hot(m.tensor([0, 3]), 3),
    "one_hot_empty": lambda m: _F(m).one_hot(m.tensor([], dtype=m.int64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_matches_torch(name: str) -> None:
    assert_same_failure(ERRORS[name])


GRAD_FNS = {
    "unflatten": lambda m, x: x.unflatten(1, (2, 2)),
    "movedim": lambda m, x: x.movedim(0, 1),
    "moveaxis": lambda m, x: m.moveaxis(x, 0, 1),
    "repeat": lambda m, x: x.repeat(2, 1),
    "tile": lambda m, x: x.tile(2),
    "flip": lambda m, x: x.flip(0),
    "roll": lambda m, x: x.roll(1, 0),
    "cat": lambda m, x: m.cat([x, x]),
    "split": lambda m, x: x.split(2)[0],
    "split_sizes": lambda m, x: x.split([1, 3], 1)[1],
    "chunk": lambda m, x: x.chunk(2)[0],
    "narrow": lambda m, x: x.narrow(1, 1, 2),
    "select": lambda m, x: x.select(1, 1),
    "tril": lambda m, x: x.tril(),
    "triu": lambda m, x: x.triu(1),
    "diag_extract": lambda m, x: x.diag(),
    "diag_embed": lambda m, x: x[0].diag(1),
    "diagonal": lambda m, x: x.diagonal(),
    "expand_as": lambda m, x: x.expand_as(m.zeros(2, 3, 4)),
    "pad_constant": lambda m, x: _F(m).pad(x, (1, 1)),
    "pad_reflect": lambda m, x: _F(m).pad(x[None], (1, 1), mode="reflect"),
    "pad_replicate": lambda m, x: _F(m).pad(x[None, None], (1, 1, 1, 1), mode="replicate"),
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_grad_fn_name_matches_torch(name: str) -> None:
    assert_same_grad_fn(GRAD_FNS[name])


VIEWS = {
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(0, 1),
    "diagonal": lambda x: x.diagonal(1),
    "movedim": lambda x: x.movedim(0, -1),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "expand_as_self": lambda x: x[0].expand_as(x),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_memory_and_version(name: str) -> None:
    f = VIEWS[name]
    for m in (torch, cr):
        x = _x(m, 3, 4)
        v = f(x)
        assert v._base is x
        before = x._version
        if name != "expand_as_self":  # an expanded view cannot be written in place
            v.add_(100)
            assert x._version == before + 1
    xt, xc = _x(torch, 3, 4), _x(cr, 3, 4)
    if name != "expand_as_self":
        f(xt).add_(100)
        f(xc).add_(100)
        np.testing.assert_array_equal(xc.numpy(), xt.numpy())


@pytest.mark.parametrize("name", ["split", "chunk", "unbind"])
def test_multi_output_pieces_are_copies(name: str) -> None:
    # Differs from torch (documented): the pieces do not alias the input.
    x = _x(cr, 4, 2)
    pieces = {
        "split": lambda: x.split(2),
        "chunk": lambda: x.chunk(2),
        "unbind": lambda: x.unbind(),
    }[name]()
    pieces[0].add_(1)
    np.testing.assert_array_equal(x.numpy(), np.arange(8.0).reshape(4, 2))


def test_inplace_through_view_chain_matches_torch() -> None:
    def f(m: Any, x: Any) -> Any:
        y = x * 1
        y.movedim(0, 1).narrow(0, 1, 2).diagonal().mul_(3)
        y.unflatten(1, (2, 2)).select(2, 0).add_(y[2, 3])  # column 3 is not written
        return (y * y).sum()

    xs = [m.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True) for m in (cr, torch)]
    outs = [f(m, x) for m, x in zip((cr, torch), xs)]
    for o in outs:
        o.backward()
    np.testing.assert_allclose(outs[0].item(), outs[1].item(), rtol=1e-12)
    np.testing.assert_allclose(xs[0].grad.numpy(), xs[1].grad.numpy(), rtol=1e-12)


def test_tril_triu_inplace() -> None:
    for m in (cr, torch):
        x = _x(m, 3, 3)
        assert x.tril_(-1) is x and x._version == 1
    a, b = _x(cr, 3, 4).triu_(1), _x(torch, 3, 4).triu_(1)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_cat_promotes_and_skips_legacy_empty() -> None:
    for dt in ("int64", "float32"):
        got = cr.cat([cr.tensor([1, 2]), cr.tensor(np.array([0.5], dtype=dt))])
        want = torch.cat([torch.tensor([1, 2]), torch.tensor(np.array([0.5], dtype=dt))])
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = cr.cat([cr.zeros(0), cr.ones(2, 2)], 1)
    assert tuple(got.shape) == (2, 2)


def test_chunk_counts_match_torch() -> None:
    for n, c in [(5, 2), (6, 4), (1, 3), (0, 2), (7, 7), (3, 5)]:
        got = [tuple(p.shape) for p in _x(cr, n).chunk(c)]
        want = [tuple(p.shape) for p in _x(torch, n).chunk(c)]
        assert got == want, (n, c)


def test_one_hot_values_and_dtype() -> None:
    idx = [[0, 3], [2, 2]]
    got = shape_ops.one_hot(cr.tensor(idx))
    want = torch.nn.functional.one_hot(torch.tensor(idx))
    assert got.dtype == cr.int64 and not got.requires_grad
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_pad_reflect_gradient_accumulates() -> None:
    # Each reflected element also receives the gradient of its mirror images.
    grads = []
    for m in (cr, torch):
        x = m.tensor([[[1.0, 2.0, 3.0]]], requires_grad=True)
        _F(m).pad(x, (2, 2), mode="reflect").sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_array_equal(grads[0], [[[2.0, 3.0, 2.0]]])
