"""Sparse compressed tensors (CSR, CSC) against PyTorch: construction, structure, reprs,
conversions and round trips, products, sum, mul, add, transposition, gradients (gradcheck in
float64 on the values) and the errors (type and message)."""

from __future__ import annotations

import copy
import pickle
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning"),
    pytest.mark.filterwarnings("ignore:Sparse CSR tensor support:UserWarning"),
]

# A 3 x 4 matrix: row 0 holds (0, 1) and (0, 3), row 1 nothing, row 2 (2, 0), (2, 2), (2, 3).
CROW, COL = [0, 2, 2, 5], [1, 3, 0, 2, 3]
VAL = [3.0, -1.0, 4.0, 5.0, 2.0]
# Its CSC form (3 x 4 as well): columns 0..3.
CCOL, ROW, CVAL = [0, 1, 2, 3, 5], [2, 0, 2, 0, 2], [4.0, 3.0, 5.0, -1.0, 2.0]
X = np.arange(8.0).reshape(4, 2) / 5 - 0.7


def _csr(m: Any, dtype: str = "float32", grad: bool = False) -> Any:
    v = m.tensor(VAL, dtype=getattr(m, dtype))
    return m.sparse_csr_tensor(m.tensor(CROW), m.tensor(COL), v, (3, 4), requires_grad=grad)


def _csc(m: Any, dtype: str = "float32", grad: bool = False) -> Any:
    v = m.tensor(CVAL, dtype=getattr(m, dtype))
    return m.sparse_csc_tensor(m.tensor(CCOL), m.tensor(ROW), v, (3, 4), requires_grad=grad)


def _np(t: Any) -> Any:
    return t.detach().numpy()


def _parts(t: Any) -> list[Any]:
    lay = _name(t.layout)
    if lay == "sparse_csr":
        return [t.crow_indices(), t.col_indices(), t.values()]
    if lay == "sparse_csc":
        return [t.ccol_indices(), t.row_indices(), t.values()]
    if lay == "sparse_coo":
        return [t._indices(), t._values()]
    return [t]


def _name(x: Any) -> str:
    return str(x).split(".")[-1]


def _same(a: Any, b: Any, tol: float = 1e-5) -> None:
    """chainrule result ``a`` equals torch result ``b``: layout, shape, dtype and every part
    (the indices exactly, the values to ``tol``)."""
    assert _name(a.layout) == _name(b.layout)
    assert _name(a.dtype) == _name(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    pa, pb = _parts(a), _parts(b)
    for x, y in zip(pa[:-1], pb[:-1]):
        assert _name(x.dtype) == _name(y.dtype)
        np.testing.assert_array_equal(_np(x), _np(y))
    np.testing.assert_allclose(_np(pa[-1]), _np(pb[-1]), rtol=tol, atol=tol)


def _both(f: Callable[[Any], Any]) -> tuple[Any, Any]:
    a, b = f(cr), f(torch)
    _same(a, b)
    return a, b


def _fails_same(f: Callable[[Any], Any], first_sentence: bool = False) -> None:
    errs = []
    for m in (cr, torch):
        with pytest.raises(Exception) as info:
            f(m)
        errs.append(info.value)
    a, b = errs
    assert type(a) is type(b), (a, b)
    if first_sentence:
        assert str(b).startswith(str(a)), (str(a), str(b))
    else:
        assert str(a) == str(b)


# construction, structure, repr --------------------------------------------------------------


def test_layouts_and_structure() -> None:
    for lay in ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
        assert repr(getattr(cr, lay)) == repr(getattr(torch, lay))
        assert pickle.loads(pickle.dumps(getattr(cr, lay))) is getattr(cr, lay)
    for mk in (_csr, _csc):
        a, b = mk(cr), mk(torch)
        for q in ("is_sparse", "is_sparse_csr", "is_leaf", "requires_grad"):
            assert getattr(a, q) == getattr(b, q), q
        for q in ("_nnz", "sparse_dim", "dense_dim", "dim", "numel", "element_size"):
            assert getattr(a, q)() == getattr(b, q)(), q
        assert tuple(a.shape) == tuple(b.shape) and tuple(a.size()) == tuple(b.size())


@pytest.mark.parametrize(
    "f",
    [
        lambda m: _csr(m),
        lambda m: _csc(m),
        lambda m: _csr(m, grad=True),
        lambda m: _csr(m, "float64"),
        lambda m: _csr(m, "int64"),
        lambda m: _csr(m, "bool"),
        lambda m: m.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0]),  # size inferred
        lambda m: m.sparse_csc_tensor(m.tensor([0, 1, 1]), m.tensor([4]), m.tensor([1.0])),
        lambda m: m.sparse_csr_tensor(
            m.tensor([0, 0, 0]), m.tensor([], dtype=m.int64), m.tensor([]), (2, 3)
        ),
        lambda m: m.sparse_csr_tensor(
            m.tensor([0, 1, 2], dtype=m.int32), m.tensor([1, 0], dtype=m.int32), [1.0, 2.0]
        ),
        lambda m: m.sparse_compressed_tensor(
            m.tensor(CCOL), m.tensor(ROW), m.tensor(CVAL), (3, 4), layout=m.sparse_csc
        ),
        lambda m: m.ones(2, 2, 3).to_sparse_csr(dense_dim=1),  # hybrid
        lambda m: m.ones(2, 2, 3).to_sparse_csc(dense_dim=1),
        lambda m: m.tensor([[0.0, 2.5], [1.0, 0.0]], requires_grad=True).to_sparse_csr().detach(),
        lambda m: _csr(m).sum(1, keepdim=True),
        lambda m: m.zeros(2, 2).to_sparse_csr(),
    ],
)
def test_construction_and_repr(f: Callable[[Any], Any]) -> None:
    a, b = _both(f)
    assert repr(a).replace("chainrule.", "torch.") == repr(b)


