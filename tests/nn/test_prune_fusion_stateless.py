"""nn.utils.prune, BatchNorm fusion and functional_call (torch.func / nn.utils.stateless)
against torch: masks, state-dict keys, hooks, values and gradients from identical weights,
error types and texts."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401 - torch does not import it with nn.utils

import chainrule
from tests.nn._compare import DT, close
from tests.nn.test_parametrize import copy_weights, same_err

DTYPES = ["float32", "float64"]


def _linear(lib: Any, dtype: str = "float64") -> Any:
    """A 5x6 Linear (and a Conv2d) with distinct weights, equal in both libraries."""
    w = np.random.default_rng(0).permutation(30).reshape(5, 6) / 7.0 - 2.03
    m = lib.nn.Linear(6, 5).to(DT[dtype][1] if lib is torch else DT[dtype][2])
    with lib.no_grad():
        m.weight.copy_(lib.tensor(w.astype(DT[dtype][0])))
        m.bias.copy_(lib.tensor(np.arange(5.0, dtype=DT[dtype][0]) - 2))
    return m


PRUNES: dict[str, Callable[[Any, Any], None]] = {
    "l1_fraction": lambda P, m: P.l1_unstructured(m, "weight", 0.3),
    "l1_count": lambda P, m: P.l1_unstructured(m, "weight", 7),
    "l1_zero": lambda P, m: P.l1_unstructured(m, "weight", 0),
    "l1_scores": lambda P, m: P.l1_unstructured(
        m, "weight", 5, importance_scores=m.weight.detach().flip(0)
    ),
    "l1_twice": lambda P, m: (
        P.l1_unstructured(m, "weight", 0.5),
        P.l1_unstructured(m, "weight", 4),
    ),
    "ln_rows": lambda P, m: P.ln_structured(m, "weight", 2, n=2, dim=0),
    "ln_cols_l1": lambda P, m: P.ln_structured(m, "weight", 0.34, n=1, dim=-1),
    "ln_inf": lambda P, m: P.ln_structured(m, "weight", 1, n=float("inf"), dim=1),
    "l1_then_ln": lambda P, m: (
        P.l1_unstructured(m, "weight", 6),
        P.ln_structured(m, "weight", 2, n=2, dim=1),
    ),
    "ln_then_l1": lambda P, m: (
        P.ln_structured(m, "weight", 2, n=2, dim=0),
        P.l1_unstructured(m, "weight", 0.5),
    ),
    "custom": lambda P, m: P.custom_from_mask(m, "bias", m.bias.detach() > 0),
    "identity": lambda P, m: P.identity(m, "weight"),
    "bias_and_weight": lambda P, m: (
        P.l1_unstructured(m, "bias", 2),
        P.l1_unstructured(m, "weight", 3),
    ),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(PRUNES))
def test_prune_matches_torch(case, dtype):
    tm, cm = _linear(torch, dtype), _linear(chainrule, dtype)
    PRUNES[case](torch.nn.utils.prune, tm)
    PRUNES[case](chainrule.nn.utils.prune, cm)
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    for k, v in tm.state_dict().items():
        close(cm.state_dict()[k], v, dtype, k)
    assert [type(h).__name__ for h in cm._forward_pre_hooks.values()] == [
        type(h).__name__ for h in tm._forward_pre_hooks.values()
    ]
    x = np.random.default_rng(1).standard_normal((3, 6)).astype(DT[dtype][0])
    to, co = tm(torch.tensor(x)), cm(chainrule.tensor(x))
    close(co, to, dtype, "output")
    to.sum().backward()
    co.sum().backward()
    for n, p in tm.named_parameters():
        close(dict(cm.named_parameters())[n].grad, p.grad, dtype, f"grad {n}")
    assert chainrule.nn.utils.prune.is_pruned(cm)
    # remove() makes it permanent, as in torch.
    for name in ("weight", "bias"):
        if hasattr(tm, name + "_mask"):
            torch.nn.utils.prune.remove(tm, name)
            chainrule.nn.utils.prune.remove(cm, name)
    assert list(cm.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        close(cm.state_dict()[k], v, dtype, k)
    assert not chainrule.nn.utils.prune.is_pruned(cm)
    assert all(isinstance(p, chainrule.nn.Parameter) for p in cm.parameters())


def test_prune_keeps_the_parameter_object_and_container():
    m = _linear(chainrule)
    w = m.weight
    P = chainrule.nn.utils.prune
    P.l1_unstructured(m, "weight", 3)
    assert m.weight_orig is w
    P.random_unstructured(m, "weight", 0.5)
    (hook,) = m._forward_pre_hooks.values()
    assert isinstance(hook, P.PruningContainer) and len(hook) == 2
    assert [type(h).__name__ for h in hook] == ["L1Unstructured", "RandomUnstructured"]
    # 3 pruned, then half of the remaining 27, rounded.
    assert int((m.weight_mask == 0).sum()) == 3 + round(0.5 * 27)
    P.remove(m, "weight")
    assert m.weight is w and int((w == 0).sum()) == 3 + 14


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_random_structured_prunes_whole_channels(dim):
    m = _linear(chainrule)
    chainrule.nn.utils.prune.random_structured(m, "weight", 2, dim=dim)
    mask = m.weight_mask.numpy()
    per_channel = mask.sum(axis=1 - (dim % 2))
    full = mask.shape[1 - (dim % 2)]
    assert sorted(set(per_channel.tolist())) == [0.0, float(full)]
    assert int((per_channel == 0).sum()) == 2


def test_global_unstructured_matches_torch():
    def run(lib):
        a, b = _linear(lib), _linear(lib)
        with lib.no_grad():
            b.weight.mul_(0.37)
        lib.nn.utils.prune.l1_unstructured(a, "weight", 4)
        lib.nn.utils.prune.global_unstructured(
            [(a, "weight"), (b, "weight"), (b, "bias")],
            pruning_method=lib.nn.utils.prune.L1Unstructured,
            amount=20,
        )
        return a, b

    (ta, tb), (ca, cb) = run(torch), run(chainrule)
    for t, c in ((ta, ca), (tb, cb)):
        assert list(c.state_dict()) == list(t.state_dict())
        for k, v in t.state_dict().items():
            close(c.state_dict()[k], v, "float64", k)


PRUNE_ERRORS = {
    "amount_float": lambda P, m: P.l1_unstructured(m, "weight", 1.5),
    "amount_negative": lambda P, m: P.l1_unstructured(m, "weight", -1),
    "amount_type": lambda P, m: P.l1_unstructured(m, "weight", "a"),
    "amount_too_big": lambda P, m: P.l1_unstructured(m, "weight", 31),
    "structured_too_big": lambda P, m: P.ln_structured(m, "weight", 6, n=2, dim=0),
    "no_such_name": lambda P, m: P.l1_unstructured(m, "foo", 1),
    "remove_unpruned": lambda P, m: P.remove(m, "weight"),
    "dim": lambda P, m: P.ln_structured(m, "weight", 1, n=2, dim=5),
    "structured_1d": lambda P, m: P.ln_structured(m, "bias", 1, n=2, dim=0),
    "global_structured": lambda P, m: P.global_unstructured(
        [(m, "weight")], P.RandomStructured, amount=1
    ),
    "global_not_iterable": lambda P, m: P.global_unstructured(m, P.L1Unstructured, amount=1),
    "custom_shape": lambda P, m: P.custom_from_mask(m, "weight", m.bias),
}


@pytest.mark.parametrize("case", list(PRUNE_ERRORS))
def test_prune_errors_match_torch_and_leave_module_unchanged(case):
    mods = {}

    def make(lib):
        m = mods[lib.__name__] = _linear(lib)
        PRUNE_ERRORS[case](lib.nn.utils.prune, m)

    same_err(make)
    cm = mods["chainrule"]
    assert list(cm.state_dict()) == ["weight", "bias"] and not cm._forward_pre_hooks
    assert isinstance(cm.weight, chainrule.nn.Parameter)


# Fusion ---------------------------------------------------------------------------------------
def _bn_pair(make_bn: Callable[[Any], Any], n: int, dtype: str) -> tuple[Any, Any]:
    tb = make_bn(torch).to(DT[dtype][1])
    rng = np.random.default_rng(2)
    with torch.no_grad():
        tb.running_mean.copy_(torch.tensor(rng.standard_normal(n)))
        tb.running_var.copy_(torch.tensor(rng.uniform(0.5, 2, n)))
        if tb.weight is not None:
            tb.weight.copy_(torch.tensor(rng.uniform(0.5, 2, n)))
            tb.bias.copy_(torch.tensor(rng.standard_normal(n)))
    cb = make_bn(chainrule).to(DT[dtype][2])
    copy_weights(tb, cb)
    return tb.eval(), cb.eval()


FUSE_CONV = {
    "conv2d": (
        lambda nn: nn.Conv2d(3, 4, 3, padding=1),
        lambda nn: nn.BatchNorm2d(4),
        (2, 3, 5, 5),
        False,
    ),
    "conv1d_nobias_noaffine": (
        lambda nn: nn.Conv1d(3, 4, 2, bias=False),
        lambda nn: nn.BatchNorm1d(4, affine=False),
        (2, 3, 6),
        False,
    ),
    "convT2d": (
        lambda nn: nn.ConvTranspose2d(3, 4, 2, stride=2),
        lambda nn: nn.BatchNorm2d(4, eps=1e-3),
        (2, 3, 3, 3),
        True,
    ),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(FUSE_CONV))
def test_fuse_conv_bn_eval_matches_torch(case, dtype):
    mk_conv, mk_bn, shape, transpose = FUSE_CONV[case]
    tc = mk_conv(torch.nn).to(DT[dtype][1]).eval()
    cc = mk_conv(chainrule.nn).to(DT[dtype][2]).eval()
    copy_weights(tc, cc)
    tb, cb = _bn_pair(lambda lib: mk_bn(lib.nn), 4, dtype)
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose=transpose)
    cf = chainrule.nn.utils.fuse_conv_bn_eval(cc, cb, transpose=transpose)
    assert cf is not cc and type(cf) is type(cc)
    x = np.random.default_rng(3).standard_normal(shape).astype(DT[dtype][0])
    close(cf(chainrule.tensor(x)), tf(torch.tensor(x)), dtype, "fused")
    close(cf(chainrule.tensor(x)), cb(cc(chainrule.tensor(x))), dtype, "fused vs unfused")
    for n, p in tf.named_parameters():
        cp = dict(cf.named_parameters())[n]
        assert isinstance(cp, chainrule.nn.Parameter) and cp.requires_grad == p.requires_grad
        close(cp, p, dtype, n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fuse_linear_bn_eval_matches_torch(dtype):
    tl, cl = _linear(torch, dtype).eval(), _linear(chainrule, dtype).eval()
    tb, cb = _bn_pair(lambda lib: lib.nn.BatchNorm1d(5), 5, dtype)
    tf = torch.nn.utils.fusion.fuse_linear_bn_eval(tl, tb)
    cf = chainrule.nn.utils.fuse_linear_bn_eval(cl, cb)
    x = np.random.default_rng(3).standard_normal((4, 6)).astype(DT[dtype][0])
    close(cf(chainrule.tensor(x)), tf(torch.tensor(x)), dtype, "fused")


def test_fusion_errors_match_torch():
    same_err(
        lambda lib: lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(2, 2, 1), lib.nn.BatchNorm2d(2))
    )
    same_err(
        lambda lib: lib.nn.utils.fusion.fuse_linear_bn_eval(
            lib.nn.Linear(2, 3).eval(), lib.nn.BatchNorm1d(2).eval()
        )
    )


# functional_call ------------------------------------------------------------------------------
def _tied(lib: Any) -> Any:
    class Tied(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(2, 2)
            self.b = lib.nn.Linear(2, 2)
            self.b.weight = self.a.weight

        def forward(self, x, scale=1.0):
            return self.b(self.a(x)) * scale

    torch.manual_seed(0)
    return Tied()


CALLS = {
    "weight": lambda lib, m, x, W: lib.func.functional_call(m, {"a.weight": W}, (x,)),
    "tied": lambda lib, m, x, W: lib.func.functional_call(m, {"a.weight": W}, x),
    "untied": lambda lib, m, x, W: lib.func.functional_call(
        m, {"a.weight": W}, (x,), tie_weights=False
    ),
    "dicts": lambda lib, m, x, W: lib.func.functional_call(
        m, ({"a.weight": W}, {"b.bias": W[0]}), args=(), kwargs={"x": x, "scale": 2.0}
    ),
    "strict": lambda lib, m, x, W: lib.func.functional_call(
        m, {"a.weight": W, "a.bias": W[1], "b.bias": W[0]}, (x,), strict=True
    ),
}


@pytest.mark.parametrize("case", list(CALLS))
def test_functional_call_matches_torch(case):
    tm, cm = _tied(torch), _tied(chainrule)
    copy_weights(tm, cm)
    x = np.random.default_rng(4).standard_normal((3, 2))
    w = np.random.default_rng(5).standard_normal((2, 2))
    tW, cW = torch.tensor(w, requires_grad=True), chainrule.tensor(w, requires_grad=True)
    tm.double()
    cm.double()
    before = {k: v.clone() for k, v in cm.state_dict().items()}
    to = CALLS[case](torch, tm, torch.tensor(x), tW)
    co = CALLS[case](chainrule, cm, chainrule.tensor(x), cW)
    close(co, to, "float64", "output")
    to.sum().backward()
    co.sum().backward()
    close(cW.grad, tW.grad, "float64", "grad of the given weight")
    for n, p in tm.named_parameters():
        close(dict(cm.named_parameters())[n].grad, p.grad, "float64", n)
    # The module's own tensors are back.
    assert cm.b.weight is cm.a.weight
    for k, v in cm.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k].numpy())


def test_functional_call_buffers_and_restore_on_error():
    bn = chainrule.nn.BatchNorm1d(2)
    rm = chainrule.zeros(2)
    mean = bn.running_mean
    chainrule.func.functional_call(bn, {"running_mean": rm}, (chainrule.ones(4, 2),))
    assert bn.running_mean is mean and float(mean.abs().sum()) == 0
    np.testing.assert_allclose(rm.numpy(), [0.1, 0.1], rtol=1e-6)
    with pytest.raises(RuntimeError):
        chainrule.func.functional_call(bn, {"weight": chainrule.ones(3)}, (chainrule.ones(4, 2),))
    assert bn.weight.shape == (2,) and isinstance(bn.weight, chainrule.nn.Parameter)


FC_ERRORS = {
    "strict": lambda lib, m: lib.func.functional_call(
        m, {"foo": lib.zeros(2)}, (lib.ones(1, 2),), strict=True
    ),
    "strict_missing": lambda lib, m: lib.func.functional_call(
        m, {"a.weight": lib.zeros(2, 2)}, (lib.ones(1, 2),), strict=True
    ),
    "tied_twice": lambda lib, m: lib.func.functional_call(
        m, {"a.weight": lib.zeros(2, 2), "b.weight": lib.ones(2, 2)}, (lib.ones(1, 2),)
    ),
    "two_dicts": lambda lib, m: lib.func.functional_call(
        m, ({"a.bias": lib.zeros(2)}, {"a.bias": lib.zeros(2)}), (lib.ones(1, 2),)
    ),
}


@pytest.mark.parametrize("case", list(FC_ERRORS))
def test_functional_call_errors_match_torch(case):
    same_err(lambda lib: FC_ERRORS[case](lib, _tied(lib)))


def test_stateless_functional_call_warns_and_works():
    m = chainrule.nn.Linear(2, 1)
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        out = chainrule.nn.utils.stateless.functional_call(
            m,
            {"weight": chainrule.ones(1, 2), "bias": chainrule.zeros(1)},
            (chainrule.tensor([[1.0, 2.0]]),),
        )
    assert out.item() == 3.0
