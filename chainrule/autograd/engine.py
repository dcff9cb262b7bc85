"""run_backward(): the only code that walks the graph, in the phases of PyTorch's engine.

1. **Seed** (``_seed``): each root's edge, with its gradient in that node's input buffer.
2. **Discover** (``_dependencies``): walk ``next_functions`` from the roots with an explicit
   stack, counting the edges that reach each node. With ``inputs=``, ``_GraphTask.prune``
   keeps only the nodes on a path to them and notes where their gradients are captured.
3. **Schedule** (``_ready_roots``, then in ``_drain``): a ready queue, a heap keyed by
   ``-sequence_nr`` (the most recent node first), starting from the roots no root leads to.
4. **Run node** (in ``_drain``: the node's generated apply, ``node._fast``, or
   ``_GraphTask.evaluate``): pre-hooks, capture, apply, post-hooks, release.
5. **Route** (in ``_drain``; ``_fix_grad``): check each gradient against its input's
   metadata, add it into the input buffer of the node it feeds, and count the edge off; the
   node is ready when its count reaches zero.
6. **Finish** (``_finish``): the final callbacks queued during this backward run
   (``autograd._callbacks.queue_callback``, PyTorch's ``queue_callback``), then the gradients
   captured for ``inputs=`` are returned (``grad``) or added into a non-leaf's ``.grad``.

Gradients are raw arrays unless ``create_graph`` is set; see Note [two speeds] in graph.py.
The hooks a node runs in phase 4 are in ``_run_hooks.py``. Over 400 lines because the phases
read best in order, in one file, around the loop they share.

Note [plain nodes]
    Most nodes are OpNodes with no hooks or anomaly metadata, in a backward without
    ``inputs=``. Without create_graph, such a node runs its op's generated apply (Note
    [generated apply] in _node_apply.py), which also frees it. The others, and every node of a
    backward with ``inputs=`` or create_graph, run ``_GraphTask.evaluate``, where a plain
    OpNode still skips the per-node checks that only hooks, capture and custom Functions need
    (measured: about 4 % of a small-op backward). The plain backward is thus the general one
    with ``fast=True``: one loop, ``_drain``, runs both.

Note [one loop]
    Phases 3 to 5 run once per node and per edge, so ``_drain`` holds them in one frame: the
    node is run through one call (its generated apply, or ``evaluate``), and routing and
    scheduling are inline. Routing as a function of its own, ``_route(node, outs, ...)``
    returning the next node, read better but cost one more Python call per node: measured
    with bench/count.py on op_chain, 8,085,097 machine instructions per step against
    7,999,460 inline (+1.1 %). While exactly one node is ready, as along a chain, it is held
    in ``pending`` and the heap is not touched.

Note [monomorphic reads]
    Each node name has its own class (Note [node classes] in _nodes.py), and CPython 3.11
    specialises an attribute read for one class only: a read in this loop sees every class of
    the graph in turn and takes the generic lookup each time (about 200 machine instructions
    against 15). So the loop reads as little off a node as it can. The generated apply, one
    per op and so one class at each of its reads, returns the node's ``next_functions`` and
    ``_input_meta`` with its gradients; and a gradient of output 0 begins its node's buffer
    as ``[g]`` without asking the node's ``num_outputs``: ``evaluate``, which runs every node
    of several outputs, sizes the buffer first, and the routing sizes it when a later output's
    gradient arrives. Left: ``node._fast``, ``sequence_nr`` for the heap, ``_dependencies``'s
    walk. Figures in docs/architecture-notes.md, item 10.
"""

from __future__ import annotations

import threading
from heapq import heappop, heappush
from typing import Any, Callable, Sequence

from chainrule import _kinds
from chainrule._dispatch import ops as _ops
from chainrule.autograd import _callbacks, grad_mode
from chainrule.autograd._nodes import _GRAD_LOCK, AccumulateGrad, Node, OpNode
from chainrule.autograd._run_hooks import _as_tensor, _post_hooks, _pre_hooks
from chainrule.autograd._sites import _origin, user_site
from chainrule.backends import multi_gpu_backend

