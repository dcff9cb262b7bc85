"""bfloat16 as a real dtype (ml_dtypes), compared with PyTorch: ops' values (to bfloat16's
precision) and gradients (in bfloat16), promotion, factories, casts, finfo, printing,
serialization, and that ``import chainrule`` does not load ml_dtypes."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

_rng = np.random.default_rng(0)
A = _rng.standard_normal((3, 4)).astype(np.float32)
B = _rng.standard_normal((4, 5)).astype(np.float32)
P = (np.abs(_rng.standard_normal((3, 4))) + 0.5).astype(np.float32)
W = _rng.standard_normal((2, 3, 2)).astype(np.float32)


def _f(m: Any) -> Any:
    return F if m is cr else TF


# name -> (function of (module, a, b, p), differentiable)
CASES: dict[str, tuple[Callable[..., Any], bool]] = {
    "add": (lambda m, a, b, p: a + 1.5 * a, True),
    "sub": (lambda m, a, b, p: a - 2, True),
    "mul": (lambda m, a, b, p: a * p, True),
    "div": (lambda m, a, b, p: a / p, True),
    "exp": (lambda m, a, b, p: a.exp(), True),
    "log": (lambda m, a, b, p: p.log(), True),
    "sqrt": (lambda m, a, b, p: p.sqrt(), True),
    "rsqrt": (lambda m, a, b, p: p.rsqrt(), True),
    "tanh": (lambda m, a, b, p: a.tanh(), True),
    "sigmoid": (lambda m, a, b, p: a.sigmoid(), True),
    "relu": (lambda m, a, b, p: a.relu(), True),
    "pow": (lambda m, a, b, p: p**1.7, True),
    "sin": (lambda m, a, b, p: a.sin(), True),
    "abs": (lambda m, a, b, p: a.abs(), True),
    "neg": (lambda m, a, b, p: -a, True),
    "erf": (lambda m, a, b, p: a.erf(), True),
    "expm1": (lambda m, a, b, p: a.expm1(), True),
    "log1p": (lambda m, a, b, p: p.log1p(), True),
    "square": (lambda m, a, b, p: a.square(), True),
    "reciprocal": (lambda m, a, b, p: p.reciprocal(), True),
    "sum": (lambda m, a, b, p: a.sum(), True),
    "sum_dim": (lambda m, a, b, p: a.sum(0), True),
    "mean": (lambda m, a, b, p: a.mean(1), True),
    "prod": (lambda m, a, b, p: p.prod(1), True),
    "max": (lambda m, a, b, p: a.max(), True),
    "amax": (lambda m, a, b, p: a.amax(1), True),
    "var": (lambda m, a, b, p: a.var(1), True),
    "std": (lambda m, a, b, p: a.std(), True),
    "norm": (lambda m, a, b, p: a.norm(), True),
    "logsumexp": (lambda m, a, b, p: a.logsumexp(1), True),
    "cumsum": (lambda m, a, b, p: a.cumsum(1), True),
    "matmul": (lambda m, a, b, p: a @ b, True),
    "mm": (lambda m, a, b, p: m.mm(a, b), True),
    "bmm": (lambda m, a, b, p: m.bmm(a[None], b[None]), True),
    "addmm": (lambda m, a, b, p: m.addmm(b[:3], a, b), True),
    "baddbmm": (lambda m, a, b, p: m.baddbmm(b[None, :3], a[None], b[None]), True),
    "einsum": (lambda m, a, b, p: m.einsum("ij,jk->ik", a, b), True),
    "softmax": (lambda m, a, b, p: a.softmax(1), True),
    "log_softmax": (lambda m, a, b, p: a.log_softmax(-1), True),
    "gelu": (lambda m, a, b, p: _f(m).gelu(a), True),
    "silu": (lambda m, a, b, p: _f(m).silu(a), True),
    "softplus": (lambda m, a, b, p: _f(m).softplus(a), True),
    "linear": (lambda m, a, b, p: _f(m).linear(a, b.t(), b[0]), True),
    "layer_norm": (lambda m, a, b, p: _f(m).layer_norm(a, (4,)), True),
    "mse_loss": (lambda m, a, b, p: _f(m).mse_loss(a, p), True),
    "cross_entropy": (lambda m, a, b, p: _f(m).cross_entropy(a, m.tensor([0, 3, 1])), True),
    "conv1d": (lambda m, a, b, p: _f(m).conv1d(a[None], m.tensor(W).to(a.dtype)), True),
    "where": (lambda m, a, b, p: m.where(a > 0, a, p), True),
    "maximum": (lambda m, a, b, p: m.maximum(a, p), True),
    "clamp": (lambda m, a, b, p: a.clamp(-0.5, 0.5), True),
    "lerp": (lambda m, a, b, p: m.lerp(a, p, 0.3), True),
    "atan2": (lambda m, a, b, p: m.atan2(a, p), True),
    "cat": (lambda m, a, b, p: m.cat([a, p]), True),
    "stack": (lambda m, a, b, p: m.stack([a, p]), True),
    "index": (lambda m, a, b, p: a[[0, 2]], True),
    "slice": (lambda m, a, b, p: a[:, 1:3], True),
    "transpose": (lambda m, a, b, p: a.t(), True),
    "reshape": (lambda m, a, b, p: a.reshape(4, 3), True),
    "gather": (lambda m, a, b, p: a.gather(1, m.tensor([[0], [1], [2]])), True),
    "masked_fill": (lambda m, a, b, p: a.masked_fill(a > 0, 0.5), True),
    "tril": (lambda m, a, b, p: a.tril(), True),
    "flip": (lambda m, a, b, p: a.flip(0), True),
    "sort": (lambda m, a, b, p: a.sort(1)[0], True),
    "topk": (lambda m, a, b, p: a.topk(2)[0], True),
    "floor": (lambda m, a, b, p: (a * 3).floor(), False),
    "round": (lambda m, a, b, p: (a * 3).round(), False),
    "median": (lambda m, a, b, p: a.median(), False),
    "argmax": (lambda m, a, b, p: a.argmax(1), False),
    "gt": (lambda m, a, b, p: a > 0.1, False),
    "mul_": (lambda m, a, b, p: a.detach().clone().mul_(2), False),
}


def _inputs(m: Any, grad: bool) -> list[Any]:
    return [m.tensor(x).bfloat16().requires_grad_(grad) for x in (A, B, P)]


def _np(t: Any) -> np.ndarray:
    t = t.detach()
    return t.float().numpy() if t.dtype.is_floating_point else t.numpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_torch_in_bfloat16(name: str) -> None:
    fn, grad = CASES[name]
    ts, cs = _inputs(torch, grad), _inputs(cr, grad)
    to, co = fn(torch, *ts), fn(cr, *cs)
    assert str(co.dtype).split(".")[1] == str(to.dtype).split(".")[1]
    # Both round one float32 result to bfloat16: equal, or one bfloat16 step apart where the
    # float32 sums were added in another order.
    np.testing.assert_allclose(_np(co), _np(to), rtol=1.6e-2, atol=1e-2)
    if not grad:
        return
    (to.float().sum() if to.ndim else to).backward()
    (co.float().sum() if co.ndim else co).backward()
    for tt, cc in zip(ts, cs):
        assert (tt.grad is None) == (cc.grad is None)
        if tt.grad is not None:
            assert cc.grad.dtype == cr.bfloat16
            np.testing.assert_allclose(_np(cc.grad), _np(tt.grad), rtol=3e-2, atol=2e-2)


def test_reductions_accumulate_in_float32() -> None:
    # NumPy alone would add bfloat16 ones in bfloat16 and stop at 256.
    x = cr.ones(1000, dtype=cr.bfloat16)
    assert x.sum().item() == torch.ones(1000, dtype=torch.bfloat16).sum().item() == 1000.0
    assert x.mean().item() == 1.0
    v = cr.ones(300, 300, dtype=cr.bfloat16)
    assert (v @ v)[0, 0].item() == 300.0


@pytest.mark.parametrize(
    "a,b",
    [
        ("bfloat16", "float16"),
        ("bfloat16", "float32"),
        ("bfloat16", "float64"),
        ("bfloat16", "int64"),
        ("bfloat16", "bool"),
        ("int32", "bfloat16"),
        ("bfloat16", "bfloat16"),
    ],
)
def test_promotion(a: str, b: str) -> None:
    expect = str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[1]
    assert cr.promote_types(getattr(cr, a), getattr(cr, b)).name == expect
    x = cr.ones(2, dtype=getattr(cr, a)) + cr.ones(2, dtype=getattr(cr, b))
    assert x.dtype.name == expect
    # A Python float keeps a bfloat16 tensor bfloat16; an int tensor with a bfloat16 0-dim
    # tensor gives bfloat16, as in PyTorch.
    assert (cr.ones(2, dtype=cr.bfloat16) * 2.5).dtype == cr.bfloat16
    assert (cr.ones(2, dtype=cr.int64) * cr.tensor(2.5).bfloat16()).dtype == cr.bfloat16


def test_factories_casts_and_methods() -> None:
    for make in (
        lambda m: m.zeros(2, 3, dtype=m.bfloat16),
        lambda m: m.ones(2, dtype=m.bfloat16),
        lambda m: m.full((2,), 0.3, dtype=m.bfloat16),
        lambda m: m.tensor([0.1, 1e-5, 3.3], dtype=m.bfloat16),
        lambda m: m.arange(5, dtype=m.bfloat16),
        lambda m: m.linspace(0, 1, 5, dtype=m.bfloat16),
        lambda m: m.tensor([1.7, -2.2]).to(m.bfloat16),
        lambda m: m.tensor([1.7, -2.2]).bfloat16(),
        lambda m: m.tensor([1.7, -2.2]).type(m.bfloat16),
        lambda m: m.BFloat16Tensor([1.7, 2.5]),
        lambda m: m.zeros_like(m.ones(2), dtype=m.bfloat16),
    ):
        c, t = make(cr), make(torch)
        assert c.dtype == cr.bfloat16 and t.dtype == torch.bfloat16
        np.testing.assert_array_equal(_np(c), _np(t))
    x = cr.tensor([1.7, -2.2, 300.5]).bfloat16()
    assert x.float().dtype == cr.float32 and x.half().dtype == cr.float16
    np.testing.assert_array_equal(x.long().numpy(), [1, -2, 300])
    assert x.is_floating_point() and x.dtype.is_floating_point and x.dtype.is_signed
    assert x.element_size() == 2 and x.dtype.itemsize == 2
    assert x[0].item() == 1.703125 and isinstance(x[0].item(), float)
    assert x.tolist() == torch.tensor([1.7, -2.2, 300.5]).bfloat16().tolist()


def test_finfo() -> None:
    c, t = cr.finfo(cr.bfloat16), torch.finfo(torch.bfloat16)
    for k in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(c, k) == getattr(t, k), k


@pytest.mark.parametrize(
    "vals",
    [[1.0, 2.5, 3.3], [1e-5, 1234.5, -3.0], [[0.1, 0.2], [100.0, 1e10]], 3.14159, [1.0, 2.0]],
)
def test_printing(vals: Any) -> None:
    c = repr(cr.tensor(vals).bfloat16()).replace("chainrule.", "torch.")
    assert c == repr(torch.tensor(vals).bfloat16())
    assert f"{cr.tensor(3.5).bfloat16()}" == f"{torch.tensor(3.5).bfloat16()}"


def test_grad_of_a_bfloat16_leaf_is_bfloat16() -> None:
    w = cr.tensor(A).bfloat16().requires_grad_()
    tw = torch.tensor(A).bfloat16().requires_grad_()
    for m, x in ((cr, w), (torch, tw)):
        y = (x @ x.t()).tanh().mean() + (x * 3).sum(1).max()
        y.backward()
    assert w.grad.dtype == cr.bfloat16
    np.testing.assert_allclose(_np(w.grad), _np(tw.grad), rtol=3e-2, atol=1e-2)


def test_safetensors_round_trip(tmp_path: Any) -> None:
    from safetensors.torch import load_file, save_file

    t = torch.tensor(A).bfloat16()
    save_file({"w": t}, str(tmp_path / "t.safetensors"))
    got = cr.load(str(tmp_path / "t.safetensors"))
    assert got["w"].dtype == cr.bfloat16
    np.testing.assert_array_equal(_np(got["w"]), _np(t))
    cr.save({"w": got["w"]}, str(tmp_path / "c.ct"))
    # chainrule's checkpoints are safetensors files (their keys name the tensors by position).
    (back,) = load_file(str(tmp_path / "c.ct")).values()
    assert back.dtype == torch.bfloat16 and torch.equal(back, t)


def test_torch_zip_load_and_save(tmp_path: Any) -> None:
    t = {"w": torch.tensor(A).bfloat16(), "v": torch.tensor(B).bfloat16()[1::2, 1:]}
    torch.save(t, tmp_path / "t.pt")
    got = cr.load(tmp_path / "t.pt")
    for k in t:
        assert got[k].dtype == cr.bfloat16
        np.testing.assert_array_equal(_np(got[k]), _np(t[k]))
    cr.save(got, tmp_path / "c.pt", format="torch")
    back = torch.load(tmp_path / "c.pt")
    assert all(torch.equal(back[k], t[k]) for k in t)


def test_import_does_not_load_ml_dtypes() -> None:
    code = "import sys, chainrule; print('ml_dtypes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_module_bfloat16_training_step_matches_torch() -> None:
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    cm = cr.nn.Sequential(cr.nn.Linear(4, 8), cr.nn.ReLU(), cr.nn.Linear(8, 2))
    cm.load_state_dict({k: cr.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tm, cm = tm.bfloat16(), cm.bfloat16()
    assert all(p.dtype == cr.bfloat16 for p in cm.parameters())
    for m, model in ((torch, tm), (cr, cm)):
        opt = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = m.tensor(A).bfloat16()
        for _ in range(3):
            opt.zero_grad()
            loss = _f(m).mse_loss(model(x), m.zeros(3, 2, dtype=m.bfloat16))
            loss.backward()
            opt.step()
    for (k, tv), cv in zip(tm.state_dict().items(), cm.state_dict().values()):
        assert cv.dtype == cr.bfloat16, k
        np.testing.assert_allclose(_np(cv), _np(tv), rtol=2e-2, atol=1e-2, err_msg=k)


def test_bfloat16_as_the_default_dtype() -> None:
    cr.set_default_dtype(cr.bfloat16)
    try:
        assert cr.tensor([1.5]).dtype == cr.bfloat16 and cr.ones(2).dtype == cr.bfloat16
    finally:
        cr.set_default_dtype(cr.float32)
    with pytest.raises(TypeError, match="couldn't find storage object Float8_e4m3fnStorage"):
        cr.set_default_dtype(cr.float8_e4m3fn)
