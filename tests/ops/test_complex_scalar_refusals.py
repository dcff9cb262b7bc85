"""Complex Python scalars and 0-d complex tensors given to ops on real tensors, and complex
input to ops without complex kernels: chainrule fails as PyTorch 2.13 does (the same exception
type and message) or, where PyTorch computes, gives its values and dtype. Each case runs in
both libraries (``L`` is ``torch`` or ``chainrule``)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import chainrule as cr
from tests.ops._torch_probe import Case, check

_DTYPES = ("float32", "float64", "int64")


def _x(L: Any, dt: str = "float32") -> Any:
    return L.tensor([1.0, 2.0, 3.0], dtype=getattr(L, dt))


def _m(L: Any) -> Any:
    return L.tensor([True, False, True])


def _iadd(L: Any, dt: str, v: Any) -> Any:
    x = _x(L, dt)
    x += v
    return x


def _setitem(L: Any, dt: Any, key: Any, v: Any) -> Any:
    x = dt(L) if callable(dt) else _x(L, dt)
    x[key(L) if callable(key) else key] = v(L) if callable(v) else v
    return x


def _per_dtype(name: str, fn: Callable[[Any, str], Any]) -> list[Any]:
    return [pytest.param(lambda L, dt=dt: fn(L, dt), id=f"{name}-{dt}") for dt in _DTYPES]


FILL: list[Any] = [
    *_per_dtype("fill_1j", lambda L, dt: _x(L, dt).fill_(1j)),
    *_per_dtype("fill_nanj", lambda L, dt: _x(L, dt).fill_(complex(0, float("nan")))),
    *_per_dtype("fill_real_complex", lambda L, dt: _x(L, dt).fill_(2 + 0j)),
    *_per_dtype("zero_dim_fill_", lambda L, dt: L.zeros((), dtype=getattr(L, dt)).fill_(1j)),
    *_per_dtype("full_like", lambda L, dt: L.full_like(_x(L, dt), 1j)),
    *_per_dtype("full_like_dtype", lambda L, dt: L.full_like(_x(L, dt), 1j, dtype=L.float32)),
    *_per_dtype("full", lambda L, dt: L.full((2,), 1j, dtype=getattr(L, dt))),
    *_per_dtype("new_full", lambda L, dt: _x(L, dt).new_full((2,), 1j)),
    *_per_dtype("masked_fill", lambda L, dt: _x(L, dt).masked_fill(_m(L), 1j)),
    *_per_dtype("masked_fill_", lambda L, dt: _x(L, dt).masked_fill_(_m(L), 1j)),
    *_per_dtype("masked_fill_zero_imag", lambda L, dt: _x(L, dt).masked_fill(_m(L), 2 + 0j)),
    *_per_dtype("torch_masked_fill", lambda L, dt: L.masked_fill(_x(L, dt), _m(L), 1j)),
    *_per_dtype("masked_fill_0d_complex", lambda L, dt: _x(L, dt).masked_fill(_m(L), L.tensor(1j))),
    *_per_dtype(
        "masked_fill__0d_complex", lambda L, dt: _x(L, dt).masked_fill_(_m(L), L.tensor(1j))
    ),
    *_per_dtype(
        "masked_fill_0d_zero_imag", lambda L, dt: _x(L, dt).masked_fill(_m(L), L.tensor(2 + 0j))
    ),
    *[
        pytest.param(fn, id=f"{name}-{dt}")
        for dt in ("bfloat16", "float16", "int8", "uint8", "int32", "int16")
        for name, fn in (
            ("fill_1j", lambda L, dt=dt: _x(L, dt).fill_(1j)),
            ("masked_fill_zero_imag", lambda L, dt=dt: _x(L, dt).masked_fill(_m(L), 2 + 0j)),
            ("add_alpha_1j", lambda L, dt=dt: L.add(_x(L, dt), _x(L, dt), alpha=1j)),
            ("clamp_min_1j", lambda L, dt=dt: L.clamp(_x(L, dt), min=1j)),
        )
    ],
    pytest.param(lambda L: L.full((2,), 1j), id="full-default-complex"),
    pytest.param(lambda L: L.full_like(_x(L), 1j, dtype=L.complex64), id="full_like-complex"),
    pytest.param(lambda L: L.tensor([True]).fill_(1j), id="fill_-bool"),
    pytest.param(lambda L: L.tensor([True, False]).masked_fill(_m(L)[:2], 0j), id="masked-bool"),
    pytest.param(lambda L: _x(L, "complex64").masked_fill(_m(L), 1j), id="masked_fill-complex"),
    pytest.param(
        lambda L: _x(L).requires_grad_().masked_fill(_m(L), 1j), id="masked_fill-requires_grad"
    ),
    pytest.param(
        lambda L: L.zeros(2, 2).masked_fill(L.tensor([[True, False], [False, True]]), 1j),
        id="masked_fill-2d",
    ),
]


def _f(L: Any) -> Any:
    return _x(L)


def _clamp_cases() -> list[Any]:
    T = lambda L, v: L.tensor(v)  # noqa: E731
    calls: dict[str, Case] = {
        "clamp_min_1j": lambda L: L.clamp(_f(L), min=1j),
        "clamp_max_1j": lambda L: L.clamp(_f(L), max=1j),
        "clamp_min_nanj": lambda L: L.clamp(_f(L), min=complex(0, float("nan"))),
        "clamp_zero_imag": lambda L: L.clamp(_f(L), min=2 + 0j),
        "clamp_1_1j": lambda L: L.clamp(_f(L), 1, 1j),
        "clamp_0j_1j": lambda L: L.clamp(_f(L), 0j, 1j),
        "clamp_requires_grad": lambda L: L.clamp(_f(L).requires_grad_(), 1j),
        "clip_1j": lambda L: L.clip(_f(L), min=1j),
        "clamp__1j": lambda L: _f(L).clamp_(min=1j),
        "clamp__max_1j": lambda L: _f(L).clamp_(max=1j),
        "clamp__zero_imag": lambda L: _f(L).clamp_(min=2 + 0j),
        "clip__1j": lambda L: _f(L).clip_(1j),
        "clamp_min_fn_1j": lambda L: L.clamp_min(_f(L), 1j),
        "clamp_max_fn_1j": lambda L: L.clamp_max(_f(L), 1j),
        "clamp_min_fn_0j": lambda L: L.clamp_min(_f(L), 0j),
        "clamp_min__1j": lambda L: _f(L).clamp_min_(1j),
        "clamp_T_complex_min": lambda L: L.clamp(_f(L), min=T(L, 1j)),
        "clamp_T_complex_max": lambda L: L.clamp(_f(L), max=T(L, 1j)),
        "clamp_T_complex_vec": lambda L: L.clamp(_f(L), min=T(L, [1j, 1j, 1j])),
        "clamp_T_T_complex": lambda L: L.clamp(_f(L), T(L, 1j), T(L, 2j)),
        "clamp_T_real_and_1j": lambda L: L.clamp(_f(L), T(L, 1.0), 1j),
        "clamp_1j_and_T_real": lambda L: L.clamp(_f(L), 1j, T(L, 1.0)),
        "clamp_T_complex_and_1": lambda L: L.clamp(_f(L), T(L, 1j), 1.0),
        "clamp_min_fn_T_complex": lambda L: L.clamp_min(_f(L), T(L, 1j)),
        "clamp_max_fn_T_complex": lambda L: L.clamp_max(_f(L), T(L, 1j)),
        "clamp__T_complex": lambda L: _f(L).clamp_(min=T(L, 1j)),
        "clamp__T_T_complex": lambda L: _f(L).clamp_(T(L, 1j), T(L, 1j)),
        "clamp_min__T_complex": lambda L: _f(L).clamp_min_(T(L, 1j)),
        "clamp_max__T_complex": lambda L: _f(L).clamp_max_(T(L, 1j)),
        "f64_clamp_T_complex": lambda L: L.clamp(_x(L, "float64"), min=T(L, 1j)),
        "f64_clamp_T_T_complex": lambda L: L.clamp(_x(L, "float64"), T(L, 0.0), T(L, 1j)),
        "f64_clamp_1j": lambda L: L.clamp(_x(L, "float64"), max=1j),
        "f16_clamp_1j": lambda L: L.clamp(_x(L, "float16"), 1j),
        "i64_clamp_1j": lambda L: L.clamp(_x(L, "int64"), min=1j),
        "i64_clamp_0j": lambda L: L.clamp(_x(L, "int64"), min=0j),
        "i64_clamp__1j": lambda L: _x(L, "int64").clamp_(min=1j),
        "i64_clamp__max_1j": lambda L: _x(L, "int64").clamp_(max=1j),
        "i64_clamp_min__1j": lambda L: _x(L, "int64").clamp_min_(1j),
        "i64_clamp__T_complex": lambda L: _x(L, "int64").clamp_(min=T(L, 1j)),
        "i64_clamp_T_complex": lambda L: L.clamp(_x(L, "int64"), min=T(L, 1j)),
        "bool_clamp_1j": lambda L: L.clamp(L.tensor([True]), 1j),
        "complex_clamp_T": lambda L: L.clamp(_x(L, "complex64"), min=T(L, 1.0)),
        "complex_clamp_T_T": lambda L: L.clamp(_x(L, "complex64"), T(L, 0.0), T(L, 1.0)),
    }
    return [pytest.param(fn, id=k) for k, fn in calls.items()]


def _fma_lerp_cases() -> list[Any]:
    T = lambda L, v: L.tensor(v)  # noqa: E731
    cases: list[Any] = []
    for dt in _DTYPES:
        x = lambda L, dt=dt: _x(L, dt)  # noqa: E731
        calls: dict[str, Case] = {
            "addcmul_1j": lambda L, x=x: L.addcmul(x(L), x(L), x(L), value=1j),
            "addcdiv_1j": lambda L, x=x: L.addcdiv(x(L), x(L), x(L), value=1j),
            "addcmul__1j": lambda L, x=x: x(L).addcmul_(x(L), x(L), value=1j),
            "addcdiv__1j": lambda L, x=x: x(L).addcdiv_(x(L), x(L), value=1j),
            "addcmul_0j": lambda L, x=x: L.addcmul(x(L), x(L), x(L), value=0j),
            "addcmul_2.5+0j": lambda L, x=x: L.addcmul(x(L), x(L), x(L), value=2.5 + 0j),
            "addcmul__0j": lambda L, x=x: x(L).addcmul_(x(L), x(L), value=0j),
            "lerp_1j": lambda L, x=x: L.lerp(x(L), x(L) * 2, 1j),
            "lerp_0.5+0j": lambda L, x=x: L.lerp(x(L), x(L) * 2, 0.5 + 0j),
            "lerp_nanj": lambda L, x=x: L.lerp(x(L), x(L) * 2, complex(0, float("nan"))),
            "lerp_0d_complex": lambda L, x=x: L.lerp(x(L), x(L) * 2, T(L, 0.5j)),
            "lerp_0d_complex128": lambda L, x=x: L.lerp(
                x(L), x(L) * 2, L.tensor(0.5j, dtype=L.complex128)
            ),
            "lerp__1j": lambda L, x=x: x(L).lerp_(x(L) * 2, 1j),
            "lerp__0.5+0j": lambda L, x=x: x(L).lerp_(x(L) * 2, 0.5 + 0j),
            "lerp__0d_complex": lambda L, x=x: x(L).lerp_(x(L) * 2, T(L, 0.5j)),
            "lerp_0d_float": lambda L, x=x: L.lerp(x(L), x(L) * 2, T(L, 0.5)),
            "lerp_0d_int": lambda L, x=x: L.lerp(x(L), x(L) * 2, T(L, 1)),
            "lerp_0.5": lambda L, x=x: L.lerp(x(L), x(L) * 2, 0.5),
        }
        cases += [pytest.param(fn, id=f"{k}-{dt}") for k, fn in calls.items()]
    calls = {
        "lerp_vec_complex_weight": lambda L: L.lerp(_f(L), _f(L), T(L, [0.5j, 0.5j, 0.5j])),
        "lerp_complex_end": lambda L: L.lerp(_f(L), _x(L, "complex64"), 0.5),
        "lerp_complex_input_real_end": lambda L: L.lerp(_x(L, "complex64"), _f(L), 1j),
        "lerp_complex_1j": lambda L: L.lerp(_x(L, "complex64"), _x(L, "complex64") * 2, 1j),
        "lerp_0d_complex_requires_grad": lambda L: L.lerp(
            _f(L).requires_grad_(), _f(L) * 2, T(L, 0.5j)
        ),
        "addcmul_complex_tensor_1j": lambda L: L.addcmul(
            _f(L), _f(L), _x(L, "complex64"), value=1j
        ),
        "addcmul_complex_input_1j": lambda L: L.addcmul(_x(L, "complex64"), _f(L), _f(L), value=1j),
        "addcdiv_0j": lambda L: L.addcdiv(_f(L), _f(L), _f(L), value=0j),
    }
    return cases + [pytest.param(fn, id=k) for k, fn in calls.items()]


def _norm_cases() -> list[Any]:
    def z(L: Any, shape: tuple[int, ...], dt: str = "complex64") -> Any:
        n = int(np.prod(shape))
        v = (np.arange(n) * 0.1 + 1j * np.arange(n) * 0.05).reshape(shape).astype(dt)
        return L.tensor(v)

    F = lambda L: L.nn.functional  # noqa: E731
    cases: list[Any] = []
    for dt in ("complex64", "complex128"):
        o = lambda L, dt=dt: L.ones(3, dtype=getattr(L, dt))  # noqa: E731
        calls: dict[str, Case] = {
            "layer_norm": lambda L, dt=dt: F(L).layer_norm(z(L, (2, 3, 4), dt), (4,)),
            "layer_norm_affine": lambda L, dt=dt, o=o: F(L).layer_norm(
                z(L, (2, 4, 3), dt), (3,), o(L), o(L)
            ),
            "group_norm": lambda L, dt=dt: F(L).group_norm(z(L, (2, 3, 4), dt), 1),
            "group_norm_affine": lambda L, dt=dt, o=o: F(L).group_norm(
                z(L, (2, 3, 4, 2), dt), 3, o(L), o(L)
            ),
            "batch_norm_eval": lambda L, dt=dt, o=o: F(L).batch_norm(
                z(L, (2, 3, 4), dt), o(L) * 0, o(L)
            ),
            "batch_norm_train": lambda L, dt=dt: F(L).batch_norm(
                z(L, (2, 3, 4), dt), None, None, training=True
            ),
            "batch_norm_2d": lambda L, dt=dt, o=o: F(L).batch_norm(z(L, (2, 3), dt), o(L), o(L)),
            "instance_norm": lambda L, dt=dt: F(L).instance_norm(z(L, (2, 3, 4, 4), dt)),
            "instance_norm_stats": lambda L, dt=dt, o=o: F(L).instance_norm(
                z(L, (2, 3, 4), dt), o(L) * 0, o(L), use_input_stats=False
            ),
            "lrn_3d": lambda L, dt=dt: F(L).local_response_norm(z(L, (2, 3, 4), dt), 2),
            "lrn_4d": lambda L, dt=dt: F(L).local_response_norm(z(L, (2, 3, 4, 4), dt), 2),
            "lrn_5d": lambda L, dt=dt: F(L).local_response_norm(z(L, (2, 3, 2, 2, 2), dt), 3),
            "rms_norm": lambda L, dt=dt: F(L).rms_norm(z(L, (2, 3, 4), dt), (4,)),
        }
        cases += [pytest.param(fn, id=f"{k}-{dt}") for k, fn in calls.items()]
    # PyTorch's checks that come before the kernel's, and empty input (computed)
    calls = {
        "layer_norm_bad_shape": lambda L: F(L).layer_norm(z(L, (2, 3)), (5,)),
        "layer_norm_real_weight": lambda L: F(L).layer_norm(z(L, (2, 3)), (3,), L.ones(3)),
        "group_norm_bad_groups": lambda L: F(L).group_norm(z(L, (2, 3, 4)), 2),
        "group_norm_empty": lambda L: F(L).group_norm(z(L, (2, 3, 0)), 1),
        "batch_norm_count_1": lambda L: F(L).batch_norm(z(L, (1, 3)), None, None, training=True),
        "batch_norm_real_stats": lambda L: F(L).batch_norm(z(L, (2, 3)), L.zeros(3), L.ones(3)),
        "batch_norm_empty": lambda L: F(L).batch_norm(z(L, (2, 3, 0)), None, None, training=True),
        "instance_norm_count_1": lambda L: F(L).instance_norm(z(L, (1, 3, 1))),
        "instance_norm_empty": lambda L: F(L).instance_norm(z(L, (2, 3, 0))),
        "lrn_empty": lambda L: F(L).local_response_norm(z(L, (2, 3, 0)), 2),
        "lrn_2d": lambda L: F(L).local_response_norm(z(L, (2, 3)), 2),
        "layer_norm_module": lambda L: L.nn.LayerNorm(3, dtype=L.complex64)(z(L, (2, 3))),
    }
    return cases + [pytest.param(fn, id=k) for k, fn in calls.items()]


def _index_cases() -> list[Any]:
    T = lambda L, v, dt=None: L.tensor(v) if dt is None else L.tensor(v, dtype=getattr(L, dt))  # noqa: E731
    i0 = lambda L: L.tensor([0])  # noqa: E731
    mask = lambda L: L.tensor([True, False, True])  # noqa: E731
    cases: list[Any] = []
    for dt in _DTYPES:
        x = lambda L, dt=dt: _x(L, dt)  # noqa: E731
        calls: dict[str, Case] = {
            "index_fill_1j": lambda L, x=x: x(L).index_fill(0, i0(L), 1j),
            "index_fill__1j": lambda L, x=x: x(L).index_fill_(0, i0(L), 1j),
            "index_fill_0j": lambda L, x=x: x(L).index_fill(0, i0(L), 0j),
            "index_fill_0d_complex": lambda L, x=x: x(L).index_fill(0, i0(L), T(L, 2 + 0j)),
            "setitem_int_1j": lambda L, x=x: _setitem(L, x, 0, 1j),
            "setitem_slice_1j": lambda L, x=x: _setitem(L, x, slice(None), 1j),
            "setitem_int_2+0j": lambda L, x=x: _setitem(L, x, 0, 2 + 0j),
            "setitem_index_1j": lambda L, x=x: _setitem(L, x, i0, 1j),
            "setitem_mask_1j": lambda L, x=x: _setitem(L, x, mask, 1j),
            "setitem_index_0d_complex": lambda L, x=x: _setitem(L, x, i0, lambda L: T(L, 1j)),
            "setitem_mask_0d_complex": lambda L, x=x: _setitem(L, x, mask, lambda L: T(L, 1j)),
            "setitem_mask_0d_zero_imag": lambda L, x=x: _setitem(
                L, x, mask, lambda L: T(L, 2 + 0j)
            ),
            "index_put__0d_complex": lambda L, x=x: x(L).index_put_((i0(L),), T(L, 1j)),
            "index_put_complex": lambda L, x=x: L.index_put(x(L), (i0(L),), T(L, [1j])),
            "masked_scatter_complex": lambda L, x=x: x(L).masked_scatter(
                mask(L), T(L, [1j, 2j, 3j])
            ),
            "masked_scatter__complex": lambda L, x=x: x(L).masked_scatter_(
                mask(L), T(L, [1j, 2j, 3j])
            ),
            "put__complex": lambda L, x=x: x(L).put_(i0(L), T(L, [1j])),
        }
        cases += [pytest.param(fn, id=f"{k}-{dt}") for k, fn in calls.items()]
    calls = {
        "index_fill_bool_1j": lambda L: L.tensor([True, False]).index_fill(0, i0(L), 1j),
        "index_fill_complex_1j": lambda L: _x(L, "complex64").index_fill(0, i0(L), 1j),
        "torch_index_fill_1j": lambda L: L.index_fill(_f(L), 0, i0(L), 1j),
        "setitem_index_float64": lambda L: _setitem(
            L, "float32", i0, lambda L: T(L, [2.0], "float64")
        ),
        "setitem_mask_float64": lambda L: _setitem(
            L, "float32", mask, lambda L: T(L, [2.0, 3.0], "float64")
        ),
        "setitem_mask_0d_float64": lambda L: _setitem(
            L, "float32", mask, lambda L: T(L, 2.0, "float64")
        ),
        "setitem_list_float64": lambda L: _setitem(
            L, "float32", [0, 1], lambda L: T(L, [2.0, 3.0], "float64")
        ),
        "setitem_int_0d_complex": lambda L: _setitem(L, "float32", 0, lambda L: T(L, 1j)),
        "setitem_basic_float64": lambda L: _setitem(
            L, "float32", 0, lambda L: T(L, 2.0, "float64")
        ),
        "index_put__int_values": lambda L: _f(L).index_put_((i0(L),), T(L, 1)),
        "index_put__accumulate": lambda L: _f(L).index_put_(
            (i0(L),), T(L, [1.0], "float64"), accumulate=True
        ),
        "index_put_complex_into_complex": lambda L: L.index_put(
            _x(L, "complex64"), (i0(L),), T(L, [1.0])
        ),
        "setitem_complex_into_complex": lambda L: _setitem(L, "complex64", i0, 1j),
    }
    return cases + [pytest.param(fn, id=k) for k, fn in calls.items()]


def _alpha_cases() -> list[Any]:
    b = lambda L: L.tensor([True, False])  # noqa: E731
    cases: list[Any] = []
    for dt in _DTYPES:
        x = lambda L, dt=dt: _x(L, dt)  # noqa: E731
        calls: dict[str, Case] = {
            "add_alpha_1j": lambda L, x=x: L.add(x(L), x(L), alpha=1j),
            "add_alpha_0j": lambda L, x=x: L.add(x(L), x(L), alpha=0j),
            "add_alpha_0.5": lambda L, x=x: L.add(x(L), x(L), alpha=0.5),
            "add_alpha_True": lambda L, x=x: L.add(x(L), x(L), alpha=True),
            "sub_alpha_1j": lambda L, x=x: L.sub(x(L), x(L), alpha=1j),
            "rsub_alpha_1j": lambda L, x=x: L.rsub(x(L), x(L), alpha=1j),
            "add__alpha_1j": lambda L, x=x: x(L).add_(x(L), alpha=1j),
            "sub__alpha_1j": lambda L, x=x: x(L).sub_(x(L), alpha=1j),
            "add__alpha_0.5": lambda L, x=x: x(L).add_(x(L), alpha=0.5),
            "add_complex_other_alpha_1j": lambda L, x=x: L.add(x(L), _x(L, "complex64"), alpha=1j),
            "add_scalar_1j_alpha_1j": lambda L, x=x: L.add(x(L), 1j, alpha=1j),
            "iadd_1j": lambda L, dt=dt: _iadd(L, dt, 1j),
            "add__1j": lambda L, x=x: x(L).add_(1j),
            "mul__1j": lambda L, x=x: x(L).mul_(1j),
            "where_1j": lambda L, x=x: L.where(_m(L), x(L), 1j),
            "where_0d_complex": lambda L, x=x: L.where(_m(L), x(L), L.tensor(1j)),
        }
        cases += [pytest.param(fn, id=f"{k}-{dt}") for k, fn in calls.items()]
    calls = {
        "bool_add_alpha_2": lambda L: L.add(b(L), b(L), alpha=2),
        "bool_add_alpha_True": lambda L: L.add(b(L), b(L), alpha=True),
        "int_add_float_alpha_0.5": lambda L: L.add(_x(L, "int64"), _f(L), alpha=0.5),
        "int_add_float_scalar_alpha_0.5": lambda L: L.add(_x(L, "int64"), 1.5, alpha=0.5),
        "complex_add_alpha_1j": lambda L: L.add(_x(L, "complex64"), _f(L), alpha=1j),
    }
    return cases + [pytest.param(fn, id=k) for k, fn in calls.items()]


def _scalar_arg_cases() -> list[Any]:
    F = lambda L: L.nn.functional  # noqa: E731
    i0 = lambda L: L.tensor([0])  # noqa: E731
    neg = lambda L, dt="float32": L.tensor([1.0, -2.0, 0.5], dtype=getattr(L, dt))  # noqa: E731
    cases: list[Any] = []
    for dt in _DTYPES:
        x = lambda L, dt=dt: _x(L, dt)  # noqa: E731
        calls: dict[str, Case] = {
            "scatter_value_1j": lambda L, x=x: L.scatter(x(L), 0, i0(L), 1j),
            "scatter__value_1j": lambda L, x=x: x(L).scatter_(0, i0(L), 1j),
            "scatter_value_2+0j": lambda L, x=x: L.scatter(x(L), 0, i0(L), 2 + 0j),
            "scatter__reduce_1j": lambda L, x=x: x(L).scatter_(0, i0(L), 1j, reduce="add"),
            "threshold_value_1j": lambda L, x=x: F(L).threshold(x(L), 1.5, 1j),
            "threshold_1j": lambda L, x=x: F(L).threshold(x(L), 1j, 0.0),
            "threshold_value_0j": lambda L, x=x: F(L).threshold(x(L), 1.5, 0j),
            "index_add_alpha_1j": lambda L, x=x: x(L).index_add(0, i0(L), x(L)[:1], alpha=1j),
            "index_add__alpha_1j": lambda L, x=x: x(L).index_add_(0, i0(L), x(L)[:1], alpha=1j),
            "index_add_alpha_2+0j": lambda L, x=x: x(L).index_add(0, i0(L), x(L)[:1], alpha=2 + 0j),
            "addmm_alpha_1j": lambda L, x=x: L.addmm(
                x(L).reshape(1, 3), x(L).reshape(1, 3), L.eye(3, dtype=x(L).dtype), alpha=1j
            ),
            "addmm_beta_1j": lambda L, x=x: L.addmm(
                x(L).reshape(1, 3), x(L).reshape(1, 3), L.eye(3, dtype=x(L).dtype), beta=1j
            ),
            "addmv_alpha_1j": lambda L, x=x: L.addmv(
                x(L), L.eye(3, dtype=x(L).dtype), x(L), alpha=1j
            ),
            "addr_beta_1j": lambda L, x=x: L.addr(
                L.ones(3, 3, dtype=x(L).dtype), x(L), x(L), beta=1j
            ),
            "baddbmm_alpha_1j": lambda L, x=x: L.baddbmm(
                x(L).reshape(1, 1, 3),
                x(L).reshape(1, 1, 3),
                L.eye(3, dtype=x(L).dtype)[None],
                alpha=1j,
            ),
            "addbmm_alpha_1j": lambda L, x=x: L.addbmm(
                x(L).reshape(1, 3),
                x(L).reshape(1, 1, 3),
                L.eye(3, dtype=x(L).dtype)[None],
                alpha=1j,
            ),
            "fill_diagonal__1j": lambda L, x=x: L.zeros(2, 2, dtype=x(L).dtype).fill_diagonal_(1j),
        }
        cases += [pytest.param(fn, id=f"{k}-{dt}") for k, fn in calls.items()]
    for dt in ("float32", "float64"):
        x = lambda L, dt=dt: neg(L, dt)  # noqa: E731
        calls = {
            "threshold__value_1j": lambda L, x=x: F(L).threshold_(x(L), 1.5, 1j),
            "leaky_relu_1j": lambda L, x=x: F(L).leaky_relu(x(L), 1j),
            "leaky_relu_0.5+0j": lambda L, x=x: F(L).leaky_relu(x(L), 0.5 + 0j),
            "leaky_relu__1j": lambda L, x=x: F(L).leaky_relu_(x(L), 1j),
            "leaky_relu_inplace_1j": lambda L, x=x: F(L).leaky_relu(x(L), 1j, inplace=True),
            "elu_1j": lambda L, x=x: F(L).elu(x(L), 1j),
            "elu__1j": lambda L, x=x: F(L).elu_(x(L), 1j),
            "celu_1j": lambda L, x=x: F(L).celu(x(L), 1j),
            "softplus_beta_1j": lambda L, x=x: F(L).softplus(x(L), 1j),
            "softplus_threshold_1j": lambda L, x=x: F(L).softplus(x(L), 1.0, 1j),
            "hardtanh_1j": lambda L, x=x: F(L).hardtanh(x(L), 1j, 2.0),
            "hardtanh_max_1j": lambda L, x=x: F(L).hardtanh(x(L), -1.0, 1j),
            "hardtanh__1j": lambda L, x=x: F(L).hardtanh_(x(L), 1j, 2.0),
            "hardtanh__max_1j": lambda L, x=x: F(L).hardtanh_(x(L), -1.0, 1j),
            "rrelu_1j": lambda L, x=x: F(L).rrelu(x(L), 1j, 2.0),
            "leaky_relu_complex_input": lambda L, x=x: F(L).leaky_relu(x(L).to(L.complex64), 1j),
        }
        cases += [pytest.param(fn, id=f"{k}-{dt}") for k, fn in calls.items()]
    calls = {
        "scatter_bool_1j": lambda L: L.scatter(L.tensor([True]), 0, i0(L), 1j),
        "scatter_complex_src": lambda L: L.scatter(_f(L), 0, i0(L), L.tensor([1j])),
        "threshold_int_value_1j": lambda L: F(L).threshold(_x(L, "int64"), 1, 1j),
        "scatter_0d_complex_value": lambda L: L.scatter(_f(L), 0, i0(L), value=L.tensor(1j)),
        "nan_to_num_nan_1j": lambda L: L.nan_to_num(_f(L), nan=1j),
        "nan_to_num_posinf_1j": lambda L: L.nan_to_num(_f(L), posinf=1j),
        "nan_to_num_neginf_1j_int": lambda L: L.nan_to_num(_x(L, "int64"), neginf=1j),
    }
    return cases + [pytest.param(fn, id=k) for k, fn in calls.items()]


CASES: list[Any] = (
    FILL
    + _clamp_cases()
    + _fma_lerp_cases()
    + _norm_cases()
    + _index_cases()
    + _alpha_cases()
    + _scalar_arg_cases()
)


@pytest.mark.parametrize("fn", CASES)
def test_as_torch(fn: Case) -> None:
    check(fn, tol=1e-6, signed_zeros=True)


def _clamp_calls() -> dict[str, Callable[[Any, Any], Any]]:
    z = lambda L, v: L.tensor(v)  # noqa: E731
    F = lambda L: L.nn.functional  # noqa: E731
    return {
        "clamp_min_0": lambda L, x: L.clamp(x, min=0.0),
        "clamp_min_neg0": lambda L, x: L.clamp(x, min=-0.0),
        "clamp_max_0": lambda L, x: L.clamp(x, max=0.0),
        "clamp_max_neg0": lambda L, x: L.clamp(x, max=-0.0),
        "clamp_0_0": lambda L, x: L.clamp(x, 0.0, 0.0),
        "clamp_min_fn": lambda L, x: L.clamp_min(x, 0.0),
        "clamp_max_fn": lambda L, x: L.clamp_max(x, 0.0),
        "clamp_min_fn_neg0": lambda L, x: L.clamp_min(x, -0.0),
        "clamp_max_fn_neg0": lambda L, x: L.clamp_max(x, -0.0),
        "clamp_T_min": lambda L, x: L.clamp(x, min=z(L, 0.0)),
        "clamp_T_min_neg0": lambda L, x: L.clamp(x, min=z(L, -0.0)),
        "clamp_T_max": lambda L, x: L.clamp(x, max=z(L, 0.0)),
        "clamp_T_max_neg0": lambda L, x: L.clamp(x, max=z(L, -0.0)),
        "clamp_T_T": lambda L, x: L.clamp(x, z(L, 0.0), z(L, 0.0)),
        "clamp_min_fn_T": lambda L, x: L.clamp_min(x, z(L, 0.0)),
        "clamp_max_fn_T": lambda L, x: L.clamp_max(x, z(L, -0.0)),
        "clamp_T_vec": lambda L, x: L.clamp(x, min=z(L, [0.0, -0.0])),
        "clamp__min": lambda L, x: x.clone().clamp_(min=0.0),
        "clamp__max": lambda L, x: x.clone().clamp_(max=0.0),
        "clamp_min__": lambda L, x: x.clone().clamp_min_(0.0),
        "clamp__T": lambda L, x: x.clone().clamp_(min=z(L, 0.0)),
        "relu": lambda L, x: L.relu(x),
        "relu_method_inplace": lambda L, x: x.clone().relu_(),
        "relu6": lambda L, x: F(L).relu6(x),
        "hardtanh_0_0": lambda L, x: F(L).hardtanh(x, 0.0, 0.0),
        "hardtanh_m1_0": lambda L, x: F(L).hardtanh(x, -1.0, 0.0),
        "hardtanh_0_1": lambda L, x: F(L).hardtanh(x, 0.0, 1.0),
        "maximum": lambda L, x: L.maximum(x, L.zeros(2)),
        "maximum_rev": lambda L, x: L.maximum(L.zeros(2), x),
        "minimum": lambda L, x: L.minimum(x, L.zeros(2)),
        "minimum_rev": lambda L, x: L.minimum(L.zeros(2), x),
    }


def _bits(a: np.ndarray) -> list[int]:
    return a.astype(np.float32).view(np.uint32).tolist()


@pytest.mark.parametrize("name", sorted(_clamp_calls()))
def test_signed_zero_at_the_bound(name: str) -> None:
    """x = [-0.0, 0.0] at a bound of 0.0 or -0.0: the output keeps x (with its sign), and
    x.grad matches torch's bit for bit."""
    fn = _clamp_calls()[name]
    res = []
    for L in (torch, cr):
        x = L.tensor([-0.0, 0.0], requires_grad=True)
        y = fn(L, x)
        y.backward(L.ones_like(y))
        res.append((_bits(y.detach().numpy()), _bits(x.grad.numpy())))
    assert res[1] == res[0]


