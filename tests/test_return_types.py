"""``chainrule.return_types`` against ``torch.return_types``: the same types with the same
fields, constructors and reprs, and the functions return the same types (``_out`` twins when
``out=`` is given)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import return_types as rt


def _fields(cls: type) -> tuple[str, ...]:
    r = cls(tuple(range(cls.n_fields)))  # pyright: ignore[reportAttributeAccessIssue]
    body = repr(r).split("(", 1)[1].rstrip(")").replace("\n", "")
    return tuple(p.split("=")[0] for p in body.split(","))


def test_same_types_and_fields_as_torch() -> None:
    names = [t.__name__ for t in torch.return_types.all_return_types]
    assert [t.__name__ for t in rt.all_return_types] == names
    for t in torch.return_types.all_return_types:
        ours = getattr(rt, t.__name__)
        assert issubclass(ours, tuple)
        assert (ours.n_fields, ours.n_sequence_fields, ours.n_unnamed_fields) == (
            t.n_fields,
            t.n_sequence_fields,
            t.n_unnamed_fields,
        )
        assert _fields(ours) == _fields(t)
    assert cr.return_types is rt


def test_constructor_fields_repr_pickle() -> None:
    r = rt.max((1, 2))
    assert (r.values, r.indices) == (1, 2) and r == (1, 2) and hash(r) == hash((1, 2))
    assert repr(r) == repr(torch.return_types.max((1, 2)))
    assert rt.max([3, 4]).indices == 4
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is rt.max and back == r
    assert r[0:1] == (1,)
    with pytest.raises(AttributeError):
        r.values = 5  # pyright: ignore[reportAttributeAccessIssue]
    for bad in ((1, 2, 3), (1,)):
        with pytest.raises(TypeError) as ours:
            rt.max(bad)
        with pytest.raises(TypeError) as theirs:
            torch.return_types.max(bad)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(TypeError, match="constructor requires a sequence"):
        rt.max(5)
    with pytest.raises(TypeError, match="constructor requires a sequence"):
        torch.return_types.max(5)


_A = np.random.default_rng(0).standard_normal((4, 4))
_SPD = _A @ _A.T + 4 * np.eye(4)

# (call, input): the result type's name must be torch's
_CALLS = [
    (lambda L, x: L.max(x, 0), _A),
    (lambda L, x: L.min(x, 1), _A),
    (lambda L, x: L.sort(x), _A),
    (lambda L, x: L.topk(x, 2), _A),
    (lambda L, x: L.kthvalue(x, 2), _A),
    (lambda L, x: L.median(x, 0), _A),
    (lambda L, x: L.nanmedian(x, 0), _A),
    (lambda L, x: L.mode(x, 0), _A),
    (lambda L, x: L.cummax(x, 0), _A),
    (lambda L, x: L.cummin(x, 0), _A),
    (lambda L, x: L.aminmax(x), _A),
    (lambda L, x: L.frexp(x), _A),
    (lambda L, x: L.histogram(x.flatten(), bins=3), _A),
    (lambda L, x: L.histogramdd(x[:, :2], bins=3), _A),
    (lambda L, x: L.geqrf(x), _A),
    (lambda L, x: L.qr(x), _A),
    (lambda L, x: L.svd(x), _A),
    (lambda L, x: L.slogdet(x), _A),
    (lambda L, x: x.slogdet(), _A),
    (lambda L, x: L.triangular_solve(x, x.triu()), _SPD),
    (lambda L, x: L.lu_unpack(*L.linalg.lu_factor(x)), _A),
    (lambda L, x: L.linalg.slogdet(x), _A),
    (lambda L, x: L.linalg.svd(x), _A),
    (lambda L, x: L.linalg.qr(x), _A),
    (lambda L, x: L.linalg.eigh(x), _SPD),
    (lambda L, x: L.linalg.eig(x), _A),
    (lambda L, x: L.linalg.lu(x), _A),
    (lambda L, x: L.linalg.lu_factor(x), _A),
    (lambda L, x: L.linalg.lu_factor_ex(x), _A),
    (lambda L, x: L.linalg.inv_ex(x), _A),
    (lambda L, x: L.linalg.solve_ex(x, x), _A),
    (lambda L, x: L.linalg.cholesky_ex(x), _SPD),
    (lambda L, x: L.linalg.lstsq(x, x), _A),
    (lambda L, x: L.linalg.ldl_factor(x), _SPD),
    (lambda L, x: L.linalg.ldl_factor_ex(x), _SPD),
]


@pytest.mark.filterwarnings("ignore:torch.(qr|svd|triangular_solve):UserWarning")
@pytest.mark.parametrize("i", range(len(_CALLS)))
def test_functions_return_torchs_types(i: int) -> None:
    call, a = _CALLS[i]
    ours = call(cr, cr.tensor(a))
    theirs = call(torch, torch.tensor(a))
    assert type(ours).__name__ == type(theirs).__name__
    assert type(ours) is getattr(rt, type(theirs).__name__)
    for o, t in zip(ours, theirs):
        if isinstance(t, torch.Tensor):
            assert tuple(o.shape) == tuple(t.shape)


def test_out_gives_the_out_twin() -> None:
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    for lib in (cr, torch):
        v, i = lib.empty(0), lib.empty(0, dtype=lib.long)
        r = lib.max(lib.tensor(x), 0, out=(v, i))
        assert type(r).__name__ == "max_out"
        assert r.values is v and r.indices is i
        r = lib.sort(lib.tensor(x), out=(lib.empty(0), lib.empty(0, dtype=lib.long)))
        assert type(r).__name__ == "sort_out"
