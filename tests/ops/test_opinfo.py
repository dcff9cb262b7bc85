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


def _convert(
    m: Any, row: OpInfo, s: Sample, dtype: str, requires_grad: bool = True
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
    return t.detach().numpy(force=True)  # force: a second-order gradient may be a ZeroTensor


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
    ref_args = [
        a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
        for a in sample.args
    ]
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
    c_grads = cr.autograd.grad(
        [c for c, _ in roots],
        [c_args[i] for i in diff],
        [cr.tensor(g) for g in gs],
        allow_unused=True,
    )
    t_grads = torch.autograd.grad(
        [t for _, t in roots],
        [t_args[i] for i in diff],
        [torch.tensor(g) for g in gs],
        allow_unused=True,
    )
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
    assert gradcheck(
        _gc_func(row, sample, args, diff),
        [args[i] for i in diff],
        atol=row.gc_atol,
        rtol=row.gc_rtol,
    )


@pytest.mark.parametrize("row,sample", CASES)
def test_gradgradcheck(row: OpInfo, sample: Sample) -> None:
    if not (row.differentiable and row.gradgradcheck):
        pytest.skip("no second derivative to check")
    args, diff = _convert(cr, row, sample, "float64")
    if not diff:
        pytest.skip("no differentiable input")
    assert gradgradcheck(
        _gc_func(row, sample, args, diff),
        [args[i] for i in diff],
        atol=row.gc_atol,
        rtol=row.gc_rtol,
    )


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


# Every gradient path users hit ----------------------------------------------------------------
#
# test_matches_torch takes gradients with autograd.grad, which always runs the engine's generic
# loop and OpNode.apply. ``.backward()`` runs the generated per-op applies instead (Note
# [plain nodes] in autograd/engine.py, Note [generated apply] in autograd/_node_apply.py), and
# create_graph=True records the backward itself. check_gradient_paths compares all three with
# PyTorch, and test_op_table_sees_generated_vjps proves that it looks at the generated code.


def _grads_like(grads: Any, n: int) -> list[Any]:
    return list(grads) if grads is not None else [None] * n


def _assert_grads(cs: list[Any], ts: list[Any], diff: list[int], what: str, tol: Any) -> None:
    for i, cg, tg in zip(diff, cs, ts):
        if tg is None:
            assert cg is None or not np.any(_np(cg)), f"{what}, input {i}: torch has none"
            continue
        assert cg is not None, f"{what}, input {i}: chainrule gave no gradient"
        np.testing.assert_allclose(_np(cg), _np(tg), err_msg=f"{what}, input {i}", **tol)


def check_gradient_paths(row: OpInfo, sample: Sample) -> bool:
    """Compare with PyTorch, in float64: the gradients ``.backward()`` accumulates, those of
    ``autograd.grad(create_graph=True)`` and, for rows with a second derivative, the
    gradients of a weighted sum of those. Returns False where there is nothing to compare."""
    c_args, diff = _convert(cr, row, sample, "float64")
    t_args, _ = _convert(torch, row, sample, "float64")
    c_out = _flat(row.call(cr, *c_args, **sample.kwargs))
    t_out = _flat(row.call(torch, *t_args, **sample.kwargs))
    pairs = [(c, t) for c, t in zip(c_out, t_out) if t.requires_grad]
    if not diff or not pairs:
        return False
    tol = _tol(row, "float64")
    rng = np.random.default_rng(11)
    gs = [rng.uniform(-1, 1, tuple(t.shape)) for _, t in pairs]
    # 1. .backward(): the generated applies (retain_graph keeps the graph for step 2).
    cr.autograd.backward([c for c, _ in pairs], [cr.tensor(g) for g in gs], retain_graph=True)
    torch.autograd.backward([t for _, t in pairs], [torch.tensor(g) for g in gs], retain_graph=True)
    _assert_grads(
        [c_args[i].grad for i in diff], [t_args[i].grad for i in diff], diff, ".backward()", tol
    )
    # 2. create_graph=True: first order, then the gradient of sum(w_i * grad_i).
    c_in = [c_args[i] for i in diff]
    t_in = [t_args[i] for i in diff]
    c1 = _grads_like(
        cr.autograd.grad(
            [c for c, _ in pairs],
            c_in,
            [cr.tensor(g) for g in gs],
            create_graph=True,
            allow_unused=True,
        ),
        len(diff),
    )
    t1 = _grads_like(
        torch.autograd.grad(
            [t for _, t in pairs],
            t_in,
            [torch.tensor(g) for g in gs],
            create_graph=True,
            allow_unused=True,
        ),
        len(diff),
    )
    _assert_grads(c1, t1, diff, "create_graph=True", tol)
    if not row.gradgradcheck:
        return True
    ws = [rng.uniform(-1, 1, tuple(t.shape)) if t is not None else None for t in t1]
    t_terms = [
        (t * torch.tensor(w)).sum() for t, w in zip(t1, ws) if t is not None and t.requires_grad
    ]
    c_terms = [
        (c * cr.tensor(w)).sum()
        for c, w in zip(c1, ws)
        if c is not None and w is not None and c.requires_grad
    ]
    if not t_terms:
        return True
    try:
        t2 = _grads_like(torch.autograd.grad(sum(t_terms), t_in, allow_unused=True), len(diff))
    except RuntimeError as e:  # e.g. hardsigmoid: PyTorch has no second derivative
        if "is not implemented" not in str(e):
            raise
        return True
    if not c_terms:  # chainrule's gradient is constant in the inputs: so must torch's be
        for i, tg in zip(diff, t2):
            assert tg is None or not np.any(_np(tg)), f"double backward, input {i}: none"
        return True
    c2 = _grads_like(cr.autograd.grad(sum(c_terms), c_in, allow_unused=True), len(diff))
    _assert_grads(c2, t2, diff, "double backward", tol)
    return True


@pytest.mark.parametrize("row,sample", CASES)
def test_gradient_paths_match_torch(row: OpInfo, sample: Sample) -> None:
    if not (row.torch and row.differentiable):
        pytest.skip("row is not differentiable or not comparable with PyTorch")
    if not check_gradient_paths(row, sample):
        pytest.skip("no differentiable input")


def _doubled(apply: Any) -> Any:
    def node_apply(node: Any, grads: Any, release: Any, freed_at: Any) -> Any:
        res, nexts, metas = apply(node, grads, release, freed_at)
        return tuple(None if r is None else r * 2 for r in res), nexts, metas

    return node_apply


def test_op_table_sees_generated_vjps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutation check: with every generated apply returning twice its gradients (and
    nothing else changed), check_gradient_paths fails for every row whose .backward() runs
    one, i.e. the op table tests the generated code, not only the generic path."""
    from chainrule.ops import _record_gen, _registry

    make = _record_gen._make_node_apply  # the generated record asks it for the apply
    monkeypatch.setattr(
        _record_gen, "_make_node_apply", lambda op: None if (f := make(op)) is None else _doubled(f)
    )
    for op in _registry.REGISTRY.values():  # regenerate on next use, with the doubled applies
        monkeypatch.setattr(op, "record", _registry._first_record)
        monkeypatch.setattr(op, "node_apply", None)
    caught = 0
    missed = []
    for row in ROWS:
        if not (row.torch and row.differentiable):
            continue
        sample = next(iter(row.samples(np.random.default_rng(1234))))
        c_args, diff = _convert(cr, row, sample, "float64")
        outs = [o for o in _flat(row.call(cr, *c_args, **sample.kwargs)) if o.requires_grad]
        if not diff or not outs or not _runs_generated(outs):
            continue
        try:
            check_gradient_paths(row, sample)
        except AssertionError:
            caught += 1
        except RuntimeError as e:  # doubled gradients of U and Vh no longer ignore the phases
            if not str(e).startswith("svd_backward: The singular vectors"):
                raise
            caught += 1
        else:
            # Only gradients that are zero everywhere (piecewise constant ops) survive.
            cr.autograd.backward([o.sum() for o in outs])
            if any(c_args[i].grad is not None and np.any(_np(c_args[i].grad)) for i in diff):
                missed.append(row.name)
    assert not missed, f"doubling the generated VJPs went unnoticed for {missed}"
    assert caught > 200, caught


def _runs_generated(outs: list[Any]) -> bool:
    """Whether a .backward() from ``outs`` runs some generated apply."""
    seen: set[int] = set()
    stack = [o.grad_fn for o in outs if o.grad_fn is not None]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if getattr(n, "_fast", None) is not None:
            return True
        stack.extend(f for f, _ in n.next_functions if f is not None)
    return False