__all__ = ["run_backward", "checkpoint_valid"]

# Whether a ``use_reentrant=True`` checkpoint may rerun its segment in the backward running on
# this thread (PyTorch's ``checkpoint_valid``): not in a backward given ``inputs=`` (which
# ``autograd.grad`` always is), nor in any backward nested in one, since the rerun's own
# ``backward`` would accumulate into ``.grad`` what the caller asked to be returned.
_checkpoint = threading.local()


def checkpoint_valid() -> bool:
    """``torch.autograd._is_checkpoint_valid()``: true outside a backward, and inside one
    started without ``inputs=`` from a context where it was true."""
    return getattr(_checkpoint, "valid", True)


# With ``inputs=``, the dependency count of a node off every path to them that a kept node feeds:
# out of reach of any count of edges, so that it never becomes ready (``_recount``).
_UNREACHABLE = 1 << 62


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
    buffers, root_nodes = _seed(roots, root_grads, create_graph)
    deps = _dependencies(root_nodes)
    task = _GraphTask(create_graph)
    if inputs is not None:
        deps = task.prune(inputs, root_nodes, deps, accumulate)
    heap = _ready_roots(root_nodes, deps, task.needed)
    # Where this backward was called from, noted on each node it frees (Note [sites]).
    freed_at = None if retain_graph else user_site(1)
    state = grad_mode._state
    prev_mode = state.enabled
    state.enabled = create_graph
    fast = task.plain and not create_graph  # Note [plain nodes]
    evaluate = task.evaluate
    gpus = multi_gpu_backend()  # None unless CuPy is in use with several GPUs
    if gpus is not None:  # each node on its GPU (Note [the inputs' device is current], ops/_apply)
        evaluate, fast, prev_gpu = gpus.on_node_devices(evaluate), False, gpus.current_device()
    _callbacks.push()
    outer_valid = getattr(_checkpoint, "valid", True)
    _checkpoint.valid = outer_valid and inputs is None
    ok = False
    try:
        if heap:  # empty where no root leads to inputs=
            _drain(
                heap,
                buffers,
                deps,
                evaluate,
                not retain_graph,
                freed_at,
                fast,
                not create_graph,
            )
        ok = True
    finally:
        state.enabled = prev_mode
        _checkpoint.valid = outer_valid
        if gpus is not None:
            gpus.set_device(prev_gpu)
        _callbacks.pop(ok)  # final callbacks (queue_callback), after the graph is done
    if inputs is None:
        return None
    return _finish(inputs, task.results, accumulate, create_graph, allow_unused)


# 1. Seed ------------------------------------------------------------------------------------


def _root_edge(t: Any, i: int) -> tuple[Node, int]:
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    if t._requires_grad:
        return t._get_accumulator(), 0
    raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def _seed(
    roots: Sequence[Any], root_grads: Sequence[Any], create_graph: bool
) -> tuple[dict[Node, list[Any]], list[Node]]:
    """The input buffers holding the root gradients, and the root nodes (each once)."""
    edges = [_root_edge(t, i) for i, t in enumerate(roots)]
    buffers: dict[Node, list[Any]] = {}
    for (node, nr), g in zip(edges, root_grads):
        gv = g if create_graph else g._data
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = gv if buf[nr] is None else buf[nr] + gv
    return buffers, list(dict.fromkeys(n for n, _ in edges))


# 2. Discover --------------------------------------------------------------------------------


def _dependencies(root_nodes: list[Node]) -> dict[Node, int]:
    """For each node reachable from the roots, the number of edges that reach it from reachable
    nodes, found with an explicit stack (never recursion: graphs can be very deep)."""
    deps: dict[Node, int] = {}
    stack = list(root_nodes)
    pop, push = stack.pop, stack.append
    if len(root_nodes) == 1:  # the graph is acyclic: no edge leads back to a single root
        while stack:
            for child, _ in pop().next_functions:
                if child is not None:
                    if child in deps:
                        deps[child] += 1
                    else:
                        deps[child] = 1
                        push(child)
        return deps
    is_root = set(root_nodes).__contains__
    while stack:
        for child, _ in pop().next_functions:
            if child is not None:
                if child in deps:
                    deps[child] += 1
                else:
                    deps[child] = 1
                    if not is_root(child):  # a root can also be reached from another root
                        push(child)
    return deps


