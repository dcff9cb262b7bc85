"""A custom Function's ``ctx`` is its outputs' ``grad_fn`` (Note [ctx is the node] in
autograd/function.py), side by side with PyTorch.

Each scenario runs once per library and returns what a user can observe of the node (its type,
name, edges, saved tensors, hooks, metadata, the gradients ...); the two records must agree.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")


def _v(t: Any) -> Any:
    """A Tensor's dtype name and values, None, or a plain value."""
    if t is None or not hasattr(t, "detach"):
        return t
    return (str(t.dtype).split(".")[-1], np.array(t.detach().numpy()).tolist())


def _node(n: Any) -> Any:
    return None if n is None else (type(n).__name__, n.name())


def _edges(node: Any) -> Any:
    return [(_node(n), nr) for n, nr in node.next_functions]


def _err(f: Callable[[], Any]) -> Any:
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        # chainrule adds lines on which node was freed and where: PyTorch's text comes first.
        return (type(e).__name__, str(e).split("\n")[0])
    return None


def _kinds(m: Any, c: Any, fn: Any) -> dict[str, Any]:
    """What the node's type looks like to a user."""
    mro = [k.__name__ for k in type(c).__mro__]
    return {
        "type": type(c).__name__,
        "name": c.name(),
        "is_bcf": isinstance(c, m.autograd.function.BackwardCFunction),
        "is_ctx": isinstance(c, m.autograd.function.FunctionCtx),
        "is_node": isinstance(c, m.autograd.graph.Node),
        "mro_head": mro[:2],
        "bcf_before_ctx": mro.index("BackwardCFunction") < mro.index("FunctionCtx"),
        "forward_cls": type(c)._forward_cls is fn,
        "repr": repr(c).split(" object at ")[0].replace(m.__name__ + ".", "LIB."),
        "metadata": (type(c.metadata).__name__, dict(c.metadata)),
    }


def _same(a: Any, b: Any, path: str = "") -> None:
    """``a`` (chainrule's record) equals ``b`` (PyTorch's), floats to float32 rounding."""
    if isinstance(b, dict):
        assert isinstance(a, dict) and a.keys() == b.keys(), (path, a, b)
        for k in b:
            _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(b, (list, tuple)):
        assert isinstance(a, (list, tuple)) and len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(b, float) and not isinstance(b, bool):
        assert isinstance(a, float) and np.isclose(a, b, rtol=1e-6, atol=1e-7), (path, a, b)
    else:
        assert type(a) is type(b) and a == b, (path, a, b)


