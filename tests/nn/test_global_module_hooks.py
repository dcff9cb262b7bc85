"""Hooks common to every Module (``nn.modules.module.register_module_*``) and forward hooks
with ``always_call``: the same programs under chainrule and PyTorch give the same call logs,
values, gradients, warnings and errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")

LIBS = [pytest.param(cr, id="chainrule"), pytest.param(torch, id="torch")]


def _net(lib: Any) -> Any:
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.arange(p.numel(), dtype=lib.float32).reshape(p.shape) * 0.05 - 0.1 * i)
    return net


def _x(lib: Any) -> Any:
    return lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)


def _name(m: Any) -> str:
    return type(m).__name__


def _forward_log(lib: Any) -> tuple[list[str], Any, Any]:
    mm = lib.nn.modules.module
    log: list[str] = []
    handles = [
        mm.register_module_forward_pre_hook(lambda m, a: log.append(f"gpre {_name(m)}")),
        mm.register_module_forward_hook(lambda m, a, o: log.append(f"gpost {_name(m)}")),
        mm.register_module_forward_hook(
            lambda m, a, k, o: log.append(f"gkw {_name(m)} {sorted(k)}"), with_kwargs=True
        ),
    ]
    net = _net(lib)
    net[0].register_forward_pre_hook(lambda m, a: log.append("own pre lin0"))
    net[2].register_forward_hook(lambda m, a, o: o * 2)  # replaces the output
    x = _x(lib)
    try:
        y = net(x)
        y.sum().backward()
    finally:
        for h in handles:
            h.remove()
    log.append("removed")
    net(x)
    return log, y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("lib", LIBS)
def test_global_forward_hooks_run_before_the_modules_own(lib: Any) -> None:
    log, y, g = _forward_log(lib)
    ref_log, ref_y, ref_g = _forward_log(torch)
    assert log == ref_log
    assert log[:3] == ["gpre Sequential", "gpre Linear", "own pre lin0"]
    assert log[-2:] == ["removed", "own pre lin0"]  # removed handles leave no global hook
    np.testing.assert_allclose(y, ref_y, rtol=1e-6)
    np.testing.assert_allclose(g, ref_g, rtol=1e-5, atol=1e-7)


def _replace_args(lib: Any) -> Any:
    mm = lib.nn.modules.module

    def double_tanh_input(m: Any, args: Any) -> Any:
        return args[0] * 2 if isinstance(m, lib.nn.Tanh) else None

    h = mm.register_module_forward_pre_hook(double_tanh_input)
    try:
        return _net(lib)(_x(lib)).detach().numpy()
    finally:
        h.remove()


def test_global_pre_hook_replaces_args() -> None:
    np.testing.assert_allclose(_replace_args(cr), _replace_args(torch), rtol=1e-6)


def _backward_log(lib: Any, pre: bool) -> tuple[list[str], Any, Any]:
    mm = lib.nn.modules.module
    log: list[str] = []

    def full(m: Any, gi: Any, go: Any) -> Any:
        log.append(f"gbw {_name(m)} {[None if g is None else tuple(g.shape) for g in gi]}")
        return None

    def prehook(m: Any, go: Any) -> Any:
        log.append(f"gbwpre {_name(m)}")
        if isinstance(m, lib.nn.Tanh):
            return (go[0] * 3,)
        return None

    handles = [mm.register_module_full_backward_hook(full)]
    if pre:
        handles.append(mm.register_module_full_backward_pre_hook(prehook))
    net = _net(lib)
    net[2].register_full_backward_hook(lambda m, gi, go: log.append("own bw lin2"))
    x = _x(lib)
    try:
        net(x).pow(2).sum().backward()
    finally:
        for h in handles:
            h.remove()
    grads = [p.grad.numpy().copy() for p in net.parameters()]
    return log, x.grad.numpy(), grads


@pytest.mark.parametrize("pre", [False, True])
def test_global_full_backward_hooks_match_torch(pre: bool) -> None:
    log, gx, grads = _backward_log(cr, pre)
    ref_log, ref_gx, ref_grads = _backward_log(torch, pre)
    assert log == ref_log
    # float32 products summed in another order (the BLAS kernel differs by CPU): an element
    # near 3e-3 differs by 4.7e-9 on an AMD EPYC
    np.testing.assert_allclose(gx, ref_gx, rtol=1e-5, atol=1e-7)
    for a, b in zip(grads, ref_grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("lib", LIBS)
def test_global_backward_hook_kinds_cannot_mix(lib: Any) -> None:
    mm = lib.nn.modules.module
    h = mm.register_module_full_backward_hook(lambda m, gi, go: None)
    try:
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
            mm.register_module_backward_hook(lambda m, gi, go: None)
    finally:
        h.remove()


def _registration_log(lib: Any) -> tuple[list[str], Any]:
    mm = lib.nn.modules.module
    log: list[str] = []

    def on_param(m: Any, name: str, p: Any) -> Any:
        log.append(f"param {_name(m)}.{name}")
        return lib.nn.Parameter(p.detach() * 0 + 1) if name == "newp" else None

    def on_buffer(m: Any, name: str, b: Any) -> Any:
        log.append(f"buffer {_name(m)}.{name} {None if b is None else tuple(b.shape)}")
        return None

    def on_module(m: Any, name: str, sub: Any) -> Any:
        log.append(f"module {_name(m)}.{name} {_name(sub)}")
        return None

    handles = [
        mm.register_module_parameter_registration_hook(on_param),
        mm.register_module_buffer_registration_hook(on_buffer),
        mm.register_module_module_registration_hook(on_module),
    ]
    try:
        lib.manual_seed(0)
        seq = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        seq.extra = lib.nn.ReLU()
        seq.newp = lib.nn.Parameter(lib.zeros(2))
        seq[1].running_mean = lib.zeros(2)  # an existing buffer reassigned
        seq.register_buffer("mine", None)
        seq.add_module("none", None)
    finally:
        for h in handles:
            h.remove()
    log.append("removed")
    lib.nn.Linear(1, 1)
    return log, seq.newp.detach().numpy()


def test_registration_hooks_match_torch() -> None:
    log, bias = _registration_log(cr)
    ref_log, ref_bias = _registration_log(torch)
    assert log == ref_log
    assert log[-1] == "removed"
    np.testing.assert_array_equal(bias, ref_bias)
    np.testing.assert_array_equal(bias, [1.0, 1.0])  # the hook's replacement was registered


class _Boom(Exception):
    pass


def _always_log(lib: Any, global_hook: bool) -> tuple[list[str], list[str]]:
    log: list[str] = []

    class Bad(lib.nn.Module):
        def forward(self, x: Any) -> Any:
            raise _Boom("forward failed")

    m = Bad()
    m.register_forward_hook(lambda mod, a, o: log.append(f"own always {o}"), always_call=True)
    m.register_forward_hook(lambda mod, a, o: log.append("own plain"))

    def raising(mod: Any, a: Any, o: Any) -> None:
        log.append("own raising")
        raise ValueError("hook failed")

    m.register_forward_hook(raising, always_call=True)
    handles = []
    if global_hook:
        mm = lib.nn.modules.module
        handles.append(
            mm.register_module_forward_hook(
                lambda mod, a, o: log.append("global always"), always_call=True
            )
        )
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(_Boom, match="forward failed"):
                m(lib.ones(1))
    finally:
        for h in handles:
            h.remove()
    return log, [str(x.message) for x in w]


@pytest.mark.parametrize("global_hook", [False, True])
def test_always_call_forward_hooks_run_when_forward_raises(global_hook: bool) -> None:
    log, warned = _always_log(cr, global_hook)
    ref_log, ref_warned = _always_log(torch, global_hook)
    assert log == ref_log
    assert "own always None" in log and "own plain" not in log
    assert warned == ref_warned
    assert any("silenced as another error was raised in forward: hook failed" in s for s in warned)


def _always_after_success(lib: Any) -> list[str]:
    log: list[str] = []
    m = lib.nn.Identity()
    h = m.register_forward_hook(lambda mod, a, o: log.append("always"), always_call=True)
    m(lib.ones(1))
    h.remove()
    m(lib.ones(1))
    return log


def test_always_call_hook_runs_once_on_success_and_is_removable() -> None:
    assert _always_after_success(cr) == _always_after_success(torch) == ["always"]


def test_no_global_hooks_keeps_the_fast_path() -> None:
    # With nothing registered the call dict that Module.__call__'s fast path reads is empty.
    from chainrule.nn.modules import _global_hooks

    h = cr.nn.modules.module.register_module_forward_hook(lambda m, a, o: None)
    assert _global_hooks.CALL_HOOKS
    h.remove()
    assert not _global_hooks.CALL_HOOKS
    assert not _global_hooks.forward_hooks