def _topological(root_nodes: list[Node], deps: dict[Node, int]) -> list[Node]:
    """The reachable nodes, each after every node that leads to it (Kahn's algorithm over the
    discovered counts)."""
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
    return topo


def _recount(needed: set[Node]) -> dict[Node, int]:
    """Dependencies over the needed nodes only, so unneeded parents cannot stall them; the
    unneeded children of needed nodes are out of reach (``_UNREACHABLE``)."""
    deps: dict[Node, int] = {}
    for n in needed:
        for c, _ in n.next_functions:
            if c is not None:
                deps[c] = deps.get(c, 0) + 1 if c in needed else _UNREACHABLE
    return deps


# The state of one backward: pruning (phase 2) and running a node (phase 4) ------------------


class _GraphTask:
    """What one backward carries from phase to phase besides the buffers and counts: its
    mode, and with ``inputs=`` the nodes it keeps and the gradients it captures (as PyTorch's
    GraphTask does).

    ``capture`` maps a node to the ``(output_nr, index into inputs)`` pairs read at its input
    buffer; ``needed`` is None or the nodes on a path to a capture; ``execute`` is None or the
    needed nodes that run (a captured non-leaf whose inputs lead to no capture only has its
    gradient read); ``plain`` is whether neither applies (Note [plain nodes]).
    """

    __slots__ = ("create_graph", "capture", "results", "needed", "execute", "plain")

    def __init__(self, create_graph: bool) -> None:
        self.create_graph = create_graph
        self.capture: dict[Node, list[tuple[int, int]]] = {}
        self.results: list[Any] = []
        self.needed: set[Node] | None = None
        self.execute: set[Node] | None = None
        self.plain = True

    def prune(
        self,
        inputs: Sequence[Any],
        root_nodes: list[Node],
        deps: dict[Node, int],
        accumulate: bool,
    ) -> dict[Node, int]:
        """Phase 2 for ``inputs=``: note where each input's gradient is read (at the edge that
        feeds it), keep the nodes that lead there, and return their dependency counts."""
        self.results = [None] * len(inputs)
        capture = self.capture
        for idx, t in enumerate(inputs):
            if t.grad_fn is not None:
                node, nr = t.grad_fn, t._output_nr
            else:
                if not t._requires_grad:
                    raise RuntimeError("One of the differentiated Tensors does not require grad")
                node, nr = t._get_accumulator(), 0
            capture.setdefault(node, []).append((nr, idx))
        # A node is needed if it is a target or leads to one: settle it children-first.
        needed: set[Node] = set()
        execute: set[Node] = set()
        for n in reversed(_topological(root_nodes, deps)):
            child_needed = any(c in needed for c, _ in n.next_functions if c is not None)
            if child_needed or n in capture:
                needed.add(n)
            if child_needed or (accumulate and n in capture and type(n) is AccumulateGrad):
                execute.add(n)
        self.needed, self.execute, self.plain = needed, execute, False
        return _recount(needed)

    def evaluate(self, node: Node, buf: list[Any] | None, release: bool, freed_at: Any) -> Any:
        """Phase 4 for a node that has no generated apply or is in a backward that cannot use
        it (Note [plain nodes]): hooks, capture, apply, release. Returns the node's gradients
        (None for none), under create_graph checked against their inputs' metadata (``_drain``
        checks arrays as it routes them)."""
        cg = self.create_graph
        if buf is None:
            outs = None
        else:
            n = node.num_outputs
            if len(buf) != n:  # begun by output 0 in _drain (Note [monomorphic reads])
                buf.extend([None] * (n - len(buf)))
            if not self.plain:
                outs = self._evaluate_kept(node, buf)
            elif isinstance(node, OpNode) and node._hooks is None and node.metadata is None:
                if n > 1:
                    buf = _materialize(node, buf, cg)
                outs = node.apply(buf, cg)  # one gradient per edge, by construction
            else:
                outs = _execute(node, _pre_hooks(node, buf, cg), cg)
        if release:
            node.release()
            node._freed_at = freed_at
        if cg and outs is not None:
            outs = self._checked(node, outs)
        return outs

    def _evaluate_kept(self, node: Node, buf: list[Any]) -> Any:
        """``evaluate`` with ``inputs=``: hooks, capture, and apply only where the node leads
        to a capture; gradients to the nodes not kept are dropped."""
        cg = self.create_graph
        buf = _pre_hooks(node, buf, cg)
        self._capture(node, buf)
        assert self.execute is not None and self.needed is not None
        if node not in self.execute:
            return None
        outs = _execute(node, buf, cg)
        needed = self.needed
        return [
            g if child is None or child in needed else None
            for (child, _), g in zip(node.next_functions, outs)
        ]

    def _capture(self, node: Node, buf: list[Any]) -> None:
        caps = self.capture.get(node)
        if caps is None:
            return
        results = self.results
        for nr, idx in caps:
            g = buf[nr]
            if g is not None:
                g = g if self.create_graph else _as_tensor(g)
                results[idx] = g if results[idx] is None else results[idx] + g

    def _checked(self, node: Node, outs: Any) -> list[Any]:
        """``outs`` (Tensors, under create_graph), each summed back and cast to its input's
        shape and dtype."""
        res = list(outs)
        for i, ((child, _), g, m) in enumerate(zip(node.next_functions, outs, node._input_meta)):
            if g is not None and child is not None and m is not None:
                gd = g._data  # not g.shape: that builds a Size
                if gd.shape != m[0] or gd.dtype != m[1]:
                    res[i] = _fix_grad(node, i, g, m, True)
        return res