def test_repr_with_grad_fn() -> None:
    # chainrule's node is the dense op's (docs/sparse.md); the layout of the text is PyTorch's
    a = repr(-_csr(cr, grad=True)).replace("NegBackward0", "X")
    b = repr(-_csr(torch, grad=True)).replace("NegBackward0", "X")
    assert a == b


def test_values_and_parts() -> None:
    a, b = _csr(cr, grad=True), _csr(torch, grad=True)
    for q in ("crow_indices", "col_indices", "values"):
        np.testing.assert_array_equal(_np(getattr(a, q)()), _np(getattr(b, q)()))
    assert a.values().requires_grad and not a.crow_indices().requires_grad
    c, d = _csc(cr), _csc(torch)
    for q in ("ccol_indices", "row_indices"):
        np.testing.assert_array_equal(_np(getattr(c, q)()), _np(getattr(d, q)()))
    for q in ("crow_indices", "col_indices", "ccol_indices", "row_indices", "values"):
        name = q + "_copy"
        for mk in (_csr, _csc):
            try:
                want = getattr(torch, name)(mk(torch))
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match="^" + str(e) + "$"):
                    getattr(cr, name)(mk(cr))
            else:
                _same(getattr(cr, name)(mk(cr)), want)


def test_copy_functions_errors() -> None:
    for name in ("crow_indices_copy", "col_indices_copy", "ccol_indices_copy"):
        _fails_same(lambda m, n=name: getattr(m, n)(m.eye(2)))
    _fails_same(lambda m: m.row_indices_copy(m.eye(2).to_sparse()), first_sentence=True)
    _fails_same(lambda m: m.row_indices_copy(m.eye(2)))
    _fails_same(lambda m: m.values_copy(m.eye(2)))
    _fails_same(lambda m: m.indices_copy(m.eye(2)))
    _fails_same(lambda m: m.indices_copy(_csr(m)))
    _fails_same(lambda m: m.indices_copy(m.eye(2).to_sparse()), first_sentence=True)
    _fails_same(lambda m: m.values_copy(m.eye(2).to_sparse()), first_sentence=True)


