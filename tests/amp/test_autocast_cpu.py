"""CPU autocast regions and the autocast state functions, compared with PyTorch: each listed
op's output dtype and values inside a region, gradients back to float32 leaves, nesting,
``enabled=False`` inside a region, thread-locality and the deprecated spellings' warnings."""

from __future__ import annotations

import threading
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

_rng = np.random.default_rng(1)
X = _rng.standard_normal((3, 4)).astype(np.float32)
Wt = _rng.standard_normal((5, 4)).astype(np.float32)
Bias = _rng.standard_normal(5).astype(np.float32)
Img = _rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
K = _rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
T = np.abs(_rng.standard_normal((3, 4))).astype(np.float32)
Sq = (_rng.standard_normal((3, 3)) + 4 * np.eye(3)).astype(np.float32)


def _f(m: Any) -> Any:
    return F if m is cr else TF


def _t(m: Any, a: np.ndarray, dtype: str = "float32") -> Any:
    return m.tensor(a).to(getattr(m, dtype))


OPS: dict[str, Callable[[Any], Any]] = {
    "matmul": lambda m: _t(m, X) @ _t(m, Wt).t(),
    "mm": lambda m: m.mm(_t(m, X), _t(m, Wt).t()),
    "bmm": lambda m: m.bmm(_t(m, X)[None], _t(m, Wt).t()[None]),
    "addmm": lambda m: m.addmm(_t(m, Bias), _t(m, X), _t(m, Wt).t()),
    "baddbmm": lambda m: m.baddbmm(_t(m, Bias)[None, None], _t(m, X)[None], _t(m, Wt).t()[None]),
    "addbmm": lambda m: m.addbmm(_t(m, Bias)[None], _t(m, X)[None], _t(m, Wt).t()[None]),
    "linear": lambda m: _f(m).linear(_t(m, X), _t(m, Wt), _t(m, Bias)),
    "linear_half_bias": lambda m: _f(m).linear(_t(m, X), _t(m, Wt), _t(m, Bias, "float16")),
    "einsum": lambda m: m.einsum("ij,kj->ik", _t(m, X), _t(m, Wt)),
    "tensordot": lambda m: m.tensordot(_t(m, X), _t(m, Wt).t(), 1),
    "multi_dot": lambda m: m.linalg.multi_dot([_t(m, X), _t(m, Wt).t()]),
    "mv_not_listed": lambda m: m.mv(_t(m, X), _t(m, Wt)[0]),
    "conv2d": lambda m: _f(m).conv2d(_t(m, Img), _t(m, K)),
    "conv1d": lambda m: _f(m).conv1d(_t(m, Img[:, :, 0]), _t(m, K[:, :, 0])),
    "prelu": lambda m: _f(m).prelu(_t(m, X), _t(m, np.array([0.25], np.float32))),
    "matmul_float64": lambda m: _t(m, X, "float64") @ _t(m, Wt, "float64").t(),
    "matmul_int": lambda m: m.tensor([[1, 2]]) @ m.tensor([[3], [4]]),
    "mse_loss": lambda m: _f(m).mse_loss(_t(m, X, "bfloat16"), _t(m, T, "bfloat16")),
    "l1_loss": lambda m: _f(m).l1_loss(_t(m, X, "bfloat16"), _t(m, T, "bfloat16")),
    "cross_entropy": lambda m: _f(m).cross_entropy(_t(m, X, "bfloat16"), m.tensor([0, 1, 3])),
    "nll_loss": lambda m: _f(m).nll_loss(_t(m, X, "bfloat16"), m.tensor([0, 1, 3])),
    "bce_logits": lambda m: _f(m).binary_cross_entropy_with_logits(
        _t(m, X, "bfloat16"), _t(m, T.clip(0, 1), "bfloat16")
    ),
    "smooth_l1": lambda m: _f(m).smooth_l1_loss(_t(m, X, "bfloat16"), _t(m, T, "bfloat16")),
    "kl_div": lambda m: _f(m).kl_div(
        _t(m, X, "bfloat16"), _t(m, T, "bfloat16"), reduction="batchmean"
    ),
    "prod": lambda m: _t(m, T, "bfloat16").prod(),
    "cdist": lambda m: m.cdist(_t(m, X, "bfloat16"), _t(m, T, "bfloat16")),
    "trace": lambda m: _t(m, T, "bfloat16").trace(),
    "linalg_inv": lambda m: m.linalg.inv(_t(m, Sq, "bfloat16")),
    "linalg_solve": lambda m: m.linalg.solve(_t(m, Sq, "bfloat16"), _t(m, Sq, "bfloat16")),
    "linalg_svdvals": lambda m: m.linalg.svdvals(_t(m, Sq, "bfloat16")),
    "linalg_vecdot": lambda m: m.linalg.vecdot(_t(m, X), _t(m, T)),
    # not listed: they run in the dtypes they are given
    "softmax_f32": lambda m: _t(m, X).softmax(-1),
    "softmax_bf16": lambda m: _t(m, X, "bfloat16").softmax(-1),
    "log_softmax_bf16": lambda m: _t(m, X, "bfloat16").log_softmax(-1),
    "layer_norm_bf16": lambda m: _f(m).layer_norm(_t(m, X, "bfloat16"), (4,)),
    "gelu": lambda m: _f(m).gelu(_t(m, X)),
    "add_mixed": lambda m: _t(m, X) + _t(m, X, "bfloat16"),
    "cat_mixed": lambda m: m.cat([_t(m, X), _t(m, X, "bfloat16")]),
    "sum_of_matmul": lambda m: (_t(m, X) @ _t(m, Wt).t()).sum(),
}