# 3. Schedule --------------------------------------------------------------------------------


def _ready_roots(
    root_nodes: list[Node], deps: dict[Node, int], needed: set[Node] | None
) -> list[tuple[int, int, Node]]:
    """The ready queue at the start: the (kept) roots that no other root leads to. Entries are
    ``(-sequence_nr, id, node)``: the most recent node runs first, which frees memory early and
    makes runs repeatable."""
    heap: list[tuple[int, int, Node]] = []
    for node in root_nodes:
        if needed is not None and node not in needed:
            continue
        if deps.get(node, 0) == 0:
            heappush(heap, (-node.sequence_nr, id(node), node))
    return heap


# complexity: the per-node and per-edge work of every backward in one frame (see the docstring).
def _drain(  # noqa: C901
    heap: list[Any],
    buffers: dict[Node, list[Any]],
    deps: dict[Node, int],
    evaluate: Callable[..., Any],
    release: bool,
    freed_at: Any,
    fast: bool,
    arrays: bool,
) -> None:
    """Phases 3 to 5, the one loop (Note [one loop]): take the next ready node, run it (with its
    generated apply when ``fast`` allows, else ``evaluate``), and route each gradient it
    returns (one per edge, or None for none) into the input buffer of the node it feeds,
    checked first when ``arrays`` (no create_graph); a node whose count of edges reaches zero
    is ready.

    ``heap`` is not empty. Complexity 16: the per-node and per-edge work of every backward, in
    one frame on purpose (Notes [one loop] and [monomorphic reads])."""
    node = heappop(heap)[2]
    while True:
        # 4. Run the node.
        buf = buffers.pop(node, None)
        run = node._fast
        if run is None or buf is None or not fast:
            outs = evaluate(node, buf, release, freed_at)
            nexts, metas = node.next_functions, node._input_meta
        else:  # Note [monomorphic reads]
            outs, nexts, metas = run(node, buf, release, freed_at)
        # 5. Route.
        if outs is None:
            outs = (None,) * len(nexts)
        pending = None
        for (child, nr), g, m in zip(nexts, outs, metas):
            if child is None:
                continue
            if g is not None:
                if (
                    arrays
                    and m is not None
                    and (g.shape != m[0] or (g.dtype is not m[1] and g.dtype != m[1]))
                ):
                    g = _fix_grad(node, None, g, m, False, outs)
                if child not in buffers:
                    if nr == 0:  # sized when the child runs (Note [monomorphic reads])
                        buffers[child] = [g]
                    else:
                        cbuf = buffers[child] = [None] * child.num_outputs
                        cbuf[nr] = g
                else:
                    cbuf = buffers[child]
                    try:
                        old = cbuf[nr]
                    except IndexError:  # begun by output 0 of a node of several
                        cbuf.extend([None] * (child.num_outputs - len(cbuf)))
                        old = None
                    cbuf[nr] = g if old is None else old + g
                    old = None
                g = None  # hold no gradient while the next node runs (AccumulateGrad steals)
            d = deps[child] - 1
            deps[child] = d
            if d == 0:  # 3. Schedule: ready; held in ``pending`` while it is the only one
                if pending is None and not heap:
                    pending = child
                else:
                    if pending is not None:
                        heappush(heap, (-pending.sequence_nr, id(pending), pending))
                        pending = None
                    heappush(heap, (-child.sequence_nr, id(child), child))
        outs = None
        node = pending
        if node is None:
            if not heap:
                return
            node = heappop(heap)[2]


