"""Helpers shared by the attention and transformer tests: build a layer in both libraries with
the same weights, run the same inputs, compare outputs and every gradient."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import torch

import chainrule

DT = {
    "float32": (np.float32, torch.float32, chainrule.float32),
    "float64": (np.float64, torch.float64, chainrule.float64),
}
TOL = {"float32": {"rtol": 2e-4, "atol": 2e-5}, "float64": {"rtol": 1e-9, "atol": 1e-11}}


def to_cr(t: torch.Tensor, requires_grad: bool | None = None) -> chainrule.Tensor:
    rg = t.requires_grad if requires_grad is None else requires_grad
    return chainrule.tensor(t.detach().numpy().copy(), requires_grad=rg)


def build_pair(make: Callable[[Any], Any], dtype: str) -> tuple[Any, Any]:
    """``make(m)`` written against the torch API, run with torch then chainrule; chainrule's
    module gets torch's weights through ``load_state_dict``."""
    _, tdt, cdt = DT[dtype]
    with warnings.catch_warnings():
        # torch's TransformerEncoder warns that its nested-tensor fast path is off.
        warnings.simplefilter("ignore", UserWarning)
        tm = make(torch).to(tdt)
    cm = make(chainrule).to(cdt)
    assert list(cm.state_dict().keys()) == list(tm.state_dict().keys())
    cm.load_state_dict({k: to_cr(v, False) for k, v in tm.state_dict().items()})
    return tm, cm


def close(a: Any, b: Any, dtype: str, what: str = "") -> None:
    """Assert a chainrule tensor (or None) equals a torch tensor (or None)."""
    if a is None or b is None:
        assert a is None and b is None, f"{what}: {a} vs {b}"
        return
    an = np.asarray(a.detach().numpy() if hasattr(a, "detach") else a)
    bn = b.detach().numpy()
    assert an.shape == bn.shape, f"{what}: shape {an.shape} vs {bn.shape}"
    np.testing.assert_allclose(an, bn, err_msg=what, equal_nan=True, **TOL[dtype])


def compare_backward(
    cr_outs: list, t_outs: list, cr_leaves: dict, t_leaves: dict, dtype: str, seed: int = 0
) -> None:
    """Backward a random weighted sum of the outputs in both libraries and compare the
    gradients of the named leaves (inputs and parameters)."""
    rng = np.random.default_rng(seed)
    tl = 0
    cl = 0
    for c, t in zip(cr_outs, t_outs):
        if t is None:
            continue
        w = rng.standard_normal(tuple(t.shape)).astype(DT[dtype][0])
        tl = tl + (t * torch.from_numpy(w)).sum()
        cl = cl + (c * chainrule.tensor(w)).sum()
    tl.backward()
    cl.backward()
    assert set(cr_leaves) == set(t_leaves)
    for name, t in t_leaves.items():
        close(cr_leaves[name].grad, t.grad, dtype, f"grad of {name}")


def leaves(module: Any, prefix: str = "") -> dict:
    return {prefix + k: p for k, p in module.named_parameters()}


def error_of(f: Callable[[], Any]) -> tuple[type, str] | None:
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the comparison is the point
        return type(e), str(e)
    return None
