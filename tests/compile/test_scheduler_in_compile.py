"""An LR scheduler's step inside a compiled function changes Python state (the groups'
learning rates), which a replay would not: the capture breaks there and every call runs
eagerly, so the parameters follow the eager run exactly."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr


def _setup():
    cr.manual_seed(0)
    model = cr.nn.Linear(3, 2)
    opt = cr.optim.SGD(model.parameters(), lr=0.5)
    sched = cr.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    x = cr.randn(4, 3)
    y = cr.randn(4, 2)
    return model, opt, sched, x, y


def _run(compiled: bool, scheduler_inside: bool, steps: int = 5):
    model, opt, sched, x, y = _setup()

    def step():
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        if scheduler_inside:
            sched.step()
        return loss.detach()

    fn = cr.compile(step) if compiled else step
    for _ in range(steps):
        fn()
        if not scheduler_inside:
            sched.step()
    return model.weight.detach().numpy().copy(), opt.param_groups[0]["lr"], fn


@pytest.mark.parametrize("inside", [True, False])
def test_scheduler_step_follows_eager(inside: bool) -> None:
    w_eager, lr_eager, _ = _run(False, inside)
    w_comp, lr_comp, fn = _run(True, inside)
    assert lr_comp == lr_eager == 0.5 * 0.5**5
    np.testing.assert_array_equal(w_comp, w_eager)
    if inside:
        assert fn.stats["replays"] == 0  # the scheduler's step breaks the capture
        assert "LR scheduler" in fn.explain()
    else:
        assert fn.stats["replays"] > 0  # outside, the step itself still replays


def test_fullgraph_names_the_scheduler() -> None:
    model, opt, sched, x, y = _setup()

    @cr.compile(fullgraph=True)
    def step():
        loss = model(x).sum()
        sched.step()
        return loss.detach()

    with pytest.raises(cr.compiler.Unsupported, match="LR scheduler step"):
        step()
        step()
