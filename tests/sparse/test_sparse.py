"""Sparse COO tensors against PyTorch: construction, structure, repr, products, sums,
arithmetic, softmax, gradients (to the values and the dense operands) and the errors."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

# PyTorch warns once that its invariant checks are off by default.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning"),
    pytest.mark.filterwarnings("ignore:Sparse CSR tensor support:UserWarning"),
]

IDX = np.array([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]])  # (0, 2) twice: uncoalesced
VAL = np.array([3.0, 4.0, 5.0, 1.0, -2.0])
X = np.arange(12.0).reshape(3, 4) / 7 - 0.5


def _sp(m: Any, dtype: str = "float32", grad: bool = False, **kw: Any) -> Any:
    dt = getattr(m, dtype)
    return m.sparse_coo_tensor(
        m.tensor(IDX), m.tensor(VAL, dtype=dt), (3, 3), requires_grad=grad, **kw
    )


def _np(t: Any) -> Any:
    return t.detach().numpy() if hasattr(t, "detach") else t


def _same(a: Any, b: Any, tol: float = 1e-5) -> None:
    """chainrule result ``a`` equals torch result ``b``: layout, shape, dtype, and for a
    sparse result its stored indices, values, coalesced flag and nnz."""
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    assert a.is_sparse == b.is_sparse
    if b.is_sparse:
        assert a.is_coalesced() == b.is_coalesced()
        assert a._nnz() == b._nnz()
        assert (a.sparse_dim(), a.dense_dim()) == (b.sparse_dim(), b.dense_dim())
        np.testing.assert_array_equal(_np(a._indices()), _np(b._indices()))
        np.testing.assert_allclose(_np(a._values()), _np(b._values()), rtol=tol, atol=tol)
    else:
        np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def _both(f: Callable[[Any], Any], tol: float = 1e-5) -> tuple[Any, Any]:
    a, b = f(cr), f(torch)
    _same(a, b, tol)
    return a, b


def _fails_same(f: Callable[[Any], Any], exact: bool = True) -> None:
    errs = []
    for m in (cr, torch):
        with pytest.raises(Exception) as info:
            f(m)
        errs.append(info.value)
    assert type(errs[0]) is type(errs[1]), errs
    if exact:
        assert str(errs[0]) == str(errs[1])
    else:  # PyTorch's message goes on with its build's list of backends
        assert str(errs[1]).startswith(str(errs[0])), errs


# construction and structure ---------------------------------------------------------------


def test_structure() -> None:
    for m in (cr, torch):
        s = _sp(m)
        assert s.layout is m.sparse_coo and s.is_sparse and not m.ones(1).is_sparse
        assert m.ones(1).layout is m.strided
        assert (s.sparse_dim(), s.dense_dim(), s._nnz(), s.dim(), s.numel()) == (2, 0, 5, 2, 9)
        assert tuple(s.shape) == tuple(s.size()) == (3, 3) and s.size(1) == 3
        assert str(s.device) == "cpu" and not s.is_coalesced()
        assert s.type() == "torch.sparse.FloatTensor"
    _both(lambda m: _sp(m))
    _both(lambda m: _sp(m).coalesce())
    _both(lambda m: _sp(m, "float64", is_coalesced=False))
    _both(lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL)))  # size inferred
    _both(lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.ones(5, 2), (3, 3, 2)))  # hybrid
    _both(lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.ones(5, 2)).coalesce())
    _both(lambda m: m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.int64), m.zeros(0), (2, 2)))
    _both(lambda m: m.sparse_coo_tensor(IDX.tolist(), VAL.tolist(), (3, 3)))
    _both(lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor([1, 2, 3, 4, 5])))


def test_indices_values() -> None:
    for m in (cr, torch):
        s = _sp(m)
        c = s.coalesce()
        assert c.coalesce() is c and c.is_coalesced()
        np.testing.assert_array_equal(c.indices().numpy(), [[0, 1, 1, 2], [2, 0, 2, 1]])
        np.testing.assert_allclose(c.values().numpy(), [4.0, 4.0, 5.0, -2.0])
        np.testing.assert_array_equal(s._indices().numpy(), IDX)
        np.testing.assert_allclose(s._values().numpy(), VAL)
    _fails_same(lambda m: _sp(m).indices())
    _fails_same(lambda m: _sp(m).values())


def test_repr() -> None:
    cases: list[Callable[[Any], Any]] = [
        lambda m: _sp(m),
        lambda m: _sp(m).coalesce(),
        lambda m: _sp(m, "float64"),
        lambda m: _sp(m, grad=True),
        lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL, requires_grad=True)),
        lambda m: m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.int64), m.zeros(0), (2, 2)),
        lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.ones(5, 2), (3, 3, 2)),
        lambda m: m.tensor([[0.0, 1.5], [2.25, 0.0]]).to_sparse(),
    ]
    for f in cases:
        a, b = repr(f(cr)), repr(f(torch))
        if "grad_fn" in b:  # the node names differ (docs/sparse.md); the layout does not
            a, b = a.split("grad_fn=")[0], b.split("grad_fn=")[0]
        assert a.replace("chainrule.", "torch.") == b


def test_construction_errors() -> None:
    i, v = IDX, VAL
    _fails_same(
        lambda m: m.sparse_coo_tensor(m.tensor(i), m.tensor(v), (1, 3), check_invariants=True)
    )
    _fails_same(lambda m: m.sparse_coo_tensor(m.tensor(i), m.tensor(v[:3]), (3, 3)))
    _fails_same(
        lambda m: m.sparse_coo_tensor(m.tensor(-i), m.tensor(v), (3, 3), check_invariants=True)
    )
    _fails_same(lambda m: m.sparse_coo_tensor(m.tensor(i), m.tensor(v), (3, 3, 2)))
    _fails_same(lambda m: m.sparse_coo_tensor(m.tensor(i), m.ones(5, 2), (3, 3, 3)))


def test_to_dense_to_sparse() -> None:
    _both(lambda m: _sp(m).to_dense())
    _fails_same(lambda m: _sp(m).to_dense(m.float64))
    _both(lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.ones(5, 2), (3, 3, 2)).to_dense())
    d = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    _both(lambda m: m.tensor(d).to_sparse())
    _both(lambda m: m.tensor(d).to_sparse(1))
    _both(lambda m: m.tensor(d).to_sparse_coo())
    _both(lambda m: m.tensor(d).to_sparse().to_dense())
    for m in (cr, torch):
        s = _sp(m)
        assert s.to_sparse() is s
        x = m.ones(2)
        assert x.to_dense() is x
    _fails_same(lambda m: _sp(m).to_sparse(1))


# products -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "f",
    [
        lambda m, s, x: m.sparse.mm(s, x),
        lambda m, s, x: m.spmm(s, x),
        lambda m, s, x: m.mm(s, x),
        lambda m, s, x: m.matmul(s, x),
        lambda m, s, x: s @ x,
        lambda m, s, x: s.mm(x),
        lambda m, s, x: s.matmul(x),
        lambda m, s, x: m.dsmm(s, x),
        lambda m, s, x: m.matmul(s, x[:, 0]),
        lambda m, s, x: x.t() @ s,
        lambda m, s, x: m.mm(x.t(), s),
        lambda m, s, x: m.sparse.mm(x.t(), s),
        lambda m, s, x: m.sparse.addmm(m.ones(3, 4, dtype=x.dtype), s, x, beta=0.5, alpha=2.0),
        lambda m, s, x: m.addmm(m.ones(3, 4, dtype=x.dtype), s, x),
    ],
)
def test_products_values_and_grads(f: Callable[..., Any]) -> None:
    outs, grads = [], []
    for m in (cr, torch):
        s = _sp(m, "float64", grad=True)
        x = m.tensor(X, dtype=m.float64, requires_grad=True)
        out = f(m, s, x)
        outs.append(out)
        dense = out.to_dense() if out.is_sparse else out
        w = m.tensor(np.cos(np.arange(dense.numel())).reshape(tuple(dense.shape)))
        (dense * w).sum().backward()
        grads.append((s.grad, x.grad))
    _same(outs[0], outs[1])
    (gs_c, gx_c), (gs_t, gx_t) = grads
    _same_masked_grad(gs_c, gs_t)
    np.testing.assert_allclose(gx_c.numpy(), gx_t.numpy(), atol=1e-10)


MASK = np.zeros((3, 3))
MASK[tuple(IDX)] = 1.0


def _same_masked_grad(gc: Any, gt: Any) -> None:
    """The sparse leaf's gradient is its values' gradient on its coalesced pattern: PyTorch's
    for torch.sparse.mm, to_dense, sparse.sum...; where PyTorch's op gives the unmasked
    gradient (torch.mm, @, spmm, dense + sparse), chainrule's is that gradient masked to the
    pattern (docs/sparse.md)."""
    assert gc.is_sparse and gc._nnz() == 4
    dense_t = gt.to_dense().numpy() if gt.is_sparse else gt.numpy()
    np.testing.assert_allclose(gc.to_dense().numpy(), dense_t * MASK, atol=1e-10)


@pytest.mark.parametrize(
    "f",
    [
        lambda m, s, x: m.smm(s, x),
        lambda m, s, x: m.hspmm(s, x),
        lambda m, s, x: m.sspaddmm(s.coalesce(), s, x[:, :3], beta=2.0, alpha=0.5),
        lambda m, s, x: m.saddmm(s.coalesce(), s, x[:, :3]),
        lambda m, s, x: m.sparse.mm(s, s.t()),
    ],
)
def test_sparse_results(f: Callable[..., Any]) -> None:
    """Products with a sparse result (PyTorch has no derivative for smm/hspmm/sspaddmm)."""
    _both(lambda m: f(m, _sp(m, "float64"), m.tensor(X, dtype=m.float64)), tol=1e-12)


def test_product_errors() -> None:
    x = X
    _fails_same(lambda m: m.sparse.mm(_sp(m), m.tensor(x, dtype=m.float64)))
    _fails_same(lambda m: m.mm(_sp(m), m.ones(2, 2)))
    _fails_same(lambda m: m.sspaddmm(_sp(m).coalesce(), _sp(m), m.ones(3, 4)))


def test_gradcheck_through_values() -> None:
    idx = cr.tensor(IDX)
    v = cr.tensor(VAL, dtype=cr.float64, requires_grad=True)
    x = cr.tensor(X, dtype=cr.float64, requires_grad=True)

    def f(v: Any, x: Any) -> Any:
        s = cr.sparse_coo_tensor(idx, v, (3, 3))
        return cr.sparse.mm(s, x) + cr.sparse.sum(s.coalesce() * 2.0, 1).to_dense()[:, None]

    assert cr.autograd.gradcheck(f, (v, x))
    assert cr.autograd.gradgradcheck(f, (v, x))

    def g(v: Any) -> Any:
        s = cr.sparse_coo_tensor(idx, v, (3, 3))
        return cr.sparse.log_softmax(s, 1).to_dense() + cr.sparse.softmax(s, 0).to_dense()

    assert cr.autograd.gradcheck(g, (v,))


# sums, arithmetic, transposes, softmax -----------------------------------------------------


@pytest.mark.parametrize(
    "f",
    [
        lambda m, s: m.sparse.sum(s),
        lambda m, s: m.sparse.sum(s, 0),
        lambda m, s: m.sparse.sum(s, 1),
        lambda m, s: m.sparse.sum(s, (0, 1)),
        lambda m, s: m.sparse.sum(s, -1),
        lambda m, s: s.sum(),
        lambda m, s: s * 2.5,
        lambda m, s: 2.5 * s,
        lambda m, s: s / 2,
        lambda m, s: -s,
        lambda m, s: s.coalesce() + s.coalesce(),
        lambda m, s: m.ones(3, 3) + s,
        lambda m, s: m.ones(3, 3) - s,
        lambda m, s: s * m.arange(9.0, dtype=s.dtype).reshape(3, 3),
        lambda m, s: s * m.arange(3.0, dtype=s.dtype),
        lambda m, s: s * s,
        lambda m, s: s.coalesce() * s.t().coalesce(),
        lambda m, s: s.t(),
        lambda m, s: s.coalesce().t(),
        lambda m, s: s.transpose(0, 1),
        lambda m, s: m.sparse.softmax(s, 1),
        lambda m, s: m.sparse.softmax(s, 0),
        lambda m, s: m.sparse.log_softmax(s, 1),
        lambda m, s: s.coalesce().to_dense(),
    ],
)
def test_elementwise_and_reductions(f: Callable[..., Any]) -> None:
    outs, grads = [], []
    for m in (cr, torch):
        s = _sp(m, "float64", grad=True)
        out = f(m, s)
        outs.append(out)
        dense = out.to_dense() if out.is_sparse else out
        w = m.tensor(np.sin(np.arange(dense.numel()) + 1.0).reshape(tuple(dense.shape)))
        (dense * w).sum().backward()
        grads.append(s.grad)
    _same(outs[0], outs[1])
    _same_masked_grad(grads[0], grads[1])


@pytest.mark.parametrize(
    "f",
    [
        lambda m, s: s + s,
        lambda m, s: s - s.coalesce(),
        lambda m, s: s.add(s, alpha=2),
    ],
)
def test_uncoalesced_addition(f: Callable[..., Any]) -> None:
    """Adding uncoalesced tensors: the same dense value and gradient as PyTorch; the stored
    entries are both operands' (PyTorch's layout of them is its kernel's own)."""
    outs, grads = [], []
    for m in (cr, torch):
        s = _sp(m, "float64", grad=True)
        out = f(m, s)
        outs.append(out)
        (out.to_dense() * m.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
        grads.append(s.grad)
    assert outs[0].is_sparse and not outs[0].is_coalesced() and not outs[1].is_coalesced()
    np.testing.assert_allclose(
        outs[0].to_dense().detach().numpy(), outs[1].to_dense().detach().numpy()
    )
    _same_masked_grad(grads[0], grads[1])


def test_hybrid_sum_and_transpose() -> None:
    _both(lambda m: _sp(m).sum(0))  # (PyTorch has no backward for Tensor.sum(dim) on sparse)
    vals = np.arange(10.0).reshape(5, 2)
    mk = lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor(vals), (3, 3, 2))  # noqa: E731
    _both(lambda m: m.sparse.sum(mk(m), 2))
    _both(lambda m: m.sparse.sum(mk(m), 0))
    _both(lambda m: m.sparse.sum(mk(m), (0, 1)))
    _both(lambda m: mk(m).transpose(0, 1))
    _fails_same(lambda m: mk(m).transpose(0, 2))
    _fails_same(lambda m: mk(m).t())


