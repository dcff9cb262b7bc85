"""chainrule.compile: modules and train steps compiled against eager, bit for bit; guards;
graph breaks; random ops; reset, disable, explain; captures do not keep graphs alive."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.compiler import Unsupported

F = nn.functional


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, cr.Tensor):
        return np.array_equal(a.detach().numpy(), b.detach().numpy())
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return a == b


def _batch(rng: np.random.Generator, *shape: int) -> Any:
    return cr.tensor(rng.standard_normal(shape).astype(np.float32))


def _models(make: Any) -> tuple[Any, Any]:
    cr.manual_seed(0)
    a = make()
    cr.manual_seed(0)
    b = make()
    return a, b


MODELS = {
    "linear": (lambda: nn.Linear(6, 3), (4, 6)),
    "mlp": (lambda: nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)), (4, 6)),
    "conv2d": (lambda: nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU()), (2, 2, 6, 6)),
    "batchnorm": (lambda: nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5)), (4, 6)),
    "lstm": (lambda: nn.LSTM(4, 8, batch_first=True), (2, 5, 4)),
}


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", list(MODELS))
def test_module_forward_backward_matches_eager(name: str) -> None:
    make, shape = MODELS[name]
    m1, m2 = _models(make)

    def step(m: Any, x: Any) -> Any:
        out = _first(m(x))
        out.square().mean().backward()
        return out.detach(), [p.grad for p in m.parameters()]

    compiled = cr.compile(step)
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = _batch(rng, *shape)
        for p in m1.parameters():
            p.grad = None
        for p in m2.parameters():
            p.grad = None
        assert _eq(compiled(m1, x), step(m2, x))
        for b1, b2 in zip(m1.buffers(), m2.buffers()):
            assert _eq(b1, b2)
    assert compiled.stats["replays"] == 3


@pytest.mark.parametrize("opt", ["sgd", "adam"])
@pytest.mark.parametrize("name", ["mlp", "conv2d", "batchnorm", "lstm"])
def test_train_step_matches_eager(name: str, opt: str) -> None:
    make, shape = MODELS[name]
    m1, m2 = _models(make)

    def make_opt(m: Any) -> Any:
        if opt == "sgd":
            return cr.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
        return cr.optim.Adam(m.parameters(), lr=1e-2)

    o1, o2 = make_opt(m1), make_opt(m2)

    def step(m: Any, o: Any, x: Any) -> Any:
        o.zero_grad()
        loss = _first(m(x)).square().mean()
        loss.backward()
        o.step()
        return loss.detach()

    compiled = cr.compile(step)
    rng = np.random.default_rng(2)
    for _ in range(6):
        x = _batch(rng, *shape)
        assert _eq(compiled(m1, o1, x), step(m2, o2, x))
        for p, q in zip(m1.parameters(), m2.parameters()):
            assert _eq(p, q) and _eq(p.grad, q.grad) and p._version == q._version
        for b1, b2 in zip(m1.buffers(), m2.buffers()):
            assert _eq(b1, b2)
    assert compiled.stats["replays"] == 3  # signatures: before and after the first step


def test_compiled_module_forwards_attributes() -> None:
    m = nn.Linear(3, 2)
    c = cr.compile(m)
    assert c._orig_mod is m and list(c.parameters()) == list(m.parameters())
    c.eval()
    assert not m.training


def test_module_compile_in_place_no_grad() -> None:
    m1, m2 = _models(MODELS["mlp"][0])
    m1.compile()
    rng = np.random.default_rng(3)
    with cr.no_grad():
        for _ in range(4):
            x = _batch(rng, 4, 6)
            assert _eq(m1(x), m2(x))
    assert m1.forward.stats["replays"] == 2


def test_decorator_forms() -> None:
    @cr.compile
    def f(x: Any) -> Any:
        return (x * 2).sin()

    @cr.compile(fullgraph=True)
    def g(x: Any) -> Any:
        return (x * 2).sin()

    x = cr.tensor([1.0, 2.0])
    for _ in range(3):
        assert _eq(f(x), (x * 2).sin()) and _eq(g(x), (x * 2).sin())
    assert cr.compile(f, disable=True) is f


# --- guards ---------------------------------------------------------------------------------


def _counting() -> Any:
    def f(x: Any, s: Any = 1.0) -> Any:
        return (x * s).exp().sum()

    return cr.compile(f), f


@pytest.mark.parametrize(
    "change",
    ["shape", "dtype", "requires_grad", "scalar", "grad_mode"],
)
def test_guard_change_recaptures(change: str) -> None:
    c, f = _counting()
    x = cr.tensor([1.0, 2.0, 3.0])
    for _ in range(3):
        c(x)
    assert c.stats["replays"] == 1
    kwargs: dict[str, Any] = {}
    y = x
    if change == "shape":
        y = cr.tensor([1.0, 2.0])
    elif change == "dtype":
        y = cr.tensor([1.0, 2.0, 3.0], dtype=cr.float64)
    elif change == "requires_grad":
        y = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    elif change == "scalar":
        kwargs = {"s": 2.0}
    if change == "grad_mode":
        with cr.no_grad():
            out = c(y)
            assert _eq(out, f(y))
    else:
        out = c(y, **kwargs)
        assert _eq(out.detach(), f(y, **kwargs).detach())
    assert c.stats["captures"] == 3  # two for the first signature, one for the new one


def test_guard_training_flag_and_parameter_identity() -> None:
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    c = cr.compile(m)
    x = cr.tensor(np.ones((2, 3), np.float32))
    with cr.no_grad():
        for _ in range(3):
            c(x)
        n = c.stats["captures"]
        m.eval()
        a = c(x)
        assert c.stats["captures"] == n + 1
        assert _eq(a, m(x))
        m[0].weight = nn.Parameter(cr.zeros(3, 3))
        for _ in range(3):
            assert _eq(c(x), m(x))


def test_parameter_changed_outside_is_read_live() -> None:
    m = nn.Linear(3, 2)
    c = cr.compile(m)
    x = cr.tensor(np.ones((1, 3), np.float32))
    with cr.no_grad():
        for _ in range(3):
            c(x)
        m.weight.mul_(2.0)
        assert _eq(c(x), m(x))
    assert c.stats["replays"] >= 2


def test_cache_is_bounded() -> None:
    c, _ = _counting()
    for n in range(1, 12):
        for _ in range(3):
            c(cr.ones(n))
    assert len(c.cache) <= 8


# --- graph breaks ---------------------------------------------------------------------------

BREAKS = {
    "item": lambda x: x * x.sum().item(),
    "float": lambda x: x * float(x.sum()),
    "bool_after_write": lambda x: x if not x.add_(1).sum() > 0 else x * 2,
    "tolist": lambda x: cr.tensor(x.tolist()) * 2,
    "numpy": lambda x: cr.tensor(np.asarray(x) * 2),
    "nonzero": lambda x: x.nonzero().float().sum(),
    "masked_select": lambda x: x.masked_select(x > 0).sum(),
    "unique": lambda x: x.unique().sum(),
}


@pytest.mark.parametrize("cause", list(BREAKS))
def test_graph_break_falls_back_to_eager(cause: str) -> None:
    fn = BREAKS[cause]
    c = cr.compile(fn)
    rng = np.random.default_rng(4)
    for _ in range(4):
        x = np.round(rng.standard_normal(5)).astype(np.float32)
        assert _eq(c(cr.tensor(x)), fn(cr.tensor(x)))
    assert c.stats["replays"] == 0
    assert "eager" in c.explain()


@pytest.mark.parametrize("cause", ["item", "tolist"])
def test_fullgraph_raises_naming_the_line(cause: str) -> None:
    c = cr.compile(BREAKS[cause], fullgraph=True)
    with pytest.raises(Unsupported, match=r"test_compile\.py:\d+"):
        c(cr.tensor([1.0, -2.0, 3.0]))


def test_hooks_and_anomaly_run_eagerly() -> None:
    m = nn.Linear(2, 2)
    seen = []
    m.register_forward_hook(lambda mod, i, o: seen.append(1))
    c = cr.compile(m)
    x = cr.ones(1, 2)
    for _ in range(3):
        c(x)
    assert len(seen) == 3 and c.stats["replays"] == 0

    def f(x: Any) -> Any:
        return (x * 2).sum()

    cf = cr.compile(f)
    with cr.autograd.detect_anomaly():
        for _ in range(3):
            cf(x)
    assert cf.stats["replays"] == 0
    with pytest.raises(Unsupported):
        with cr.autograd.detect_anomaly():
            cr.compile(f, fullgraph=True)(x)


def test_unknown_autograd_function_breaks_only_on_value_reads() -> None:
    class Double(cr.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    def f(x: Any) -> Any:
        y = Double.apply(x)
        y.sum().backward()
        return y.detach(), x.grad

    c = cr.compile(f)
    for i in range(4):
        x1 = cr.tensor([1.0, 2.0 + i], requires_grad=True)
        x2 = cr.tensor([1.0, 2.0 + i], requires_grad=True)
        assert _eq(c(x1), f(x2))


# --- random ops -----------------------------------------------------------------------------


def test_dropout_masks_are_fresh_and_equal_eager_with_the_same_seed() -> None:
    def f(x: Any) -> Any:
        return F.dropout(x, 0.5, training=True)

    c = cr.compile(f)
    x = cr.ones(64)
    cr.manual_seed(7)
    got = [c(x) for _ in range(5)]
    cr.manual_seed(7)
    want = [f(x) for _ in range(5)]
    assert c.stats["replays"] == 3
    assert _eq(got, want)
    assert not _eq(got[3], got[4])


# --- reset, disable, explain, memory --------------------------------------------------------


def test_reset_disable_explain() -> None:
    c, f = _counting()
    x = cr.ones(3)
    for _ in range(3):
        c(x)
    text = cr.compiler.explain(c)
    assert "capture 0" in text and "guards" in text and "ms" in text
    cr.compiler.reset()
    assert not c.cache
    c(x)
    assert c.stats["captures"] == 3

    @cr.compiler.disable
    def g(x: Any) -> Any:
        return x + 1

    cg = cr.compile(g)
    for _ in range(3):
        cg(x)
    assert cg.stats["captures"] == 0


def test_capture_keeps_no_graph_alive() -> None:
    def step(x: Any) -> Any:
        y = (x * 3).tanh()
        y.sum().backward()
        return y.detach()

    c = cr.compile(step)
    refs = []
    for _ in range(3):
        x = cr.tensor([1.0, 2.0], requires_grad=True)
        out = c(x)
        refs.append(weakref.ref(x))
        del x, out
    gc.collect()
    assert all(r() is None for r in refs)
    wc = weakref.ref(c)
    del c
    gc.collect()
    assert wc() is None


def test_checked_read_replays_and_fails_over_to_eager() -> None:
    def f(x: Any, idx: Any) -> Any:
        if bool((idx < 0).any()):
            raise IndexError("negative index")
        return (x * idx).sum()

    c = cr.compile(f)
    x = cr.tensor([1.0, 2.0, 3.0])
    for i in range(4):
        idx = cr.tensor([i % 3, 1.0, 2.0])
        assert _eq(c(x, idx), f(x, idx))
    assert c.stats["replays"] == 2
    with pytest.raises(IndexError, match="negative index"):
        c(x, cr.tensor([-1.0, 1.0, 2.0]))


def test_returned_graph_used_inside_backpropagates_again_after_replay() -> None:
    w = cr.tensor([1.0, 2.0], requires_grad=True)

    def f(x: Any) -> Any:
        loss = (w * x).sum()
        loss.backward(retain_graph=True)
        return loss

    c = cr.compile(f)
    for _ in range(3):
        w.grad = None
        out = c(cr.tensor([3.0, 4.0]))
    assert c.stats["replays"] == 1
    assert out.requires_grad and _eq(w.grad, cr.tensor([3.0, 4.0]))
    out.backward()  # Note [backward outside]: accumulates as eager's second backward does
    assert _eq(w.grad, cr.tensor([6.0, 8.0]))


def test_two_returned_graphs_refuse_backward_after_replay() -> None:
    w = cr.tensor([1.0, 2.0], requires_grad=True)

    def f(x: Any) -> Any:
        loss = (w * x).sum()
        loss.backward(retain_graph=True)
        return loss, loss * 2.0

    c = cr.compile(f)
    for _ in range(3):
        w.grad = None
        out, out2 = c(cr.tensor([3.0, 4.0]))
    assert c.stats["replays"] == 1
    with pytest.raises(RuntimeError, match="compiled function"):
        out.backward()


def test_closure_scalar_is_guarded() -> None:
    s = 2.0

    def f(x: Any) -> Any:
        return x * s

    c = cr.compile(f)
    x = cr.tensor([1.0, 2.0])
    for _ in range(3):
        assert _eq(c(x), x * 2.0)
    s = 3.0
    assert _eq(c(x), x * 3.0)


def test_swapaxes_and_moveaxis_replay_as_array_methods() -> None:
    # Note [method calls] in replay.py: the program calls ``a.swapaxes`` / ``a.transpose``
    # itself (no np.swapaxes / np.moveaxis frames) and its values and gradients stay eager's.
    w = cr.randn(3, 4, 5, requires_grad=True)

    def f(x: Any) -> Any:
        y = x.transpose(0, 2) * w.transpose(0, 2)
        z = y.movedim(0, -1) + x.movedim((0, 2), (1, 2))
        return (z.swapaxes(1, 2).sin() * 2.0).sum() + (x.unbind(1)[1] * w.unbind(1)[2]).sum()

    g = cr.compile(f)
    for i in range(4):
        x = cr.randn(3, 4, 5, requires_grad=True)
        w.grad = None
        out = g(x)
        out.backward()
        gx, gw = x.grad.numpy().copy(), w.grad.numpy().copy()
        x.grad, w.grad = None, None
        ref = f(x)
        ref.backward()
        np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
        np.testing.assert_array_equal(gx, x.grad.numpy())
        np.testing.assert_array_equal(gw, w.grad.numpy())
    assert g.stats["replays"] >= 1
    src = "".join(c.source for c in g.cache.values())
    assert ".swapaxes(" in src and ".transpose((" in src
    assert all(f is not np.swapaxes and f is not np.moveaxis for f in _program_globals(g))


def _program_globals(g: Any) -> list[Any]:
    return [v for c in g.cache.values() for v in c.program.__globals__.values()]


@pytest.mark.parametrize(
    "ndim,src,dst",
    [
        (1, 0, 0),
        (3, 0, -1),
        (3, 2, 0),
        (4, (0, 2), (3, 1)),
        (4, (3, 0), (0, 1)),
        (5, (4, 1, 0), (0, 2, 4)),
        (4, (0, 2), (3, 0)),
        (5, (0, 1, 2), (4, 0, 2)),
    ],
)
def test_moveaxis_permutation_is_numpys(ndim: int, src: Any, dst: Any) -> None:
    from chainrule._compile.replay import move_perm

    a = np.arange(2 * 3 * 4 * 5 * 6)[: int(np.prod(range(2, 2 + ndim)))].reshape(range(2, 2 + ndim))
    want = np.moveaxis(a, src, dst)
    got = a.transpose(move_perm(ndim, src, dst))
    assert got.shape == want.shape and got.strides == want.strides
    np.testing.assert_array_equal(got, want)


def test_reductions_replay_as_ufunc_reduce_calls() -> None:
    # Note [method calls]: np.sum / np.max / np.min and the ndarray methods sum, max, min, any,
    # all are written as the ufunc.reduce call their wrapper makes; values, dtypes and
    # gradients stay eager's, bit for bit.
    from chainrule._compile.replay import _REDUCTIONS

    w = cr.randn(4, 5, requires_grad=True)

    def f(x: Any) -> Any:
        y = x * w
        a = y.sum(dim=1, keepdim=True) + y.amax(dim=0) + y.amin(dim=(0, 1))
        b = cr.logsumexp(y, dim=1).sum() + y.max() + y.min() + y.sum(dtype=cr.float64).float()
        flags = (y > 0).any() | (y > 10).all()
        return a.sum() + b + flags.float(), (x > 0).all(dim=1), (x < 0).any(dim=0)

    g = cr.compile(f)
    for _ in range(4):
        x = cr.randn(4, 5)
        w.grad = None
        out = g(x)
        out[0].backward()
        gw = w.grad.numpy().copy()
        w.grad = None
        ref = f(x)
        ref[0].backward()
        for u, v in zip(out, ref):
            assert u.dtype == v.dtype
            np.testing.assert_array_equal(u.detach().numpy(), v.detach().numpy())
        np.testing.assert_array_equal(gw, w.grad.numpy())
    assert g.stats["replays"] >= 1
    wrappers = set(map(id, _REDUCTIONS))
    assert not any(id(v) in wrappers for v in _program_globals(g))
    assert any(getattr(v, "__name__", None) == "reduce" for v in _program_globals(g))


@pytest.mark.parametrize("name", ["sum", "max", "min", "any", "all"])
@pytest.mark.parametrize(
    "kw", [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True}, {"axis": None, "keepdims": True}]
)
def test_reduce_call_is_numpys(name: str, kw: dict[str, Any]) -> None:
    # The written call gives the wrapper's result (value, dtype, shape) for each reduction.
    from chainrule._compile._recorder import Instr, Ref
    from chainrule._compile.replay import _as_reduce, _Writer

    a = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    fns = [getattr(np.ndarray, name)] + (
        [getattr(np, name)] if name in ("sum", "max", "min") else []
    )
    for fn in fns:
        ins = Instr(fn, (Ref(0),), dict(kw), 1, ())
        w = _Writer()
        src = _as_reduce(ins, w)
        assert src is not None
        got = eval(src, w.env, {"s0": a})
        want = fn(a, **kw)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
