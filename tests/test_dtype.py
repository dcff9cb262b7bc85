"""Type promotion, the default dtype and comparison dtypes, compared with PyTorch over a grid of
operand kinds: dimensioned tensors, 0-dim tensors and Python scalars of each category."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]


def _operands(m: Any) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for d in DTYPES:
        dt = getattr(m, d)
        out.append((f"{d}[2]", m.tensor([1, 1], dtype=dt)))
        out.append((f"{d}[]", m.tensor(1, dtype=dt)))
    out += [("True", True), ("3", 3), ("2.5", 2.5)]
    return out


OPS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "lt": lambda a, b: a < b,
    "eq": lambda a, b: a == b,
}


def _pairs() -> list[Any]:
    names = [n for n, _ in _operands(cr)]
    out = []
    for i, j in itertools.product(range(len(names)), repeat=2):
        if i >= 2 * len(DTYPES) and j >= 2 * len(DTYPES):
            continue  # two Python scalars: no tensor involved
        out.append(pytest.param(i, j, id=f"{names[i]}-{names[j]}"))
    return out


def _outcome(f: Any) -> Any:
    try:
        r = f()
    except Exception as e:  # noqa: BLE001 - the error type is what is compared
        return type(e).__name__
    return str(r.dtype).replace("torch.", "").replace("chainrule.", "")


@pytest.mark.parametrize("i,j", _pairs())
def test_result_dtype_grid(i: int, j: int) -> None:
    c_ops, t_ops = _operands(cr), _operands(torch)
    ca, cb = c_ops[i][1], c_ops[j][1]
    ta, tb = t_ops[i][1], t_ops[j][1]
    for name, f in OPS.items():
        t = _outcome(lambda: f(ta, tb))
        if t in ("RuntimeError", "TypeError", "NotImplementedError"):
            continue  # e.g. bool - bool: the error is tested elsewhere
        c = _outcome(lambda: f(ca, cb))
        assert c == t, (name, c_ops[i][0], c_ops[j][0])
    if hasattr(ta, "dtype") or hasattr(tb, "dtype"):
        assert cr.result_type(ca, cb).name == str(torch.result_type(ta, tb)).split(".")[1]


@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, repeat=2)))
def test_promote_types_and_can_cast(a: str, b: str) -> None:
    got = cr.promote_types(getattr(cr, a), getattr(cr, b))
    assert got.name == str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[1]
    assert cr.can_cast(getattr(cr, a), getattr(cr, b)) == torch.can_cast(
        getattr(torch, a), getattr(torch, b)
    )


def test_default_dtype_changes_float_results() -> None:
    assert cr.get_default_dtype() is cr.float32
    try:
        cr.set_default_dtype(cr.float64)
        torch.set_default_dtype(torch.float64)
        i = cr.tensor([1, 2])
        ti = torch.tensor([1, 2])
        assert (i / 2).dtype is cr.float64 and (ti / 2).dtype == torch.float64
        assert (i * 2.5).dtype is cr.float64
        assert cr.exp(i).dtype is cr.float64
        assert cr.tensor([1.5]).dtype is cr.float64
        # A float32 tensor is not widened by a Python float, whatever the default.
        assert (cr.tensor([1.0], dtype=cr.float32) * 2.5).dtype is cr.float32
    finally:
        cr.set_default_dtype(cr.float32)
        torch.set_default_dtype(torch.float32)
    with pytest.raises(TypeError):
        cr.set_default_dtype(cr.int64)


def test_integer_division_rules() -> None:
    a, b = [7, -7, 6, -6], [2, 2, -4, -4]
    for m in (cr, torch):
        x, y = m.tensor(a), m.tensor(b)
        r = {
            "true": x / y,
            "floor_op": x // y,
            "floor": m.div(x, y, rounding_mode="floor"),
            "trunc": m.div(x, y, rounding_mode="trunc"),
            "fd": m.floor_divide(x, y),
            "scalar": x // 3,
            "rscalar": 13 // y,
            "mod": x % y,
            "rmod": 13 % y,
            "fmod": m.fmod(x, y),
        }
        if m is cr:
            got = r
        else:
            want = r
    for k in want:
        assert str(got[k].dtype).split(".")[1] == str(want[k].dtype).split(".")[1], k
        np.testing.assert_array_equal(got[k].numpy(), want[k].numpy(), err_msg=k)


def test_comparison_semantics() -> None:
    x = cr.tensor([1, 2, 3])
    tx = torch.tensor([1, 2, 3])
    assert (x == 2.0).dtype is cr.bool
    np.testing.assert_array_equal((x < 2.5).numpy(), (tx < 2.5).numpy())
    np.testing.assert_array_equal((x.float() == x).numpy(), (tx.float() == tx).numpy())
    n = cr.tensor([float("nan"), 1.0])
    assert (n == n).tolist() == [False, True]
    assert (n != n).tolist() == [True, False]