def test_arithmetic_errors() -> None:
    _fails_same(lambda m: _sp(m) + m.ones(3, 3))
    _fails_same(
        lambda m: (
            _sp(m) + m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL, dtype=m.float32), (3, 4))
        )
    )
    _fails_same(lambda m: m.sparse_coo_tensor(m.tensor([[0, 1, 2]] * 3), m.ones(3)).t())


# gradients and the leaf ---------------------------------------------------------------------


def test_leaf_and_nonleaf() -> None:
    for m in (cr, torch):
        s = _sp(m, grad=True)
        assert s.is_leaf and s.requires_grad and s.grad_fn is None and s.grad is None
        v = m.tensor(VAL, requires_grad=True)
        t = m.sparse_coo_tensor(m.tensor(IDX), v, (3, 3))
        assert not t.is_leaf and t.requires_grad and t.grad_fn is not None
        m.sparse.mm(t, m.ones(3, 2, dtype=t.dtype)).sum().backward()
        np.testing.assert_allclose(v.grad.numpy(), [2.0] * 5)
        assert not s._values().requires_grad and s._values().is_leaf
        c = _sp(m).coalesce().requires_grad_()
        assert c.is_leaf and c.requires_grad
        vals = c.values()
        assert not vals.is_leaf and vals.requires_grad
        (vals * 3).sum().backward()
        np.testing.assert_allclose(c.grad.to_dense().numpy(), (3.0 * (c.to_dense() != 0)).numpy())
        c.grad = None
        assert c.grad is None
    # the grad of a coalesced leaf keeps its indices
    a = _sp(cr).coalesce().requires_grad_()
    b = _sp(torch).coalesce().requires_grad_()
    cr.sparse.sum(a).backward()
    torch.sparse.sum(b).backward()
    _same(a.grad, b.grad)


