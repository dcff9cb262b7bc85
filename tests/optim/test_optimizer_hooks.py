"""Optimizers built from named_parameters() (PyTorch 2.6+: param_names in the groups and the
state dict) and the optimizer hooks (step pre/post, state_dict pre/post, load_state_dict
pre/post, the global step hooks), each run the same way through torch and chainrule."""

from __future__ import annotations

import copy
import re
from typing import Any

import numpy as np
import pytest
import torch
import torch.optim.optimizer as topt

import chainrule
import chainrule.optim.optimizer as copt
from tests.nn.test_parametrize import err, same_err


def _model(lib: Any) -> Any:
    m = lib.nn.Linear(2, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[0.5, -1.0], [2.0, 0.25]]))
        m.bias.copy_(lib.tensor([0.1, -0.2]))
    return m


def _plain(groups: list[dict]) -> list[dict]:
    return [{k: v for k, v in g.items() if k != "params"} for g in groups]


OPTS = {
    "SGD": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9),
    "Adam": lambda lib, p: lib.optim.Adam(p, lr=0.01),
    "AdamW": lambda lib, p: lib.optim.AdamW(p, lr=0.01),
    "RMSprop": lambda lib, p: lib.optim.RMSprop(p, lr=0.01),
    "Adagrad": lambda lib, p: lib.optim.Adagrad(p, lr=0.01),
    "LBFGS": lambda lib, p: lib.optim.LBFGS(p, lr=0.5),
}


@pytest.mark.parametrize("name", list(OPTS))
def test_named_parameters_match_torch(name):
    out = {}
    for lib in (torch, chainrule):
        m = _model(lib)
        o = OPTS[name](lib, m.named_parameters())
        x = lib.tensor([[1.0, 2.0], [-1.0, 0.5]])

        def closure():
            o.zero_grad()
            loss = m(x).pow(2).sum()
            loss.backward()
            return loss

        for _ in range(3):
            o.step(closure)
        sd = o.state_dict()
        out[lib.__name__] = (
            o.param_groups[0]["param_names"],
            sd["param_groups"],
            m.weight.detach().numpy().copy(),
            repr(o),
        )
    t, c = out["torch"], out["chainrule"]
    assert c[0] == t[0] == ["weight", "bias"]
    assert c[1] == t[1]
    np.testing.assert_allclose(c[2], t[2], rtol=1e-4, atol=1e-5)
    assert c[3] == t[3]


def test_named_groups_and_loading_match_torch():
    def run(lib):
        m = _model(lib)
        o = lib.optim.SGD(
            [{"params": [("w", m.weight)]}, {"params": [("b", m.bias)], "lr": 1}], lr=0.1
        )
        plain = lib.optim.SGD(m.parameters(), lr=0.3)
        named = lib.optim.SGD(m.named_parameters(), lr=0.2)
        plain2 = lib.optim.SGD(m.parameters(), lr=0.3)
        plain2.load_state_dict(named.state_dict())
        named.load_state_dict(plain.state_dict())
        return (
            o.state_dict()["param_groups"],
            _plain(named.param_groups),
            _plain(plain2.param_groups),
            list(named.param_groups[0]),
        )

    assert run(chainrule) == run(torch)


NAME_ERRORS = {
    "mixed": lambda lib, m: lib.optim.SGD([("w", m.weight), m.bias], lr=0.1),
    "groups_mixed": lambda lib, m: lib.optim.SGD(
        [{"params": [("w", m.weight)]}, {"params": [m.bias]}], lr=0.1
    ),
    "add_named": lambda lib, m: lib.optim.SGD([m.weight], lr=0.1).add_param_group(
        {"params": [("b", m.bias)]}
    ),
}


@pytest.mark.parametrize("case", list(NAME_ERRORS))
def test_named_parameter_errors_match_torch(case):
    same_err(lambda lib: NAME_ERRORS[case](lib, _model(lib)))


def _hook_log(lib: Any, mod: Any) -> list:
    """Every hook kind registered on one optimizer, logging what it sees."""
    log: list = []
    m = _model(lib)
    o = lib.optim.SGD(m.parameters(), lr=0.1)
    handles = [
        mod.register_optimizer_step_pre_hook(
            lambda opt, a, k: log.append(("global pre", type(opt).__name__, len(a), k))
        ),
        mod.register_optimizer_step_post_hook(
            lambda opt, a, k: log.append(("global post", a[0] is opt, k))
        ),
        o.register_step_pre_hook(lambda opt, a, k: log.append(("pre", a[0] is opt, k))),
        o.register_step_post_hook(lambda opt, a, k: log.append(("post", k))),
        o.register_state_dict_pre_hook(lambda opt: log.append("sd pre")),
        o.register_state_dict_pre_hook(lambda opt: log.append("sd pre first"), prepend=True),
        o.register_state_dict_post_hook(lambda opt, sd: {**sd, "extra": 1}),
        o.register_load_state_dict_pre_hook(lambda opt, sd: log.append(("ld pre", sorted(sd)))),
        o.register_load_state_dict_post_hook(lambda opt: log.append("ld post")),
    ]
    try:
        m(lib.ones(1, 2)).sum().backward()
        o.step()
        o.step(closure=None)
        log.append(sorted(o.state_dict()))
        o.load_state_dict(
            {"state": {}, "param_groups": copy.deepcopy(o.state_dict()["param_groups"])}
        )
    finally:
        for h in handles[:2]:
            h.remove()
    for h in handles[2:]:
        h.remove()
    o.step()
    log.append(sorted(o.state_dict()))
    log.append(m.weight.detach().numpy().round(6).tolist())
    return log


def test_hooks_match_torch():
    assert _hook_log(chainrule, copt) == _hook_log(torch, topt)
    assert chainrule.optim.register_optimizer_step_pre_hook is copt.register_optimizer_step_pre_hook


def test_pre_hooks_can_replace_arguments_and_state_dicts():
    for lib in (torch, chainrule):
        m = _model(lib)
        o = lib.optim.SGD(m.parameters(), lr=0.1)
        o.register_load_state_dict_pre_hook(
            lambda opt, sd: {"state": {}, "param_groups": [{**sd["param_groups"][0], "lr": 5.0}]}
        )
        o.load_state_dict(o.state_dict())
        assert o.param_groups[0]["lr"] == 5.0
        o.register_step_pre_hook(lambda opt, a, k: (a, {"closure": lambda: 7.0}))
        assert o.step() == 7.0


def test_bad_pre_hook_result():
    msgs = []
    for lib in (torch, chainrule):
        o = lib.optim.SGD(_model(lib).parameters(), lr=0.1)
        o.register_step_pre_hook(lambda opt, a, k: 3)
        t, msg = err(lambda: o.step())
        msgs.append((t, re.sub(r" at 0x[0-9a-f]+", "", msg)))
    assert msgs[0] == msgs[1]


def test_hooks_run_once_through_a_subclass_step_and_survive_deepcopy():
    calls = []

    class MySGD(chainrule.optim.SGD):
        def step(self, closure=None):
            calls.append("inner")
            return super().step(closure)

    m = _model(chainrule)
    o = MySGD(m.parameters(), lr=0.1)
    o.register_step_pre_hook(lambda opt, a, k: calls.append("pre"))
    m(chainrule.ones(1, 2)).sum().backward()
    o.step()
    assert calls == ["pre", "inner"]
    o2 = copy.deepcopy(o)
    o2.step()
    assert o2.state_dict()["param_groups"][0]["lr"] == 0.1
