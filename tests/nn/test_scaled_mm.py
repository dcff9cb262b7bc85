"""float8 scaled products against PyTorch's CPU kernel: ``torch._scaled_mm`` (compared with
oneDNN disabled, the kernel every CPU has; chainrule/nn/_scaled_mm.py says why),
``torch._scaled_mm_v2``, ``nn.functional.scaled_mm`` and its recipe enums; values, dtypes and
errors, and the grouped forms' missing-kernel error."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

# Small integers and halves: exact in float8 e4m3 and e5m2, so every product and sum below is
# exact in float32 and both libraries round the same number.
_RNG = np.random.default_rng(0)
A = _RNG.integers(-4, 5, (4, 8)).astype(np.float32) / 2
B = _RNG.integers(-4, 5, (8, 6)).astype(np.float32) / 2
BIAS = _RNG.integers(-4, 5, (6,)).astype(np.float32)
SA_ROW = np.array([[1.0], [2.0], [0.5], [4.0]], np.float32)
SB_ROW = np.array([[0.5, 1.0, 2.0, 1.0, 0.25, 1.0]], np.float32)


def _dt(m: Any, name: str) -> Any:
    return getattr(m, name)


def _t(m: Any, a: np.ndarray, dtype: str = "float32") -> Any:
    return m.tensor(a).to(_dt(m, dtype))


Call = Callable[[Any], Any]

# m -> result: the same call for chainrule and for torch.
CALLS: dict[str, Call] = {
    "tensorwise": lambda m: m._scaled_mm(
        _t(m, A, "float8_e4m3fn"), _t(m, B, "float8_e4m3fn"), m.tensor(0.5), m.tensor(2.0)
    ),
    "tensorwise_bf16_bias": lambda m: m._scaled_mm(
        _t(m, A, "float8_e4m3fn"),
        _t(m, B, "float8_e4m3fn"),
        m.tensor(1.5),
        m.tensor(1.0),
        bias=_t(m, BIAS, "bfloat16"),
        out_dtype=m.bfloat16,
    ),
    "tensorwise_f32_e5m2": lambda m: m._scaled_mm(
        _t(m, A, "float8_e5m2"),
        _t(m, B, "float8_e4m3fn"),
        m.tensor([1.0]),
        m.tensor([[0.25]]),
        out_dtype=m.float32,
    ),
    "tensorwise_transposed_b": lambda m: m._scaled_mm(
        _t(m, A, "float8_e4m3fn"),
        _t(m, B.T.copy(), "float8_e4m3fn").t(),
        m.tensor(1.0),
        m.tensor(1.0),
        out_dtype=m.float16,
    ),
    "rowwise": lambda m: m._scaled_mm(
        _t(m, A, "float8_e4m3fn"),
        _t(m, B, "float8_e4m3fn"),
        m.tensor(SA_ROW),
        m.tensor(SB_ROW),
        out_dtype=m.float32,
    ),
    "scale_result": lambda m: m._scaled_mm(
        _t(m, A, "float8_e4m3fn"),
        _t(m, B, "float8_e4m3fn"),
        m.tensor(1.0),
        m.tensor(1.0),
        scale_result=m.tensor(2.0),
    ),
    "scale_result_unused_for_bf16": lambda m: m._scaled_mm(
        _t(m, A, "float8_e4m3fn"),
        _t(m, B, "float8_e4m3fn"),
        m.tensor(1.0),
        m.tensor(1.0),
        scale_result=m.tensor(2.0),
        out_dtype=m.bfloat16,
    ),
    "scale_result_float8_out": lambda m: m._scaled_mm(
        _t(m, A, "float8_e4m3fn"),
        _t(m, B, "float8_e4m3fn"),
        m.tensor(1.0),
        m.tensor(1.0),
        scale_result=m.tensor(2.0),
        out_dtype=m.float8_e5m2,
    ),
    "v2_swizzle_not_read": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, "float8_e4m3fn"),
        _t(m, B, "float8_e4m3fn"),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        swizzle_b=m.nn.functional.SwizzleType.SWIZZLE_32_4_4,
        output_dtype=m.float64,
    ),
    "v2_tensorwise": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, "float8_e4m3fn"),
        _t(m, B, "float8_e4m3fn"),
        m.tensor(0.5),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(2.0),
        m.nn.functional.ScalingType.TensorWise,
    ),
    "v2_rowwise_f32_bias": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, "float8_e4m3fn"),
        _t(m, B, "float8_e4m3fn"),
        [m.tensor(SA_ROW)],
        [m.nn.functional.ScalingType.RowWise],
        m.tensor(SB_ROW),
        m.nn.functional.ScalingType.RowWise,
        bias=m.tensor(BIAS),
        output_dtype=m.float32,
    ),
    "v2_no_swizzle_default_dtype": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, "float8_e5m2"),
        _t(m, B, "float8_e5m2"),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        swizzle_a=m.nn.functional.SwizzleType.NO_SWIZZLE,
        output_dtype=None,
    ),
    "v2_empty_k": lambda m: m.nn.functional.scaled_mm(
        _t(m, A[:, :0], "float8_e4m3fn"),
        _t(m, B[:0], "float8_e4m3fn"),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
    ),
    "v2_op": lambda m: m._scaled_mm_v2(
        _t(m, A, "float8_e4m3fn"),
        _t(m, B, "float8_e4m3fn"),
        [m.tensor(1.0)],
        [0],
        [],
        [m.tensor(3.0)],
        [0],
        [],
        None,
        m.float32,
    ),
}


def _run(call: Call, m: Any) -> Any:
    if m is not torch:
        return call(m)
    was = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False  # (flags() would also set TF32 and warn)
    try:
        return call(m)
    finally:
        torch.backends.mkldnn.enabled = was


@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_and_dtype_as_torch(name: str) -> None:
    got, want = _run(CALLS[name], cr), _run(CALLS[name], torch)
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    assert not got.requires_grad


def test_rowwise_values_by_hand() -> None:
    """The row-wise result is (a s_a) @ (b s_b), computed here with NumPy."""
    out = CALLS["rowwise"](cr)
    np.testing.assert_allclose(out.numpy(), (A * SA_ROW) @ (B * SB_ROW), rtol=1e-6)


F8 = "float8_e4m3fn"
ERRORS: dict[str, Call] = {
    "3d": lambda m: m._scaled_mm(_t(m, A[None], F8), _t(m, B, F8), m.tensor(1.0), m.tensor(1.0)),
    "shapes": lambda m: m._scaled_mm(_t(m, A, F8), _t(m, B[:4], F8), m.tensor(1.0), m.tensor(1.0)),
    "float_input": lambda m: m._scaled_mm(m.tensor(A), _t(m, B, F8), m.tensor(1.0), m.tensor(1.0)),
    "double_scale": lambda m: m._scaled_mm(
        _t(m, A, F8), _t(m, B, F8), m.tensor(1.0, dtype=m.float64), m.tensor(1.0)
    ),
    "two_scales": lambda m: m._scaled_mm(_t(m, A, F8), _t(m, B, F8), m.ones(2), m.tensor(1.0)),
    "rowwise_b_wrong": lambda m: m._scaled_mm(
        _t(m, A, F8), _t(m, B, F8), m.tensor(SA_ROW), m.ones(6, 1)
    ),
    "rowwise_tensorwise": lambda m: m._scaled_mm(
        _t(m, A, F8), _t(m, B, F8), m.tensor(SA_ROW), m.tensor(1.0)
    ),
    "bias_size": lambda m: m._scaled_mm(
        _t(m, A, F8), _t(m, B, F8), m.tensor(1.0), m.tensor(1.0), bias=m.ones(5)
    ),
    "scale_result_double": lambda m: m._scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.tensor(1.0),
        m.tensor(1.0),
        scale_result=m.tensor(2.0, dtype=m.float64),
    ),
    "v2_3d": lambda m: m.nn.functional.scaled_mm(
        _t(m, A[None], F8),
        _t(m, B, F8),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
    ),
    "v2_shapes": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B[:4], F8),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
    ),
    "v2_float": lambda m: m.nn.functional.scaled_mm(
        m.tensor(A),
        m.tensor(B),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
    ),
    "v2_rowwise_scale_as_tensorwise": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.tensor(SA_ROW),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(SB_ROW),
        m.nn.functional.ScalingType.TensorWise,
    ),
    "v2_mixed_recipes": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(SB_ROW),
        m.nn.functional.ScalingType.RowWise,
    ),
    "v2_blockwise": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.tensor(1.0),
        m.nn.functional.ScalingType.BlockWise1x32,
        m.tensor(1.0),
        m.nn.functional.ScalingType.BlockWise1x32,
    ),
    "v2_double_scale": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.tensor(1.0, dtype=m.float64),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
    ),
    "v2_rowwise_scale_a_shape": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.ones(4, 2),
        m.nn.functional.ScalingType.RowWise,
        m.tensor(SB_ROW),
        m.nn.functional.ScalingType.RowWise,
    ),
    "v2_rowwise_scale_b_size": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.tensor(SA_ROW),
        m.nn.functional.ScalingType.RowWise,
        m.ones(1, 5),
        m.nn.functional.ScalingType.RowWise,
    ),
    "v2_rowwise_scalar_scale": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.tensor(1.0),
        m.nn.functional.ScalingType.RowWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.RowWise,
    ),
    "v2_two_scales": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        [m.tensor(1.0), m.tensor(1.0)],
        [m.nn.functional.ScalingType.TensorWise] * 2,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
    ),
    "v2_bias_double": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        bias=m.ones(6, dtype=m.float64),
    ),
    "v2_bias_size": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        bias=m.ones(5),
    ),
    "v2_contraction_dim_length": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B, F8),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        contraction_dim=(1,),
    ),
    "v2_contraction_dim_agrees_kernel_refuses": lambda m: m.nn.functional.scaled_mm(
        _t(m, A, F8),
        _t(m, B.T.copy(), F8),
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        m.tensor(1.0),
        m.nn.functional.ScalingType.TensorWise,
        contraction_dim=(1, 1),
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name: str) -> None:
    with pytest.raises(Exception) as want:
        _run(ERRORS[name], torch)
    with pytest.raises(type(want.value)) as got:
        _run(ERRORS[name], cr)
    assert str(got.value) == str(want.value)


def test_enums_as_torch() -> None:
    for kind in ("ScalingType", "SwizzleType"):
        ours, theirs = getattr(cr.nn.functional, kind), getattr(torch.nn.functional, kind)
        assert [(k, v.value) for k, v in ours.__members__.items()] == [
            (k, v.value) for k, v in theirs.__members__.items()
        ]
        assert ours.__name__ == theirs.__name__


def test_grouped_forms_have_no_cpu_kernel() -> None:
    """PyTorch's CPU build has no kernel for the grouped scaled products: the same error type,
    its message starting as ours (PyTorch's goes on to list its build's dispatch keys)."""
    f8 = "float8_e4m3fn"
    for m in (cr, torch):
        a, b = _t(m, np.ones((16, 32), np.float32), f8), _t(m, np.ones((2, 32, 16)), f8)
        offs = m.tensor([8, 16], dtype=m.int32)
        with pytest.raises(NotImplementedError) as e1:
            m._scaled_grouped_mm(a, b, m.ones(16), m.ones(2, 16), offs=offs, out_dtype=m.bfloat16)
        rw = m.nn.functional.ScalingType.RowWise
        with pytest.raises(NotImplementedError) as e2:
            m.nn.functional.scaled_grouped_mm(a, b, m.ones(16), rw, m.ones(2, 16), rw, offs=offs)
        if m is cr:
            ours = (str(e1.value), str(e2.value))
        else:
            assert str(e1.value).startswith(ours[0])
            assert str(e2.value).startswith(ours[1])
            assert "'aten::_scaled_grouped_mm'" in ours[0]
            assert "'aten::_scaled_grouped_mm_v2'" in ours[1]