def test_to_dense_backward_and_accumulation() -> None:
    gs = []
    for m in (cr, torch):
        s = _sp(m, "float64", grad=True)
        w = m.tensor(np.arange(9.0).reshape(3, 3))
        (s.to_dense() * w).sum().backward()
        (s.to_dense() * w).sum().backward()  # accumulates
        gs.append(s.grad)
    np.testing.assert_allclose(gs[0].to_dense().numpy(), gs[1].to_dense().numpy())
    gx = []
    for m in (cr, torch):
        x = m.tensor([[0.0, 1.0], [2.0, 0.0]], dtype=m.float64, requires_grad=True)
        (x.to_sparse() * 3.0).to_dense().sum().backward()
        gx.append(x.grad.numpy())
    np.testing.assert_allclose(gx[0], gx[1])


# ops without a sparse kernel ------------------------------------------------------------


@pytest.mark.parametrize(
    "f",
    [
        lambda m, s: m.exp(s),
        lambda m, s: s.exp(),
        lambda m, s: s.log(),
        lambda m, s: s.mean(),
        lambda m, s: s.view(9),
    ],
)
def test_not_implemented_on_sparse(f: Callable[..., Any]) -> None:
    _fails_same(lambda m: f(m, _sp(m)), exact=False)


def test_numpy_refused() -> None:
    _fails_same(lambda m: _sp(m).numpy())


