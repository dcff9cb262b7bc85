"""Sparse gradients of an embedding table (``F.embedding(..., sparse=True)``,
``EmbeddingBag(sparse=True)``): the table's ``.grad`` is a sparse COO tensor as PyTorch's.

Note [sparse embedding gradients]
    The engine passes dense arrays between nodes, and a leaf's AccumulateGrad adds dense
    arrays, so a sparse gradient cannot flow to the weight through it. Instead the picked rows
    come from a fresh leaf, a copy of ``weight[index]`` (the gather copies anyway), whose
    post-accumulate hook moves its gradient into ``weight.grad`` as the COO tensor PyTorch
    builds: indices the looked-up rows in lookup order (1 x n, uncoalesced), values the rows'
    gradients; a second backward appends its entries after the first's (sparse + sparse, as
    PyTorch accumulates). Cost: nothing on the dense path (``sparse=False`` never comes here).
    Limits: the weight is not in the graph, so ``autograd.grad(out, weight)``,
    ``backward(inputs=[weight])``, hooks on the weight and ``create_graph`` do not see this
    use of it (docs/sparse.md).
"""

from __future__ import annotations

import numpy as np

from chainrule._grad_state import _state
from chainrule._tensor import Tensor, _new_tensor
from chainrule.sparse._coo import SparseTensor, _make

__all__ = ["sparse_rows", "accumulate_sparse"]


def accumulate_sparse(weight: Tensor, g: SparseTensor) -> None:
    """``weight.grad += g`` with ``g`` sparse: the first becomes ``.grad``, later ones are
    appended (uncoalesced, the old entries first)."""
    old = weight._grad
    if old is None:
        weight._grad = g
    elif isinstance(old, SparseTensor):
        idx = np.concatenate([old._sp_indices._data, g._sp_indices._data], axis=1)
        vals = np.concatenate([old._sp_values._data, g._sp_values._data], axis=0)
        weight._grad = _make(_new_tensor(idx), _new_tensor(vals), tuple(weight.shape), False)
    else:  # a dense .grad stays dense (PyTorch: dense + sparse is dense)
        rows = g._sp_indices._data[0]
        data = old._data.copy()
        np.add.at(data, rows, g._sp_values._data)
        weight._grad = _new_tensor(data)


def sparse_rows(weight: Tensor, index: np.ndarray, keep: np.ndarray | None = None) -> Tensor:
    """The rows ``weight[index]`` (``index`` an array of valid rows, flattened), shape
    (n, dim); when ``weight`` needs a gradient, the rows are a leaf whose gradient reaches
    ``weight.grad`` as a sparse COO tensor (Note [sparse embedding gradients]), without the
    entries where the boolean ``keep`` is False (the padding index, as PyTorch drops them)."""
    index = np.asarray(index, dtype=np.int64).reshape(-1)
    if not (weight.requires_grad and _state.enabled):
        return _new_tensor(np.take(weight._data, index, axis=0))
    rows = _new_tensor(np.take(weight._data, index, axis=0))
    rows.requires_grad_(True)
    sel = None if keep is None else np.nonzero(np.asarray(keep).reshape(-1))[0]
    idx = _new_tensor((index if sel is None else index[sel])[None, :].copy())

    def move(leaf: Tensor) -> None:
        g = leaf._grad
        leaf._grad = None
        if g is not None:
            v = g.detach() if sel is None else _new_tensor(g._data[sel])
            accumulate_sparse(weight, _make(idx, v, tuple(weight.shape), False))

    rows.register_post_accumulate_grad_hook(move)
    return rows