def _np(t: Any) -> np.ndarray:
    t = t.detach()
    return t.float().numpy() if t.dtype.is_floating_point else t.numpy()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_op_dtype_and_value_in_a_cpu_region(name: str, dtype: str) -> None:
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        to = OPS[name](torch)
    with cr.autocast("cpu", dtype=getattr(cr, dtype)):
        co = OPS[name](cr)
    assert str(co.dtype).split(".")[1] == str(to.dtype).split(".")[1]
    np.testing.assert_allclose(_np(co), _np(to), rtol=2e-2, atol=3e-2)


def test_outside_a_region_nothing_is_cast() -> None:
    assert (cr.tensor(X) @ cr.tensor(Wt).t()).dtype == cr.float32
    with cr.autocast("cpu", enabled=False):
        assert (cr.tensor(X) @ cr.tensor(Wt).t()).dtype == cr.float32
    with cr.autocast("cpu"):
        with cr.autocast("cpu", enabled=False):
            assert (cr.tensor(X) @ cr.tensor(Wt).t()).dtype == cr.float32
            assert not cr.is_autocast_enabled("cpu")
        assert (cr.tensor(X) @ cr.tensor(Wt).t()).dtype == cr.bfloat16


def test_gradients_reach_float32_leaves_in_float32() -> None:
    grads = []
    for m in (torch, cr):
        x = m.tensor(X).requires_grad_()
        w = m.tensor(Wt).requires_grad_()
        with m.autocast("cpu"):
            y = _f(m).linear(x, w).relu()
            loss = _f(m).mse_loss(y, m.zeros(3, 5))
        assert loss.dtype == m.float32
        loss.backward()
        assert x.grad.dtype == m.float32 and w.grad.dtype == m.float32
        grads.append((_np(x.grad), _np(w.grad)))
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=3e-2, atol=1e-2)


def test_decorator_and_state_inside_a_region() -> None:
    @cr.autocast("cpu")
    def f(x: Any) -> Any:
        assert cr.is_autocast_enabled("cpu") and not cr.is_autocast_enabled()
        assert cr.get_autocast_dtype("cpu") == cr.bfloat16
        return x @ x.t()

    assert f(cr.tensor(X)).dtype == cr.bfloat16
    assert not cr.is_autocast_enabled("cpu")
    with cr.autocast("cpu", dtype=cr.float16):
        assert cr.get_autocast_dtype("cpu") == cr.float16
    assert cr.get_autocast_dtype("cpu") == cr.bfloat16