# 4. Run a node ------------------------------------------------------------------------------


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


def _materialize(node: Node, buf: list[Any], create_graph: bool) -> list[Any]:
    """Fill empty output slots of a multi-output node with zeros, unless it opted out."""
    out_meta = node._out_meta
    op = getattr(node, "op", None)
    mat = getattr(op, "materialize_grads", True) if op is not None else True
    if out_meta is None or not mat or all(g is not None for g in buf):
        return buf

    from chainrule._tensor import Tensor
    from chainrule.backends import backend_of

    # The zeros go on the device of the gradients that did arrive (one at least did).
    some = next((g for g in buf if g is not None), None)
    xp = backend_of(some._data if isinstance(some, Tensor) else some).xp
    res = []
    for g, (shape, dt) in zip(buf, out_meta):
        if g is None and dt is not None and _kinds.is_floating(dt):
            z = xp.zeros(shape, dt)
            g = Tensor._wrap(z) if create_graph else z
        res.append(g)
    return res


# 5. Route (inline in _drain, Note [one loop]): the checks of a gradient -------------------


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


def _fix_grad(
    node: Node, i: int | None, g: Any, meta: Any, create_graph: bool, outs: Any = None
) -> Any:
    """Sum a broadcast gradient back to the input's shape and cast it to the input's dtype.
    ``i`` is the edge's index, or None for the first edge of ``outs`` that fails (``_route``
    does not count edges, and an edge can only fail once)."""
    shape, dt = meta
    if g.shape != shape:
        if not _expandable(shape, tuple(g.shape)):
            if i is None:
                i = _failing_edge(node, outs)
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
        # A complex gradient reaching a real input keeps its real part (Note [Wirtinger
        # gradients] in ops/complex_numbers.py).
        if create_graph:
            from chainrule._dtype import from_np

            if gdt.kind == "c" and dt.kind != "c":
                g = _ops.real(g)
            g = g.to(from_np(dt))
        else:
            g = (g.real if gdt.kind == "c" and dt.kind != "c" else g).astype(dt)
    return g


def _failing_edge(node: Node, outs: Any) -> int:
    """The index of the first edge, in routing order, whose array gradient cannot be summed
    back to its input's shape."""
    for i, ((child, _), g, m) in enumerate(zip(node.next_functions, outs, node._input_meta)):
        if child is not None and g is not None and m is not None:
            if g.shape != m[0] and not _expandable(m[0], tuple(g.shape)):
                return i
    return -1


# 6. Finish ----------------------------------------------------------------------------------


def _finish(
    inputs: Sequence[Any],
    results: list[Any],
    accumulate: bool,
    create_graph: bool,
    allow_unused: bool,
) -> tuple[Any, ...] | None:
    """The gradients captured for ``inputs``: returned (``autograd.grad``), or added into the
    ``.grad`` of the non-leaves among them (``backward(inputs=[non_leaf])``, as PyTorch does;
    the leaves' AccumulateGrad nodes ran)."""
    if accumulate:
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
