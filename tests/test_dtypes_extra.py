"""The float8 formats, uint16/32/64, the element-kind helpers (chainrule/_kinds.py) and
``torch.sym_*``, compared with PyTorch: casts to and from them, printing, which ops run on
float8 and the errors of those that do not, promotion errors, and sym_*'s plain semantics."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from chainrule import _kinds

torch = pytest.importorskip("torch")

FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
VALS = [0.0, 1.0, -2.5, 0.3, 17.3, 240.0, 300.0, 448.0, 500.0, 1e5, 6e4, 1e-3, 1e-6]
SPECIAL = [float("inf"), float("-inf"), float("nan"), -0.0, 1e-39]


def _np(t: Any) -> np.ndarray:
    return t.detach().float().numpy()


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_casts_match_torch(name: str) -> None:
    # Out of range values saturate (e4m3fn) or become NaN as PyTorch converts them.
    vals = VALS + SPECIAL
    for make in (
        lambda m: m.tensor(vals).to(getattr(m, name)),
        lambda m: m.tensor(vals, dtype=getattr(m, name)),
        lambda m: m.tensor(vals).to(getattr(m, name)).to(m.bfloat16),
        lambda m: m.tensor(vals).double().to(getattr(m, name)),
    ):
        c, t = make(cr), make(torch)
        assert c.dtype.name == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(_np(c), _np(t))
    x = cr.tensor([1.5]).to(getattr(cr, name))
    d = getattr(torch, name)
    assert x.dtype.is_floating_point and x.dtype.itemsize == d.itemsize == x.element_size()
    assert x.dtype.is_signed == d.is_signed


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_printing(name: str) -> None:
    for vals in ([1.0, -2.5, 0.3], [17.3, 240.0, 1e-3]):
        c = repr(cr.tensor(vals).to(getattr(cr, name))).replace("chainrule.", "torch.")
        assert c == repr(torch.tensor(vals).to(getattr(torch, name)))


OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda m, x: x + x,
    "add_scalar": lambda m, x: x + 1,
    "sub": lambda m, x: x - x,
    "mul": lambda m, x: x * x,
    "div": lambda m, x: x / 2,
    "neg": lambda m, x: -x,
    "abs": lambda m, x: x.abs(),
    "exp": lambda m, x: x.exp(),
    "sum": lambda m, x: x.sum(),
    "mean": lambda m, x: x.mean(),
    "max": lambda m, x: x.max(),
    "relu": lambda m, x: x.relu(),
    "sort": lambda m, x: x.sort()[0],
    "gt": lambda m, x: x > x,
    "eq": lambda m, x: x == x,
    "isnan": lambda m, x: x.isnan(),
    "matmul": lambda m, x: x[None] @ x[:, None],
    "cat": lambda m, x: m.cat([x, x]),
    "stack": lambda m, x: m.stack([x, x]),
    "clone": lambda m, x: x.clone(),
    "index": lambda m, x: x[[0, 2]],
    "view": lambda m, x: x.view(3, 1),
    "float": lambda m, x: x.float(),
    "fill_": lambda m, x: x.clone().fill_(2),
    "copy_": lambda m, x: x.clone().copy_(m.ones(3)),
    "zeros": lambda m, x: m.zeros(2, dtype=x.dtype),
}


@pytest.mark.parametrize("name", FLOAT8)
@pytest.mark.parametrize("op", sorted(OPS))
def test_float8_ops_run_or_refuse_as_torch(name: str, op: str) -> None:
    res = []
    for m in (torch, cr):
        x = m.tensor([1.0, 2.0, 3.0]).to(getattr(m, name))
        try:
            r = OPS[op](m, x)
        except NotImplementedError as e:
            res.append(("refused", str(e)))
        else:
            v = _np(r) if r.dtype.is_floating_point else r.numpy()
            res.append((str(r.dtype).split(".")[1], v.tolist()))
    assert res[0] == res[1]


def test_float8_promotion_is_refused() -> None:
    for m in (torch, cr):
        with pytest.raises(RuntimeError) as e:
            m.promote_types(m.float8_e4m3fn, m.float32)
        assert str(e.value) == (
            "Promotion for Float8 Types is not supported, attempted to promote Float8_e4m3fn "
            "and Float"
        )
        with pytest.raises(RuntimeError, match="Promotion for Float8 Types"):
            m.promote_types(m.bfloat16, m.float8_e5m2)


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_big_unsigned_ints(name: str) -> None:
    cd, td = getattr(cr, name), getattr(torch, name)
    c, t = cr.tensor([1, 2, 60000], dtype=cd), torch.tensor([1, 2, 60000], dtype=td)
    assert repr(c).replace("chainrule.", "torch.") == repr(t)
    assert c.dtype.itemsize == td.itemsize and c.dtype.is_signed is td.is_signed is False
    assert not c.dtype.is_floating_point
    assert cr.iinfo(cd).max == torch.iinfo(td).max and cr.iinfo(cd).min == 0
    np.testing.assert_array_equal(c.float().numpy(), t.float().numpy())
    np.testing.assert_array_equal(cr.tensor([3.7, 9.0]).to(cd).numpy(), [3, 9])
    assert (c * c).dtype == cd and (c.float() / 2).dtype == cr.float32
    assert cr.promote_types(cd, cr.float32) == cr.float32
    assert cr.promote_types(cd, cd) == cd
    for other in ("int64", "uint8", "bool", "int32"):
        msgs = []
        for m in (torch, cr):
            with pytest.raises(RuntimeError) as e:
                m.promote_types(getattr(m, name), getattr(m, other))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


def test_big_unsigned_ints_load_from_torch_files(tmp_path: Any) -> None:
    t = {
        "u16": torch.arange(5).to(torch.uint16),
        "u64": torch.tensor([2**40, 3], dtype=torch.uint64),
        "f8": torch.tensor([1.0, -2.5]).to(torch.float8_e4m3fn),
    }
    torch.save(t, tmp_path / "t.pt")
    got = cr.load(tmp_path / "t.pt")
    for k, v in t.items():
        assert got[k].dtype.name == str(v.dtype).split(".")[1]
        np.testing.assert_array_equal(got[k].float().numpy(), v.float().numpy())
    cr.save(got, tmp_path / "c.ct")
    back = cr.load(tmp_path / "c.ct")
    for k in t:
        assert back[k].dtype == got[k].dtype
    with pytest.raises(TypeError, match="not written in PyTorch's format"):
        cr.save(got, tmp_path / "c.pt", format="torch")


def test_kinds() -> None:
    import ml_dtypes

    bf = np.zeros(2, ml_dtypes.bfloat16)
    assert _kinds.is_floating(bf) and _kinds.is_extension(bf) and _kinds.is_inexact(bf)
    assert _kinds.is_floating(np.dtype(ml_dtypes.float8_e5m2))  # NumPy says kind "f" here
    assert _kinds.is_floating(cr.bfloat16) and _kinds.is_floating(np.float32)
    assert _kinds.is_floating(cr.ones(2)) and not _kinds.is_floating(cr.ones(2).long())
    assert _kinds.is_integral(np.uint16) and not _kinds.is_integral(np.bool_)
    assert _kinds.is_integral(np.bool_, include_bool=True) and _kinds.is_bool(cr.bool)
    assert _kinds.is_complex(np.complex64) and _kinds.is_inexact(np.complex128)
    assert _kinds.category(np.dtype("U3")) == -1 and _kinds.category("float64") == 2
    assert not _kinds.is_extension(np.float32)
    # Every native dtype keeps its fast-path category; an extension dtype gets -1 there.
    assert _kinds.CATEGORY_BY_NUM[bf.dtype.num] == -1
    assert _kinds.CATEGORY_BY_NUM[np.dtype(np.float32).num] == 2


SYM: list[str] = [
    "sym_int(3.7)",
    "sym_int(-3.7)",
    "sym_int(True)",
    "sym_int('3')",
    "sym_float(3)",
    "sym_max(2, 3)",
    "sym_max(2, 3.0)",
    "sym_max(2.5, 1)",
    "sym_max(True, 0)",
    "sym_max(np.int64(2), 3)",
    "sym_max(np.float32(2), 3)",
    "sym_min(2, 3.0)",
    "sym_min(4, 3)",
    "sym_not(True)",
    "sym_not(0)",
    "sym_sqrt(4)",
    "sym_sqrt(2.0)",
    "sym_sqrt(-1.0)",
    "sym_sum([1, 2, 3])",
    "sym_sum([1, 2.5])",
    "sym_sum([])",
    "sym_sum((1, 2))",
    "sym_ite(True, 1, 2)",
    "sym_ite(False, 1, 2)",
    "sym_ite(True, 1, 2.0)",
    "sym_ite(1, 2, 3)",
    "sym_max('a', 1)",
]


@pytest.mark.parametrize("expr", SYM)
def test_sym_functions_match_torch(expr: str) -> None:
    res = []
    for m in (torch, cr):
        try:
            r = eval("m." + expr, {"m": m, "np": np})
            res.append((type(r), r))
        except (AssertionError, ValueError) as e:
            res.append((type(e), str(e).replace("torch.", "").split("got")[0]))
    assert res[0] == res[1]


UINT_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda m, x: x + x,
    "add_": lambda m, x: x.clone().add_(1),
    "sub": lambda m, x: x - x,
    "mul": lambda m, x: x * 2,
    "neg": lambda m, x: -x,
    "sum": lambda m, x: x.sum(),
    "prod": lambda m, x: x.prod(),
    "cumsum": lambda m, x: x.cumsum(0),
    "max": lambda m, x: x.max(),
    "amax": lambda m, x: x.amax(),
    "min": lambda m, x: x.min(),
    "eq": lambda m, x: x == 2,
    "lt": lambda m, x: x < 2,
    "div": lambda m, x: x / 2,
    "add_float": lambda m, x: x + 1.5,
    "floor_divide": lambda m, x: x // 2,
    "remainder": lambda m, x: x % 2,
    "pow": lambda m, x: x**2,
    "clamp": lambda m, x: x.clamp(0, 2),
    "bitwise_and": lambda m, x: x & x,
    "shift": lambda m, x: x << 1,
    "flip": lambda m, x: x.flip(0),
    "roll": lambda m, x: x.roll(1),
    "sort": lambda m, x: x.sort()[0],
    "unique": lambda m, x: x.unique(),
    "cat": lambda m, x: m.cat([x, x]),
    "where": lambda m, x: m.where(m.tensor([True, False, True]), x, x),
    "index": lambda m, x: x[[0, 2]],
    "tril": lambda m, x: x[None].tril(),
    "masked_fill": lambda m, x: x.masked_fill(m.tensor([True, False, True]), 0),
    "float": lambda m, x: x.float(),
    "clone": lambda m, x: x.clone(),
    "fill_": lambda m, x: x.clone().fill_(3),
    "mm": lambda m, x: x[None] @ x[:, None],
    "any": lambda m, x: x.any(),
}


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("op", sorted(UINT_OPS))
def test_big_unsigned_int_ops_run_or_refuse_as_torch(name: str, op: str) -> None:
    res = []
    for m in (torch, cr):
        x = m.tensor([1, 2, 3], dtype=getattr(m, name))
        try:
            r = UINT_OPS[op](m, x)
        except NotImplementedError as e:
            res.append(("refused", str(e)))
        else:
            v = r.float().numpy() if r.dtype.is_floating_point else r.numpy()
            res.append((str(r.dtype).split(".")[1], v.tolist()))
    assert res[0] == res[1]


@pytest.mark.parametrize("name", ["bfloat16", "uint16", "uint32", "uint64", *FLOAT8])
def test_legacy_type_names(name: str) -> None:
    c = cr.ones(2).to(getattr(cr, name))
    assert c.type() == torch.ones(2).to(getattr(torch, name)).type()
    assert cr.ones(2).type(c.type()).dtype == c.dtype


@pytest.mark.parametrize("name", [*FLOAT8, "bfloat16", "float16", "float32", "float64"])
def test_finfo_matches_torch(name: str) -> None:
    c, t = cr.finfo(getattr(cr, name)), torch.finfo(getattr(torch, name))
    for k in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(c, k) == getattr(t, k), k
    assert repr(c) == repr(t)


@pytest.mark.parametrize(
    "name", ["float32", "bfloat16", *FLOAT8, "uint16", "uint64", "int8", "uint8", "bool"]
)
def test_is_signed(name: str) -> None:
    c, t = cr.ones(2).to(getattr(cr, name)), torch.ones(2).to(getattr(torch, name))
    assert c.is_signed() is t.is_signed() is cr.is_signed(c)
    assert c.dtype.is_signed is t.dtype.is_signed
