"""Sparse gradients (Embedding/EmbeddingBag(sparse=True)), optimizers on them, and the sparse
arithmetic of docs/sparse.md, against PyTorch: values, gradients and errors."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import chainrule as cr

W = np.random.RandomState(0).randn(6, 3).astype(np.float32)
LIBS = (torch, cr)


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's sparse invariant-check notice
        yield


def _sp(g: Any) -> tuple[Any, ...]:
    return (
        g.is_sparse,
        g.is_coalesced(),
        list(g.shape),
        g._indices().tolist(),
        np.round(g._values().numpy(), 5).tolist(),
    )


def _emb(lib: Any, **kw: Any) -> Any:
    m = lib.nn.Embedding(6, 3, sparse=True, **kw)
    m.weight.data = lib.tensor(W)
    return m


@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_sparse_grad_layout_and_accumulation(padding_idx: int | None) -> None:
    got = []
    for lib in LIBS:
        m = _emb(lib, padding_idx=padding_idx)
        out = m(lib.tensor([[0, 2, 1], [2, 4, 0]]))
        out.pow(2).sum().backward()
        first = _sp(m.weight.grad)
        m(lib.tensor([4, 1])).sum().backward()  # sparse + sparse
        g = m.weight.grad
        # the dense value; PyTorch's add kernel may merge some duplicate entries
        got.append((out.tolist(), first, g.is_sparse, g.is_coalesced(), g.to_dense().tolist()))
    assert got[0] == got[1]
    assert got[1][1][1] is False  # uncoalesced, as PyTorch's


def test_embedding_accumulation_order_and_functional() -> None:
    got = []
    for lib in LIBS:
        w = lib.tensor(W, requires_grad=True)
        lib.nn.functional.embedding(lib.tensor([4, 1]), w, sparse=True).sum().backward()
        lib.nn.functional.embedding(lib.tensor([3, 0]), w, sparse=True).mul(2).sum().backward()
        g = w.grad
        got.append((g.is_sparse, g.is_coalesced(), g._nnz(), g.to_dense().tolist()))
    assert got[0] == got[1]  # the order of the entries is PyTorch's add kernel's own


def test_embedding_sparse_without_grad_and_zero_grad() -> None:
    got = []
    for lib in LIBS:
        m = _emb(lib)
        with lib.no_grad():
            v = m(lib.tensor([1, 2])).tolist()
        m(lib.tensor([1, 2])).sum().backward()
        m.zero_grad(set_to_none=False)
        kept = (m.weight.grad.is_sparse, m.weight.grad._nnz(), m.weight.grad.to_dense().tolist())
        m(lib.tensor([5])).sum().backward()
        after = m.weight.grad.to_dense().tolist()
        m.zero_grad()
        got.append((v, kept, after, m.weight.grad))
    assert got[0] == got[1]


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_sparse_grad(mode: str) -> None:
    got = []
    for lib in LIBS:
        m = lib.nn.EmbeddingBag(6, 3, sparse=True, mode=mode)
        m.weight.data = lib.tensor(W)
        out = m(lib.tensor([0, 2, 2, 4]), lib.tensor([0, 2]))
        out.pow(2).sum().backward()
        got.append((np.round(out.detach().numpy(), 5).tolist(), _sp(m.weight.grad)))
    assert got[0] == got[1]


def test_embedding_bag_max_sparse_error() -> None:
    for lib in LIBS:
        with pytest.raises(ValueError, match="max mode does not support sparse weights"):
            lib.nn.EmbeddingBag(6, 3, sparse=True, mode="max")(lib.tensor([[0, 1]]))


def _train(lib: Any, name: str, kw: dict[str, Any], steps: int = 3) -> Any:
    m = _emb(lib)
    lin = lib.nn.Linear(3, 1)
    lin.weight.data = lib.tensor(np.ones((1, 3), np.float32))
    lin.bias.data = lib.tensor([0.5])
    ps = list(m.parameters()) + (list(lin.parameters()) if name != "SparseAdam" else [])
    opt = getattr(lib.optim, name)(ps, **kw)
    try:
        for s in range(steps):
            opt.zero_grad()
            lin(m(lib.tensor([[0, 2, 2], [5, 0, 1]][s % 2]))).pow(2).sum().backward()
            opt.step()
    except RuntimeError as e:
        return str(e), m.weight.detach().numpy().copy()
    buf = opt.state[m.weight].get("momentum_buffer") if name == "SGD" else None
    return (
        m.weight.detach().numpy().copy(),
        lin.weight.detach().numpy().copy(),
        None if buf is None else (buf.is_sparse, buf.to_dense().numpy()),
        len(opt.state),
    )


OK = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, maximize=True, initial_accumulator_value=0.2)),
    ("SparseAdam", dict(lr=0.1)),
    ("SparseAdam", dict(lr=0.1, betas=(0.8, 0.9), maximize=True)),
]


@pytest.mark.parametrize(("name", "kw"), OK)
def test_optimizers_with_sparse_grads_match_torch(name: str, kw: dict[str, Any]) -> None:
    t, c = _train(torch, name, kw), _train(cr, name, kw)
    # float32, duplicate rows summed in another order than PyTorch's kernel
    np.testing.assert_allclose(c[0], t[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c[1], t[1], rtol=1e-5, atol=1e-6)
    assert (c[2] is None) == (t[2] is None) and c[3] == t[3]
    if t[2] is not None:
        assert c[2][0] is t[2][0] is True
        np.testing.assert_allclose(c[2][1], t[2][1], rtol=1e-5, atol=1e-4)  # entries ~30
    assert not np.allclose(c[0], W)  # the touched rows moved


ERR = [
    ("SGD", dict(lr=0.1, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1)),
    ("Adam", {}),
    ("AdamW", {}),
    ("RMSprop", {}),
    ("Adadelta", {}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("ASGD", {}),
    ("Rprop", {}),
]


@pytest.mark.parametrize(("name", "kw"), ERR)
def test_optimizers_refusing_sparse_grads_as_torch(name: str, kw: dict[str, Any]) -> None:
    t, c = _train(torch, name, kw), _train(cr, name, kw)
    assert isinstance(t[0], str) and c[0] == t[0]
    if name not in ("SGD", "Adagrad"):
        np.testing.assert_array_equal(c[1], W)  # nothing changed


def test_sparse_adam_refuses_dense_grads() -> None:
    for lib in LIBS:
        p = lib.nn.Parameter(lib.ones(3))
        p.sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            lib.optim.SparseAdam([p]).step()


@pytest.mark.parametrize(
    "clip",
    [
        lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps, 0.5),
        lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps, 0.5, foreach=False),
        lambda lib, ps: lib.nn.utils.clip_grad_value_(ps, 0.5),
    ],
)
def test_clip_grad_over_sparse_grads_is_torch_error(clip: Callable[..., Any]) -> None:
    msgs = []
    for lib in LIBS:
        m = _emb(lib)
        m(lib.tensor([0, 2])).sum().backward()
        with pytest.raises(NotImplementedError) as e:
            clip(lib, m.parameters())
        msgs.append(str(e.value).split(" This could")[0])
    assert msgs[0] == msgs[1]


def _arith(lib: Any) -> list[Any]:
    s = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1]]), lib.tensor([1.0, 2.0, 3.0]), (3,))
    d = lib.ones(3)
    out = []
    for f in (
        lambda: lib.add(d, s),
        lambda: lib.add(d, s, alpha=2),
        lambda: d.add(s),
        lambda: d.clone().add_(s),
        lambda: d.clone().add_(s, alpha=2),
        lambda: lib.add(s, s, alpha=2).to_dense(),
        lambda: lib.add(s.coalesce(), s.coalesce(), alpha=0.5).to_dense(),
        lambda: d.sub(s),
        lambda: lib.sub(d, s, alpha=3),
        lambda: d.clone().sub_(s),
        lambda: lib.add(s, d),
        lambda: s.add(d),
    ):
        try:
            out.append(f().tolist())
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_add_dense_sparse_functions_match_torch() -> None:
    assert _arith(cr) == _arith(torch)


def test_add_dense_sparse_gradients() -> None:
    grads = []
    for lib in LIBS:
        d = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        v = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor([[0, 2]]), v, (3,))
        (lib.add(d, s, alpha=3) * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        grads.append((d.grad.tolist(), v.grad.tolist()))
    assert grads[0] == grads[1]


def _show(r: Any, lib: Any) -> Any:
    if r.layout == lib.sparse_coo:
        return ("S", list(r.shape), r.is_coalesced(), r._indices().tolist(), r._values().tolist())
    return ("D", r.tolist())


@pytest.mark.parametrize("dim", [0, 1, 2, (0, 2), (1, 2), (0, 1), (0, 1, 2), -1])
def test_sparse_sum_keepdim_matches_torch(dim: Any) -> None:
    got = []
    for lib in LIBS:
        i = lib.tensor([[0, 1, 1], [2, 0, 2]])
        s = lib.sparse_coo_tensor(i, lib.tensor([[3.0, 1], [4.0, 2], [5.0, 3]]), (2, 3, 2))
        got.append(_show(s.sum(dim, keepdim=True), lib))
    assert got[0] == got[1]


def _keepdim_grad(lib: Any) -> Any:
    v = lib.tensor([3.0, 4.0, 5.0], dtype=lib.float64, requires_grad=True)
    s = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [2, 0, 2]]), v, (2, 3))
    r = s.sum(1, keepdim=True)
    (r.to_dense() * lib.tensor([[2.0], [3.0]], dtype=lib.float64)).sum().backward()
    return v.grad.tolist()


def test_sparse_sum_keepdim_gradient() -> None:
    # PyTorch's backward fails here (docs/sparse.md); chainrule's is the chain rule's value.
    with pytest.raises(RuntimeError, match="expand is unsupported for Sparse tensors"):
        _keepdim_grad(torch)
    assert _keepdim_grad(cr) == [2.0, 3.0, 3.0]


def test_sparse_mask_matches_torch() -> None:
    got = []
    for lib in LIBS:
        d = lib.arange(6.0, dtype=lib.float64).reshape(2, 3).requires_grad_()
        m = lib.sparse_coo_tensor(lib.tensor([[1, 0, 1], [2, 2, 2]]), lib.ones(3), (2, 3))
        out = [_show(d.sparse_mask(m), lib)]
        r = d.sparse_mask(m.coalesce())
        out.append(_show(r, lib))
        lib.sparse.sum(r).backward()
        out.append(d.grad.tolist())
        out.append(_show(d.detach().to_sparse().sparse_mask(m), lib))
        for f in (
            lambda: d.sparse_mask(lib.ones(2, 3)),
            lambda: d.sparse_mask(lib.ones(2, 2).to_sparse()),
        ):
            with pytest.raises((RuntimeError, NotImplementedError)) as e:
                f()
            out.append((type(e.value).__name__, str(e.value).split(" This could")[0]))
        got.append(out)
    assert got[0] == got[1]


def test_sparse_mask_gradcheck() -> None:
    m = cr.sparse_coo_tensor(cr.tensor([[1, 0], [2, 1]]), cr.ones(2), (2, 3)).coalesce()

    def f(x: Any) -> Any:
        return x.sparse_mask(m).values()

    x = cr.randn(2, 3, dtype=cr.float64, requires_grad=True)
    assert cr.autograd.gradcheck(f, (x,))
