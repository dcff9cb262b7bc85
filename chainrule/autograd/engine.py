"""run_backward(): the only code that walks the graph.

Steps (see ARCHITECTURE.md section 4): seed the roots, discover the reachable nodes with an
explicit stack, count dependencies, then run nodes from a heap keyed by ``-sequence_nr`` (the
most recent node first), routing each returned gradient to the buffer of the node it feeds.

Gradients are raw arrays unless ``create_graph`` is set; see Note [two speeds] in graph.py.

Long because the engine is the one place that walks the graph: seeding, discovery, scheduling,
hooks and routing stay together.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any, Sequence

from chainrule._dispatch import ops as _ops
from chainrule.autograd import grad_mode
from chainrule.autograd.graph import (
    _GRAD_LOCK,
    AccumulateGrad,
    Node,
    OpNode,
    format_site,
    user_site,
)

__all__ = ["run_backward"]


def _expandable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (so a gradient of shape ``to`` can be summed back)."""
    if len(shape) > len(to):
        return False
    for s, t in zip(reversed(shape), reversed(to)):
        if s != t and s != 1:
            return False
    return True


_SUM_AXES: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, ...]] = {}


def _sum_to_array(g: Any, shape: tuple[int, ...]) -> Any:
    key = (g.shape, shape)
    axes = _SUM_AXES.get(key)
    if axes is None:  # the axes are computed once per (gradient shape, input shape)
        lead = g.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, s in enumerate(shape) if s == 1 and g.shape[i + lead] != 1
        )
        if len(_SUM_AXES) >= 4096:
            _SUM_AXES.clear()
        _SUM_AXES[key] = axes
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


def _fix_grad(node: Node, i: int, g: Any, meta: Any, create_graph: bool) -> Any:
    """Sum a broadcast gradient back to the input's shape and cast it to the input's dtype."""
    shape, dt = meta
    if g.shape != shape:
        if not _expandable(shape, tuple(g.shape)):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(g.shape)} but expected shape compatible with {list(shape)}"
                + (f". {node.name()}{o}" if (o := _origin(node)) else "")
            )
        if create_graph:
            g = _ops.sum_to_size(g, shape)  # an op: above autograd (_dispatch.py)
        else:
            g = _sum_to_array(g, shape)
    gdt = g._data.dtype if create_graph else g.dtype
    if gdt != dt:
        if create_graph:
            from chainrule._dtype import from_np

            g = g.to(from_np(dt))
        else:
            g = g.astype(dt)
    return g


def _root_edge(t: Any, i: int) -> tuple[Node, int]:
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    if t._requires_grad:
        return t._get_accumulator(), 0
    raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def _as_tensor(g: Any) -> Any:
    from chainrule._tensor import Tensor

    return g if isinstance(g, Tensor) else Tensor._wrap(g)


def _origin(node: Node) -> str:
    """Where ``node`` came from, for error messages: the forward line that made it (when
    recorded, Note [sites] in _sites.py) and, for a custom Function, where its backward is."""
    parts = []
    site = getattr(node, "_site", None)
    if site is not None:
        parts.append(f"created by the forward at {format_site(site)}")
    cls = getattr(node, "fn_cls", None)
    code = getattr(getattr(cls, "backward", None), "__code__", None)
    if code is not None:
        parts.append(f"its backward is {cls.__name__}.backward at {format_site((code, -1), False)}")
    return f" ({'; '.join(parts)})" if parts else ""


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


def run_backward(
    roots: Sequence[Any],
    root_grads: Sequence[Any],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Any] | None = None,
    allow_unused: bool = False,
    accumulate: bool = True,
) -> tuple[Any, ...] | None:
    """Backpropagate from ``roots`` seeded with ``root_grads`` (Tensors, already validated).

    With ``accumulate=True`` (``backward``), gradients are added into leaves' ``.grad`` (only
    those in ``inputs`` when given). With ``accumulate=False`` (``autograd.grad``), the
    gradients reaching ``inputs`` are returned instead, and no ``.grad`` is touched.
    """
    # 1. Seed.
    edges = [_root_edge(t, i) for i, t in enumerate(roots)]
    buffers: dict[Node, list[Any]] = {}
    for (node, nr), g in zip(edges, root_grads):
        gv = g if create_graph else g._data
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = gv if buf[nr] is None else buf[nr] + gv

    # 2. Discover with an explicit stack (never recursion: graphs can be very deep).
    deps: dict[Node, int] = {}
    root_nodes = list(dict.fromkeys(n for n, _ in edges))
    stack = list(root_nodes)
    push = stack.append
    if len(root_nodes) == 1:  # the graph is acyclic: no edge leads back to a single root
        while stack:
            for child, _ in stack.pop().next_functions:
                if child is not None:
                    c = deps.get(child)
                    if c is None:
                        deps[child] = 1
                        push(child)
                    else:
                        deps[child] = c + 1
    else:
        is_root = set(root_nodes).__contains__
        while stack:
            for child, _ in stack.pop().next_functions:
                if child is not None:
                    c = deps.get(child)
                    if c is None:
                        deps[child] = 1
                        if not is_root(child):  # a root can also be reached from another root
                            push(child)
                    else:
                        deps[child] = c + 1

    # Capture targets for ``inputs``: an input's gradient is read at the edge that feeds it.
    capture: dict[Node, list[tuple[int, int]]] = {}
    results: list[Any] = []
    execute: set[Node] | None = None
    needed: set[Node] | None = None
    if inputs is not None:
        results = [None] * len(inputs)
        for idx, t in enumerate(inputs):
            if t.grad_fn is not None:
                node, nr = t.grad_fn, t._output_nr
            else:
                if not t._requires_grad:
                    raise RuntimeError("One of the differentiated Tensors does not require grad")
                node, nr = t._get_accumulator(), 0
            capture.setdefault(node, []).append((nr, idx))
        # A node is needed if it is a target or leads to one. Settle it children-first: a
        # topological order (Kahn's algorithm over the discovered counts), walked backwards.
        remaining = dict(deps)
        topo = [n for n in root_nodes if remaining.get(n, 0) == 0]
        k = 0
        while k < len(topo):
            n = topo[k]
            k += 1
            for c, _ in n.next_functions:
                if c is not None:
                    r = remaining[c] - 1
                    remaining[c] = r
                    if r == 0:
                        topo.append(c)
        needed = set()
        execute = set()
        for n in reversed(topo):
            child_needed = any(c in needed for c, _ in n.next_functions if c is not None)
            if child_needed or n in capture:
                needed.add(n)
            if child_needed or (accumulate and n in capture and type(n) is AccumulateGrad):
                execute.add(n)
        # Recount dependencies over needed nodes only, so unneeded parents cannot stall them.
        deps = {}
        for n in needed:
            for c, _ in n.next_functions:
                if c is not None and c in needed:
                    deps[c] = deps.get(c, 0) + 1

    # 3. Schedule: the roots whose dependencies are all inside the graph wait like any node.
    # Ready nodes run most recent first (a heap keyed by -sequence_nr); while exactly one node
    # is ready, as along a chain, it is held in ``pending`` and the heap is not touched.
    heap: list[tuple[int, int, Node]] = []
    for node in root_nodes:
        if needed is not None and node not in needed:
            continue
        if deps.get(node, 0) == 0:
            heappush(heap, (-node.sequence_nr, id(node), node))
    pending = heappop(heap)[2] if len(heap) == 1 else None

    # Note [plain nodes]
    #     Most nodes are OpNodes with no hooks or anomaly metadata, in a backward without
    #     ``inputs=``: they take a short path past the per-node checks that only hooks,
    #     capture and custom Functions need (measured: about 4 % of a small-op backward).
    #     A backward that is also without create_graph runs in _run_plain, the same loop
    #     without the branches for capture, pruning and Tensor gradients.
    plain = not capture and execute is None
    # Where this backward was called from, noted on each node it frees (Note [sites]).
    freed_at = None if retain_graph else user_site(1)
    release = not retain_graph
    state = grad_mode._state
    prev_mode = state.enabled
    state.enabled = create_graph
    try:
        if plain and not create_graph:
            _run_plain(heap, pending, buffers, deps, release, freed_at)
            pending = None
            heap = []
        while pending is not None or heap:
            if pending is not None:
                node = pending
                pending = None
            else:
                node = heappop(heap)[2]
            buf = buffers.pop(node, None)
            nexts = node.next_functions
            outs: Any = None
            if buf is None:
                pass
            elif plain and type(node) is OpNode and node._hooks is None and node.metadata is None:
                # The common case (Note [plain nodes]): an op node with no hooks, in a backward
                # with no inputs=; OpNode.apply returns one gradient per edge by construction.
                if len(buf) > 1:
                    buf = _materialize(node, buf, create_graph)
                outs = node.apply(buf, create_graph)
                buf = None
            else:
                buf = _pre_hooks(node, buf, create_graph)
                if capture:
                    caps = capture.get(node)
                    if caps is not None:
                        for nr, idx in caps:
                            g = buf[nr]
                            if g is not None:
                                g = g if create_graph else _as_tensor(g)
                                results[idx] = g if results[idx] is None else results[idx] + g
                if execute is None or node in execute:
                    outs = _execute(node, buf, create_graph)
                buf = None  # AccumulateGrad may have kept the array: hold no reference to it
            if release:
                node.release()
                node._freed_at = freed_at
            if not nexts:
                continue
            # 5. Route each gradient to the buffer of the node it feeds (_run_plain repeats this
            # for plain backwards, inlined there because it runs for every edge).
            meta = node._input_meta
            i = -1
            for child, nr in nexts:
                i += 1
                if child is None or (needed is not None and child not in needed):
                    continue
                g = None if outs is None else outs[i]
                if g is not None:
                    m = meta[i]
                    if m is not None:
                        if create_graph:
                            gd = g._data  # not g.shape: that builds a Size
                            if gd.shape != m[0] or gd.dtype != m[1]:
                                g = _fix_grad(node, i, g, m, True)
                        elif g.shape != m[0] or (g.dtype is not m[1] and g.dtype != m[1]):
                            g = _fix_grad(node, i, g, m, False)
                    cbuf = buffers.get(child)
                    if cbuf is None:
                        if child.num_outputs == 1:
                            buffers[child] = [g]
                        else:
                            cbuf = buffers[child] = [None] * child.num_outputs
                            cbuf[nr] = g
                    else:
                        old = cbuf[nr]
                        cbuf[nr] = g if old is None else old + g
                    g = old = None
                d = deps[child] - 1
                deps[child] = d
                if d == 0:
                    if pending is None and not heap:
                        pending = child
                    else:
                        if pending is not None:
                            heappush(heap, (-pending.sequence_nr, id(pending), pending))
                            pending = None
                        heappush(heap, (-child.sequence_nr, id(child), child))
            outs = None
    finally:
        state.enabled = prev_mode

    if inputs is None:
        return None
    if accumulate:
        # backward(inputs=[non_leaf]) accumulates into the non-leaf's .grad, as PyTorch does.
        for t, g in zip(inputs, results):
            if t.grad_fn is not None and g is not None:
                g = g if create_graph else g.detach()
                with _GRAD_LOCK:  # Note [accumulation lock] in _nodes.py
                    t._grad = g if t._grad is None else t._grad + g
        return None
    for idx, g in enumerate(results):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {idx} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior."
            )
    return tuple(results)


def _run_plain(heap: list[Any], pending: Node | None, buffers: dict[Node, list[Any]],
               deps: dict[Node, int], release: bool, freed_at: Any) -> None:
    """The main loop of run_backward for a backward with neither ``inputs=`` nor
    create_graph (Note [plain nodes]): gradients are arrays, every node runs."""
    while True:
        if pending is not None:
            node = pending
            pending = None
        elif heap:
            node = heappop(heap)[2]
        else:
            return
        buf = buffers.pop(node, None)
        nexts = node.next_functions
        fa = node._fast  # Note [generated apply] in _node_apply.py: it also frees the node
        if buf is not None and fa is not None:
            outs = fa(node, buf, release, freed_at)
        else:
            if buf is None:
                outs = None
            elif type(node) is OpNode and node._hooks is None and node.metadata is None:
                if len(buf) > 1:
                    buf = _materialize(node, buf, False)
                outs = node.apply(buf, False)
            else:
                outs = _execute(node, _pre_hooks(node, buf, False), False)
            if release:
                node.release()
                node._freed_at = freed_at
        buf = None  # AccumulateGrad may have kept the array: hold no reference to it
        if not nexts:
            continue
        if outs is None:
            outs = (None,) * len(nexts)
        for (child, nr), g, m in zip(nexts, outs, node._input_meta):
            if child is None:
                continue
            if g is not None:
                if m is not None and (g.shape != m[0] or (g.dtype is not m[1] and g.dtype != m[1])):
                    g = _fix_grad(node, _position(outs, g), g, m, False)
                cbuf = buffers.get(child)
                if cbuf is None:
                    if child.num_outputs == 1:
                        buffers[child] = [g]
                    else:
                        cbuf = buffers[child] = [None] * child.num_outputs
                        cbuf[nr] = g
                else:
                    old = cbuf[nr]
                    cbuf[nr] = g if old is None else old + g
                    old = None
                g = None
            d = deps[child] - 1
            deps[child] = d
            if d == 0:
                if pending is None and not heap:
                    pending = child
                else:
                    if pending is not None:
                        heappush(heap, (-pending.sequence_nr, id(pending), pending))
                        pending = None
                    heappush(heap, (-child.sequence_nr, id(child), child))
        outs = None


def _position(outs: Any, g: Any) -> int:
    """The index of the array ``g`` in ``outs`` (for _fix_grad's error message)."""
    return next(i for i, o in enumerate(outs) if o is g)


def _execute(node: Node, buf: list[Any], create_graph: bool) -> Any:
    """Run one node with everything a node may carry (after its pre-hooks): missing gradients
    materialized, a custom Function's count of gradients checked, post-hooks, anomaly checks."""
    if len(buf) > 1:
        buf = _materialize(node, buf, create_graph)
    outs = node.apply(buf, create_graph)
    nexts = node.next_functions
    if len(outs) != len(nexts) and type(node) is not AccumulateGrad:
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {len(nexts)}, got {len(outs)})"
        )
    hooks = node._hooks
    if hooks is not None and hooks.post:
        outs = _post_hooks(node, outs, buf, create_graph)
    if node.metadata is not None and node.metadata.get("_anomaly"):
        from chainrule.autograd.anomaly import check_nan

        check_nan(node, outs, create_graph)
    return outs


def _pre_hooks(node: Node, buf: list[Any], create_graph: bool) -> list[Any]:
    """Run the tensor hooks and pre-hooks on a node's incoming gradients."""
    if node._hooks is None and not (
        type(node) is AccumulateGrad and node.variable._backward_hooks
    ):
        return buf
    if type(node) is AccumulateGrad:
        hooks = node.variable._backward_hooks
        if hooks and buf[0] is not None:
            buf[0] = _run_tensor_hooks(hooks, buf[0], create_graph, node)
    nh = node._hooks
    if nh is None:
        return buf
    if type(node) is not AccumulateGrad:
        for nr, hooks in nh.tensor_pre.items():
            if hooks and buf[nr] is not None:
                buf[nr] = _run_tensor_hooks(hooks, buf[nr], create_graph, node, nr)
        for nr, fn in list(nh.retain.items()):
            if buf[nr] is not None:
                fn(_as_tensor(buf[nr]))
    if nh.pre:
        gs = tuple(None if g is None else _as_tensor(g) for g in buf)
        for fn in list(nh.pre.values()):
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
        buf = [None if g is None else (g if create_graph else g._data) for g in gs]
    return buf


def _post_hooks(node: Node, outs: Any, buf: list[Any], create_graph: bool) -> Any:
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


def _materialize(node: Node, buf: list[Any], create_graph: bool) -> list[Any]:
    """Fill empty output slots of a multi-output node with zeros, unless it opted out."""
    out_meta = node._out_meta
    op = getattr(node, "op", None)
    mat = getattr(op, "materialize_grads", True) if op is not None else True
    if out_meta is None or not mat or all(g is not None for g in buf):
        return buf
    import numpy as np

    from chainrule._tensor import Tensor

    res = []
    for g, (shape, dt) in zip(buf, out_meta):
        if g is None and dt is not None and np.dtype(dt).kind == "f":
            z = np.zeros(shape, dt)
            g = Tensor._wrap(z) if create_graph else z
        res.append(g)
    return res
