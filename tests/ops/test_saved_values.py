"""Values are saved for backward only when a gradient that is needed reads them (Note [saved
only when needed] in chainrule/ops/_registry.py), so changing the others in place before a
backward is no error, as in PyTorch.

The differential test runs every differentiable row of the op table with each float input
alone requiring grad (and all of them), changes each input (then each output) in place under
no_grad, runs ``.backward()`` and compares with PyTorch doing the same:

* chainrule raises "modified by an inplace operation" only where PyTorch does, but for the
  rows of FALSE_ERRORS (each with its reason);
* where PyTorch raises and chainrule does not, chainrule kept its own copy or intermediate, or
  needs no such value: its gradient must then be the one of the unchanged forward (checked);
* any other error is a failure, but for the rows of OTHER_ERRORS.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd.graph import saved_bytes
from tests.opinfo.core import OpInfo, Sample
from tests.opinfo.registry import all_rows

torch = pytest.importorskip("torch")

VERSION_MSG = "modified by an inplace operation"

# Rows where chainrule raises and PyTorch does not: PyTorch's own graph for them keeps other
# values than chainrule's one node does.
FALSE_ERRORS = {
    "rdiv": "PyTorch computes number / x as reciprocal(x) * number and saves the reciprocal, "
    "an intermediate no one can change; chainrule's one DivBackward0 saves x",
    "complex_rdiv": "as rdiv",
    "polar": "a composite (complex of abs cos(angle) and abs sin(angle)): its cos, sin and mul "
    "save the inputs; PyTorch's PolarBackward0 saves only the result",
    "linalg_multi_dot": "multiplied left to right (documented), so the saved operands differ "
    "from PyTorch's cheapest-order products",
    "linalg_svd": "the factors of a multi-output node are kept as constants and the input is "
    "saved to recompute them under create_graph (see ops/linalg.py _svd_fwd); "
    "PyTorch saves U, S, Vh",
    "linalg_svdvals": "as linalg_svd",
    "complex_svd": "as linalg_svd",
    "linalg_eig": "as linalg_svd (ops/linalg/eig.py): the input is saved to recompute L and V "
    "under create_graph; PyTorch saves L and V",
    "complex_eig": "as linalg_eig",
    "norm_nuc": "the sum of linalg_svdvals: as linalg_svd",
    "kron": "a composite (ops/composite.py): its mul saves reshaped views of the inputs, which "
    "share their version counters; PyTorch's kron saves copies",
    "chain_matmul": "a composite multiplying left to right: the saved operands are the inputs "
    "themselves, where PyTorch's multi_dot-based kernel saves other products",
    "lstm_pointwise": "one fused op (ops/rnn.py) for the cell's elementwise part keeps its "
    "inputs; PyTorch's reference (a dozen small ops) saves intermediates no one can change",
    "gru_pointwise": "as lstm_pointwise",
    "lstm_cell": "built on lstm_pointwise: as lstm_pointwise",
    "gru_cell": "built on gru_pointwise: as lstm_pointwise",
    "batch_norm_train": "one fused op (ops/normalization.py) keeps its input and weight, as "
    "PyTorch's native_batch_norm does; the row's reference (composed torch ops) saves "
    "intermediates no one can change",
}

# Rows where PyTorch raises another error than the version check.
OTHER_ERRORS = {
    "unbind": "PyTorch refuses a backward through the outputs of a multi-output view op once "
    "their base or one of them was changed in place; chainrule has no such rule",
    "unbind_method": "as unbind",
    "split": "as unbind",
    "split_unused": "as unbind",
    "chunk": "as unbind",
}

ROWS = [r for r in all_rows() if r.torch and r.differentiable]


def _tensors(m: Any, s: Sample, grad_set: tuple[int, ...]) -> list[Any]:
    args: list[Any] = []
    for i, a in enumerate(s.args):
        if isinstance(a, np.ndarray):
            if a.dtype.kind == "f":
                args.append(m.tensor(a.astype("float64"), requires_grad=i in grad_set))
            else:
                args.append(m.tensor(a))
        else:
            args.append(a)
    return args


def _flat(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _change(m: Any, t: Any) -> None:
    """An in-place write under no_grad: float values change (doubled), others keep their
    values (an index must stay valid) but their version moves on all the same."""
    with m.no_grad():
        if t.dtype == m.bool:
            t.mul_(True)
        elif t.dtype.is_floating_point:
            t.mul_(2.0)
        else:
            t.mul_(1)


def _run(
    m: Any, row: OpInfo, s: Sample, grad_set: tuple[int, ...], change: tuple[str, int] | None
) -> tuple[str, list[Any] | None]:
    """("ok", gradients of the grad_set inputs), ("version", None), ("error: ...", None) or
    ("skip", None) where the in-place write itself is refused (a broadcast output)."""
    args = _tensors(m, s, grad_set)
    outs = [o for o in _flat(row.call(m, *args, **s.kwargs)) if isinstance(o, m.Tensor)]
    roots = [o for o in outs if o.requires_grad]
    if change is not None:
        kind, j = change
        try:
            _change(m, args[j] if kind == "in" else outs[j])
        except RuntimeError:
            return "skip", None
    try:
        m.autograd.backward(roots, [m.ones_like(o) for o in roots])
    except RuntimeError as e:
        if VERSION_MSG in str(e):
            return "version", None
        return f"error: {type(e).__name__}: {str(e)[:100]}", None
    except Exception as e:  # an internal error of chainrule: reported by the caller
        return f"error: {type(e).__name__}: {str(e)[:100]}", None
    return "ok", [args[i].grad for i in grad_set]


def _configs(s: Sample) -> list[tuple[int, ...]]:
    fl = [
        i
        for i, a in enumerate(s.args)
        if isinstance(a, np.ndarray) and a.dtype.kind == "f" and i not in s.no_grad
    ]
    return [(i,) for i in fl] + ([tuple(fl)] if len(fl) > 1 else [])


def _np(t: Any) -> np.ndarray:
    return np.asarray(t._data) if hasattr(t, "_data") else t.detach().numpy()


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_inplace_after_forward_matches_torch(row: OpInfo) -> None:
    s = next(iter(row.samples(np.random.default_rng(1234))))
    tensor_args = [i for i, a in enumerate(s.args) if isinstance(a, np.ndarray)]
    problems = []
    false_errors = other_errors = 0
    for grad_set in _configs(s):
        ref_outcome, ref = _run(torch, row, s, grad_set, None)
        assert ref_outcome == "ok", ref_outcome
        n_out = len(
            [
                o
                for o in _flat(row.call(torch, *_tensors(torch, s, grad_set), **s.kwargs))
                if isinstance(o, torch.Tensor)
            ]
        )
        changes = [("in", j) for j in tensor_args] + [("out", k) for k in range(n_out)]
        for change in [None] + changes:
            c, cg = _run(cr, row, s, grad_set, change)
            t, _ = _run(torch, row, s, grad_set, change)
            where = f"grad of inputs {grad_set}, changed {change}: chainrule {c}, torch {t}"
            if c == "skip" or t == "skip":
                continue
            if c == "version" and t != "version":
                false_errors += 1
                if row.name not in FALSE_ERRORS:
                    problems.append(f"false error: {where}")
            elif c.startswith("error"):
                problems.append(f"error: {where}")
            elif t.startswith("error"):
                other_errors += 1
                if row.name not in OTHER_ERRORS:
                    problems.append(f"torch error: {where}")
            elif c == "ok":
                # Raised by PyTorch or not, chainrule's gradient is that of the forward as it
                # ran: it never reads a value changed since.
                for i, a, b in zip(grad_set, cg, ref):
                    if b is None:
                        assert a is None or not np.any(_np(a)), where
                        continue
                    assert a is not None, f"input {i} got no gradient: {where}"
                    np.testing.assert_allclose(
                        _np(a), _np(b), rtol=1e-7, atol=1e-9, err_msg=f"input {i}: {where}"
                    )
    assert not problems, "\n".join(problems)
    # Each listed exception is still needed.
    assert (row.name in FALSE_ERRORS) == (false_errors > 0), "stale FALSE_ERRORS entry"
    assert (row.name in OTHER_ERRORS) == (other_errors > 0), "stale OTHER_ERRORS entry"


def test_exception_lists_name_rows() -> None:
    names = {r.name for r in ROWS}
    assert set(FALSE_ERRORS) <= names and set(OTHER_ERRORS) <= names


# The cases of issue 12 (defect 3) -------------------------------------------------------------


def _issue_case(m: Any, case: str) -> np.ndarray:
    """One reproduction: a forward, an in-place change after it, then backward; returns the
    leaf's gradient."""
    w = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
    c = m.tensor([[0.5, 1.5, -1.0], [2.0, 0.25, 1.0]])
    if case == "mul_div_then_iadd":
        y = w * 3 / 2
        y += 1  # div saved its output: this made the backward fail
        y.sum().backward()
        return _np(w.grad)
    loss = {
        "mul_number": lambda: (w * 2.0).sum(),
        "mul_const": lambda: (w * c[0]).sum(),
        "matmul_const": lambda: (w @ c.T).sum(),
        "linear_const": lambda: m.nn.functional.linear(w, c).sum(),
        "sub_alpha": lambda: c[0].sub(w, alpha=2).sum(),
        "div_by_const": lambda: (w / c[1]).sum(),
    }[case]()
    with m.no_grad():
        w.add_(1.0)
    loss.backward()
    return _np(w.grad)


