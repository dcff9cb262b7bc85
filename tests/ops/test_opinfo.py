"""The op table turned into tests: reference values, PyTorch differential tests, gradcheck,
gradgradcheck, no input mutation. See ARCHITECTURE.md section 5."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from tests.opinfo.core import OpInfo, Sample
from tests.opinfo.registry import all_rows

torch = pytest.importorskip("torch")

ROWS = all_rows()


def _cases() -> list[Any]:
    out = []
    for row in ROWS:
        for i, s in enumerate(row.samples(np.random.default_rng(1234))):
            out.append(pytest.param(row, s, id=f"{row.name}-{s.name or i}"))
    return out


CASES = _cases()


def _convert(m: Any, row: OpInfo, s: Sample, dtype: str, requires_grad: bool = True
             ) -> tuple[list[Any], list[int]]:
    args: list[Any] = []
    diff: list[int] = []
    for i, a in enumerate(s.args):
        if isinstance(a, np.ndarray):
            if a.dtype.kind == "f":
                rg = requires_grad and row.differentiable and i not in s.no_grad
                t = m.tensor(a.astype(dtype), requires_grad=rg)
                if rg:
                    diff.append(i)
            else:
                t = m.tensor(a)
            args.append(t)
        else:
            args.append(a)
    return args, diff


def _flat(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flat(o))
        return res
    return [out]


def _np(t: Any) -> np.ndarray:
    if hasattr(t, "_data"):
        return np.asarray(t._data)
    return t.detach().numpy()


def _tol(row: OpInfo, dtype: str) -> dict[str, float]:
    if dtype == "float64":
        return {"rtol": 1e-7, "atol": 1e-9}
    return {"rtol": row.rtol, "atol": row.atol}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("row,sample", CASES)
def test_forward_matches_reference(row: OpInfo, sample: Sample, dtype: str) -> None:
    if row.ref is None:
        pytest.skip("no NumPy reference for this row; the PyTorch test covers it")
    args, _ = _convert(cr, row, sample, dtype, requires_grad=False)
    out = _flat(row.call(cr, *args, **sample.kwargs))
    ref_args = [a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                for a in sample.args]
    ref = _flat(row.ref(*ref_args, **sample.kwargs))
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        r = np.asarray(r)
        assert tuple(o.shape) == r.shape
        if r.dtype.kind == "f":
            np.testing.assert_allclose(_np(o), r, **_tol(row, dtype))
        else:
            np.testing.assert_array_equal(_np(o), r)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("row,sample", CASES)
def test_matches_torch(row: OpInfo, sample: Sample, dtype: str) -> None:
    if not row.torch:
        pytest.skip("row is not comparable with PyTorch")
    c_args, diff = _convert(cr, row, sample, dtype)
    t_args, _ = _convert(torch, row, sample, dtype)
    c_out = _flat(row.call(cr, *c_args, **sample.kwargs))
    t_out = _flat(row.call(torch, *t_args, **sample.kwargs))
    assert len(c_out) == len(t_out)
    tol = _tol(row, dtype)
    for c, t in zip(c_out, t_out):
        assert tuple(c.shape) == tuple(t.shape)
        assert c.dtype.name == str(t.dtype).replace("torch.", ""), (c.dtype, t.dtype)
        if t.dtype.is_floating_point:
            np.testing.assert_allclose(_np(c), _np(t), **tol)
        else:
            np.testing.assert_array_equal(_np(c), _np(t))
    roots = [(c, t) for c, t in zip(c_out, t_out) if t.requires_grad]
    if not diff or not roots:
        return
    rng = np.random.default_rng(7)
    gs = [rng.uniform(-1, 1, tuple(t.shape)).astype(dtype) for _, t in roots]
    c_grads = cr.autograd.grad([c for c, _ in roots], [c_args[i] for i in diff],
                               [cr.tensor(g) for g in gs], allow_unused=True)
    t_grads = torch.autograd.grad([t for _, t in roots], [t_args[i] for i in diff],
                                  [torch.tensor(g) for g in gs], allow_unused=True)
    for i, (cg, tg) in zip(diff, zip(c_grads, t_grads)):
        if tg is None:
            assert cg is None or not np.any(_np(cg)), f"input {i}: torch has no gradient"
            continue
        assert cg is not None, f"input {i}: chainrule gave no gradient"
        np.testing.assert_allclose(_np(cg), _np(tg), err_msg=f"gradient of input {i}", **tol)


def _gc_func(row: OpInfo, sample: Sample, args: list[Any], diff: list[int]) -> Any:
    def f(*ts: Any) -> Any:
        full = list(args)
        for i, t in zip(diff, ts):
            full[i] = t
        return row.call(cr, *full, **sample.kwargs)

    return f


@pytest.mark.parametrize("row,sample", CASES)
def test_gradcheck(row: OpInfo, sample: Sample) -> None:
    if not (row.differentiable and row.gradcheck):
        pytest.skip("not differentiable")
    args, diff = _convert(cr, row, sample, "float64")
    if not diff:
        pytest.skip("no differentiable input")
    assert gradcheck(_gc_func(row, sample, args, diff), [args[i] for i in diff],
                     atol=row.gc_atol, rtol=row.gc_rtol)


@pytest.mark.parametrize("row,sample", CASES)
def test_gradgradcheck(row: OpInfo, sample: Sample) -> None:
    if not (row.differentiable and row.gradgradcheck):
        pytest.skip("no second derivative to check")
    args, diff = _convert(cr, row, sample, "float64")
    if not diff:
        pytest.skip("no differentiable input")
    assert gradgradcheck(_gc_func(row, sample, args, diff), [args[i] for i in diff],
                         atol=row.gc_atol, rtol=row.gc_rtol)


@pytest.mark.parametrize("row,sample", CASES)
def test_inputs_not_mutated(row: OpInfo, sample: Sample) -> None:
    args, diff = _convert(cr, row, sample, "float64")
    before = [np.array(a._data) if hasattr(a, "_data") else None for a in args]
    out = _flat(row.call(cr, *args, **sample.kwargs))
    roots = [o for o in out if o.requires_grad]
    if roots:
        cr.autograd.backward([o.sum() for o in roots])
    for a, b in zip(args, before):
        if b is not None:
            np.testing.assert_array_equal(np.asarray(a._data), b)