@pytest.mark.parametrize("name", ["clamp", "clamp_min", "clamp_max", "clamp_both"])
def test_signed_zero_tensor_bound_grad(name: str) -> None:
    """The bound's gradient too, where x equals a tensor bound (0.0 against -0.0)."""
    res = []
    for L in (torch, cr):
        x = L.tensor([-0.0, 0.0], requires_grad=True)
        b = L.tensor([0.0, -0.0], requires_grad=True)
        y = {
            "clamp": lambda: L.clamp(x, min=b),
            "clamp_min": lambda: L.clamp_min(x, b),
            "clamp_max": lambda: L.clamp_max(x, b),
            "clamp_both": lambda: L.clamp(x, b, b),
        }[name]()
        y.backward(L.ones_like(y))
        res.append((_bits(y.detach().numpy()), _bits(x.grad.numpy()), _bits(b.grad.numpy())))
    assert res[1] == res[0]


def test_lerp_zero_dim_complex_weight_grads() -> None:
    """A 0-dim complex weight promotes real input and end to complex, as in PyTorch. PyTorch
    2.13's backward of that call fails an internal check (a complex gradient for a real
    input); chainrule's gradients are those of the explicitly promoted call (real parts for
    the real tensors), which PyTorch computes."""
    res = []
    for L in (torch, cr):
        x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = L.tensor([0.5, 4.0, -1.0], requires_grad=True)
        w = L.tensor(0.25 + 0.5j, requires_grad=True)
        if L is torch:
            out = L.lerp(x, y, w)
            with pytest.raises(RuntimeError, match="input_is_complex == grad_is_complex"):
                (out * out.conj()).real.sum().backward()
            x.grad = y.grad = w.grad = None
            out = L.lerp(x.to(L.complex64), y.to(L.complex64), w)
        else:
            out = L.lerp(x, y, w)
        (out * out.conj()).real.sum().backward()
        res.append([str(out.dtype).split(".")[-1]] + [t.grad.numpy() for t in (x, y, w)])
    assert res[1][0] == res[0][0]
    for got, want in zip(res[1][1:], res[0][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-6)