def test_state_functions_match_torch() -> None:
    for m in (torch, cr):
        assert m.get_autocast_dtype("cpu") == m.bfloat16
        assert m.get_autocast_dtype("cuda") == m.float16
        assert m.get_autocast_dtype("hpu") == m.bfloat16
        assert m.is_autocast_enabled() is False and m.is_autocast_enabled("cpu") is False
        m.set_autocast_enabled("cpu", True)
        try:
            assert m.is_autocast_enabled("cpu")
            assert (m.tensor(X) @ m.tensor(Wt).t()).dtype == m.bfloat16
        finally:
            m.set_autocast_enabled("cpu", False)
        m.set_autocast_enabled(True)  # the one-argument form is CUDA's flag
        assert m.is_autocast_enabled() and not m.is_autocast_enabled("cpu")
        m.set_autocast_enabled(False)
        m.set_autocast_dtype("cpu", m.float16)
        assert m.get_autocast_dtype("cpu") == m.float16
        m.set_autocast_dtype("cpu", m.bfloat16)
        assert [m.autocast_increment_nesting() for _ in range(2)] == [1, 2]
        assert [m.autocast_decrement_nesting() for _ in range(2)] == [1, 0]
        assert m.is_autocast_cache_enabled()
        m.set_autocast_cache_enabled(False)
        assert not m.is_autocast_cache_enabled()
        m.set_autocast_cache_enabled(True)
        m.clear_autocast_cache()
    with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
        cr.get_autocast_dtype("foo")


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.get_autocast_cpu_dtype(),
        lambda m: m.get_autocast_gpu_dtype(),
        lambda m: m.is_autocast_cpu_enabled(),
        lambda m: m.set_autocast_cpu_enabled(False),
        lambda m: m.set_autocast_cpu_dtype(m.bfloat16),
        lambda m: m.set_autocast_gpu_dtype(m.float16),
        lambda m: m.get_autocast_ipu_dtype(),
        lambda m: m.get_autocast_xla_dtype(),
        lambda m: m.is_autocast_ipu_enabled(),
        lambda m: m.is_autocast_xla_enabled(),
        lambda m: m.set_autocast_ipu_enabled(False),
        lambda m: m.set_autocast_xla_enabled(False),
        lambda m: m.set_autocast_ipu_dtype(m.float16),
        lambda m: m.set_autocast_xla_dtype(m.bfloat16),
    ],
)
def test_deprecated_spellings_warn_as_torch(call: Callable[[Any], Any]) -> None:
    res = []
    for m in (torch, cr):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = call(m)
        (msg,) = [str(x.message).split(" (Triggered")[0] for x in w]
        assert w[0].category is DeprecationWarning
        res.append((msg, None if r is None else str(r).split(".")[-1]))
    assert res[0] == res[1]


def test_unsupported_cpu_dtype_disables_the_region() -> None:
    msgs = []
    for m in (torch, cr):
        with pytest.warns(UserWarning) as rec:
            with m.autocast("cpu", dtype=m.float32):
                assert (m.tensor(X) @ m.tensor(Wt).t()).dtype == m.float32
        msgs.append(str(rec[0].message))
    assert msgs[0] == msgs[1]


def test_state_is_per_thread() -> None:
    seen = []
    with cr.autocast("cpu"):
        th = threading.Thread(target=lambda: seen.append(cr.is_autocast_enabled("cpu")))
        th.start()
        th.join()
        assert cr.is_autocast_enabled("cpu")
    assert seen == [False]


def test_amp_namespace() -> None:
    with cr.amp.autocast(device_type="cpu"):
        assert (cr.tensor(X) @ cr.tensor(Wt).t()).dtype == cr.bfloat16
    assert cr.amp.is_autocast_available("cpu") is torch.amp.is_autocast_available("cpu")