def _both(scenario: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    mine, ref = scenario(cr), scenario(torch)
    _same(mine, ref)
    return ref


# --- one input ---------------------------------------------------------------------------


def _one_input(m: Any) -> dict[str, Any]:
    caught: list[Any] = []

    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            caught.append(ctx)
            ctx.fwd_edges = _edges(ctx)
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = Square.apply(x)
    c = caught[0]
    rec: dict[str, Any] = {
        "grad_fn_is_ctx": y.grad_fn is c,
        **_kinds(m, c, Square),
        "edges": _edges(y.grad_fn),
        "edges_in_forward": c.fwd_edges,
        "needs": c.needs_input_grad,
        "saved": [_v(t) for t in c.saved_tensors],
        "saved_is_input": c.saved_tensors[0] is x,
        "user_attr": y.grad_fn.fwd_edges == c.fwd_edges,
    }
    y2 = Square.apply(x)
    rec["one_class"] = type(y2.grad_fn) is type(c) and y2.grad_fn is not c
    y.sum().backward()
    rec["grad"] = _v(x.grad)
    rec["saved_after"] = _err(lambda: c.saved_tensors)
    rec["second_backward"] = _err(lambda: y.sum().backward())
    return rec


def test_one_input() -> None:
    ref = _both(_one_input)
    assert ref["grad_fn_is_ctx"] and ref["type"] == "SquareBackward" and ref["is_bcf"]
    assert ref["saved_after"][0] == "RuntimeError"


# --- several inputs, non-Tensor arguments, None, outputs returned as is ------------------


def _several_inputs(m: Any) -> dict[str, Any]:
    caught: list[Any] = []
    seen: list[Any] = []

    class Mul3(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: float, w: Any, n: Any, z: Any) -> Any:
            caught.append(ctx)
            ctx.k = k
            ctx.save_for_backward(x, w)
            idx = x > 0
            ctx.mark_non_differentiable(idx)
            return x * w * k, idx, x

        @staticmethod
        def backward(ctx: Any, g: Any, gi: Any, gx: Any) -> Any:
            seen.append([_v(gi), _v(gx)])
            x, w = ctx.saved_tensors
            return g * w * ctx.k + gx, None, g * x * ctx.k, None, None

    x = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w0 = m.tensor([0.5, 1.0, 2.0], requires_grad=True)
    w = w0 * 1
    z = m.tensor([1.0, 1.0, 1.0])
    out, idx, xo = Mul3.apply(x, 2.0, w, None, z)
    c = caught[0]
    s = c.saved_tensors
    rec: dict[str, Any] = {
        "is_ctx": [t.grad_fn is c for t in (out, xo)],
        "idx": (idx.grad_fn, idx.requires_grad, _v(idx)),
        "xo_is_x": xo is x,
        "xo_shares": np.shares_memory(xo.detach().numpy(), x.detach().numpy()),
        **_kinds(m, c, Mul3),
        "edges": _edges(c),
        "needs": c.needs_input_grad,
        "k": out.grad_fn.k,
        "saved_is": [s[0] is x, s[1] is w],
        "saved_grad_fn": [_node(t.grad_fn) for t in s],
        "saved": [_v(t) for t in s],
    }
    (out.sum() + xo.sum()).backward()
    rec["backward_got"] = seen
    rec["grads"] = [_v(x.grad), _v(w0.grad)]
    rec["saved_after"] = _err(lambda: c.saved_tensors)
    return rec


def test_several_inputs() -> None:
    ref = _both(_several_inputs)
    assert [e[0] for e in ref["edges"]][2] is None and len(ref["needs"]) == 5
    assert ref["backward_got"][0][0] == ("bool", [False, False, False])


# --- grad modes: needs_input_grad, edges, the node of an unrecorded call ------------------


@pytest.mark.parametrize("mode", ["enable_grad", "no_grad", "no_grad_then_enable", "no_input"])
def test_grad_modes(mode: str) -> None:
    def run(m: Any) -> dict[str, Any]:
        caught: list[Any] = []

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any, y: Any, k: int) -> Any:
                caught.append(ctx)
                ctx.got = (ctx.needs_input_grad, _edges(ctx), m.is_grad_enabled())
                ctx.save_for_backward(x)
                return x * k + y

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * 2, g, None

        a = m.tensor([1.0, 2.0], requires_grad=mode != "no_input")
        b = m.tensor([3.0, 4.0])
        if mode == "no_grad":
            with m.no_grad():
                out = Two.apply(a, b, 2)
        elif mode == "no_grad_then_enable":
            with m.no_grad(), m.enable_grad():
                out = Two.apply(a, b, 2)
        else:
            out = Two.apply(a, b, 2)
        c = caught[0]
        return {
            "in_forward": c.got,
            "grad_fn_is_ctx": out.grad_fn is c,
            "grad_fn": _node(out.grad_fn),
            "requires_grad": out.requires_grad,
            "edges_after": _edges(c),
            "type": type(c).__name__,
            "saved": [_v(t) for t in c.saved_tensors],
            "out": _v(out),
        }

    ref = _both(run)
    assert ref["type"] == "TwoBackward"
    assert ref["in_forward"][0] == ((mode != "no_input"), False, False)


# --- save_for_backward of inputs, outputs and None; non-Tensor outputs -------------------


