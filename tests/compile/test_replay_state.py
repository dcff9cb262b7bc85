"""What a replay sets besides its arrays: the optimizer step at a sync point (run whole, with
the caller's write site fixed: Note [fixed site] in autograd/_sites.py), and the state notes,
which hold only what changes (Note [changed entries] in chainrule/_compile/capture.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

import chainrule as cr
from chainrule import nn
from chainrule.autograd import _sites

F = nn.functional


def _arr(t: Any) -> Any:
    return t.detach().numpy().copy()


def _make(opt_cls: Any = None) -> tuple[Any, Any]:
    cr.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Tanh(), nn.Linear(6, 2))
    o = (opt_cls or cr.optim.SGD)(m.parameters(), lr=0.1, momentum=0.9)
    return m, o


def _step(m: Any, o: Any, x: Any, y: Any) -> Any:
    o.zero_grad()
    loss = F.mse_loss(m(x), y)
    loss.backward()
    o.step()
    return loss.detach()


def _same_state(m1: Any, m2: Any) -> None:
    for p1, p2 in zip(
        list(m1.parameters()) + list(m1.buffers()), list(m2.parameters()) + list(m2.buffers())
    ):
        np.testing.assert_array_equal(_arr(p1), _arr(p2))
        assert p1._version == p2._version
        assert (p1.grad is None) == (p2.grad is None)
        if p1.grad is not None:
            np.testing.assert_array_equal(_arr(p1.grad), _arr(p2.grad))


def test_a_replayed_optimizer_step_walks_the_stack_once(monkeypatch: Any) -> None:
    # Note [fixed site]: the step's six parameter bumps take the caller's site without a walk
    # each; the one walk of the replay finds the caller. Versions and values as eager's.
    (m1, o1), (m2, o2) = _make(), _make()
    f = cr.compile(_step)
    x, y = cr.randn(8, 4), cr.randn(8, 2)
    for _ in range(4):  # no grads and state, then two captures of the steady signature
        f(m1, o1, x, y)
        _step(m2, o2, x, y)
    assert f.stats["replays"] == 1
    walks = []
    real = _sites._getframe

    def counting(depth: int = 0) -> Any:
        walks.append(depth)
        return real(depth + 1)

    monkeypatch.setattr(_sites, "_getframe", counting)
    f(m1, o1, x, y)
    monkeypatch.setattr(_sites, "_getframe", real)
    _step(m2, o2, x, y)
    assert f.stats["replays"] == 2
    assert len(walks) == 1
    assert _sites.FIXED_SITE.site is None  # unset again after the step
    _same_state(m1, m2)
    code = test_a_replayed_optimizer_step_walks_the_stack_once.__code__
    for p in m1.parameters():
        site = p._get_vc().last_write
        assert site is not None and site[0] is code


def test_a_step_hook_keeps_its_own_write_site() -> None:
    # With a step hook (user code) the site is not fixed: a write in the hook has the hook's
    # line as its site, as in eager.
    (m1, o1), (m2, o2) = _make(), _make()

    def hook(opt: Any, args: Any, kwargs: Any) -> None:
        with cr.no_grad():
            opt.param_groups[0]["params"][0].mul_(0.5)

    o1.register_step_post_hook(hook)
    o2.register_step_post_hook(hook)
    f = cr.compile(_step)
    x, y = cr.randn(8, 4), cr.randn(8, 2)
    for _ in range(5):
        f(m1, o1, x, y)
        _step(m2, o2, x, y)
    assert f.stats["replays"] == 2
    _same_state(m1, m2)
    site = m1[0].weight._get_vc().last_write
    assert site is not None and site[0] is hook.__code__


class _Shrink(cr.optim.SGD):
    """An SGD whose step does more work after its update (and keeps a gradient aside)."""

    def step(self, closure: Any = None) -> Any:
        out = super().step(closure)
        with cr.no_grad():
            for p in self.param_groups[0]["params"]:
                p.mul_(0.5)
                p.grad = None
        return out


def test_a_subclass_step_is_replayed_whole_once() -> None:
    # The sync point is the whole step(): a replay runs the subclass's work after its update
    # once (it was recorded into the program too, and ran twice), versions as eager.
    (m1, o1), (m2, o2) = _make(_Shrink), _make(_Shrink)

    def step(m: Any, o: Any, x: Any, y: Any) -> Any:
        o.zero_grad()
        F.mse_loss(m(x), y).backward()
        keep = m[3].weight.grad
        o.step()
        m[3].weight.grad = keep  # back to the tensor the step dropped
        return keep.detach()

    f = cr.compile(step)
    x, y = cr.randn(8, 4), cr.randn(8, 2)
    for _ in range(5):
        a = f(m1, o1, x, y)
        b = step(m2, o2, x, y)
        np.testing.assert_array_equal(_arr(a), _arr(b))
        _same_state(m1, m2)
    assert f.stats["replays"] >= 2
    assert m1[3].weight.grad is not None and m1[0].weight.grad is None


def _capture_of(f: Any) -> Any:
    (cap,) = f.cache.values()
    return cap


def test_notes_hold_only_what_changes() -> None:
    # The final note of zero_grad/backward/step sets nothing: the gradients were set at the
    # sync point, where BatchNorm's statistics move their versions, and no training flag moved.
    (m1, o1), (m2, o2) = _make(), _make()
    f = cr.compile(_step)
    x, y = cr.randn(8, 4), cr.randn(8, 2)
    for _ in range(4):
        f(m1, o1, x, y)
        _step(m2, o2, x, y)
    _same_state(m1, m2)
    cap = _capture_of(f)
    (sync,) = [note for _, note in cap.syncs]
    assert len(sync.grads) == 6 and all(type(g) is tuple for _, g in sync.grads)
    assert sync.training == [] and sync.data == []
    assert len(sync.versions) == 3  # BatchNorm's running_mean, running_var, num_batches_tracked
    final = cap.final
    assert final.grads == [] and final.training == [] and final.data == []
    assert final.versions == []  # the step's bumps: the replay runs the step


def test_changes_after_the_step_are_set() -> None:
    # What fn changes after the step (gradients dropped, an eval pass between train passes)
    # is in the final note and set by the replay, as eager leaves it.
    (m1, o1), (m2, o2) = _make(), _make()

    def step(m: Any, o: Any, x: Any, y: Any) -> Any:
        loss = _step(m, o, x, y)
        o.zero_grad()
        m.eval()
        with cr.no_grad():
            ev = m(x)
        m.train()
        m[1].eval()  # left in eval mode: the next call's guard differs
        return loss, ev

    f = cr.compile(step)
    x, y = cr.randn(8, 4), cr.randn(8, 2)
    for _ in range(5):
        m1[1].train()
        m2[1].train()
        a = f(m1, o1, x, y)
        b = step(m2, o2, x, y)
        for u, v in zip(a, b):
            np.testing.assert_array_equal(_arr(u), _arr(v))
        _same_state(m1, m2)
        assert [m.training for m in m1.modules()] == [m.training for m in m2.modules()]
    assert f.stats["replays"] == 2
    cap = _capture_of(f)
    assert len(cap.final.grads) == 6 and all(g is None for _, g in cap.final.grads)
    assert cap.final.training == [(2, False)]


def test_a_first_capture_holds_no_program_nor_buffers() -> None:
    # Note [second capture]: the first capture of a signature is only compared with the
    # second; it is not written out (no program, no fused buffers held until the next call).
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))
    f = cr.compile(model)
    x = cr.randn(8, 16)
    with cr.no_grad():
        f(x)
        (first,) = f.pending.values()
        assert first.program is None and first.bytes_buffers == 0
        assert not hasattr(first, "source")
        f(x)
        cap = _capture_of(f)
        assert cap.program is not None and cap.bytes_buffers > 0
        out = f(x)
    assert f.stats["replays"] == 1
    with cr.no_grad():
        np.testing.assert_array_equal(_arr(out), _arr(model(x)))
