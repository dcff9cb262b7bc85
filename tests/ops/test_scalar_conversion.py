"""Numbers and operand dtypes that PyTorch 2.13 converts with a check: in-place ops whose
operands would make the result of a higher kind than ``self`` (a complex operand on a real
``self``), addcmul/addcdiv/addbmm/addr dtype rules, scalars out of a dtype's range
(``fill_``, ``full``, ``masked_fill``, ``x[i] = v``, ``clamp``, ``alpha``, ``value``) and
nan_to_num's argument errors. Each case runs in both libraries (``L`` is ``torch`` or
``chainrule``); chainrule raises PyTorch's exception type and message, or gives its values
and dtype. (A little over 400 lines: one table per topic, each small, sharing ``_check``;
split by topic if it grows.)"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.ops._torch_probe import Case, check

_check = check


def _f(L: Any, dt: str = "float32") -> Any:
    return L.tensor([1.0, 2.0], dtype=getattr(L, dt))


def _c(L: Any) -> Any:
    return L.tensor([1 + 2j, 3 + 1j], dtype=L.complex64)


# 1. In-place ops with complex (or higher-kind) tensor operands on a real self ---------------

INPLACE: list[Any] = [
    pytest.param(lambda L: _f(L).addcmul_(_c(L), _c(L)), id="addcmul_cc"),
    pytest.param(lambda L: _f(L).addcmul_(_f(L), _c(L)), id="addcmul_fc"),
    pytest.param(lambda L: _f(L).addcmul_(L.tensor(1 + 1j), _f(L)), id="addcmul_0d_complex"),
    pytest.param(lambda L: _f(L, "int64").addcmul_(_f(L), _f(L)), id="addcmul_int_self"),
    pytest.param(lambda L: _f(L).addcmul_(_f(L, "float64"), _f(L, "float64")), id="addcmul_f64"),
    pytest.param(lambda L: _f(L, "float16").addcmul_(_f(L), _f(L), value=0.5), id="addcmul_f16"),
    pytest.param(lambda L: _f(L).addcdiv_(_c(L), _c(L)), id="addcdiv_cc"),
    pytest.param(lambda L: _f(L).addcdiv_(_f(L), _c(L)), id="addcdiv_fc"),
    pytest.param(lambda L: _f(L, "int64").addcdiv_(_f(L), _f(L)), id="addcdiv_int_self"),
    pytest.param(lambda L: L.addcdiv(_c(L), _c(L), _c(L)), id="addcdiv_complex"),
    pytest.param(lambda L: L.addcdiv(_c(L), _f(L, "int64"), _c(L)), id="addcdiv_int_complex"),
    pytest.param(lambda L: L.addcdiv(_f(L), _f(L, "int64"), _f(L, "bool")), id="addcdiv_int_bool"),
    pytest.param(lambda L: L.addcdiv(_f(L), _f(L, "int64"), _f(L)), id="addcdiv_int_float"),
    pytest.param(lambda L: _f(L).lerp_(_c(L), 0.5), id="lerp_end"),
    pytest.param(lambda L: _f(L).lerp_(_f(L), _c(L)), id="lerp_weight"),
    *[
        pytest.param(lambda L, dt=dt: _f(L, dt).lerp_(_f(L), 0.5), id=f"lerp_{dt}_self")
        for dt in ("int64", "int32", "int16", "int8", "uint8", "bool", "float16", "float64")
    ],
    pytest.param(lambda L: _f(L).add_(_c(L), alpha=2), id="add_alpha"),
    pytest.param(lambda L: _f(L).sub_(_c(L), alpha=2), id="sub_alpha"),
    pytest.param(lambda L: _f(L).mul_(_c(L)), id="mul_"),
    pytest.param(
        lambda L: L.ones(2, 2).addmm_(L.ones(2, 2, dtype=L.complex64), L.ones(2, 2)), id="addmm_"
    ),
    pytest.param(
        lambda L: L.ones(1, 2, 2).baddbmm_(*[L.ones(1, 2, 2, dtype=L.complex64)] * 2), id="baddbmm_"
    ),
    pytest.param(
        lambda L: L.ones(2, 2).addbmm_(*[L.ones(1, 2, 2, dtype=L.complex64)] * 2), id="addbmm_"
    ),
    pytest.param(
        lambda L: L.addbmm(L.ones(2, 2), L.ones(1, 2, 2), L.ones(1, 2, 2).double()),
        id="addbmm_f_f_d",
    ),
    pytest.param(
        lambda L: L.addbmm(L.ones(2, 2), L.ones(1, 2, 2).double(), L.ones(1, 2, 2)),
        id="addbmm_f_d_f",
    ),
    pytest.param(
        lambda L: L.addbmm(L.ones(2, 2).double(), L.ones(1, 2, 2), L.ones(1, 2, 2)),
        id="addbmm_d_f_f",
    ),
    pytest.param(
        lambda L: L.addbmm(L.ones(2, 2).bool(), *[L.ones(1, 2, 2).bool()] * 2), id="addbmm_bool"
    ),
    pytest.param(
        lambda L: L.addbmm(L.ones(2, 2).long(), *[L.ones(1, 2, 2).long()] * 2), id="addbmm_int"
    ),
    pytest.param(lambda L: L.addbmm(L.ones(2), *[L.ones(1, 2, 2)] * 2), id="addbmm_broadcast"),
    pytest.param(lambda L: L.ones(2).addmv_(L.ones(2, 2, dtype=L.complex64), _c(L)), id="addmv_"),
    pytest.param(lambda L: L.ones(2, 2).addr_(_c(L), _c(L)), id="addr_"),
    pytest.param(lambda L: _f(L).clamp_(min=_c(L)), id="clamp_min_T"),
    pytest.param(lambda L: _f(L).clamp_(max=_c(L)), id="clamp_max_T"),
    pytest.param(lambda L: _f(L).clamp_min_(_c(L)), id="clamp_min_"),
]


@pytest.mark.parametrize("fn", INPLACE)
def test_inplace_higher_kind_operand(fn: Case) -> None:
    _check(fn)


@pytest.mark.parametrize("op", ["addcmul_", "addcdiv_"])
def test_addc_inplace_grads(op: str) -> None:
    """addcmul_/addcdiv_ on a non-leaf: the values and every input's gradient as torch's."""
    res = []
    for L in (torch, cr):
        x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
        a = L.tensor([0.5, 4.0, -1.0], requires_grad=True)
        b = L.tensor([2.0, -3.0, 0.25], requires_grad=True)
        y = x * 1.5
        getattr(y, op)(a, b, value=0.75)
        (y * y).sum().backward()
        res.append([y.detach().numpy()] + [t.grad.numpy() for t in (x, a, b)])
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


# 2. addr's beta and alpha for a bool result ------------------------------------------------


def _addr_bool(L: Any, beta: Any, alpha: Any, inplace: bool = False) -> Any:
    m = L.tensor([[True, False], [False, True]])
    v = L.tensor([True, False])
    if inplace:
        return m.addr_(v, v, beta=beta, alpha=alpha)
    return L.addr(m, v, v, beta=beta, alpha=alpha)


ADDR: list[Any] = [
    pytest.param(lambda L, b=b, a=a: _addr_bool(L, b, a), id=f"addr_bool-beta{b!r}-alpha{a!r}")
    for b in (1, 2, 0, True, False, 1.0, 0.5, 1j)
    for a in (1, 2, 0, True, False, 1.0)
] + [
    pytest.param(lambda L: _addr_bool(L, 2, 3, inplace=True), id="addr__bool-2-3"),
    pytest.param(lambda L: _addr_bool(L, 0, 1, inplace=True), id="addr__bool-0-1"),
    pytest.param(lambda L: _addr_bool(L, 0.5, 1, inplace=True), id="addr__bool-0.5"),
    pytest.param(
        lambda L: L.addr(L.ones(2, 2).long(), *[L.tensor([1, 2])] * 2, beta=True),
        id="addr_int_True",
    ),
    pytest.param(
        lambda L: L.addr(L.ones(2, 2).long(), *[L.tensor([1, 2])] * 2, beta=0.5), id="addr_int_0.5"
    ),
    pytest.param(
        lambda L: L.addr(L.ones(2, 2).bool(), *[L.tensor([1, 2])] * 2, beta=2),
        id="addr_bool_int_vec",
    ),
]


ADDR += [
    pytest.param(
        lambda L, d=d, k=k, v=v: L.addr(
            L.ones(2, 2, dtype=getattr(L, d)), *[L.ones(2, dtype=getattr(L, d))] * 2, **{k: v}
        ),
        id=f"addr_range-{d}-{k}-{v!r}",
    )
    for d in ("int8", "uint8", "bool", "float32", "float16")
    for k in ("beta", "alpha")
    for v in (300, -1, -129, 2**70, 1e300, 70000.0)
]


@pytest.mark.parametrize("fn", ADDR)
def test_addr_scalars(fn: Case) -> None:
    _check(fn)


# 3. nan_to_num's arguments, positional and by keyword ---------------------------------------


def _nx(L: Any) -> Any:
    return L.tensor([float("nan"), float("inf"), -float("inf"), 1.0])


def _ntn_calls() -> dict[str, Callable[[Any, Any], Any]]:
    return {
        "fn_pos_nan": lambda L, v: L.nan_to_num(_nx(L), v),
        "fn_pos_posinf": lambda L, v: L.nan_to_num(_nx(L), 0.0, v),
        "fn_pos_neginf": lambda L, v: L.nan_to_num(_nx(L), 0.0, 1.0, v),
        "fn_kw_nan": lambda L, v: L.nan_to_num(_nx(L), nan=v),
        "fn_kw_posinf": lambda L, v: L.nan_to_num(_nx(L), posinf=v),
        "fn_kw_neginf": lambda L, v: L.nan_to_num(_nx(L), 1.0, neginf=v),
        "method_pos_nan": lambda L, v: _nx(L).nan_to_num(v),
        "method_pos_neginf": lambda L, v: _nx(L).nan_to_num(0.0, 1.0, v),
        "method_kw_posinf": lambda L, v: _nx(L).nan_to_num(posinf=v),
        "inplace_pos_posinf": lambda L, v: _nx(L).nan_to_num_(0.0, v),
        "inplace_kw_nan": lambda L, v: _nx(L).nan_to_num_(nan=v),
        "f16_pos_nan": lambda L, v: L.nan_to_num(_nx(L).half(), v),
        "int_kw_nan": lambda L, v: L.nan_to_num(L.tensor([1, 2]), nan=v),
    }


_NTN_VALUES: dict[str, Callable[[Any], Any]] = {
    "1j": lambda L: 1j,
    "str": lambda L: "a",
    "list": lambda L: [1.0],
    "vector": lambda L: L.tensor([1.0, 2.0]),
    "0d": lambda L: L.tensor(2.5),
    "0d_int": lambda L: L.tensor(3),
    "0d_complex": lambda L: L.tensor(1j),
    "np_float32": lambda L: np.float32(2.5),
    "np_int64": lambda L: np.int64(3),
    "None": lambda L: None,
    "True": lambda L: True,
    "int": lambda L: 2,
    "1e300": lambda L: 1e300,
    "nan": lambda L: float("nan"),
}

NTN: list[Any] = [
    pytest.param(lambda L, c=c, v=v: _ntn_calls()[c](L, _NTN_VALUES[v](L)), id=f"{c}-{v}")
    for c in _ntn_calls()
    for v in _NTN_VALUES
] + [
    pytest.param(lambda L: L.nan_to_num(_nx(L), 1.0, nan=2.0), id="fn_twice"),
    pytest.param(lambda L: L.nan_to_num(_nx(L), foo=2.0), id="fn_unknown_kw"),
    pytest.param(lambda L: L.nan_to_num(_nx(L), 0.0, 1.0, 2.0, 3.0), id="fn_too_many"),
    pytest.param(lambda L: _nx(L).nan_to_num(0.0, 1.0, 2.0, 3.0), id="method_too_many"),
    pytest.param(lambda L: _nx(L).nan_to_num(1.0, 2.0, neginf=-3.0), id="method_mixed"),
]


@pytest.mark.parametrize("fn", NTN)
def test_nan_to_num_arguments(fn: Case) -> None:
    _check(fn)


# 4./5. Numbers out of a dtype's range; addcmul's value on integer tensors -------------------

_RANGE_DTYPES = (
    "float32",
    "float16",
    "bfloat16",
    "float64",
    "complex64",
    "int64",
    "int32",
    "int8",
    "uint8",
    "bool",
)
_RANGE_VALUES = (
    1e300,
    -1e300,
    float("inf"),
    float("nan"),
    3.5e38,
    70000.0,
    2**70,
    -(2**70),
    2**63,
    2**63 - 1,
    2**31,
    300,
    -1,
    -129,
    2.5,
    -2.5,
    127.5,
    1e20,
)


def _range_calls() -> dict[str, Callable[[Any, Any, Any], Any]]:
    def setitem(L: Any, t: Any, v: Any) -> Any:
        t[0] = v
        return t

    m = lambda L: L.tensor([True, False])  # noqa: E731
    return {
        "fill_": lambda L, t, v: t.fill_(v),
        "full": lambda L, t, v: L.full((2,), v, dtype=t.dtype),
        "full_like": lambda L, t, v: L.full_like(t, v),
        "masked_fill": lambda L, t, v: t.masked_fill(m(L), v),
        "masked_fill_": lambda L, t, v: t.masked_fill_(m(L), v),
        "setitem": setitem,
        "clamp_min": lambda L, t, v: t.clamp(min=v),
        "clamp_max": lambda L, t, v: L.clamp(t, max=v),
        "clamp_": lambda L, t, v: t.clamp_(v),
        "clamp_min_fn": lambda L, t, v: L.clamp_min(t, v),
        "add_alpha": lambda L, t, v: t.add(L.ones_like(t), alpha=v),
        "add__alpha": lambda L, t, v: t.add_(L.ones_like(t), alpha=v),
        "addcmul": lambda L, t, v: L.addcmul(t, t, t, value=v),
        "addcmul_": lambda L, t, v: t.addcmul_(t, t, value=v),
    }


RANGE: list[Any] = [
    pytest.param(
        lambda L, c=c, d=d, v=v: _range_calls()[c](L, L.ones(2, dtype=getattr(L, d)), v),
        id=f"{c}-{d}-{v!r}",
    )
    for c in _range_calls()
    for d in _RANGE_DTYPES
    for v in _RANGE_VALUES
    # (left: a bool tensor clamped by an int above int64, which PyTorch promotes to uint64 and
    # refuses, "Promotion for uint16, uint32, uint64 types is not supported")
    if not (d == "bool" and c.startswith("clamp") and v == 2**63)
]


@pytest.mark.parametrize("fn", RANGE)
def test_number_out_of_range(fn: Case) -> None:
    _check(fn)


def _i(L: Any, dt: str = "int64") -> Any:
    return L.tensor([1, 2, -3], dtype=getattr(L, dt))


ADDC_INT: list[Any] = [
    pytest.param(
        lambda L, v=v, dt=dt: L.addcmul(_i(L, dt), _i(L, dt), _i(L, dt), value=v),
        id=f"addcmul_{dt}_{v!r}",
    )
    for dt in ("int64", "int8", "uint8")
    for v in (0.5, 2.0, 2.7, -1.5, True, 3, 300, 1j, 2 + 0j)
] + [
    pytest.param(lambda L: _i(L).addcmul_(_i(L), _i(L), value=0.5), id="addcmul__int_0.5"),
    pytest.param(
        lambda L: L.addcmul(_i(L), _i(L), _i(L).float(), value=0.5), id="addcmul_int_float"
    ),
    pytest.param(
        lambda L: L.addcmul(L.tensor(1.5), _i(L), _i(L), value=0.5), id="addcmul_0d_float"
    ),
    pytest.param(lambda L: L.addcmul(_i(L).bool(), _i(L).bool(), _i(L).bool()), id="addcmul_bool"),
    pytest.param(
        lambda L: L.addcmul(_i(L).bool(), _i(L).bool(), _i(L).bool(), value=True),
        id="addcmul_bool_True",
    ),
    pytest.param(lambda L: L.addcmul(_i(L), _i(L).bool(), _i(L).bool()), id="addcmul_int_bool"),
    pytest.param(
        lambda L: L.addcdiv(_i(L), _i(L).float(), _i(L).float(), value=0.5), id="addcdiv_int_self"
    ),
    pytest.param(
        lambda L: L.addcdiv(_i(L).bool(), _i(L).float(), _i(L).float(), value=True),
        id="addcdiv_bool_self",
    ),
    pytest.param(
        lambda L: L.addcdiv(_i(L).half(), _i(L).half(), _i(L).half(), value=70000.0),
        id="addcdiv_f16",
    ),
]


@pytest.mark.parametrize("fn", ADDC_INT)
def test_addcmul_integer_value(fn: Case) -> None:
    _check(fn)


def _more_range_calls() -> dict[str, Callable[[Any, Any, Any], Any]]:
    i0 = lambda L: L.tensor([0])  # noqa: E731
    m = lambda L: L.tensor([True, False])  # noqa: E731
    sq = lambda L, t: t.new_ones((2, 2))  # noqa: E731
    return {
        "masked_fill_T": lambda L, t, v: t.masked_fill(m(L), L.tensor(float(v), dtype=L.float64)),
        "scatter_value": lambda L, t, v: t.scatter(0, i0(L), v),
        "index_add_alpha": lambda L, t, v: t.index_add(0, i0(L), t[:1], alpha=v),
        "addmm_beta": lambda L, t, v: L.addmm(sq(L, t), sq(L, t), sq(L, t), beta=v),
        "addmm_alpha": lambda L, t, v: L.addmm(sq(L, t), sq(L, t), sq(L, t), alpha=v),
        "addmv_beta": lambda L, t, v: L.addmv(t, sq(L, t), t, beta=v),
        "baddbmm_alpha": lambda L, t, v: L.baddbmm(
            sq(L, t)[None], sq(L, t)[None], sq(L, t)[None], alpha=v
        ),
        "lerp_weight": lambda L, t, v: L.lerp(t, t, v),
    }


MORE_RANGE: list[Any] = [
    pytest.param(
        lambda L, c=c, d=d, v=v: _more_range_calls()[c](L, L.ones(2, dtype=getattr(L, d)), v),
        id=f"{c}-{d}-{v!r}",
    )
    for c in _more_range_calls()
    for d in ("float32", "float64", "int8", "uint8", "int64")
    for v in (1e300, -1e300, float("inf"), 70000.0, 300, -1, 2.5, 2**70)
    if not (c == "masked_fill_T" and v == 2**70)
]


@pytest.mark.parametrize("fn", MORE_RANGE)
def test_number_out_of_range_more(fn: Case) -> None:
    _check(fn)