# conversions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "f",
    [
        lambda m: _csr(m).to_sparse_csc(),
        lambda m: _csc(m).to_sparse_csr(),
        lambda m: _csr(m).to_sparse_coo(),
        lambda m: _csc(m).to_sparse_coo(),
        lambda m: _csc(m).to_sparse(),
        lambda m: _csr(m).to_sparse(layout=m.sparse_csc),
        lambda m: _csr(m).to_dense(),
        lambda m: _csc(m).to_dense(),
        lambda m: m.tensor(X).to_sparse_csr(),
        lambda m: m.tensor(X).to_sparse_csc(),
        lambda m: m.tensor(X).to_sparse(layout=m.sparse_csr),
        lambda m: m.eye(3).to_sparse().to_sparse_csr(),
        lambda m: m.sparse_coo_tensor(
            m.tensor([[1, 0, 1], [0, 0, 0]]), [1.0, 2, 3], (2, 2)
        ).to_sparse_csr(),  # uncoalesced COO: summed first
        lambda m: m.ones(2, 2, 3).to_sparse(2).to_sparse_csr(),
        lambda m: _csr(m).to(m.float64),
        lambda m: _csr(m).double(),
        lambda m: _csr(m).clone(),
        lambda m: _csr(m, grad=True).detach(),
        lambda m: _csr(m).to_sparse_csr(),
    ],
)
def test_conversions(f: Callable[[Any], Any]) -> None:
    _both(f)


def test_round_trips() -> None:
    d = cr.tensor([[0.0, 1.5, 0.0, -2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 4.0, 0.0]])
    for path in (
        lambda x: x.to_sparse_csr().to_dense(),
        lambda x: x.to_sparse_csc().to_dense(),
        lambda x: x.to_sparse_csr().to_sparse_csc().to_sparse_csr().to_dense(),
        lambda x: x.to_sparse_csr().to_sparse_coo().to_sparse_csc().to_dense(),
        lambda x: x.to_sparse_csr().t().t().to_dense(),
        lambda x: x.to_sparse_csc().t().to_dense().t(),
    ):
        np.testing.assert_array_equal(path(d).numpy(), d.numpy())
    s = _csr(cr, grad=True)
    for other in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        _same(other, _csr(torch))
        assert other.requires_grad and other.is_leaf


# ops -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "f",
    [
        lambda m: _csr(m) @ m.tensor(X, dtype=m.float32),
        lambda m: _csc(m) @ m.tensor(X, dtype=m.float32),
        lambda m: m.mm(_csr(m), m.tensor(X, dtype=m.float32)),
        lambda m: m.matmul(_csr(m), m.ones(4)),
        lambda m: m.ones(2, 3) @ _csr(m),
        lambda m: m.ones(3) @ _csc(m),
        lambda m: m.sparse.mm(_csr(m), m.tensor(X, dtype=m.float32)),
        lambda m: m.sparse.mm(m.ones(2, 3), _csc(m)),
        lambda m: _csr(m).mm(m.tensor(X, dtype=m.float32)),
        lambda m: m.addmm(m.ones(3, 2), _csr(m), m.tensor(X, dtype=m.float32), beta=0.5, alpha=2),
        lambda m: m.sparse.addmm(m.ones(3, 2), _csc(m), m.tensor(X, dtype=m.float32)),
        lambda m: _csr(m).sum(),
        lambda m: _csc(m).sum(),
        lambda m: _csr(m, "float64").sum(dtype=m.float32),
        lambda m: _csr(m).sum(0, keepdim=True),
        lambda m: _csr(m).sum(1, keepdim=True),
        lambda m: _csr(m).sum((0, 1), keepdim=True),
        lambda m: _csr(m) * 2,
        lambda m: 2.5 * _csc(m),
        lambda m: _csr(m) * m.tensor(3.0),
        lambda m: _csr(m) * m.tensor(np.arange(12.0).reshape(3, 4), dtype=m.float32),
        lambda m: _csr(m) * _csr(m),
        lambda m: _csr(m) * _csr(m).to_sparse_coo(),
        lambda m: -_csr(m),
        lambda m: _csc(m).neg(),
        lambda m: _csr(m) + _csr(m),
        lambda m: m.add(_csr(m), _csr(m), alpha=-1),
        lambda m: m.ones(3, 4) + _csr(m),
        lambda m: _csr(m) + m.ones(3, 4),
        lambda m: _csr(m).t(),
        lambda m: _csc(m).t(),
        lambda m: _csr(m).transpose(0, 1),
        lambda m: _csr(m).transpose(-1, 0),
        lambda m: _csr(m).transpose(1, 1),
        lambda m: m.tensor(np.arange(12.0).reshape(3, 4), dtype=m.float32).sparse_mask(_csr(m)),
        lambda m: m.tensor(np.arange(12.0).reshape(3, 4), dtype=m.float32).sparse_mask(_csc(m)),
        lambda m: _csr(m).sparse_mask(_csr(m)),
    ],
)
def test_ops(f: Callable[[Any], Any]) -> None:
    _both(f)


