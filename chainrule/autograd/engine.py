"""run_backward(): the only code that walks the graph.

Steps (see ARCHITECTURE.md section 4): seed the roots, discover the reachable nodes with an
explicit stack, count dependencies, then run nodes from a heap keyed by ``-sequence_nr`` (the
most recent node first), routing each returned gradient to the buffer of the node it feeds.

Gradients are raw arrays unless ``create_graph`` is set; see Note [two speeds] in graph.py.
"""

from __future__ import annotations

import heapq
from typing import Any, Sequence

from chainrule.autograd import grad_mode
from chainrule.autograd.graph import AccumulateGrad, Node

__all__ = ["run_backward"]


def _expandable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``to`` (so a gradient of shape ``to`` can be summed back)."""
    if len(shape) > len(to):
        return False
    for s, t in zip(reversed(shape), reversed(to)):
        if s != t and s != 1:
            return False
    return True


def _sum_to_array(g: Any, shape: tuple[int, ...]) -> Any:
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and g.shape[i + lead] != 1
    )
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
            )
        if create_graph:
            from chainrule import ops

            g = ops.sum_to_size(g, shape)
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


def _run_tensor_hooks(hooks: Any, g: Any, create_graph: bool) -> Any:
    t = _as_tensor(g)
    for fn in list(hooks.values()):
        r = fn(t)
        if r is not None:
            if tuple(r.shape) != tuple(t.shape):
                raise RuntimeError(
                    f"hook '{getattr(fn, '__name__', fn)}' has changed the size of value: "
                    f"expected {list(t.shape)}, got {list(r.shape)}"
                )
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
    seen = set()
    stack = []
    for node, _ in edges:
        if node not in seen:
            seen.add(node)
            stack.append(node)
    while stack:
        n = stack.pop()
        for child, _ in n.next_functions:
            if child is not None:
                if child in seen:
                    # .get: a root can also be reached from another root
                    deps[child] = deps.get(child, 0) + 1
                else:
                    seen.add(child)
                    deps[child] = 1
                    stack.append(child)

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
        topo = [n for n in {n for n, _ in edges} if remaining.get(n, 0) == 0]
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
    heap: list[tuple[int, int, Node]] = []
    for node in {n for n, _ in edges}:
        if needed is not None and node not in needed:
            continue
        if deps.get(node, 0) == 0:
            heapq.heappush(heap, (-node.sequence_nr, id(node), node))

    state = grad_mode._state
    prev_mode = state.enabled
    state.enabled = create_graph
    try:
        while heap:
            node = heapq.heappop(heap)[2]
            buf = buffers.pop(node, None)
            nexts = node.next_functions
            if buf is not None and (node._hooks is not None or type(node) is AccumulateGrad):
                buf = _pre_hooks(node, buf, create_graph)
            caps = capture.get(node)
            if caps is not None and buf is not None:
                for nr, idx in caps:
                    g = buf[nr]
                    if g is not None:
                        g = g if create_graph else _as_tensor(g)
                        results[idx] = g if results[idx] is None else results[idx] + g
            run = buf is not None and (execute is None or node in execute)
            outs: Any = ()
            if run:
                if len(buf) > 1:
                    buf = _materialize(node, buf, create_graph)
                outs = node.apply(buf, create_graph)
                if len(outs) != len(nexts) and type(node) is not AccumulateGrad:
                    raise RuntimeError(
                        f"function {node.name()} returned an incorrect number of gradients "
                        f"(expected {len(nexts)}, got {len(outs)})"
                    )
                if node._hooks is not None and node._hooks.post:
                    outs = _post_hooks(node, outs, buf, create_graph)
                if node.metadata is not None and node.metadata.get("_anomaly"):
                    from chainrule.autograd.anomaly import check_nan

                    check_nan(node, outs, create_graph)
            if not retain_graph:
                node.release()
            # 5. Route each gradient to the buffer of the node it feeds.
            meta = node._input_meta
            for i, (child, nr) in enumerate(nexts):
                if child is None or (needed is not None and child not in needed):
                    continue
                g = outs[i] if run else None
                if g is not None:
                    m = meta[i]
                    if m is not None and (
                        g.shape != m[0] or (g._data.dtype if create_graph else g.dtype) != m[1]
                    ):
                        g = _fix_grad(node, i, g, m, create_graph)
                    cbuf = buffers.get(child)
                    if cbuf is None:
                        cbuf = buffers[child] = [None] * child.num_outputs
                    old = cbuf[nr]
                    cbuf[nr] = g if old is None else old + g
                d = deps[child] - 1
                deps[child] = d
                if d == 0:
                    heapq.heappush(heap, (-child.sequence_nr, id(child), child))
    finally:
        state.enabled = prev_mode

    if inputs is None:
        return None
    if accumulate:
        # backward(inputs=[non_leaf]) accumulates into the non-leaf's .grad, as PyTorch does.
        for t, g in zip(inputs, results):
            if t.grad_fn is not None and g is not None:
                g = g if create_graph else g.detach()
                t._grad = g if t._grad is None else t._grad + g
        return None
    for idx, g in enumerate(results):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {idx} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior."
            )
    return tuple(results)


def _pre_hooks(node: Node, buf: list[Any], create_graph: bool) -> list[Any]:
    if type(node) is AccumulateGrad:
        hooks = node.variable._backward_hooks
        if hooks and buf[0] is not None:
            buf[0] = _run_tensor_hooks(hooks, buf[0], create_graph)
    nh = node._hooks
    if nh is None:
        return buf
    if type(node) is not AccumulateGrad:
        for nr, hooks in nh.tensor_pre.items():
            if hooks and buf[nr] is not None:
                buf[nr] = _run_tensor_hooks(hooks, buf[nr], create_graph)
        for nr, fn in list(nh.retain.items()):
            if buf[nr] is not None:
                fn(_as_tensor(buf[nr]))
    if nh.pre:
        gs = tuple(None if g is None else _as_tensor(g) for g in buf)
        for fn in list(nh.pre.values()):
            r = fn(gs)
            if r is not None:
                gs = tuple(r)
        buf = [None if g is None else (g if create_graph else g._data) for g in gs]
    return buf


def _post_hooks(node: Node, outs: Any, buf: list[Any], create_graph: bool) -> Any:
    gin = tuple(None if g is None else _as_tensor(g) for g in outs)
    gout = tuple(None if g is None else _as_tensor(g) for g in buf)
    assert node._hooks is not None
    for fn in list(node._hooks.post.values()):
        r = fn(gin, gout)
        if r is not None:
            gin = tuple(r)
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