def test_gcn_layer() -> None:
    """A two-layer GCN step (Kipf & Welling): ``adj @ relu(adj @ X W1) W2``, adj sparse."""
    rng = np.random.default_rng(0)
    n, f, h, c = 6, 4, 5, 3
    edges = np.array([[0, 1, 1, 2, 3, 4, 5, 0, 2, 3], [1, 0, 2, 1, 4, 3, 0, 5, 3, 2]])
    deg = np.bincount(edges[0], minlength=n) + 1.0
    idx = np.concatenate([edges, np.stack([np.arange(n)] * 2)], axis=1)
    val = 1.0 / np.sqrt(deg[idx[0]] * deg[idx[1]])
    feats, w1, w2 = (
        rng.standard_normal((n, f)),
        rng.standard_normal((f, h)),
        rng.standard_normal((h, c)),
    )
    res = []
    for m in (cr, torch):
        adj = m.sparse_coo_tensor(m.tensor(idx), m.tensor(val), (n, n))
        W1 = m.tensor(w1, requires_grad=True)
        W2 = m.tensor(w2, requires_grad=True)
        x = m.tensor(feats)
        hid = m.relu(m.sparse.mm(adj, x @ W1))
        out = m.spmm(adj, hid @ W2)
        loss = m.nn.functional.cross_entropy(out, m.tensor([0, 1, 2, 0, 1, 2]))
        loss.backward()
        res.append((loss.item(), W1.grad.numpy(), W2.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-8, atol=1e-12)


def test_pickle_and_deepcopy() -> None:
    import copy
    import pickle

    s = _sp(cr, grad=True)
    for t in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        assert t.is_sparse and t.requires_grad and t.is_leaf and not t.is_coalesced()
        np.testing.assert_array_equal(t._indices().numpy(), IDX)
        np.testing.assert_allclose(t._values().numpy(), VAL)


def test_gradcheck_sparse_inputs() -> None:
    """gradcheck of a sparse input: ``masked=True`` checks its stored values, else every
    element of its dense form, as PyTorch's (sparse.mm's masked gradient then fails in both);
    a sparse output is PyTorch's error."""
    for m in (cr, torch):
        s = m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL), (3, 3)).coalesce().requires_grad_()
        x = m.tensor(X[:, :2], requires_grad=True)
        assert m.autograd.gradcheck(lambda s, x: m.sparse.mm(s, x), (s, x), masked=True)
        assert m.autograd.gradcheck(lambda s: m.sparse.softmax(s, 1).to_dense(), (s,), masked=True)
        assert m.autograd.gradcheck(lambda s: (s * 2.0).to_dense(), (s,), masked=True)
        with pytest.raises(
            RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"
        ):
            m.autograd.gradcheck(lambda s, x: m.sparse.mm(s, x), (s, x))
    _fails_same(lambda m: m.autograd.gradcheck(lambda s: s * 2.0, (_sp(m, "float64", grad=True),)))


