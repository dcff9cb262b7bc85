"""Blocked compressed tensors (BSR, BSC) against PyTorch: construction, reprs, conversions,
products, transposition, gradients to the blocks (gradcheck in float64) and the errors."""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning"),
    pytest.mark.filterwarnings("ignore:Sparse CSR tensor support:UserWarning"),
    pytest.mark.filterwarnings("ignore:Sparse BSR tensor support:UserWarning"),
    pytest.mark.filterwarnings("ignore:Sparse BSC tensor support:UserWarning"),
]

# 4 x 6 with the block (rows 0-1, cols 2-3) zero.
MASK = np.array([[1, 1, 0, 0, 1, 1]] * 2 + [[1] * 6] * 2, dtype=np.float32)
D = np.arange(24.0, dtype=np.float32).reshape(4, 6) * MASK - 5.0 * MASK


def _d(m: Any) -> Any:
    return m.tensor(D)


def _bsr(m: Any, grad: bool = False, dtype: str = "float32") -> Any:
    v = m.tensor(np.arange(8.0).reshape(2, 2, 2) - 3, dtype=getattr(m, dtype))
    return m.sparse_bsr_tensor(m.tensor([0, 1, 2]), m.tensor([0, 1]), v, (4, 4), requires_grad=grad)


def _name(x: Any) -> str:
    return str(x).split(".")[-1]


def _parts(t: Any) -> list[Any]:
    lay = _name(t.layout)
    if lay in ("sparse_bsr", "sparse_csr"):
        return [t.crow_indices(), t.col_indices(), t.values()]
    if lay in ("sparse_bsc", "sparse_csc"):
        return [t.ccol_indices(), t.row_indices(), t.values()]
    if lay == "sparse_coo":
        return [t._indices(), t._values()]
    return [t]


def _same(a: Any, b: Any) -> None:
    assert _name(a.layout) == _name(b.layout)
    assert _name(a.dtype) == _name(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    for x, y in zip(_parts(a), _parts(b)):
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "f",
    [
        lambda m: _d(m).to_sparse_bsr((2, 2)),
        lambda m: _d(m).to_sparse_bsr(2),
        lambda m: _d(m).to_sparse_bsc((2, 3)),
        lambda m: _d(m).to_sparse(layout=m.sparse_bsr, blocksize=(2, 3)),
        lambda m: _bsr(m),
        lambda m: _bsr(m, grad=True),
        lambda m: _bsr(m, dtype="float64"),
        lambda m: m.sparse_bsc_tensor(m.tensor([0, 1, 2]), m.tensor([1, 0]), m.ones(2, 2, 3)),
        lambda m: m.sparse_compressed_tensor(
            m.tensor([0, 1, 2]), m.tensor([0, 1]), m.ones(2, 2, 2), layout=m.sparse_bsr
        ),
        lambda m: m.eye(4).to_sparse_csr().to_sparse_bsr((2, 2)),
        lambda m: m.eye(4).to_sparse().to_sparse_bsc((2, 2)),
        lambda m: _d(m).to_sparse_bsr((2, 2)).t(),
        lambda m: _d(m).to_sparse_bsc((2, 3)).t(),
        lambda m: _d(m).to_sparse_bsr((2, 2)) * 2,
        lambda m: -_bsr(m),
        lambda m: _bsr(m).clone().double(),
    ],
)
def test_structure_and_repr(f: Callable[[Any], Any]) -> None:
    a, b = f(cr), f(torch)
    _same(a, b)
    # the line breaks move with the dtype's name (chainrule.float64), the text does not
    ra = re.sub(r",\s+", ", ", repr(a).replace("chainrule.", "torch."))
    rb = re.sub(r",\s+", ", ", repr(b))
    assert ra.replace("ViewBackward0", "X") == rb.replace("TransposeBackward0", "X")
    assert (a._nnz(), a.sparse_dim(), a.dense_dim(), a.is_sparse_csr) == (
        b._nnz(),
        b.sparse_dim(),
        b.dense_dim(),
        b.is_sparse_csr,
    )


@pytest.mark.parametrize(
    "f",
    [
        lambda m: _d(m).to_sparse_bsr((2, 2)).to_dense(),
        lambda m: _d(m).to_sparse_bsc((2, 3)).to_dense(),
        lambda m: _d(m).to_sparse_bsr((2, 2)).to_sparse_coo(),
        lambda m: _d(m).to_sparse_bsr((2, 2)).sum(),
        lambda m: _d(m).to_sparse_bsr((2, 2)) @ m.ones(6, 2),
        lambda m: m.ones(3, 4) @ _d(m).to_sparse_bsc((2, 2)),
        lambda m: m.sparse.mm(_bsr(m), m.ones(4, 3)),
    ],
)
def test_values(f: Callable[[Any], Any]) -> None:
    _same(f(cr), f(torch))


def test_gradients_to_the_blocks() -> None:
    """PyTorch has no backward through a BSR leaf's ``to_dense`` or products ("Sparse BSR
    tensors do not have is_contiguous"); chainrule's gradient is each block's read of the
    dense gradient, and gradcheck passes."""
    s = _bsr(cr, grad=True)
    w = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    (s.to_dense() * cr.tensor(w)).sum().backward()
    assert _name(s.grad.layout) == "sparse_bsr"
    want = np.stack([w[0:2, 0:2], w[2:4, 2:4]])
    np.testing.assert_array_equal(s.grad.values().numpy(), want)

    def h(v: Any, d: Any) -> Any:
        s = cr.sparse_bsr_tensor(cr.tensor([0, 1, 2]), cr.tensor([0, 1]), v, (4, 4))
        return (s @ d) + s.t().to_dense().sum()

    v = cr.tensor(np.arange(8.0).reshape(2, 2, 2), dtype=cr.float64, requires_grad=True)
    d = cr.tensor(np.arange(12.0).reshape(4, 3) / 5, dtype=cr.float64, requires_grad=True)
    assert cr.autograd.gradcheck(h, (v, d))


@pytest.mark.parametrize(
    "f",
    [
        lambda m: m.sparse_bsr_tensor(
            m.tensor([0, 1, 2]), m.tensor([0, 1]), m.ones(2, 2, 2), (4, 5), check_invariants=True
        ),
        lambda m: m.sparse_bsr_tensor(
            m.tensor([0, 1, 2]), m.tensor([0, 1]), m.ones(2, 2), (4, 4), check_invariants=True
        ),
        lambda m: m.sparse_bsr_tensor(
            m.tensor([0, 1]), m.tensor([0, 1]), m.ones(2, 2, 2), (4, 4), check_invariants=True
        ),
        lambda m: m.sparse_bsc_tensor(
            m.tensor([0, 1, 2]), m.tensor([0, 2]), m.ones(2, 2, 2), (4, 4), check_invariants=True
        ),
        lambda m: _d(m).to_sparse_bsr((4, 4)),
        lambda m: _d(m).to_sparse(layout=m.sparse_bsr),
        lambda m: _bsr(m).to_sparse_csr(),
        lambda m: _bsr(m).sum(0, keepdim=True),
        lambda m: _bsr(m) * m.ones(4, 4),
        lambda m: _bsr(m).col_indices().new_zeros(1).crow_indices(),
        lambda m: _bsr(m).ccol_indices(),
        lambda m: m.exp(_bsr(m)),
    ],
)
def test_errors(f: Callable[[Any], Any]) -> None:
    errs = []
    for m in (cr, torch):
        with pytest.raises(Exception) as info:
            f(m)
        errs.append(info.value)
    assert type(errs[0]) is type(errs[1]) and str(errs[0]) == str(errs[1]), errs
