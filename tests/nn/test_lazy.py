"""Lazy modules and UninitializedParameter / UninitializedBuffer against torch: repr and
state-dict keys before the first call, the class each becomes, inferred shapes, values and
gradients after the first call (torch's initialized weights copied over; float32 and
float64), initialization statistics, load_state_dict into a lazy module, and errors."""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np
import pytest
import torch

import chainrule
from tests.nn._compare import DT, close
from tests.nn.test_parametrize import copy_weights, err

DTYPES = ["float32", "float64"]

LAZY: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "LazyLinear": (lambda nn: nn.LazyLinear(4), (2, 3)),
    "LazyLinear_nobias_3d": (lambda nn: nn.LazyLinear(4, bias=False), (2, 5, 3)),
    "LazyLinear_1d": (lambda nn: nn.LazyLinear(2), (3,)),
    "LazyConv1d": (lambda nn: nn.LazyConv1d(4, 3, padding=1), (2, 3, 6)),
    "LazyConv1d_unbatched": (lambda nn: nn.LazyConv1d(4, 2), (3, 6)),
    "LazyConv2d_groups": (lambda nn: nn.LazyConv2d(4, 3, stride=2, groups=2), (2, 4, 7, 6)),
    "LazyConv3d": (lambda nn: nn.LazyConv3d(2, 2, bias=False), (1, 3, 3, 4, 3)),
    "LazyConvTranspose1d": (lambda nn: nn.LazyConvTranspose1d(4, 3, stride=2), (2, 3, 5)),
    "LazyConvTranspose2d": (lambda nn: nn.LazyConvTranspose2d(4, 2, groups=2), (2, 2, 3, 4)),
    "LazyConvTranspose3d": (lambda nn: nn.LazyConvTranspose3d(2, 2), (1, 3, 2, 3, 2)),
    "LazyBatchNorm1d": (lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    "LazyBatchNorm2d": (lambda nn: nn.LazyBatchNorm2d(momentum=0.3), (4, 3, 2, 2)),
    "LazyBatchNorm3d_noaffine": (lambda nn: nn.LazyBatchNorm3d(affine=False), (2, 3, 2, 2, 2)),
    "LazyBatchNorm1d_nostats": (
        lambda nn: nn.LazyBatchNorm1d(track_running_stats=False),
        (4, 3, 5),
    ),
    "LazyInstanceNorm1d": (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 5)),
    "LazyInstanceNorm2d": (lambda nn: nn.LazyInstanceNorm2d(affine=False), (2, 3, 4, 4)),
    "LazyInstanceNorm3d": (
        lambda nn: nn.LazyInstanceNorm3d(track_running_stats=False),
        (2, 3, 2, 3, 2),
    ),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(LAZY))
def test_lazy_module_matches_torch(case, dtype):
    make, shape = LAZY[case]
    tm, cm = make(torch.nn), make(chainrule.nn)
    assert type(cm).__name__ == type(tm).__name__
    assert repr(cm) == repr(tm)
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert cm.has_uninitialized_params() and tm.has_uninitialized_params()
    assert isinstance(cm, getattr(chainrule.nn, type(tm).cls_to_become.__name__))
    tm.to(DT[dtype][1])
    cm.to(DT[dtype][2])
    x = np.random.default_rng(0).standard_normal(shape).astype(DT[dtype][0])
    tx = torch.tensor(x, requires_grad=True)
    cx = chainrule.tensor(x, requires_grad=True)
    to = tm(tx)
    cm(cx)
    # Both became the ordinary class, with the same shapes; torch's values are copied over.
    assert type(cm).__name__ == type(tm).__name__ == type(tm).__name__.replace("Lazy", "")
    assert repr(cm) == repr(tm)
    assert not cm._forward_pre_hooks
    assert [(k, tuple(v.shape)) for k, v in cm.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in tm.state_dict().items()
    ]
    assert all(
        type(p) is chainrule.nn.Parameter and p.dtype == DT[dtype][2] for p in cm.parameters()
    )
    tm2 = copy.deepcopy(tm)
    copy_weights(tm2, cm)
    tx.grad = None
    to = tm2(tx)
    co = cm(cx)
    close(co, to, dtype, "output")
    to.pow(2).sum().backward()
    co.pow(2).sum().backward()
    close(cx.grad, tx.grad, dtype, "grad x")
    for n, p in tm2.named_parameters():
        close(dict(cm.named_parameters())[n].grad, p.grad, dtype, n)
    for k, v in tm2.state_dict().items():
        close(cm.state_dict()[k], v, dtype, k)


