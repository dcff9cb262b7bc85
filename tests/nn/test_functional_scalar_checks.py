"""The number arguments of torch.nn.functional as PyTorch 2.13 checks them: converted to the
input's dtype with c10::checked_convert ("value cannot be converted to type float without
overflow"; float16/bfloat16 inputs check some of them as float, their opmath type), an int
beyond 64 bits the parser's OverflowError, dropout's p (NaN included), celu's alpha = 0,
softshrink's lambda range, pad's value (a double), leaky_relu's type. Each case runs in both
libraries (``L`` is ``torch`` or ``chainrule``) and compares values and dtype, or the
exception's type and message."""

from __future__ import annotations

from typing import Any

import pytest

from tests.ops._torch_probe import Case, check


def _x(L: Any, dt: str = "float32") -> Any:
    return L.tensor([-1.0, 0.5, 2.0], dtype=getattr(L, dt))


def _i(L: Any, dt: str = "int64") -> Any:
    return L.tensor([-1, 0, 2], dtype=getattr(L, dt))


def _F(L: Any) -> Any:
    return L.nn.functional


BIG, HALF_BIG = 1e39, 70000.0

CASES: dict[str, Case] = {
    "leaky_relu_big": lambda L: _F(L).leaky_relu(_x(L), BIG),
    "leaky_relu_2e70": lambda L: _F(L).leaky_relu(_x(L), 2**70),
    "leaky_relu_half": lambda L: _F(L).leaky_relu(_x(L, "float16"), HALF_BIG),
    "leaky_relu_str": lambda L: _F(L).leaky_relu(_x(L), "a"),
    "leaky_relu_ok": lambda L: _F(L).leaky_relu(_x(L), 0.2),
    "leaky_relu__big": lambda L: _F(L).leaky_relu_(_x(L), BIG),
    "leaky_relu_module": lambda L: L.nn.LeakyReLU(BIG)(_x(L)),
    "hardtanh_min_big": lambda L: _F(L).hardtanh(_x(L), -BIG, 1.0),
    "hardtanh_max_big": lambda L: _F(L).hardtanh(_x(L), -1.0, BIG),
    "hardtanh_half": lambda L: _F(L).hardtanh(_x(L, "float16"), -HALF_BIG, 1.0),
    "hardtanh__half": lambda L: _F(L).hardtanh_(_x(L, "float16"), -HALF_BIG, 1.0),
    "hardtanh_int": lambda L: _F(L).hardtanh(_i(L), -1, 1),
    "hardtanh_ok": lambda L: _F(L).hardtanh(_x(L), -0.5, 1.0),
    "elu_big": lambda L: _F(L).elu(_x(L), BIG),
    "elu_inf": lambda L: _F(L).elu(_x(L), float("inf")),
    "elu__big": lambda L: _F(L).elu_(_x(L), BIG),
    "celu_zero": lambda L: _F(L).celu(_x(L), 0.0),
    "celu_neg_zero": lambda L: _F(L).celu(_x(L), -0.0),
    "celu_fn_zero": lambda L: L.celu(_x(L), 0.0),
    "celu_big": lambda L: _F(L).celu(_x(L), BIG),
    "celu__big": lambda L: _F(L).celu_(_x(L), BIG),
    "threshold_big": lambda L: _F(L).threshold(_x(L), BIG, 0.0),
    "threshold_value_big": lambda L: _F(L).threshold(_x(L), 0.0, BIG),
    "threshold_half": lambda L: _F(L).threshold(_x(L, "float16"), HALF_BIG, 0.0),
    "threshold_value_half": lambda L: _F(L).threshold(_x(L, "float16"), 0.0, HALF_BIG),
    "threshold_int_2e70": lambda L: _F(L).threshold(_i(L), 0, 2**70),
    "threshold__big": lambda L: _F(L).threshold_(_x(L), 0.0, BIG),
    "threshold_nan_value": lambda L: _F(L).threshold(_x(L), 0.0, float("nan")),
    "softplus_beta_big": lambda L: _F(L).softplus(_x(L), BIG),
    "softplus_threshold_big": lambda L: _F(L).softplus(_x(L), 1.0, BIG),
    "softplus_half": lambda L: _F(L).softplus(_x(L, "float16"), HALF_BIG),
    "softplus_ok": lambda L: _F(L).softplus(_x(L), 2.0, 10.0),
    "rrelu_lower_big": lambda L: _F(L).rrelu(_x(L), -BIG, 0.3),
    "rrelu_upper_big": lambda L: _F(L).rrelu(_x(L), 0.1, BIG),
    "rrelu_order": lambda L: _F(L).rrelu(_x(L), 0.3, 0.1),
    "rrelu_eval": lambda L: _F(L).rrelu(_x(L), 0.1, 0.3),
    "hardshrink_big": lambda L: _F(L).hardshrink(_x(L), BIG),
    "hardshrink_half": lambda L: _F(L).hardshrink(_x(L, "float16"), HALF_BIG),
    "softshrink_big": lambda L: _F(L).softshrink(_x(L), BIG),
    "softshrink_half": lambda L: _F(L).softshrink(_x(L, "float16"), HALF_BIG),
    "softshrink_neg": lambda L: _F(L).softshrink(_x(L), -1.0),
    "softshrink_f64_big": lambda L: _F(L).softshrink(_x(L, "float64"), BIG),
    "dropout_high": lambda L: _F(L).dropout(_x(L), 1.5),
    "dropout_neg": lambda L: _F(L).dropout(_x(L), -0.1),
    "dropout_nan": lambda L: _F(L).dropout(_x(L), float("nan")),
    "dropout_nan_eval": lambda L: _F(L).dropout(_x(L), float("nan"), training=False),
    "dropout1d_high": lambda L: _F(L).dropout1d(_x(L).view(1, 3), 1.5),
    "dropout2d_high": lambda L: _F(L).dropout2d(_x(L).view(1, 1, 3), 1.5),
    "alpha_dropout_high": lambda L: _F(L).alpha_dropout(_x(L), 1.5),
    "alpha_dropout_nan": lambda L: _F(L).alpha_dropout(_x(L), float("nan")),
    "torch_dropout_high": lambda L: L.dropout(_x(L), 1.5, True),
    "dropout_module": lambda L: L.nn.Dropout(1.5),
    "pad_big": lambda L: _F(L).pad(_x(L), (1, 1), value=BIG),
    "pad_half": lambda L: _F(L).pad(_x(L, "float16"), (1, 1), value=HALF_BIG),
    "pad_int_2e70": lambda L: _F(L).pad(_i(L), (1, 1), value=2**70),
    "pad_int8_300": lambda L: _F(L).pad(_i(L, "int8"), (1, 1), value=300),
    "pad_int64_300": lambda L: _F(L).pad(_i(L), (1, 1), value=300),
    "pad_int_float": lambda L: _F(L).pad(_i(L), (1, 1), value=1.5),
    "pad_complex": lambda L: _F(L).pad(_x(L), (1, 1), value=1 + 1j),
    "pad_ok": lambda L: _F(L).pad(_x(L), (1, 1), value=3.0),
    "logsigmoid_int": lambda L: _F(L).logsigmoid(_i(L)),
    "logsigmoid_bool": lambda L: _F(L).logsigmoid(_i(L) > 0),
}


@pytest.mark.parametrize("fn", list(CASES.values()), ids=list(CASES))
def test_as_torch(fn: Case) -> None:
    check(fn)
