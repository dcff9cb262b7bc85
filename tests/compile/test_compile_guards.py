"""chainrule.compile guards beyond the signature: in-place changes made outside the compiled
function to captured parameters, buffers and optimizer state (their versions move; the replay
reads them live and moves versions as eager does), and ``dynamic=True`` (Note [dynamic shapes]
in chainrule/_compile/api.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn

F = nn.functional


def _arr(t: Any) -> Any:
    return t.detach().numpy().copy()


def _pair(optname: str) -> tuple[Any, Any]:
    def make() -> Any:
        cr.manual_seed(0)
        m = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Tanh(), nn.Linear(6, 2))
        if optname == "sgd":
            o = cr.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        else:
            o = cr.optim.Adam(m.parameters(), lr=0.01)
        return m, o

    return make(), make()


def _step(m: Any, o: Any, x: Any, y: Any) -> Any:
    o.zero_grad()
    loss = F.mse_loss(m(x), y)
    loss.backward()
    o.step()
    return loss.detach()


def _outside(m: Any, o: Any, kind: str, i: int) -> None:
    """An in-place change made between calls, outside the compiled function."""
    with cr.no_grad():
        if kind == "parameter":
            m[0].weight.mul_(0.5 + 0.1 * i)
        elif kind == "buffer":
            m[1].running_mean.add_(1.0)
        elif kind == "data":
            m[3].bias.data.fill_(float(i))
        elif kind == "state":
            for st in o.state.values():
                for v in st.values():
                    if isinstance(v, cr.Tensor) and v.is_floating_point() and v.dim() > 0:
                        v.mul_(0.5)
        elif kind == "lr":
            o.param_groups[0]["lr"] *= 0.5


@pytest.mark.parametrize("optname", ["sgd", "adam"])
@pytest.mark.parametrize("kind", ["parameter", "buffer", "data", "state", "lr"])
def test_in_place_change_outside_is_read_live(kind: str, optname: str) -> None:
    (m1, o1), (m2, o2) = _pair(optname)
    f = cr.compile(_step)
    rng = np.random.default_rng(0)
    for i in range(7):
        x = cr.tensor(rng.standard_normal((5, 4)).astype(np.float32))
        y = cr.tensor(rng.standard_normal((5, 2)).astype(np.float32))
        if i >= 3:
            _outside(m1, o1, kind, i)
            _outside(m2, o2, kind, i)
        assert np.array_equal(_arr(f(m1, o1, x, y)), _arr(_step(m2, o2, x, y)))
        for (n, p), q in zip(m1.named_parameters(), m2.parameters()):
            assert np.array_equal(_arr(p), _arr(q)), n
            assert p._version == q._version, n
        for b, c in zip(m1.buffers(), m2.buffers()):
            assert np.array_equal(_arr(b), _arr(c))
        for s1, s2 in zip(o1.state.values(), o2.state.values()):
            for k in s1:
                a, b = s1[k], s2[k]
                if isinstance(a, cr.Tensor):
                    assert np.array_equal(_arr(a), _arr(b)), k
                    assert a._version == b._version, k
    assert f.stats["replays"] >= 3


def test_tensor_outside_the_scope_changed_in_place_invalidates() -> None:
    class Holder:  # not a module: its tensor is a constant of the program
        def __init__(self) -> None:
            self.scale = cr.tensor([2.0, 3.0])

    h = Holder()

    def f(x: Any) -> Any:
        return x * h.scale + 1.0

    c = cr.compile(f)
    x = cr.tensor([1.0, 1.0])
    for _ in range(3):
        assert np.array_equal(_arr(c(x)), [3.0, 4.0])
    assert c.stats["replays"] == 1
    with cr.no_grad():
        h.scale.mul_(2.0)
    assert np.array_equal(_arr(c(x)), [5.0, 7.0])  # the guard on the constant failed
    assert c.stats["replays"] == 1


def _mlp() -> Any:
    cr.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))


def _fwd(m: Any, x: Any) -> Any:
    with cr.no_grad():
        return m(x)


@pytest.mark.parametrize("dynamic", [False, None, True])
def test_dynamic_shapes(dynamic: Any) -> None:
    m = _mlp()
    f = cr.compile(_fwd, dynamic=dynamic)
    rng = np.random.default_rng(1)
    batches = [4] * 3 + [6] * 3 + [4] * 3 + list(range(7, 17))
    for b in batches:
        x = cr.tensor(rng.standard_normal((b, 3)).astype(np.float32))
        assert np.array_equal(_arr(f(m, x)), _arr(_fwd(m, x)))
    if dynamic is True:
        # One shape at a time: the return to batch 4 re-captured, and ten new shapes
        # never held more than one capture.
        assert len(f.cache) <= 1 and len(f.pending) <= 1
        assert f.stats["replays"] == 3
    else:
        # Every shape is a signature of its own: batch 4 replays at once after batch 6.
        assert f.stats["replays"] == 5
        assert len(f.cache) == 2 and len(f.pending) == 6
    # Shapes 4, 6 and 7-12 were captured; 13-16 are past the recompile limit of 8.
    assert f.stats["eager"] == 4


def test_dynamic_keeps_other_structures() -> None:
    m = _mlp()
    f = cr.compile(_fwd, dynamic=True)
    x2 = cr.ones(4, 3)
    x3 = cr.ones(2, 4, 3)  # another number of dimensions: another structure
    for _ in range(3):
        f(m, x2)
        f(m, x3)
    assert len(f.cache) == 2 and f.stats["replays"] == 2
    for b in (5, 6, 7):
        f(m, cr.ones(b, 3))
    f(m, x3)
    assert f.stats["replays"] == 3


@pytest.mark.parametrize("dynamic", [False, True])
def test_recompile_limit_runs_new_shapes_eagerly(dynamic: bool) -> None:
    m = _mlp()
    f = cr.compile(_fwd, dynamic=dynamic)
    for b in range(1, 13):
        x = cr.ones(b, 3)
        assert np.array_equal(_arr(f(m, x)), _arr(_fwd(m, x)))
    assert f.stats["captures"] == 8 and f.stats["eager"] == 4
    assert "recompile limit" in f.explain() and f.stats["limited"] == 4
    x = cr.ones(8, 3)  # a shape captured before the limit: it still replays (or re-captures)
    for _ in range(3):
        f(m, x)
    assert f.stats["replays"] >= 1


def _tree_model() -> nn.Module:
    shared = nn.Linear(3, 3)
    inner = nn.Sequential(shared, nn.BatchNorm1d(3), nn.Sequential(shared, nn.ReLU()))
    model = nn.Sequential(nn.Linear(4, 3), inner, shared)
    model.register_buffer("scale", cr.ones(3))
    model.add_module("none", None)
    return model


def test_scope_walk_matches_modules_parameters_buffers() -> None:
    # Note [scope walk]: the direct walk visits what modules(), parameters() and buffers() do,
    # in their order, each object once (shared submodules and tensors included).
    from chainrule._compile.guards import discover

    model = _tree_model()
    model[0].bias = model[1][0].bias  # a parameter shared by two modules
    scope = discover(model, (), {})
    assert [id(m) for m in scope.modules] == [id(m) for m in model.modules()]
    want = list(model.parameters()) + list(model.buffers())
    assert [id(t) for t in scope.tensors] == [id(t) for t in want]


def _counting(model: nn.Module) -> tuple[Any, Any]:
    def step(x: Any) -> Any:
        return model(x).sum()

    return cr.compile(step), step


@pytest.mark.parametrize(
    "change", ["replace_submodule", "add_submodule", "reassign_parameter", "new_buffer", "eval"]
)
def test_module_tree_changes_are_seen_by_the_next_call(change: str) -> None:
    # Each change between calls makes the next call's signature differ from the captured one
    # (nothing of the walk is cached), and results keep matching eager.
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    f, step = _counting(model)
    x = cr.randn(5, 4)
    for _ in range(3):
        f(x)
    assert f.stats["replays"] == 1
    captures = f.stats["captures"]
    if change == "replace_submodule":
        model[2] = nn.Linear(3, 2)
    elif change == "add_submodule":
        model.append(nn.Tanh())
    elif change == "reassign_parameter":
        model[0].weight = nn.Parameter(cr.randn(3, 4))
    elif change == "new_buffer":
        model[1].register_buffer("extra", cr.zeros(3))
    else:
        model.eval()
    out = f(x)
    assert f.stats["captures"] == captures + 1  # a new signature: captured, not replayed
    np.testing.assert_array_equal(out.detach().numpy(), step(x).detach().numpy())


def test_replay_moves_versions_and_write_sites_as_eager() -> None:
    # A replay moves each written tensor's version by what the eager step did, and notes the
    # write's site (Note [sites]) as the caller's frame: one stack walk serves every counter.
    (m1, o1), (m2, o2) = _pair("sgd")
    f = cr.compile(_step)
    x, y = cr.randn(8, 4), cr.randn(8, 2)
    for _ in range(5):
        f(m1, o1, x, y)
        _step(m2, o2, x, y)
    assert f.stats["replays"] == 2
    # BatchNorm's running statistics are written by the program (the replay moves their
    # versions); the parameters by the optimizer's step.
    t1 = list(m1.buffers()) + list(m1.parameters())
    t2 = list(m2.buffers()) + list(m2.parameters())
    for p1, p2 in zip(t1, t2):
        assert p1._version == p2._version
        np.testing.assert_array_equal(_arr(p1), _arr(p2))
        site = p1._get_vc().last_write
        assert (
            site is not None
            and site[0] is test_replay_moves_versions_and_write_sites_as_eager.__code__
        )


class _Counted(nn.Module):
    """A module whose forward reads and changes a Python attribute: every call is a new
    guard signature (the attribute's value is guarded)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.scale = 1.0

    def forward(self, x: Any) -> Any:
        self.scale += 0.5
        return self.lin(x) * self.scale


def test_a_value_the_call_changes_stops_capturing_at_the_limit() -> None:
    """A guarded Python value that the call itself changes would make every call capture
    (two or three eager runs each); past the recompile limit (8 signatures, as
    torch._dynamo's recompile_limit) new signatures run eagerly, with the same results."""
    from chainrule._compile.api import RECOMPILE_LIMIT

    a, b = _Counted(), _Counted()
    b.load_state_dict(a.state_dict())
    f = cr.compile(lambda x: a(x))
    x = cr.ones(4, 3)
    for _ in range(RECOMPILE_LIMIT + 6):
        np.testing.assert_array_equal(_arr(f(x)), _arr(b(x)))
    assert a.scale == b.scale == 1.0 + 0.5 * (RECOMPILE_LIMIT + 6)
    assert f.stats["captures"] == RECOMPILE_LIMIT and f.stats["replays"] == 0
    assert f.stats["limited"] == 6 and f.stats["eager"] == 6
    rep = f.explain()
    assert f"6 calls past the recompile limit ({RECOMPILE_LIMIT} signatures other" in rep


def test_structures_below_the_limit_keep_replaying() -> None:
    """Train and eval mode, grad and no-grad: four structures, all replayed."""
    m = _mlp()
    f = cr.compile(_fwd)
    x = cr.ones(4, 3)
    for mode in (True, False):
        m.train(mode)
        for grad in (True, False):
            with cr.set_grad_enabled(grad):
                for _ in range(3):
                    assert np.array_equal(_arr(f(m, x)), _arr(_fwd(m, x)))
    assert f.stats["replays"] == 4 and f.stats["limited"] == 0