def test_dense_tensor_sparse_queries() -> None:
    for m in (cr, torch):
        d = m.ones(2, 3)
        assert (d.sparse_dim(), d.dense_dim()) == (0, 2)
    for name in ("is_coalesced", "coalesce", "indices", "values"):
        _fails_same(lambda m, name=name: getattr(m.ones(2, 3), name)())


def test_save_and_load_sparse_coo_round_trip(tmp_path):
    import io

    i = [[0, 1, 1, 2], [2, 0, 0, 1]]
    s = cr.sparse_coo_tensor(cr.tensor(i), cr.tensor([1.0, 2.0, 3.0, 4.0]), (3, 3))
    c = s.coalesce()
    h = cr.sparse_coo_tensor(cr.tensor([[0, 2]]), cr.tensor([[1.0, 2.0], [3.0, 4.0]]), (4, 2))
    w = cr.sparse_coo_tensor(cr.tensor([[0]]), cr.tensor([5.0]), (2,), requires_grad=True)
    path = tmp_path / "sp.ckpt"
    cr.save({"s": s, "c": c, "h": h, "w": w, "same": s, "dense": cr.ones(2)}, path)
    back = cr.load(path)
    assert back["same"] is back["s"]  # one object saved twice comes back as one
    for k, ref in (("s", s), ("c", c), ("h", h), ("w", w)):
        got = back[k]
        assert got.layout == cr.sparse_coo and got.shape == ref.shape
        assert got.is_coalesced() == ref.is_coalesced()
        np.testing.assert_array_equal(got._indices().numpy(), ref._indices().numpy())
        np.testing.assert_array_equal(got._values().numpy(), ref._values().numpy())
        np.testing.assert_array_equal(
            got.to_dense().detach().numpy(), ref.to_dense().detach().numpy()
        )
    assert back["w"].requires_grad and not back["s"].requires_grad
    # the dense values a PyTorch user would compare with
    t = torch.sparse_coo_tensor(torch.tensor(i), torch.tensor([1.0, 2.0, 3.0, 4.0]), (3, 3))
    np.testing.assert_array_equal(back["s"].to_dense().numpy(), t.to_dense().numpy())
    with pytest.raises(TypeError, match="sparse_coo tensor"):
        cr.save(s, io.BytesIO(), format="torch")


