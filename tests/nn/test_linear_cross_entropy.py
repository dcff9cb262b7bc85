"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss (PyTorch 2.13) against torch:
values and gradients (float32 and float64; K-dimensional, bias, class weights,
ignore_index, label smoothing, unbatched, probability targets), the module from copied
weights, repr, errors; nn.factory_kwargs and the grid_sample mode tables."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule
from chainrule.autograd import gradcheck
from tests.nn._compare import DT, close
from tests.nn.test_parametrize import copy_weights, err, same_err

CASES: dict[str, dict[str, Any]] = {
    "plain": dict(),
    "bias_sum": dict(bias=True, reduction="sum"),
    "kdim": dict(out=(2,), bias=True, reduction="none"),
    "weight_ignore": dict(weight=True, ignore_index=1),
    "smoothing": dict(label_smoothing=0.2, bias=True),
    "probs": dict(probs=True, label_smoothing=0.1),
    "unbatched": dict(unbatched=True, bias=True),
}


def _run(lib: Any, case: dict[str, Any], dtype: str) -> tuple[Any, list]:
    c = dict(case)
    rng = np.random.default_rng(0)
    f = DT[dtype][0]
    out = c.pop("out", ())
    n = () if c.pop("unbatched", False) else (5,)
    x = lib.tensor(rng.standard_normal((*n, 4)).astype(f), requires_grad=True)
    w = lib.tensor(rng.standard_normal((3, *out, 4)).astype(f), requires_grad=True)
    leaves = [x, w]
    kw: dict[str, Any] = {}
    if c.pop("bias", False):
        kw["linear_bias"] = lib.tensor(rng.standard_normal((3, *out)).astype(f), requires_grad=True)
        leaves.append(kw["linear_bias"])
    if c.pop("weight", False):
        kw["weight"] = lib.tensor(rng.uniform(0.5, 2, 3).astype(f))
    if c.pop("probs", False):
        t = lib.tensor(rng.dirichlet(np.ones(3), n or None).astype(f))
    else:
        t = lib.tensor(rng.integers(0, 3, (*n, *out)))
    loss = lib.nn.functional.linear_cross_entropy(x, w, t, **kw, **c)
    g = rng.standard_normal(tuple(loss.shape)).astype(f)
    (loss * lib.tensor(g)).sum().backward()
    return loss, leaves


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(CASES))
def test_linear_cross_entropy_matches_torch(case, dtype):
    tl, tleaves = _run(torch, CASES[case], dtype)
    cl, cleaves = _run(chainrule, CASES[case], dtype)
    close(cl, tl, dtype, "loss")
    for i, (c, t) in enumerate(zip(cleaves, tleaves)):
        close(c.grad, t.grad, dtype, f"grad {i}")


def test_linear_cross_entropy_gradcheck():
    rng = np.random.default_rng(1)
    x = chainrule.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = chainrule.tensor(rng.standard_normal((2, 2, 4)), requires_grad=True)
    t = chainrule.tensor(rng.integers(0, 2, (3, 2)))
    assert gradcheck(
        lambda x, w: chainrule.nn.functional.linear_cross_entropy(x, w, t, label_smoothing=0.1),
        (x, w),
    )


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(out_features=(2,), bias=True),
        dict(bias=True, label_smoothing=0.3, reduction="sum"),
    ],
)
def test_module_matches_torch(kw):
    tm = torch.nn.LinearCrossEntropyLoss(4, 3, **kw).double()
    cm = chainrule.nn.LinearCrossEntropyLoss(4, 3, **kw).double()
    assert repr(cm) == repr(tm)
    assert list(cm.state_dict()) == list(tm.state_dict())
    copy_weights(tm, cm)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 4))
    t = rng.integers(0, 3, (5, *kw.get("out_features", ())))
    to, co = tm(torch.tensor(x), torch.tensor(t)), cm(chainrule.tensor(x), chainrule.tensor(t))
    close(co, to, "float64", "loss")
    to.sum().backward()
    co.sum().backward()
    close(cm.linear.weight.grad, tm.linear.weight.grad, "float64", "grad")
    assert repr(chainrule.nn.LinearCrossEntropyOptions()) == repr(
        torch.nn.LinearCrossEntropyOptions()
    )


def test_errors_match_torch():
    same_err(
        lambda lib: lib.nn.functional.linear_cross_entropy(
            lib.ones(2, 5, 4), lib.ones(3, 4), lib.zeros(2, 5, dtype=lib.int64)
        )
    )


def test_factory_kwargs_and_grid_sample_tables():
    for kwargs in (None, {"device": "cpu"}, {"factory_kwargs": {"dtype": None}}):
        assert chainrule.nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)
    for bad in ({"foo": 1}, {"dtype": None, "factory_kwargs": {"dtype": None}}):
        assert err(lambda: chainrule.nn.factory_kwargs(bad)) == err(
            lambda: torch.nn.factory_kwargs(bad)
        )
    F, TF = chainrule.nn.functional, torch.nn.functional
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES
