"""Running a node's hooks during backward (the engine's phase 4, "run node", before and after
``apply``), with PyTorch's checks of what a hook returns.

Before ``apply``: the tensor hooks (``Tensor.register_hook``; a leaf's live on its
``AccumulateGrad``), then ``retain_grad``, then the node's pre-hooks (``_pre_hooks``). After it:
the node's post-hooks (``_post_hooks``). Gradients reach a hook as Tensors and go back to the
engine as arrays unless ``create_graph`` (Note [two speeds] in graph.py).
"""

from __future__ import annotations

from typing import Any

from chainrule.autograd._nodes import AccumulateGrad, Node
from chainrule.autograd._sites import _origin

__all__: list[str] = []


def _as_tensor(g: Any) -> Any:
    from chainrule._tensor import Tensor

    return g if isinstance(g, Tensor) else Tensor._wrap(g)


def _size_error(fn: Any, before: Any, after: Any, where: str) -> RuntimeError:
    return RuntimeError(
        f"hook '{getattr(fn, '__name__', fn)}' has changed the size of value: expected "
        f"{list(before.shape)}, got {list(after.shape)}. The hook is {where}; it must return a "
        "gradient of the shape it was given (or None to keep it)."
    )


def _tensor_hook_where(node: Node, nr: int) -> str:
    if type(node) is AccumulateGrad:
        v = node.variable
        name = getattr(v, "_param_name", None)
        what = f"the parameter '{name}'" if name else f"a leaf tensor of shape {list(v.shape)}"
        return f"registered on {what}"
    return f"registered on output {nr} of {node.name()}{_origin(node)}"


def _hook_name(fn: Any) -> str:
    return getattr(fn, "__name__", None) or repr(fn)


def _check_hook_value(fn: Any, before: Any, after: Any) -> None:
    """PyTorch's checks of a gradient a hook returned, but for its size (checked by the
    callers, whose messages say where the hook is): a Tensor, of the dtype it was given."""
    from chainrule._tensor import Tensor, _type_name

    if not isinstance(after, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(after).__name__}'")
    bd, ad = before._data.dtype, after._data.dtype
    if bd != ad:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has changed the type of value (was torch.{_type_name(bd)} "
            f"got torch.{_type_name(ad)})"
        )


def _check_hook_tuple(fn: Any, r: Any, n: int) -> tuple[Any, ...]:
    """A pre- or post-hook's result: a tuple of one gradient (or None) per slot, as in PyTorch."""
    if not isinstance(r, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    if len(r) != n:
        raise RuntimeError(
            f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got {len(r)}, "
            f"but expected {n})"
        )
    return r


def _run_tensor_hooks(
    hooks: Any, g: Any, create_graph: bool, node: Node | None = None, nr: int = 0
) -> Any:
    t = _as_tensor(g)
    for fn in list(hooks.values()):
        r = fn(t)
        if r is not None:
            _check_hook_value(fn, t, r)
            if tuple(r.shape) != tuple(t.shape):
                if node is None:
                    raise RuntimeError(
                        f"hook '{getattr(fn, '__name__', fn)}' has changed the size of value: "
                        f"expected {list(t.shape)}, got {list(r.shape)}"
                    )
                raise _size_error(fn, t, r, _tensor_hook_where(node, nr))
            t = r
    return t if create_graph else t._data


def _pre_hooks(node: Node, buf: list[Any], create_graph: bool) -> list[Any]:
    """Run the tensor hooks, ``retain_grad`` and the pre-hooks on a node's incoming gradients
    (``buf``, changed in place where a hook replaces a gradient)."""
    if node._hooks is None and not (type(node) is AccumulateGrad and node.variable._backward_hooks):
        return buf
    if type(node) is AccumulateGrad:
        hooks = node.variable._backward_hooks
        if hooks and buf[0] is not None:
            buf[0] = _run_tensor_hooks(hooks, buf[0], create_graph, node)
    nh = node._hooks
    if nh is None:
        return buf
    if type(node) is not AccumulateGrad:
        _output_hooks(node, nh, buf, create_graph)
    if nh.pre:
        buf = _node_pre_hooks(node, nh.pre, buf, create_graph)
    return buf


def _output_hooks(node: Node, nh: Any, buf: list[Any], create_graph: bool) -> None:
    """The hooks registered on a non-leaf's outputs: ``register_hook``, then ``retain_grad``."""
    for nr, hooks in nh.tensor_pre.items():
        if hooks and buf[nr] is not None:
            buf[nr] = _run_tensor_hooks(hooks, buf[nr], create_graph, node, nr)
    for nr, fn in list(nh.retain.items()):
        if buf[nr] is not None:
            fn(_as_tensor(buf[nr]))


def _node_pre_hooks(node: Node, pre: Any, buf: list[Any], create_graph: bool) -> list[Any]:
    """``Node.register_prehook`` hooks: ``fn(grad_outputs)``, which may replace them."""
    gs = tuple(None if g is None else _as_tensor(g) for g in buf)
    for fn in list(pre.values()):
        r = fn(gs)
        if r is not None:
            r = _check_hook_tuple(fn, r, len(gs))
            for k, (a, b) in enumerate(zip(gs, r)):
                if a is not None and b is not None:
                    _check_hook_value(fn, a, b)
                if a is not None and b is not None and tuple(a.shape) != tuple(b.shape):
                    where = f"a pre-hook of {node.name()}{_origin(node)}, at output {k}"
                    raise _size_error(fn, a, b, where)
            gs = r
    return [None if g is None else (g if create_graph else g._data) for g in gs]


def _post_hooks(node: Node, outs: Any, buf: list[Any], create_graph: bool) -> Any:
    """``Node.register_hook`` hooks: ``fn(grad_inputs, grad_outputs)``, which may replace the
    gradients the node returned (but not make a None one non-None)."""
    gin = tuple(None if g is None else _as_tensor(g) for g in outs)
    gout = tuple(None if g is None else _as_tensor(g) for g in buf)
    assert node._hooks is not None
    for fn in list(node._hooks.post.values()):
        r = fn(gin, gout)
        if r is not None:
            r = _check_hook_tuple(fn, r, len(gin))
            for k, (a, b) in enumerate(zip(gin, r)):
                if a is None and b is not None:
                    raise RuntimeError("can't replace a None gradient with a non-None value")
                if a is not None and b is not None:
                    _check_hook_value(fn, a, b)
                if a is not None and b is not None and tuple(a.shape) != tuple(b.shape):
                    where = f"a post-hook of {node.name()}{_origin(node)}, at input {k}"
                    raise _size_error(fn, a, b, where)
            gin = r
    return tuple(None if g is None else (g if create_graph else g._data) for g in gin)