@pytest.mark.parametrize(
    "case",
    [
        "mul_number",
        "mul_const",
        "matmul_const",
        "linear_const",
        "sub_alpha",
        "div_by_const",
        "mul_div_then_iadd",
    ],
)
def test_issue_cases(case: str) -> None:
    np.testing.assert_allclose(_issue_case(cr, case), _issue_case(torch, case), rtol=1e-6)


def test_saved_only_what_the_needed_gradient_reads() -> None:
    w = cr.ones(1000, requires_grad=True)
    c = cr.ones(1000)
    y = w * c
    assert saved_bytes(y) == c._data.nbytes  # c only: w's gradient reads c, c needs none
    kept = dict(zip(y.grad_fn.op.save_names, y.grad_fn.saved))
    assert kept["a"] is None and kept["b"] is not None
    z = cr.ones(1000, requires_grad=True) * cr.ones(1000, requires_grad=True)
    assert saved_bytes(z) == 2 * c._data.nbytes


def test_a_changed_value_that_is_needed_still_raises() -> None:
    w = cr.ones(3, requires_grad=True)
    c = cr.ones(3)
    y = (w * c).sum()
    with cr.no_grad():
        c.add_(1.0)
    with pytest.raises(RuntimeError, match=VERSION_MSG):
        y.backward()


