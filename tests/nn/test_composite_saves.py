"""Issue 15: composite nodes keep only what PyTorch's kernels keep (Note [composite nodes],
``reads=``), so changing the bias of group_norm or the table of embedding_bag in place before
the backward is no error, as in PyTorch, and the gradients stay torch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd.graph import saved_bytes

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(15)
X = RNG.standard_normal((2, 4, 3))
W = RNG.standard_normal(4)
B = RNG.standard_normal(4)
TABLE = RNG.standard_normal((6, 3))
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 0, 1])
OFF = np.array([0, 4, 4, 7])
PSW = RNG.standard_normal(9)


def _np(t: Any) -> np.ndarray:
    return np.asarray(t._data) if isinstance(t, cr.Tensor) else t.detach().numpy()


def _group_norm_bias_changed(m: Any, grads: tuple[bool, bool, bool]) -> list[Any]:
    x, w, b = (m.tensor(a, requires_grad=g) for a, g in zip((X, W, B), grads))
    y = m.nn.functional.group_norm(x, 2, w, b)
    with m.no_grad():
        b.mul_(2.0)  # PyTorch's NativeGroupNormBackward0 does not keep the bias
    (y * m.tensor(X)).sum().backward()
    return [t.grad for t, g in zip((x, w, b), grads) if g]


@pytest.mark.parametrize("grads", [(True, True, True), (True, False, False), (False, False, True)])
def test_group_norm_bias_changed_in_place(grads: tuple[bool, bool, bool]) -> None:
    got = _group_norm_bias_changed(cr, grads)
    want = _group_norm_bias_changed(torch, grads)
    for a, b in zip(got, want):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)


def test_group_norm_keeps_no_bias() -> None:
    x = cr.tensor(X, requires_grad=True)
    w, b = cr.tensor(W, requires_grad=True), cr.tensor(B, requires_grad=True)
    y = cr.nn.functional.group_norm(x, 2, w, b)
    assert type(y.grad_fn).__name__ == "NativeGroupNormBackward0"
    assert saved_bytes(y) == X.nbytes + W.nbytes


def test_group_norm_double_backward_matches_torch() -> None:
    def run(m: Any) -> list[np.ndarray]:
        x, w, b = (m.tensor(a, requires_grad=True) for a in (X, W, B))
        y = m.nn.functional.group_norm(x, 2, w, b)
        gx, gw, gb = m.autograd.grad((y * m.tensor(X)).sum(), (x, w, b), create_graph=True)
        (gx.pow(2).sum() + (gw * gw).sum() + gb.sum()).backward()
        return [_np(t.grad) for t in (x, w)]

    for a, b in zip(run(cr), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("which", [(True, True, True), (False, True, True), (False, False, True)])
def test_group_norm_gradgradcheck(which: tuple[bool, bool, bool]) -> None:
    ts = [cr.tensor(a, requires_grad=g) for a, g in zip((X, W, B), which)]
    fn = lambda *t: cr.nn.functional.group_norm(t[0], 2, t[1], t[2])  # noqa: E731
    assert cr.autograd.gradcheck(fn, ts)
    assert cr.autograd.gradgradcheck(fn, ts)


def _bag_table_changed(m: Any, mode: str, psw: bool, grad_psw: bool) -> list[Any]:
    w = m.tensor(TABLE, requires_grad=True)
    p = m.tensor(PSW, requires_grad=grad_psw) if psw else None
    y = m.nn.functional.embedding_bag(
        m.tensor(IDX), w, m.tensor(OFF), mode=mode, per_sample_weights=p
    )
    assert type(y.grad_fn).__name__ == "EmbeddingBagBackward0"
    with m.no_grad():
        w.mul_(2.0)  # PyTorch keeps the table only for the per-sample weights' gradient
    (y * y.detach()).sum().backward()
    return [w.grad] + ([p.grad] if grad_psw else [])


@pytest.mark.parametrize(
    "mode,psw", [("sum", False), ("mean", False), ("sum", True), ("max", False)]
)
def test_embedding_bag_table_changed_in_place(mode: str, psw: bool) -> None:
    for a, b in zip(
        _bag_table_changed(cr, mode, psw, False), _bag_table_changed(torch, mode, psw, False)
    ):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12)


@pytest.mark.parametrize("m", [cr, torch], ids=["chainrule", "torch"])
def test_embedding_bag_table_needed_for_psw_grad(m: Any) -> None:
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _bag_table_changed(m, "sum", True, True)


def test_embedding_bag_psw_gradgradcheck() -> None:
    w = cr.tensor(TABLE, requires_grad=True)
    p = cr.tensor(PSW, requires_grad=True)
    idx, off = cr.tensor(IDX), cr.tensor(OFF)
    fn = lambda w, p: cr.nn.functional.embedding_bag(  # noqa: E731
        idx, w, off, mode="sum", per_sample_weights=p
    )
    assert cr.autograd.gradcheck(fn, (w, p))
    assert cr.autograd.gradgradcheck(fn, (w, p))


@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("two_d", [False, True])
def test_embedding_bag_max_keeps_no_table(padding_idx: Any, two_d: bool) -> None:
    """max mode saves no table (PyTorch keeps the maxima's indices): nothing saved, and a
    table changed in place still gives torch's gradient, for 2-d input and padding too."""

    def run(m: Any) -> tuple[Any, Any]:
        w = m.tensor(TABLE, requires_grad=True)
        idx, off = (m.tensor(IDX.reshape(3, 3)), None) if two_d else (m.tensor(IDX), m.tensor(OFF))
        y = m.nn.functional.embedding_bag(idx, w, off, mode="max", padding_idx=padding_idx)
        if m is cr:
            assert saved_bytes(y) == 0
        with m.no_grad():
            w.mul_(-3.0)  # changes which entries are maximal: the recorded ones must be used
        (y * m.tensor(np.arange(y.numel(), dtype=np.float64).reshape(y.shape))).sum().backward()
        return y, w.grad

    (yc, gc), (yt, gt) = run(cr), run(torch)
    np.testing.assert_array_equal(_np(yc), _np(yt))
    np.testing.assert_array_equal(_np(gc), _np(gt))


def test_embedding_bag_max_gradgradcheck() -> None:
    idx, off = cr.tensor(IDX), cr.tensor(OFF)
    w = cr.tensor(TABLE, requires_grad=True)
    fn = lambda w: cr.nn.functional.embedding_bag(idx, w, off, mode="max")  # noqa: E731
    assert cr.autograd.gradcheck(fn, (w,))
    assert cr.autograd.gradgradcheck(fn, (w,))