def test_csr_times_csr() -> None:
    """CSR @ CSR is CSR with PyTorch's values; PyTorch leaves the columns of a row in its
    kernel's order, chainrule sorts them (docs/sparse.md)."""
    a, b = (_csr(m) @ _csr(m).t().to_sparse_csr() for m in (cr, torch))
    assert _name(a.layout) == _name(b.layout) == "sparse_csr"
    np.testing.assert_allclose(_np(a.to_dense()), _np(b.to_dense()), rtol=1e-6)
    np.testing.assert_array_equal(_np(a.crow_indices()), _np(b.crow_indices()))


def test_gradcheck_sum_keepdim() -> None:
    """The gradient of ``sum(dim, keepdim=True)`` (PyTorch: "expand is unsupported for
    SparseCsr tensors")."""

    def h(v: Any) -> Any:
        s = cr.sparse_csr_tensor(cr.tensor(CROW), cr.tensor(COL), v, (3, 4))
        return s.sum(1, keepdim=True).to_dense()

    assert cr.autograd.gradcheck(h, (cr.tensor(VAL, dtype=cr.float64, requires_grad=True),))


def test_zero_() -> None:
    a, b = _csr(cr).zero_(), _csr(torch).zero_()
    _same(a, b)
    assert repr(a) == repr(b)