def test_generic_record_keeps_by_mask() -> None:
    # lerp (three inputs) and addmm are recorded by the generic _record.
    a, b = cr.ones(4), cr.ones(4)
    w = cr.full((4,), 0.5, requires_grad=True)
    y = cr.lerp(a, b, w)
    names = dict(zip(y.grad_fn.op.save_names, y.grad_fn.saved))
    assert names["w"] is None and names["a"] is not None and names["b"] is not None
    x = cr.ones(2, 2, requires_grad=True)
    out = cr.addmm(x, cr.ones(2, 3), cr.ones(3, 2))
    assert saved_bytes(out) == 0
    out.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), np.ones((2, 2)))


def test_generated_and_generic_record_agree() -> None:
    from chainrule.ops._registry import _record
    from chainrule.ops.binary import mul

    op = mul.op
    for ra, rb in ((True, False), (False, True), (True, True)):
        a = cr.ones(3, requires_grad=ra)
        b = cr.ones(3, requires_grad=rb)
        out = a._data * b._data
        gen = op.record(op, (a, b), out, None, None).grad_fn.saved
        ref = _record(op, (a, b), out, None, None).grad_fn.saved
        assert [s is None for s in gen] == [s is None for s in ref]
        # a is kept for b's gradient, b for a's.
        assert dict(zip(op.save_names, (s is None for s in gen))) == {"a": not rb, "b": not ra}


def test_inplace_op_copies_self_only_when_kept() -> None:
    x = cr.ones(1000, requires_grad=True)
    c = cr.full((1000,), 2.0)
    y = x * 1.0  # keeps nothing
    y.mul_(c)  # self's gradient reads c; nothing reads the old self: no copy is kept
    assert saved_bytes(y) == c._data.nbytes
    b = cr.full((1000,), 3.0, requires_grad=True)
    y.mul_(b)  # b's gradient reads the old self: a copy of it is kept, with b
    assert saved_bytes(y) == c._data.nbytes + 2 * b._data.nbytes
    y.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), np.full(1000, 6.0))
    np.testing.assert_array_equal(_np(b.grad), np.full(1000, 2.0))
