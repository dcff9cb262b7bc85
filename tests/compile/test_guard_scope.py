"""chainrule.compile's scope guards (Note [scope plan] in chainrule/_compile/guards.py): each
property of the scope that a compiled call depends on is changed between calls, in a compiled
copy and an eager copy of the same model, and the compiled call must re-capture (or replay)
and stay bit-identical to eager; hooks of every kind send calls to eager; optimizer
hyperparameters are read live."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn.modules import module as nn_module

F = nn.functional


def _model() -> Any:
    cr.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.LeakyReLU(0.1), nn.Linear(3, 2))


def _run(model: Any, x: Any) -> Any:
    loss = model(x).pow(2).mean()
    if loss.requires_grad:
        loss.backward()
    return loss.detach()


def _both(f: Any, a: Any, b: Any, x: Any) -> None:
    """One call of ``f`` (compiled, on ``a``) and of ``_run`` on ``b``, from no gradients."""
    for m in (a, b):
        for p in m.parameters():
            p.grad = None
    _same(a, b, f(x), _run(b, x))


def _same(a: Any, b: Any, out_a: Any, out_b: Any) -> None:
    np.testing.assert_array_equal(out_a.numpy(), out_b.numpy())
    pa, pb = list(a.parameters()), list(b.parameters())
    assert len(pa) == len(pb)
    for p, q in zip(pa, pb):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    for s, t in zip(a.buffers(), b.buffers()):
        np.testing.assert_array_equal(s.numpy(), t.numpy())


def _param(shape: tuple[int, ...], seed: int) -> Any:
    rng = np.random.default_rng(seed)
    return nn.Parameter(cr.from_numpy(rng.standard_normal(shape).astype(np.float32)))


def _tensor(shape: tuple[int, ...], seed: int) -> Any:
    rng = np.random.default_rng(seed)
    return cr.from_numpy(rng.standard_normal(shape).astype(np.float32))


def _replace_dict(m: Any, seed: int) -> None:
    # A module's __dict__ swapped for a new dict with a new _parameters registry: the old
    # __dict__ (and its values) are untouched, so only the __dict__'s identity shows it.
    d = dict(m.__dict__)
    d["_parameters"] = OrderedDict(weight=_param((3, 4), seed), bias=_param((3,), seed + 1))
    m.__dict__ = d


# Each change is applied to the compiled model and to the eager one alike.
CHANGES: dict[str, Callable[[Any, int], None]] = {
    "reassign_parameter": lambda m, s: setattr(m[0], "weight", _param((3, 4), s)),
    "write_parameters_dict": lambda m, s: m[3]._parameters.__setitem__("bias", _param((2,), s)),
    "parameter_to_none": lambda m, s: setattr(m[3], "bias", None),
    "replace_submodule": lambda m, s: m.__setitem__(3, _seeded(s, lambda: nn.Linear(3, 2))),
    "add_submodule": lambda m, s: m.append(nn.Tanh()),
    "delete_submodule": lambda m, s: m.__delitem__(2),
    "replace_buffer": lambda m, s: setattr(m[1], "running_mean", _tensor((3,), s)),
    "new_buffer": lambda m, s: m[1].register_buffer("extra", cr.zeros(3)),
    "requires_grad_off": lambda m, s: m[0].requires_grad_(False),
    "eval": lambda m, s: m.eval(),
    "scalar_attribute": lambda m, s: setattr(m[2], "negative_slope", 0.5),
    "bn_eps": lambda m, s: setattr(m[1], "eps", 0.5),
    "replace_module_dict": lambda m, s: _replace_dict(m[0], s),
    "grad_set": lambda m, s: None,  # _run clears .grad: see test_grad_presence
}


def _seeded(seed: int, make: Callable[[], Any]) -> Any:
    cr.manual_seed(seed)
    return make()


@pytest.mark.parametrize("change", sorted(set(CHANGES) - {"grad_set"}))
def test_change_between_calls_is_seen(change: str) -> None:
    a, b = _model(), _model()
    f = cr.compile(lambda x: _run(a, x))
    x = _tensor((5, 4), 7)
    for _ in range(4):
        _both(f, a, b, x)
    assert f.stats["replays"] == 2  # two captures, then replays (Note [second capture])
    walks, captures = f.guards.walks, f.stats["captures"]
    CHANGES[change](a, 11)
    CHANGES[change](b, 11)
    for _ in range(4):
        _both(f, a, b, x)
    # Walked again once, then the new plan holds (requires_grad is read on every call).
    assert f.guards.walks == walks + (change != "requires_grad_off")
    assert f.stats["captures"] > captures  # a new signature: captured again
    assert f.stats["replays"] >= 3  # and replayed after its two captures


def test_scalar_attribute_is_guarded() -> None:
    # Without the module-attribute guard, the replay keeps the captured slope (a wrong answer).
    m = nn.Sequential(nn.Linear(4, 3), nn.LeakyReLU(0.1))
    f = cr.compile(lambda x: m(x))
    x = _tensor((5, 4), 1)
    for _ in range(4):
        f(x)
    m[1].negative_slope = 0.5
    np.testing.assert_array_equal(f(x).detach().numpy(), m(x).detach().numpy())
    m[1].negative_slope = 0.1
    replays = f.stats["replays"]
    np.testing.assert_array_equal(f(x).detach().numpy(), m(x).detach().numpy())
    assert f.stats["replays"] == replays + 1  # the first signature's capture serves again


def test_unchanged_scope_is_walked_once() -> None:
    a = _model()
    f = cr.compile(lambda x: _run(a, x))
    x = _tensor((5, 4), 7)
    for _ in range(6):
        a.zero_grad()
        f(x)
        a[0].weight.data.mul_(0.5)  # in-place changes need no new walk
    assert f.guards.walks == 1
    assert f.stats["replays"] == 4


def test_grad_presence_and_requires_grad_are_read_each_call() -> None:
    a, b = _model(), _model()

    def run(m: Any, x: Any) -> Any:
        loss = m(x).pow(2).mean()
        loss.backward()
        return loss.detach()

    f = cr.compile(lambda x: run(a, x))
    x = _tensor((5, 4), 3)
    for i in range(10):
        if i % 3 == 0:
            a.zero_grad()
            b.zero_grad()
        if i == 6:
            a[3].weight.requires_grad_(False)
            b[3].weight.requires_grad_(False)
        _same(a, b, f(x), run(b, x))
    assert f.guards.walks == 1


def test_global_and_closure_rebinding() -> None:
    a1, a2, b2 = _model(), _model(), _model()
    for m in (a2, b2):
        m[0].weight.data.mul_(2.0)
    holder = {"m": a1}
    f = cr.compile(lambda x: _run(holder["m"], x))  # a dict read at run time: not a root
    g_model = [a1]

    def step(x: Any) -> Any:
        return _run(g_model[0], x)

    g = cr.compile(step)
    x = _tensor((5, 4), 5)
    for _ in range(3):
        f(x)
        g(x)
    holder["m"] = a2
    g_model[0] = a2  # a list in the closure: its item is watched
    for _ in range(3):
        _same(a2, b2, g(x), _run(b2, x))
    # f's dict is reached through the closure too (a root, depth 2)
    np.testing.assert_array_equal(f(x).numpy(), _run(b2, x).numpy())
    assert g.guards.walks == 2


def test_rebound_closure_variable() -> None:
    a = _model()
    other_a, other_b = _model(), _model()
    for m in (other_a, other_b):
        m[3].bias.data.fill_(3.0)
    model = a

    def step(x: Any) -> Any:
        return _run(model, x)

    f = cr.compile(step)
    x = _tensor((5, 4), 5)
    for _ in range(3):
        f(x)
    model = other_a  # noqa: F841 (read by step's closure)
    for _ in range(3):
        _same(other_a, other_b, f(x), _run(other_b, x))
    assert f.guards.walks == 2


def test_reassigned_forward_is_seen() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x: Any) -> Any:
            return self.fc(x).sum()

    net = Net()
    f = cr.compile(net)
    x = _tensor((3, 4), 2)
    for _ in range(3):
        f(x)
    Net.forward = lambda self, x: (self.fc(x) * 2).sum()  # type: ignore[method-assign]
    np.testing.assert_array_equal(f(x).detach().numpy(), net(x).detach().numpy())


# Hooks -----------------------------------------------------------------------------------


def _hook_cases() -> dict[str, Callable[[Any, list[int]], Any]]:
    def note(calls: list[int]) -> Callable[..., None]:
        return lambda *a, **k: calls.append(1)

    return {
        "forward_pre": lambda m, c: m[0].register_forward_pre_hook(note(c)),
        "forward": lambda m, c: m[0].register_forward_hook(note(c)),
        "forward_always_call": lambda m, c: m[0].register_forward_hook(note(c), always_call=True),
        "backward_pre": lambda m, c: m[0].register_full_backward_pre_hook(note(c)),
        "full_backward": lambda m, c: m[0].register_full_backward_hook(note(c)),
        "global_forward_pre": lambda m, c: nn_module.register_module_forward_pre_hook(note(c)),
        "global_forward": lambda m, c: nn_module.register_module_forward_hook(note(c)),
        "global_forward_always_call": lambda m, c: nn_module.register_module_forward_hook(
            note(c), always_call=True
        ),
        "global_backward_pre": lambda m, c: nn_module.register_module_full_backward_pre_hook(
            note(c)
        ),
        "global_full_backward": lambda m, c: nn_module.register_module_full_backward_hook(note(c)),
        "global_parameter_registration": lambda m, c: (
            nn_module.register_module_parameter_registration_hook(note(c))
        ),
        "tensor": lambda m, c: m[0].weight.register_hook(note(c)),
        "post_accumulate": lambda m, c: m[0].weight.register_post_accumulate_grad_hook(note(c)),
    }


@pytest.mark.parametrize("kind", sorted(_hook_cases()))
@pytest.mark.filterwarnings("ignore:Full backward hook")
def test_hook_added_then_removed(kind: str) -> None:
    a, b = _model(), _model()
    f = cr.compile(lambda x: _run(a, x))
    x = _tensor((5, 4), 7)
    for _ in range(4):
        _both(f, a, b, x)
    calls: list[int] = []
    handle = _hook_cases()[kind](a, calls)
    eager = f.stats["eager"]
    try:
        for i in range(3):
            _both(f, a, b, x)
            if kind != "global_parameter_registration":
                assert calls, kind  # the hook ran on every call, as eager runs it
        assert f.stats["eager"] == eager + 3
        assert "runs eagerly" in f.explain() and "hooks" in f.explain()
    finally:
        handle.remove()
    replays = f.stats["replays"]
    for _ in range(2):
        _both(f, a, b, x)
    assert f.stats["replays"] == replays + 2  # the earlier capture replays again
    assert "runs eagerly" not in f.explain()


def test_hook_calls_equal_eager() -> None:
    # A module backward pre-hook and a global forward hook each run once per call, as eager.
    a = _model()
    f = cr.compile(lambda x: _run(a, x))
    x = _tensor((5, 4), 7)
    for _ in range(3):
        f(x)
    calls: list[str] = []
    h1 = a[3].register_full_backward_pre_hook(lambda m, g: calls.append("bw_pre"))
    h2 = nn_module.register_module_forward_hook(lambda m, i, o: calls.append("fwd"))
    try:
        for _ in range(4):
            f(x)
    finally:
        h1.remove()
        h2.remove()
    assert calls.count("bw_pre") == 4
    assert calls.count("fwd") == 4 * 5  # five modules (Sequential and its four layers)


def test_accumulate_grad_node_hook() -> None:
    a = _model()
    f = cr.compile(lambda x: _run(a, x))
    x = _tensor((5, 4), 7)
    for _ in range(3):
        f(x)
    w = a[0].weight
    node = w.expand_as(w).grad_fn.next_functions[0][0]  # the leaf's AccumulateGrad, kept
    calls: list[int] = []
    h = node.register_prehook(lambda g: calls.append(1))
    try:
        f(x)
    finally:
        h.remove()
    assert calls == [1]
    assert "AccumulateGrad" in f.explain()


def test_hooks_under_fullgraph_raise() -> None:
    a = _model()
    f = cr.compile(lambda x: _run(a, x), fullgraph=True)
    x = _tensor((5, 4), 7)
    f(x)
    h = nn_module.register_module_forward_pre_hook(lambda m, i: None)
    try:
        with pytest.raises(cr.compiler.Unsupported, match="global module hooks"):
            f(x)
    finally:
        h.remove()
    h = a[0].register_full_backward_pre_hook(lambda m, g: None)
    try:
        with pytest.raises(cr.compiler.Unsupported, match="backward pre-hooks"):
            f(x)
    finally:
        h.remove()
    f(x)


# Optimizers ------------------------------------------------------------------------------


def _opt_step(m: Any, o: Any, x: Any) -> Any:
    o.zero_grad()
    loss = F.mse_loss(m(x), cr.zeros(5, 2))
    loss.backward()
    o.step()
    return loss.detach()


OPTS: dict[str, Callable[[Any], Any]] = {
    "sgd": lambda p: cr.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
    "adam": lambda p: cr.optim.Adam(p, lr=0.01),
    "adamw": lambda p: cr.optim.AdamW(p, lr=0.01, amsgrad=True),
    "rmsprop": lambda p: cr.optim.RMSprop(p, lr=0.01, momentum=0.5),
}
HYPER: dict[str, Callable[[int], Any]] = {
    "lr": lambda i: 0.05 / (i + 1),
    "momentum": lambda i: 0.5 + 0.05 * i,
    "weight_decay": lambda i: 0.1 * i,
    "betas": lambda i: (0.8 + 0.01 * i, 0.99),
    "eps": lambda i: 1e-3 * (i + 1),
    "maximize": lambda i: bool(i % 2),
    "alpha": lambda i: 0.9 + 0.01 * i,
}


@pytest.mark.parametrize("optname", sorted(OPTS))
@pytest.mark.parametrize("key", sorted(HYPER))
def test_hyperparameters_are_read_live(optname: str, key: str) -> None:
    (a, b) = (_model(), _model())
    oa, ob = OPTS[optname](a.parameters()), OPTS[optname](b.parameters())
    if key not in oa.param_groups[0]:
        pytest.skip(f"{optname} has no {key}")
    f = cr.compile(lambda x: _opt_step(a, oa, x))
    x = _tensor((5, 4), 9)
    for i in range(8):
        for o in (oa, ob):
            o.param_groups[0][key] = HYPER[key](i)
        _same(a, b, f(x), _opt_step(b, ob, x))
    assert f.stats["replays"] >= 4  # replayed, not re-captured, as the values changed
    assert f.guards.walks == 1


@pytest.mark.parametrize("sched", ["step", "onecycle"])
def test_lr_scheduler_between_calls(sched: str) -> None:
    a, b = _model(), _model()
    oa = cr.optim.SGD(a.parameters(), lr=0.1, momentum=0.9)
    ob = cr.optim.SGD(b.parameters(), lr=0.1, momentum=0.9)
    if sched == "step":
        sa = cr.optim.lr_scheduler.StepLR(oa, 1, 0.5)
        sb = cr.optim.lr_scheduler.StepLR(ob, 1, 0.5)
    else:
        sa = cr.optim.lr_scheduler.OneCycleLR(oa, max_lr=0.5, total_steps=20)
        sb = cr.optim.lr_scheduler.OneCycleLR(ob, max_lr=0.5, total_steps=20)
    f = cr.compile(lambda x: _opt_step(a, oa, x))
    x = _tensor((5, 4), 9)
    for _ in range(8):
        _same(a, b, f(x), _opt_step(b, ob, x))
        sa.step()
        sb.step()
    assert oa.param_groups[0]["lr"] == ob.param_groups[0]["lr"]
    assert f.stats["replays"] >= 5


@pytest.mark.parametrize("change", ["add_param_group", "replace_params", "append_param"])
def test_optimizer_groups_changed(change: str) -> None:
    a, b = _model(), _model()
    oa = cr.optim.SGD(list(a[0].parameters()), lr=0.1)
    ob = cr.optim.SGD(list(b[0].parameters()), lr=0.1)
    f = cr.compile(lambda x: _opt_step(a, oa, x))
    x = _tensor((5, 4), 9)
    for _ in range(4):
        _same(a, b, f(x), _opt_step(b, ob, x))
    walks = f.guards.walks
    for m, o in ((a, oa), (b, ob)):
        if change == "add_param_group":
            o.add_param_group({"params": list(m[3].parameters()), "lr": 0.2})
        elif change == "replace_params":
            o.param_groups[0]["params"] = list(m[3].parameters())
        else:
            o.param_groups[0]["params"].append(m[3].weight)
    for _ in range(4):
        _same(a, b, f(x), _opt_step(b, ob, x))
    assert f.guards.walks == walks + 1


def test_tensor_reached_only_through_an_optimizer() -> None:
    # A weight that only the optimizer names (read at run time through its group): replacing
    # the group's params list must re-walk, or the replay would read the old weight.
    def make() -> tuple[Any, Any]:
        w = nn.Parameter(_tensor((4, 2), 1))
        return w, cr.optim.SGD([w], lr=0.1)

    (_, oa), (_, ob) = make(), make()

    def step(o: Any, x: Any) -> Any:
        o.zero_grad()
        loss = (x @ o.param_groups[0]["params"][0]).pow(2).mean()
        loss.backward()
        o.step()
        return loss.detach()

    f = cr.compile(lambda x: step(oa, x))
    x = _tensor((5, 4), 2)
    for _ in range(3):
        np.testing.assert_array_equal(f(x).numpy(), step(ob, x).numpy())
    for o, seed in ((oa, 5), (ob, 5)):
        o.param_groups[0]["params"] = [nn.Parameter(_tensor((4, 2), seed))]
    for _ in range(3):
        np.testing.assert_array_equal(f(x).numpy(), step(ob, x).numpy())
    for p, q in zip(oa.param_groups[0]["params"], ob.param_groups[0]["params"]):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert f.guards.walks == 2
