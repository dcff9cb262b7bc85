"""Outputs of a custom Function that are views (an input returned as is, a view made in
``forward``) are views as in PyTorch (Notes [custom Function views] and [stale custom Function
views] in autograd/function.py), side by side with PyTorch: each scenario runs once per library
and the records must agree.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from tests.autograd.test_function_ctx_node import _both, _err, _v

torch = pytest.importorskip("torch")


def _fn(m: Any, name: str, fwd: Callable[..., Any], nondiff: bool = False) -> Any:
    def forward(ctx: Any, *args: Any) -> Any:
        out = fwd(*args)
        if nondiff:
            ctx.mark_non_differentiable(*(out if isinstance(out, tuple) else (out,)))
        return out

    def backward(ctx: Any, *g: Any) -> Any:
        gx = g[0]
        if gx.shape != ctx.in_shape:  # the first output is a leading part of the input
            gx = g[0].new_zeros(ctx.in_shape)
            gx[: g[0].shape[0]] = g[0]
        return (gx,) + (None,) * (ctx.n_args - 1)

    def forward_n(ctx: Any, *args: Any) -> Any:
        ctx.n_args = len(args)
        ctx.in_shape = args[0].shape
        return forward(ctx, *args)

    attrs = {"forward": staticmethod(forward_n), "backward": staticmethod(backward)}
    return type(name, (m.autograd.Function,), attrs)


# Each Function's forward, by name: what it returns of its inputs.
_FORWARDS: dict[str, Callable[..., Any]] = {
    "Id": lambda x: x,
    "Sl": lambda x: x[0:2],
    "Tr": lambda x: x.t() if x.dim() == 2 else x.view(-1),
    "Two": lambda x: (x, x[0:1]),
    "Pair": lambda x: (x * 2, x),
    "Fresh": lambda x: x * 2,
    "FreshView": lambda x: (x * 2)[0:1],
}


def _input(m: Any, kind: str) -> tuple[Any, Any]:
    """(the leaf, the tensor given to the Function)."""
    a = m.tensor([1.0, 2.0, 3.0], requires_grad=kind != "noreq")
    if kind == "nonleaf":
        return a, a * 1
    if kind == "view":  # an input that is itself a view: the output's base is its root
        b = a * 1
        return b, b[1:]
    if kind == "int":
        return a, m.tensor([1, 2, 3])
    return a, a


def _describe(t: Any, inp: Any, root: Any) -> dict[str, Any]:
    base = t._base
    rg: Any = t.requires_grad
    if base is not None and t.grad_fn is None and base.requires_grad:
        # PyTorch's no-grad view of a base that requires grad requires grad; chainrule's do not
        # (test_no_grad_view_of_requiring_grad_base).
        rg = "no-grad view of a base that requires grad"
    return {
        "is_view": t._is_view(),
        "base": None
        if base is None
        else ("input" if base is inp else "root" if base is root else "other"),
        "is_input": t is inp,
        "grad_fn": None if t.grad_fn is None else t.grad_fn.name(),
        "is_leaf": t.is_leaf,
        "requires_grad": rg,
        "version": t._version,
    }


@pytest.mark.parametrize("kind", ["leaf", "nonleaf", "view", "noreq", "no_grad", "int"])
@pytest.mark.parametrize("fn", sorted(_FORWARDS))
@pytest.mark.parametrize("nondiff", [False, True])
def test_output_views(fn: str, kind: str, nondiff: bool) -> None:
    """``_base``, ``_is_view()``, grad_fn, is_leaf, requires_grad and the shared version."""
    if kind == "int" and fn in ("Pair", "Fresh", "FreshView"):
        pytest.skip("integer tensors do not multiply into a float gradient")

    def run(m: Any) -> Any:
        root, x = _input(m, kind)
        F = _fn(m, fn, _FORWARDS[fn], nondiff)
        if kind == "no_grad":
            with m.no_grad():
                out = F.apply(x)
        else:
            out = F.apply(x)
        outs = out if isinstance(out, tuple) else (out,)
        rec = [_describe(t, x, root) for t in outs]
        with m.no_grad():
            x.add_(0)  # every output on x's memory sees the new version
        rec.append([t._version for t in outs])
        return rec

    ref = _both(run)
    if fn == "Id" and kind in ("leaf", "nonleaf", "noreq"):
        # A view of the input, but a detached alias where it is not differentiable and
        # requires grad.
        alias = nondiff and kind != "noreq"
        assert ref[0]["is_view"] is not alias and ref[0]["base"] == (None if alias else "input")


def test_no_grad_view_of_requiring_grad_base() -> None:
    """A view made in ``forward`` of a call under no_grad, of an input that requires grad: a
    no-grad view; PyTorch says it requires grad, chainrule does not (its no-grad views never
    do; Note [custom Function views])."""

    def run(m: Any) -> Any:
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with m.no_grad():
            o = _fn(m, "Sl", _FORWARDS["Sl"]).apply(a)
        d = _describe(o, a, a)
        d.pop("requires_grad")
        return [d, _err(lambda: o.mul_(2)), _err(lambda: o.__setitem__(0, 5.0))]

    mine, ref = run(__import__("chainrule")), run(torch)
    assert mine[:2] == ref[:2]
    assert ref[1][1].startswith("A view was created in no_grad mode and is being modified")
    # PyTorch's o[0] records a SelectBackward0 (its no-grad view requires grad): its message
    # names Select; chainrule's o[0] has no node and gets the no_grad wording.
    assert mine[2][1].startswith("A view was created in no_grad mode")
    assert ref[2][1].startswith("Output 0 of Select is a view")


# --- in-place changes to the output views -------------------------------------------------

_INPLACE: dict[str, Callable[[Any, Any, Any], Any]] = {
    "mul_": lambda m, o, w: o.mul_(2),
    "mul_w": lambda m, o, w: o.mul_(w),
    "setitem": lambda m, o, w: o.__setitem__(0, 5.0),
    "setitem_w": lambda m, o, w: o.__setitem__(0, w[0]),
    "copy_w": lambda m, o, w: o.copy_(w[: o.shape[0]]),
    "view_mul_": lambda m, o, w: o.view(-1)[0:1].mul_(2),
    "detach_": lambda m, o, w: o.detach_(),
    "no_grad_mul_": lambda m, o, w: _no_grad(m, lambda: o.mul_(2)),
}


def _no_grad(m: Any, f: Callable[[], Any]) -> Any:
    with m.no_grad():
        return f()


@pytest.mark.parametrize("op", sorted(_INPLACE))
@pytest.mark.parametrize("kind", ["leaf", "nonleaf", "noreq", "no_grad_noreq"])
@pytest.mark.parametrize("fn", ["Id", "Sl", "Two", "Pair"])
def test_inplace_on_views(fn: str, kind: str, op: str) -> None:
    def run(m: Any) -> Any:
        root, x = _input(m, "noreq" if kind == "no_grad_noreq" else kind)
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        F = _fn(m, fn, _FORWARDS[fn])
        if kind == "no_grad_noreq":
            with m.no_grad():
                out = F.apply(x)
        else:
            out = F.apply(x)
        o = out[1] if fn in ("Pair",) else out[0] if isinstance(out, tuple) else out
        return [_err(lambda: _INPLACE[op](m, o, w)), _v(x)]

    ref = _both(run)
    if op == "setitem" and kind in ("leaf", "nonleaf"):
        assert ref[0] is not None and " is a view and is being modified inplace" in ref[0][1]


# --- backward after the memory was changed in place ----------------------------------------

_WRITES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "base_recorded": lambda m, x, o: x.mul_(2),
    "base_no_grad": lambda m, x, o: _no_grad(m, lambda: x.mul_(2)),
    "other_view": lambda m, x, o: x[2:].mul_(2),
    "output_no_grad": lambda m, x, o: _no_grad(m, lambda: o.mul_(2)),
    "none": lambda m, x, o: None,
}


@pytest.mark.parametrize("write", sorted(_WRITES))
@pytest.mark.parametrize("kind", ["leaf", "nonleaf"])
@pytest.mark.parametrize("fn", ["Id", "Sl", "Two", "Tr"])
def test_backward_after_inplace_write(fn: str, kind: str, write: str) -> None:
    """PyTorch's "its base or another view of its base has been modified inplace" error for a
    backward through the view, while a graph recorded from it before the write still works.
    (chainrule raises at backward; PyTorch already when the view is used: Note [stale custom
    Function views].)"""
    if kind == "leaf" and write in ("base_recorded", "other_view"):
        pytest.skip("a leaf that requires grad cannot be changed in place under grad mode")

    def run(m: Any) -> Any:
        root, x = _input(m, kind)
        out = _fn(m, fn, _FORWARDS[fn]).apply(x)
        o = out[0] if isinstance(out, tuple) else out
        before = (o * 3).sum()
        v = o.view(-1)  # a view of the output, taken before the write
        _WRITES[write](m, x, o)
        rec: list[Any] = [_err(lambda: before.backward()), _v(root.grad)]
        rec.append(_err(lambda: (o * 1).sum().backward()))
        rec.append(_err(lambda: v.sum().backward()))
        rec.append(_v(root.grad))
        return rec

    ref = _both(run)
    if write != "none":
        assert ref[2] is not None and "its base or another view of its base" in ref[2][1]