def _saved_outputs(m: Any) -> dict[str, Any]:
    caught: list[Any] = []
    seen: list[Any] = []

    class SaveOut(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            caught.append(ctx)
            ctx.in_forward = [_v(t) for t in ctx.saved_tensors]
            y = x.exp()
            ctx.save_for_backward(x, y, None)
            return y, 3, x.sum()

        @staticmethod
        def backward(ctx: Any, g: Any, g3: Any, gs: Any) -> Any:
            x, y, n = ctx.saved_tensors
            seen.append([_v(g3), _v(n), _v(gs), y.grad_fn is ctx])
            return g * y + gs

    x = m.tensor([0.0, 1.0], requires_grad=True)
    y, three, s = SaveOut.apply(x)
    c = caught[0]
    sv = c.saved_tensors
    rec = {
        "three": three,
        "in_forward": c.in_forward,
        "saved_is": [sv[0] is x, sv[1] is y, sv[2] is None],
        "saved_grad_fn_is_ctx": [sv[0].grad_fn is c, sv[1].grad_fn is c],
        "saved": [_v(t) for t in sv],
        "s": (s.grad_fn is c, s.requires_grad),
        "versions": [y._version, s._version],
    }
    y.sum().backward(retain_graph=True)
    rec["backward_got"] = list(seen)
    rec["grad"] = _v(x.grad)
    rec["saved_retained"] = [_v(t) for t in c.saved_tensors]
    y.sum().backward()
    rec["grad2"] = _v(x.grad)
    rec["saved_after"] = _err(lambda: c.saved_tensors)
    rec["third"] = _err(lambda: y.sum().backward())
    return rec


def test_saved_inputs_and_outputs() -> None:
    ref = _both(_saved_outputs)
    assert ref["saved_is"] == [True, False, True]
    assert ref["saved_grad_fn_is_ctx"] == [False, True]


# --- setup_context style -----------------------------------------------------------------


def _setup_context(m: Any) -> dict[str, Any]:
    caught: list[Any] = []

    class Scale(m.autograd.Function):
        @staticmethod
        def forward(x: Any, k: float) -> Any:
            return x * k

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            caught.append(ctx)
            ctx.at_setup = (
                _edges(ctx),
                ctx.needs_input_grad,
                type(inputs).__name__,
                len(inputs),
                output.requires_grad,
                output.grad_fn is None,
            )
            ctx.k = inputs[1]
            ctx.save_for_backward(inputs[0], output)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, o = ctx.saved_tensors
            return g * ctx.k + 0 * o, None

    a = m.tensor([1.0, 2.0], requires_grad=True)
    o = Scale.apply(a, 3.0)
    c = caught[0]
    sv = c.saved_tensors
    rec: dict[str, Any] = {
        "grad_fn_is_ctx": o.grad_fn is c,
        **_kinds(m, c, Scale),
        "at_setup": c.at_setup,
        "edges": _edges(c),
        "saved_is": [sv[0] is a, sv[1] is o, sv[1].grad_fn is c],
    }
    o.backward(m.tensor([1.0, 10.0]))
    rec["grad"] = _v(a.grad)
    rec["saved_after"] = _err(lambda: c.saved_tensors)
    return rec


def test_setup_context() -> None:
    ref = _both(_setup_context)
    assert ref["grad_fn_is_ctx"] and ref["type"] == "ScaleBackward"
    assert ref["grad"] == ("float32", [3.0, 30.0])


# --- hooks on the node -------------------------------------------------------------------


def _hooks(m: Any) -> dict[str, Any]:
    caught: list[Any] = []

    class Exp(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            caught.append(ctx)
            y = x.exp()
            ctx.save_for_backward(y)
            return y, x * 2

        @staticmethod
        def backward(ctx: Any, g: Any, g2: Any) -> Any:
            (y,) = ctx.saved_tensors
            return g * y + g2 * 2

    x = m.tensor([0.0, 1.0], requires_grad=True)
    y, y2 = Exp.apply(x)
    c = caught[0]
    log: list[Any] = []
    h1 = c.register_hook(
        lambda gi, go: log.append(("post", [_v(t) for t in gi], [_v(t) for t in go]))
    )
    h2 = c.register_prehook(lambda go: log.append(("pre", [_v(t) for t in go])))
    y.sum().backward(retain_graph=True)
    rec: dict[str, Any] = {"log": list(log), "grad": _v(x.grad)}
    h1.remove()
    h2.remove()
    log.clear()
    x.grad = None
    h3 = c.register_prehook(lambda go: (go[0] * 10, go[1]))
    h4 = y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
    (y.sum() + y2.sum()).backward(retain_graph=True)
    rec["replaced"] = _v(x.grad)
    rec["removed_log"] = list(log)
    h3.remove()
    h4.remove()
    x.grad = None
    y.sum().backward()
    rec["after_remove"] = _v(x.grad)
    return rec


def test_hooks_on_the_node() -> None:
    ref = _both(_hooks)
    assert ref["log"][0][0] == "pre" and ref["log"][1][0] == "post"


def test_prehook_wrong_arity() -> None:
    def run(m: Any) -> Any:
        caught: list[Any] = []

        class Pair(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                caught.append(ctx)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx: Any, g1: Any, g2: Any) -> Any:
                return g1 * 2 + g2 * 3

        x = m.tensor([1.0], requires_grad=True)
        a, _ = Pair.apply(x)
        caught[0].register_prehook(lambda go: (go[0],))
        return _err(lambda: a.sum().backward())

    ref = _both(run)
    assert ref is not None and ref[0] == "RuntimeError"


# --- metadata ----------------------------------------------------------------------------


def _metadata(m: Any) -> dict[str, Any]:
    caught: list[Any] = []

    class Id(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            caught.append(ctx)
            ctx.metadata["in_forward"] = 1
            return x + 0

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            ctx.metadata["in_backward"] = True
            return g

    x = m.tensor([1.0], requires_grad=True)
    y = Id.apply(x)
    c = caught[0]
    rec: dict[str, Any] = {
        "same_dict": y.grad_fn.metadata is c.metadata,
        "before": dict(y.grad_fn.metadata),
    }
    y.grad_fn.metadata["user"] = "u"
    y.backward()
    rec["after"] = dict(c.metadata)
    return rec


def test_metadata() -> None:
    ref = _both(_metadata)
    assert ref["after"] == {"in_forward": 1, "user": "u", "in_backward": True}


# --- double backward and materialize_grads ------------------------------------------------


def _double_backward(m: Any) -> dict[str, Any]:
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
    rec: dict[str, Any] = {"g": _v(g), "g_fn": _node(g.grad_fn)}
    (gg,) = m.autograd.grad(g.sum(), x)
    rec["gg"] = _v(gg)
    rec["node_after"] = _err(lambda: y.grad_fn.saved_tensors)
    return rec


def test_double_backward() -> None:
    ref = _both(_double_backward)
    assert ref["gg"] == ("float32", [6.0, 12.0])


def test_materialize_grads_off() -> None:
    def run(m: Any) -> Any:
        seen: list[Any] = []

        class Three(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.set_materialize_grads(False)
                i = (x > 1).to(m.int64)
                return x * 2, i, x * 3

            @staticmethod
            def backward(ctx: Any, g1: Any, g2: Any, g3: Any) -> Any:
                seen.append([_v(g1), _v(g2), _v(g3)])
                return g1 * 2

        class Zeros(m.autograd.Function):  # the same with zeros materialized
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                i = (x > 1).to(m.int64)
                d = x * 4
                ctx.mark_non_differentiable(d)
                return x * 2, i, x * 3, d, None, "s"

            @staticmethod
            def backward(ctx: Any, *gs: Any) -> Any:
                seen.append([_v(g) for g in gs])
                return gs[0] * 2

        a = m.tensor([1.0, 2.0], requires_grad=True)
        r = Three.apply(a)
        r[0].sum().backward()
        r2 = Zeros.apply(a)
        r2[0].sum().backward()
        return [seen, [getattr(t, "requires_grad", t) for t in r2], _v(a.grad)]

    ref = _both(run)
    assert ref[0][0][1] is None and ref[0][1][1] == ("int64", [0, 0])


# --- outputs that are views: in-place changes refused (Note [custom Function views]) -------


def _fn(m: Any, name: str, fwd: Callable[..., Any]) -> Any:
    def backward(ctx: Any, *g: Any) -> Any:
        return g[0]

    attrs = {"forward": staticmethod(fwd), "backward": staticmethod(backward)}
    return type(name, (m.autograd.Function,), attrs)


def _nondiff(ctx: Any, x: Any) -> Any:
    ctx.mark_non_differentiable(x)
    return x


_VIEW_CASES: dict[str, Callable[[Any, Any], Any]] = {
    "as_is": lambda m, a: _fn(m, "Id1", lambda ctx, x: x).apply(a).mul_(2),
    "as_is_nonleaf": lambda m, a: _fn(m, "Id1", lambda ctx, x: x).apply(a * 1).add_(1),
    "with_bool": lambda m, a: _fn(m, "WithInt", lambda ctx, x: (x, x > 0)).apply(a)[0].mul_(2),
    "with_none": lambda m, a: _fn(m, "WithNone", lambda ctx, x: (x, None, 3)).apply(a)[0].mul_(2),
    "two_outputs": lambda m, a: (
        _fn(m, "Second", lambda ctx, x, y: (y * 2, x)).apply(a, a)[1].mul_(2)
    ),
    "int_input": lambda m, a: (
        _fn(m, "Second", lambda ctx, x, y: (y * 2, x)).apply(m.tensor([1, 2]), a)[1].mul_(2)
    ),
    "int_first_output": lambda m, a: (
        _fn(m, "Second", lambda ctx, x, y: (y * 2, x)).apply(a, m.tensor([1, 2]))[1].mul_(2)
    ),
    "tuple_of_one": lambda m, a: _fn(m, "Tup1", lambda ctx, x: (x,)).apply(a)[0].mul_(2),
    "non_differentiable": lambda m, a: _fn(m, "NonDiff", _nondiff).apply(a).mul_(2),
    "view_made_in_forward": lambda m, a: _fn(m, "Fwdview", lambda ctx, x: x[0:1]).apply(a).mul_(2),
    "fresh_output": lambda m, a: _fn(m, "Fresh", lambda ctx, x: x * 2).apply(a).mul_(2),
    "view_of_it": lambda m, a: _fn(m, "Id1", lambda ctx, x: x).apply(a).view(2).mul_(2),
    "select_of_it": lambda m, a: _fn(m, "Id1", lambda ctx, x: x).apply(a)[0].mul_(2),
    "view_of_view": lambda m, a: _fn(m, "Id1", lambda ctx, x: x).apply(a).view(2)[0:1].mul_(2),
    "view_two_outputs": lambda m, a: (
        _fn(m, "Second", lambda ctx, x, y: (y * 2, x)).apply(a, a)[1][0:1].mul_(2)
    ),
    "setitem_slice": lambda m, a: (
        _fn(m, "Id1", lambda ctx, x: x).apply(a).__setitem__(slice(0, 1), 5.0)
    ),
    "copy_": lambda m, a: _fn(m, "Id1", lambda ctx, x: x).apply(a).copy_(m.ones(2)),
    "zero_": lambda m, a: _fn(m, "Id1", lambda ctx, x: x).apply(a).zero_(),
    "detach_": lambda m, a: _fn(m, "Id1", lambda ctx, x: x).apply(a).detach_(),
    "detach_then_inplace": lambda m, a: _fn(m, "Id1", lambda ctx, x: x).apply(a).detach().mul_(1),
    "under_no_grad": lambda m, a: _no_grad_mul(m, _fn(m, "Id1", lambda ctx, x: x).apply(a)),
    "nothing_recorded": lambda m, a: _fn(m, "Id1", lambda ctx, x: x).apply(m.ones(2)).mul_(2),
}


def _no_grad_mul(m: Any, t: Any) -> Any:
    with m.no_grad():
        return t.mul_(2)


@pytest.mark.parametrize("case", sorted(_VIEW_CASES))
def test_inplace_on_output_views(case: str) -> None:
    def run(m: Any) -> Any:
        a = m.tensor([1.0, 2.0], requires_grad=True)
        return _err(lambda: _VIEW_CASES[case](m, a))

    ref = _both(run)
    refused = case not in (
        "non_differentiable",
        "int_input",
        "fresh_output",
        "detach_then_inplace",
        "under_no_grad",
        "nothing_recorded",
    )
    assert (ref is not None) == refused


@pytest.mark.parametrize("layer", ["linear", "relu"])
def test_full_backward_hook_output_modified_in_place(layer: str) -> None:
    """A module with a full backward hook returns its output through BackwardHookFunction."""

    def run(m: Any) -> Any:
        m.manual_seed(0)
        mod = m.nn.Linear(2, 2) if layer == "linear" else m.nn.ReLU()
        mod.register_full_backward_hook(lambda mod, gi, go: None)
        x = m.ones(3, 2, requires_grad=True)
        out = mod(x * 1)
        return [_node(out.grad_fn), _err(lambda: out.add_(1))]

    ref = _both(run)
    assert ref[1][1].startswith("Output 0 of BackwardHookFunction is a view")