def test_lazy_linear_initialization_statistics():
    chainrule.manual_seed(0)
    m = chainrule.nn.LazyLinear(400)
    m(chainrule.ones(1, 100))
    w = m.weight.detach().numpy()
    bound = 1 / np.sqrt(100)
    assert w.min() >= -bound and w.max() <= bound and w.std() > 0.5 * bound
    bn = chainrule.nn.LazyBatchNorm2d()
    bn.eval()
    bn(chainrule.ones(1, 3, 2, 2))
    np.testing.assert_array_equal(bn.running_var.numpy(), np.ones(3))
    np.testing.assert_array_equal(bn.weight.detach().numpy(), np.ones(3))


def test_load_state_dict_materializes():
    for lib in (torch, chainrule):
        m = lib.nn.LazyLinear(4)
        src = lib.nn.Linear(5, 4)
        m.load_state_dict(src.state_dict())
        assert type(m).__name__ == "LazyLinear" and not m.has_uninitialized_params()
        assert tuple(m.weight.shape) == (4, 5)
        out = m(lib.ones(2, 5))
        assert type(m).__name__ == "Linear" and tuple(out.shape) == (2, 4)
    c = chainrule.nn.LazyLinear(4)
    t = torch.nn.LazyLinear(4)
    assert err(lambda: t.load_state_dict({"weight": torch.ones(4, 2)})) == err(
        lambda: c.load_state_dict({"weight": chainrule.ones(4, 2)})
    )


def test_parameters_are_the_same_objects_after_the_first_call():
    m = chainrule.nn.LazyConv2d(3, 1)
    w, b = m.weight, m.bias
    opt = chainrule.optim.SGD([w, b], lr=0.1)
    m(chainrule.ones(1, 2, 2, 2)).sum().backward()
    assert m.weight is w and m.bias is b and w.grad is not None
    opt.step()


def test_uninitialized_tensors():
    nn = chainrule.nn
    p, b = nn.UninitializedParameter(), nn.UninitializedBuffer()
    assert repr(p) == "<UninitializedParameter>" and repr(b) == "<UninitializedBuffer>"
    assert p.requires_grad and not b.requires_grad
    assert isinstance(p, nn.Parameter) and isinstance(p, chainrule.nn.parameter.Parameter)
    assert chainrule.nn.parameter.UninitializedParameter is nn.UninitializedParameter
    p.materialize((2, 3))
    b.materialize(4, dtype=chainrule.float64)
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.requires_grad
    assert type(b) is chainrule.Tensor and b.dtype == chainrule.float64 and b.shape == (4,)
    q = copy.deepcopy(nn.LazyLinear(3))
    assert q.has_uninitialized_params() and tuple(q(chainrule.ones(2, 5)).shape) == (2, 3)


ERRORS = {
    "shape": lambda lib: lib.nn.LazyLinear(4).weight.shape,
    "add": lambda lib: lib.nn.LazyLinear(4).weight + 1,
    "dtype_mismatch": lambda lib: lib.nn.LazyLinear(4)(lib.ones(2, 3, dtype=lib.float64)),
    "conv_dims": lambda lib: lib.nn.LazyConv2d(4, 3)(lib.ones(2, 3)),
    "conv_groups": lambda lib: lib.nn.LazyConv1d(4, 1, groups=2)(lib.ones(1, 3, 4)),
    "bn_batched": lambda lib: (
        lib.nn.LazyInstanceNorm1d()(lib.ones(2, 3, 5)).sum() + lib.nn.Linear(2, 2)(lib.ones(3))
    ),
    "load_missing": lambda lib: lib.nn.LazyLinear(3).load_state_dict({"weight": lib.ones(3, 2)}),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(case):
    t, c = err(lambda: ERRORS[case](torch)), err(lambda: ERRORS[case](chainrule))
    assert t is not None and c is not None
    if case == "add":
        # torch names the tensor method that was called; chainrule's ops all read the array.
        assert c[0] == t[0] and c[1].startswith("Attempted to use an uninitialized parameter")
        return
    assert c == t
