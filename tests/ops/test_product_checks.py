"""PyTorch 2.13's checks of the matrix products and their scalars: Bool operands refused by
the kernel each product runs ("addmm_impl_cpu_", "addmv_impl_cpu", "bmm", "dot", "baddbmm";
an empty product runs none), addmv's shape checks before its dtype check, addbmm's
beta/alpha converted as addmm's are (range-checked, truncated for integer operands, a
non-number refused), nan_to_num_'s argument positions and ``out=`` of nan_to_num, addcmul
and addcdiv. Each case runs in both libraries (``L`` is ``torch`` or ``chainrule``) and
compares values and dtype, or the exception's type and message."""

from __future__ import annotations

from typing import Any

import pytest

from tests.ops._torch_probe import Case, check


def _b(L: Any, *shape: int) -> Any:
    return L.ones(*shape, dtype=L.bool)


def _f(L: Any, *shape: int, dt: str = "float32") -> Any:
    return L.ones(*shape, dtype=getattr(L, dt))


def _nan(L: Any) -> Any:
    return L.tensor([float("nan"), float("inf"), 1.0])


CASES: dict[str, Case] = {
    # Bool operands
    "matmul_1_1": lambda L: L.matmul(_b(L, 2), _b(L, 2)),
    "matmul_2_2": lambda L: L.matmul(_b(L, 2, 2), _b(L, 2, 2)),
    "matmul_op": lambda L: _b(L, 2, 2) @ _b(L, 2, 2),
    "matmul_1_2": lambda L: L.matmul(_b(L, 2), _b(L, 2, 2)),
    "matmul_2_1": lambda L: L.matmul(_b(L, 2, 2), _b(L, 2)),
    "matmul_3_1": lambda L: L.matmul(_b(L, 2, 2, 2), _b(L, 2)),
    "matmul_3_2": lambda L: L.matmul(_b(L, 2, 2, 2), _b(L, 2, 2)),
    "matmul_1_3": lambda L: L.matmul(_b(L, 2), _b(L, 2, 2, 2)),
    "matmul_3_3": lambda L: L.matmul(_b(L, 2, 2, 2), _b(L, 2, 2, 2)),
    "matmul_empty": lambda L: L.matmul(_b(L, 0, 2), _b(L, 2, 0)),
    "matmul_empty_k": lambda L: L.matmul(_b(L, 2, 0), _b(L, 0, 2)),
    "matmul_bad_shape": lambda L: L.matmul(_b(L, 2, 3), _b(L, 2, 2)),
    "mm": lambda L: L.mm(_b(L, 2, 2), _b(L, 2, 2)),
    "mm_method": lambda L: _b(L, 2, 2).mm(_b(L, 2, 2)),
    "mm_empty": lambda L: L.mm(_b(L, 0, 2), _b(L, 2, 3)),
    "bmm": lambda L: L.bmm(_b(L, 1, 2, 2), _b(L, 1, 2, 2)),
    "bmm_empty": lambda L: L.bmm(_b(L, 0, 2, 2), _b(L, 0, 2, 2)),
    "bmm_bad_shape": lambda L: L.bmm(_b(L, 1, 2, 3), _b(L, 1, 2, 2)),
    "mv": lambda L: L.mv(_b(L, 2, 2), _b(L, 2)),
    "mv_empty": lambda L: L.mv(_b(L, 0, 2), _b(L, 2)),
    "dot": lambda L: L.dot(_b(L, 2), _b(L, 2)),
    "dot_empty": lambda L: L.dot(_b(L, 0), _b(L, 0)),
    "addmm": lambda L: L.addmm(_b(L, 2, 2), _b(L, 2, 2), _b(L, 2, 2)),
    "addmm_beta": lambda L: L.addmm(_b(L, 2, 2), _b(L, 2, 2), _b(L, 2, 2), beta=2),
    "addmm_empty": lambda L: L.addmm(_b(L, 0, 2), _b(L, 0, 2), _b(L, 2, 2)),
    "addmv": lambda L: L.addmv(_b(L, 2), _b(L, 2, 2), _b(L, 2)),
    "baddbmm": lambda L: L.baddbmm(_b(L, 1, 2, 2), _b(L, 1, 2, 2), _b(L, 1, 2, 2), alpha=2),
    "addbmm_bool": lambda L: L.addbmm(_b(L, 2, 2), _b(L, 1, 2, 2), _b(L, 1, 2, 2)),
    "einsum_contract": lambda L: L.einsum("ij,jk", _b(L, 2, 2), _b(L, 2, 2)),
    "einsum_three": lambda L: L.einsum("ij,jk,kl", _b(L, 2, 2), _b(L, 2, 2), _b(L, 2, 2)),
    "einsum_elementwise": lambda L: L.einsum("i,i->i", _b(L, 2), _b(L, 2)),
    "einsum_outer": lambda L: L.einsum("i,j->ij", _b(L, 2), _b(L, 2)),
    "einsum_empty": lambda L: L.einsum("ij,jk", _b(L, 0, 2), _b(L, 2, 2)),
    # addmv: shapes before dtypes
    "addmv_input_2d_f64": lambda L: L.addmv(_f(L, 2, 2), _f(L, 2, 2), _f(L, 2, dt="float64")),
    "addmv_input_size_f64": lambda L: L.addmv(_f(L, 3), _f(L, 2, 2), _f(L, 2, dt="float64")),
    "addmv_dtype": lambda L: L.addmv(_f(L, 2), _f(L, 2, 2), _f(L, 2, dt="float64")),
    "addmv_vec_size": lambda L: L.addmv(_f(L, 2), _f(L, 2, 2), _f(L, 3, dt="float64")),
    "addmv_alpha_str": lambda L: L.addmv(_f(L, 2), _f(L, 2, 2), _f(L, 2), alpha="a"),
    # addbmm's beta and alpha
    "addbmm_beta_big": lambda L: L.addbmm(_f(L, 2, 2), _f(L, 2, 2, 2), _f(L, 2, 2, 2), beta=1e39),
    "addbmm_alpha_big": lambda L: L.addbmm(_f(L, 2, 2), _f(L, 2, 2, 2), _f(L, 2, 2, 2), alpha=1e39),
    "addbmm_alpha_2e70": lambda L: L.addbmm(
        _f(L, 2, 2), _f(L, 2, 2, 2), _f(L, 2, 2, 2), alpha=2**70
    ),
    "addbmm_beta_complex": lambda L: L.addbmm(
        _f(L, 2, 2), _f(L, 2, 2, 2), _f(L, 2, 2, 2), beta=1 + 1j
    ),
    "addbmm_beta_complex_real": lambda L: L.addbmm(
        _f(L, 2, 2), _f(L, 2, 2, 2), _f(L, 2, 2, 2), beta=1 + 0j
    ),
    "addbmm_long_beta_half": lambda L: L.addbmm(
        _f(L, 2, 2, dt="int64"), _f(L, 2, 2, 2, dt="int64"), _f(L, 2, 2, 2, dt="int64"), beta=0.5
    ),
    "addbmm_long_alpha": lambda L: L.addbmm(
        _f(L, 2, 2, dt="int64"), _f(L, 2, 2, 2, dt="int64"), _f(L, 2, 2, 2, dt="int64"), alpha=1.5
    ),
    "addbmm_long_beta_2e63": lambda L: L.addbmm(
        _f(L, 2, 2, dt="int64"), _f(L, 2, 2, 2, dt="int64"), _f(L, 2, 2, 2, dt="int64"), beta=2**63
    ),
    "addbmm_long_beta_bool": lambda L: L.addbmm(
        _f(L, 2, 2, dt="int64"), _f(L, 2, 2, 2, dt="int64"), _f(L, 2, 2, 2, dt="int64"), beta=True
    ),
    "addbmm_half_alpha": lambda L: L.addbmm(
        _f(L, 2, 2, dt="float16"),
        _f(L, 2, 2, 2, dt="float16"),
        _f(L, 2, 2, 2, dt="float16"),
        alpha=70000,
    ),
    "addbmm_bf16_beta": lambda L: L.addbmm(
        _f(L, 2, 2, dt="bfloat16"),
        _f(L, 2, 2, 2, dt="bfloat16"),
        _f(L, 2, 2, 2, dt="bfloat16"),
        beta=1e39,
    ),
    "addbmm_beta_str": lambda L: L.addbmm(_f(L, 2, 2), _f(L, 2, 2, 2), _f(L, 2, 2, 2), beta="a"),
    "addbmm_alpha_tensor": lambda L: L.addbmm(
        _f(L, 2, 2), _f(L, 2, 2, 2), _f(L, 2, 2, 2), alpha=L.tensor(2.0)
    ),
    "addmm_beta_big": lambda L: L.addmm(_f(L, 2, 2), _f(L, 2, 2), _f(L, 2, 2), beta=1e39),
    # nan_to_num_'s argument positions (the function counts input as position 1)
    "nan_to_num__fn_nan": lambda L: L.nan_to_num_(_f(L, 2), "a"),
    "nan_to_num__fn_posinf": lambda L: L.nan_to_num_(_f(L, 2), 1.0, "a"),
    "nan_to_num__fn_kw": lambda L: L.nan_to_num_(_f(L, 2), nan="a"),
    "nan_to_num__fn_values": lambda L: L.nan_to_num_(_nan(L), 2.0, 3.0),
    "nan_to_num__method": lambda L: _f(L, 2).nan_to_num_("a"),
    "nan_to_num_fn": lambda L: L.nan_to_num(_f(L, 2), "a"),
    "nan_to_num_method": lambda L: _f(L, 2).nan_to_num("a"),
    # out=
    "nan_to_num_out": lambda L: L.nan_to_num(_nan(L), out=L.empty(3)),
    "nan_to_num_out_args": lambda L: L.nan_to_num(_nan(L), 2.0, posinf=5.0, out=L.empty(3)),
    "nan_to_num_out_f64": lambda L: L.nan_to_num(_nan(L), out=L.empty(3, dtype=L.float64)),
    "nan_to_num_out_i64": lambda L: L.nan_to_num(_nan(L), out=L.empty(3, dtype=L.int64)),
    "nan_to_num_out_resized": lambda L: L.nan_to_num(_nan(L), out=L.empty(0)),
    "addcmul_out": lambda L: L.addcmul(_f(L, 2), _f(L, 2), _f(L, 2), value=2, out=L.empty(2)),
    "addcmul_out_f64": lambda L: L.addcmul(
        _f(L, 2), _f(L, 2), _f(L, 2), out=L.empty(2, dtype=L.float64)
    ),
    "addcmul_out_i64": lambda L: L.addcmul(
        _f(L, 2), _f(L, 2), _f(L, 2), out=L.empty(2, dtype=L.int64)
    ),
    "addcmul_out_resized": lambda L: L.addcmul(_f(L, 2), _f(L, 2), _f(L, 2), out=L.empty(0)),
    "addcdiv_out": lambda L: L.addcdiv(_f(L, 2), _f(L, 2), _f(L, 2), value=2, out=L.empty(2)),
}


def _out_is_returned(L: Any) -> Any:
    o = L.empty(3)
    r = L.nan_to_num(_nan(L), out=o)
    assert r is o
    o2 = L.empty(2)
    assert L.addcmul(_f(L, 2), _f(L, 2), _f(L, 2), out=o2) is o2
    return o


CASES["out_is_returned"] = _out_is_returned
CASES["out_requires_grad"] = lambda L: L.addcmul(
    L.ones(2, requires_grad=True), _f(L, 2), _f(L, 2), out=L.empty(2)
)


@pytest.mark.parametrize("fn", list(CASES.values()), ids=list(CASES))
def test_as_torch(fn: Case) -> None:
    check(fn)