def test_load_checks_a_damaged_sparse_node(tmp_path):
    import json
    import struct
    import zlib

    from chainrule.serialization._format import CheckpointError, _canonical

    s = cr.sparse_coo_tensor(
        cr.tensor([[1, 0]]), cr.tensor([1.0, 2.0]), (3,)
    )  # not coalesced (indices out of order)
    path = tmp_path / "sp.ckpt"

    def rewrite(edit):
        cr.save(s, path)
        raw = path.read_bytes()
        n = struct.unpack("<Q", raw[:8])[0]
        head = json.loads(raw[8 : 8 + n])
        nodes = json.loads(head["__metadata__"]["structure"])
        edit(nodes[-1])
        meta = head.pop("__metadata__")
        meta["structure"] = json.dumps(nodes)
        meta["header_crc32"] = str(zlib.crc32(_canonical(head, meta)))  # a consistent header
        head = {"__metadata__": meta, **head}
        body = json.dumps(head).encode()
        body += b" " * (-len(body) % 8)
        path.write_bytes(struct.pack("<Q", len(body)) + body + raw[8 + n :])

    def claim_coalesced(node):
        node["co"] = True

    def shrink(node):
        node["size"] = [1]

    for edit, msg in ((claim_coalesced, "not sorted and unique"), (shrink, "not a valid sparse")):
        rewrite(edit)
        with pytest.raises(CheckpointError, match=msg):
            cr.load(path)