# gradients -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "f",
    [
        lambda m, s: m.sparse.mm(s, m.tensor(X, dtype=m.float32)),
        lambda m, s: m.sparse.addmm(m.ones(3, 2), s, m.tensor(X, dtype=m.float32), alpha=3),
        lambda m, s: s.to_dense() * m.arange(12.0).reshape(3, 4),
        lambda m, s: s.values() ** 2,
        lambda m, s: (s * 2).to_dense(),
        lambda m, s: (-s).t().to_dense(),
        lambda m, s: s.to_sparse_csc().to_dense() * m.arange(12.0).reshape(3, 4),
        lambda m, s: s.to_sparse_coo().to_dense() * m.arange(12.0).reshape(3, 4),
        lambda m, s: s.clone().double().to_dense(),
        lambda m, s: m.values_copy(s) * m.arange(5.0),
        lambda m, s: (s + s).to_dense(),
        lambda m, s: (s * m.full((3, 4), 2.0)).to_dense(),
        lambda m, s: m.arange(12.0).reshape(3, 4).sparse_mask(s).to_dense() * s.to_dense(),
    ],
)
def test_masked_gradients(f: Callable[[Any, Any], Any]) -> None:
    """Where PyTorch's gradient of a CSR leaf is a CSR tensor on its pattern, chainrule's is
    the same tensor."""
    grads = []
    for m in (cr, torch):
        s = _csr(m, grad=True)
        out = f(m, s)
        (out * m.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        grads.append(s.grad)
    _same(*grads)


def test_unmasked_gradients_read_on_the_pattern() -> None:
    """torch.mm, @, addmm and sum give a CSR leaf a dense gradient in PyTorch; chainrule gives
    that gradient read at the stored entries, as a CSR tensor (docs/sparse.md). The dense
    operand's gradient is PyTorch's."""
    for f in (
        lambda m, s, d: s @ d,
        lambda m, s, d: m.mm(s, d),
        lambda m, s, d: m.addmm(m.ones(3, 2), s, d),
        lambda m, s, d: d.t() @ s.t(),
    ):
        res = []
        for m in (cr, torch):
            s = _csr(m, grad=True)
            d = m.tensor(X, dtype=m.float32, requires_grad=True)
            out = f(m, s, d)
            (out * m.arange(float(out.numel())).reshape(out.shape)).sum().backward()
            res.append((s.grad, d.grad))
        (sa, da), (sb, db) = res
        assert _name(sb.layout) == "strided" and _name(sa.layout) == "sparse_csr"
        want = sb.sparse_mask(_csr(torch)).to_dense()
        np.testing.assert_allclose(_np(sa.to_dense()), _np(want), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(_np(da), _np(db), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "g",
    [
        lambda m, s, d: m.sparse.mm(s, d),
        lambda m, s, d: s @ d,
        lambda m, s, d: d.t() @ s.t(),
        lambda m, s, d: m.addmm(m.ones(3, 2, dtype=m.float64), s, d, beta=2),
        lambda m, s, d: s.to_sparse_csc().to_dense() * 3,
        lambda m, s, d: (s * s).to_dense(),
    ],
)
def test_gradcheck_values(g: Callable[[Any, Any, Any], Any]) -> None:
    """gradcheck in float64 of functions of the values (and the dense operand)."""

    def fn(m: Any) -> Callable[..., Any]:
        def h(v: Any, d: Any) -> Any:
            s = m.sparse_csr_tensor(m.tensor(CROW), m.tensor(COL), v, (3, 4))
            return g(m, s, d)

        return h

    for m in (cr, torch):
        v = m.tensor(VAL, dtype=m.float64, requires_grad=True)
        d = m.tensor(X, dtype=m.float64, requires_grad=True)
        assert m.autograd.gradcheck(fn(m), (v, d))
    va = cr.tensor(VAL, dtype=cr.float64)
    vb = torch.tensor(VAL, dtype=torch.float64)
    da, db = cr.tensor(X, dtype=cr.float64), torch.tensor(X, dtype=torch.float64)
    np.testing.assert_allclose(_np(fn(cr)(va, da).to_dense()), _np(fn(torch)(vb, db).to_dense()))


def test_csc_sparse_mm_gradient() -> None:
    """PyTorch has no backward for ``sparse.mm`` with a CSC operand; chainrule's gradient is
    the CSR one's (same matrix) on the CSC pattern."""
    s = _csc(cr, grad=True)
    cr.sparse.mm(s, cr.tensor(X, dtype=cr.float32)).sum().backward()
    t = _csr(torch, grad=True)
    torch.sparse.mm(t, torch.tensor(X, dtype=torch.float32)).sum().backward()
    assert _name(s.grad.layout) == "sparse_csc"
    np.testing.assert_allclose(_np(s.grad.to_dense()), _np(t.grad.to_dense()), rtol=1e-6)


def test_grad_of_a_dense_source() -> None:
    grads = []
    for m in (cr, torch):
        x = m.tensor(X.T.copy(), requires_grad=True)
        s = x.to_sparse_csc()
        (s.values() * m.arange(float(s._nnz()))).sum().backward()
        grads.append(x.grad)
    np.testing.assert_allclose(_np(grads[0]), _np(grads[1]))


# errors ----------------------------------------------------------------------------------------

_T = [0, 2, 3]


@pytest.mark.parametrize(
    "f",
    [
        # argument checks, in PyTorch's order (chainrule always checks the invariants)
        lambda m: m.sparse_csr_tensor(
            m.tensor([0.0, 2, 3]), m.tensor([0, 2, 1]), [1.0, 2, 3], (2, 3), check_invariants=True
        ),
        lambda m: m.sparse_csr_tensor(
            m.tensor([0.0, 2, 3]), m.tensor([0.0, 2, 1]), [1.0, 2, 3], (2, 3), check_invariants=True
        ),
        lambda m: m.sparse_csr_tensor(
            m.tensor([0, 2, 3], dtype=m.int32),
            m.tensor([0, 2, 1]),
            [1.0, 2, 3],
            (2, 3),
            check_invariants=True,
        ),
        lambda m: m.sparse_csr_tensor(
            m.tensor([_T]), m.tensor([0, 2, 1]), [1.0, 2, 3], (2, 3), check_invariants=True
        ),
        lambda m: m.sparse_csr_tensor(_T, [0, 2, 1], [1.0, 2, 3], (2, 3, 4), check_invariants=True),
        lambda m: m.sparse_csr_tensor(_T, [0, 2, 1], [1.0, 2, 3], (6,), check_invariants=True),
        lambda m: m.sparse_csr_tensor(_T, [0, 2, 1], m.tensor(1.0), (2, 3), check_invariants=True),
        lambda m: m.sparse_csr_tensor(
            [0, 2], [0, 2, 1], [1.0, 2, 3], (2, 3), check_invariants=True
        ),
        lambda m: m.sparse_csc_tensor(
            [0, 2], [0, 2, 1], [1.0, 2, 3], (3, 2), check_invariants=True
        ),
        lambda m: m.sparse_csr_tensor(_T, [0, 2], [1.0, 2, 3], (2, 3), check_invariants=True),
        lambda m: m.sparse_csc_tensor(_T, [2, 0], [1.0, 2, 3], (3, 2), check_invariants=True),
        # invariants
        lambda m: m.sparse_csr_tensor(
            [1, 2, 3], [0, 2, 1], [1.0, 2, 3], (2, 3), check_invariants=True
        ),
        lambda m: m.sparse_csc_tensor(
            [1, 2, 3], [0, 2, 1], [1.0, 2, 3], (3, 2), check_invariants=True
        ),
        lambda m: m.sparse_csr_tensor(
            [0, 2, 2], [0, 2, 1], [1.0, 2, 3], (2, 3), check_invariants=True
        ),
        lambda m: m.sparse_csr_tensor(
            [0, 3, 2], [0, 2, 1], [1.0, 2, 3], (2, 3), check_invariants=True
        ),
        lambda m: m.sparse_csr_tensor(_T, [0, 3, 1], [1.0, 2, 3], (2, 3), check_invariants=True),
        lambda m: m.sparse_csr_tensor(_T, [0, -1, 1], [1.0, 2, 3], (2, 3), check_invariants=True),
        lambda m: m.sparse_csc_tensor(_T, [0, 3, 1], [1.0, 2, 3], (3, 2), check_invariants=True),
        lambda m: m.sparse_csr_tensor(_T, [2, 0, 1], [1.0, 2, 3], (2, 3), check_invariants=True),
        lambda m: m.sparse_csr_tensor(_T, [0, 0, 1], [1.0, 2, 3], (2, 3), check_invariants=True),
        lambda m: m.sparse_csc_tensor(_T, [2, 0, 1], [1.0, 2, 3], (3, 2), check_invariants=True),
        lambda m: m.sparse_csr_tensor(
            [0, 3, 2, 3], [0, 2, 1], [1.0, 2, 3], (3, 3), check_invariants=True
        ),
        lambda m: m.sparse_csr_tensor(
            [0, 4, 3, 4], [0, 1, 2, 3], [1.0, 2, 3, 4], (3, 5), check_invariants=True
        ),
        lambda m: m.sparse_compressed_tensor(_T, [0, 2, 1], [1.0, 2, 3]),
        lambda m: m.sparse_compressed_tensor(_T, [0, 2, 1], [1.0, 2, 3], layout=m.strided),
        lambda m: m.sparse_compressed_tensor(_T, [0, 2, 1], [1.0, 2, 3], layout=m.sparse_coo),
        # layouts' parts
        lambda m: _csr(m).ccol_indices(),
        lambda m: _csr(m).row_indices(),
        lambda m: _csc(m).crow_indices(),
        lambda m: _csc(m).col_indices(),
        lambda m: m.ones(2).crow_indices(),
        lambda m: m.ones(2).row_indices(),
        lambda m: m.eye(2).to_sparse().col_indices(),
        lambda m: m.eye(2).to_sparse().ccol_indices(),
        lambda m: _csr(m).indices(),
        lambda m: _csc(m).is_coalesced(),
        lambda m: _csr(m).coalesce(),
        lambda m: _csr(m).numpy(),
        lambda m: _csc(m).numpy(),
        lambda m: _csr(m).type(),
        lambda m: _csr(m).tolist(),
        lambda m: _csr(m).to_dense(m.float64),
        lambda m: m.eye(2).to_sparse().to_sparse_csr(dense_dim=1),
        # ops
        lambda m: m.mm(_csr(m), m.ones(3, 2)),
        lambda m: m.sparse.mm(_csc(m), m.ones(2, 2)),
        lambda m: _csr(m) @ m.ones(4, 2, dtype=m.float64),
        lambda m: _csr(m) @ m.eye(4).to_sparse(),
        lambda m: m.eye(3).to_sparse() @ _csr(m),
        lambda m: m.addmm(_csr(m), m.ones(3, 2), m.ones(2, 4)),
        lambda m: _csr(m).sum(0),
        lambda m: _csr(m).sum((0, 1)),
        lambda m: _csc(m).sum(0, keepdim=True),
        lambda m: _csr(m) + 1,
        lambda m: _csr(m) - _csr(m),
        lambda m: m.ones(3, 4) - _csr(m),
        lambda m: _csr(m) / 2,
        lambda m: _csr(m) * m.ones(4),
        lambda m: _csr(m) + _csc(m),
        lambda m: _csc(m) + _csr(m),
        lambda m: _csc(m) * _csc(m),
        lambda m: _csc(m) * m.ones(3, 4),
        lambda m: m.exp(_csr(m)),
        lambda m: m.log(_csc(m)),
        lambda m: _csr(m) ** 2,
        lambda m: _csr(m) < 1,
        lambda m: m.sparse.sum(_csr(m)),
        lambda m: m.ones(2, 2, 2).to_sparse_csr(dense_dim=1).t(),
    ],
)
def test_errors(f: Callable[[Any], Any]) -> None:
    _fails_same(f)


@pytest.mark.parametrize(
    "f",
    [
        lambda m: _csr(m).view(12),
        lambda m: _csc(m).mean(),
        lambda m: _csr(m).max(),
        lambda m: m.sparse.softmax(_csr(m), 1),
        lambda m: m.sparse.log_softmax(_csc(m), 0),
        lambda m: m.sparse.sum(_csc(m), 0),
    ],
)
def test_no_kernel_errors(f: Callable[[Any], Any]) -> None:
    """Ops with no compressed kernel: PyTorch's NotImplementedError, its first sentence."""
    _fails_same(f, first_sentence=True)


# hsmm, resize_as_sparse_ (COO names of the coverage list) -------------------------------------


def test_hsmm() -> None:
    a = cr.hsmm(cr.eye(3).to_sparse(), cr.tensor(X[:3], dtype=cr.float32))
    b = torch.hsmm(torch.eye(3).to_sparse(), torch.tensor(X[:3], dtype=torch.float32))
    _same(a, b)
    _fails_same(lambda m: m.hsmm(m.eye(2), m.eye(2)), first_sentence=True)


@pytest.mark.parametrize(
    "f",
    [
        lambda m: m.resize_as_sparse_(m.eye(3).to_sparse(), m.zeros(4, 5).to_sparse()),
        lambda m: m.resize_as_sparse_(m.zeros(3, 3).to_sparse(), m.zeros(2, 2).to_sparse()),
        lambda m: m.resize_as_sparse_(m.zeros(3, 3).to_sparse(), m.zeros(2, 2, 2).to_sparse()),
    ],
)
def test_resize_as_sparse_(f: Callable[[Any], Any]) -> None:
    _both(f)


@pytest.mark.parametrize(
    "f",
    [
        lambda m: m.resize_as_sparse_(m.eye(3).to_sparse(), m.zeros(2, 2).to_sparse()),
        lambda m: m.resize_as_sparse_(m.eye(3).to_sparse(), m.zeros(2, 2, 2).to_sparse()),
        lambda m: m.resize_as_sparse_(m.eye(3).to_sparse(), m.zeros(4, 4).to_sparse(1)),
    ],
)
def test_resize_as_sparse_errors(f: Callable[[Any], Any]) -> None:
    _fails_same(f)


@pytest.mark.parametrize(
    "f",
    [
        lambda m: m.eye(3).to_sparse().smm(m.tensor(X[:3], dtype=m.float32)),
        lambda m: m.eye(3).to_sparse().sspaddmm(m.eye(3).to_sparse(), m.ones(3, 3), beta=2),
        lambda m: m.zeros(3, 3).to_sparse().resize_as_sparse_(m.zeros(2, 2).to_sparse()),
    ],
)
def test_coo_methods(f: Callable[[Any], Any]) -> None:
    _both(f)


def test_smm_of_dense() -> None:
    _fails_same(lambda m: m.smm(m.eye(2), m.eye(2)))
    _fails_same(lambda m: m.eye(2).smm(m.eye(2)))
