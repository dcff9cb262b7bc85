"""The backward graph: nodes, saved tensors and version counters.

A ``Node`` is one recorded application of an op. Its ``next_functions`` are the edges to the
nodes that produced its inputs: ``(node, output_nr)``, with ``(None, 0)`` for an input that needs
no gradient. Leaves that require grad are reached through their ``AccumulateGrad`` node.

Note [saved outputs]
    A node that saves its own op's output must not hold the output Tensor: the output holds the
    node as ``grad_fn``, so that would make a reference cycle and the graph would outlive its last
    user until the cycle collector ran. A ``SavedTensor`` for an output keeps only the array and
    the version counter. ``unpack()`` (for ``create_graph=True``) wraps the array in a new Tensor
    whose ``grad_fn`` is the unpacking node itself, which is what the output was.

Note [two speeds]
    VJPs are written once, with operators and ``ns`` functions. In an ordinary backward they run on
    raw arrays (no Tensor, no node, nothing recorded); under ``create_graph=True`` the same
    formulas run on Tensors, so the backward pass is itself recorded. ``Node.apply`` receives
    arrays or Tensors accordingly and ``SavedTensor.unpack`` hands out the matching kind.

Long because nodes, saved values, version counters, saved-tensor hooks and the diagnostics that
read them share invariants (the Notes below).
"""

from __future__ import annotations

import itertools
import os as _os
import sys as _sys
import threading
from collections import OrderedDict
from sys import getrefcount as _refcount
from typing import Any, Callable

from numpy import ndarray as _ndarray

from chainrule.utils.hooks import RemovableHandle

__all__ = [
    "Node",
    "OpNode",
    "AccumulateGrad",
    "SavedTensor",
    "VersionCounter",
    "saved_bytes",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
]

_next_seq = itertools.count().__next__
_new = object.__new__

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


INFERENCE_SAVE_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)


class _HooksState(threading.local):
    # The stack of (pack, unpack) pairs of saved_tensors_hooks, per thread as in PyTorch.
    stack: list[tuple[Callable[..., Any], Callable[..., Any]]] = []

    def __init__(self) -> None:
        self.stack = []


_hooks_state = _HooksState()
# How many saved_tensors_hooks blocks are open in any thread: a plain list read, so that _record
# looks at the thread-local stack only while some block is open.
_hooks_any = [0]


# Source sites (Note [sites]) ----------------------------------------------------------------
#
# Note [sites]
#     Error messages and chainrule.viz name places in the user's program: the line whose forward
#     op created a node (``node._site``, set by ``ops._registry._record`` while
#     ``_record_sites[0]`` is on), the line of the backward call that freed a node's saved
#     values (``node._freed_at``, set by ``run_backward``) and the line of the last in-place
#     write to a tensor (``VersionCounter.last_write``, always on: every in-place path bumps
#     the counter, optimizer steps included). A site is ``(code object, f_lasti)`` of the
#     innermost frame outside the chainrule package (``format_site`` turns it into
#     ``file:line in func: source``); frames themselves are never kept (they would keep their
#     locals alive). The slots are left unset where nothing was recorded, so readers use
#     ``getattr(node, "_site", None)``. Walking the stack costs about 0.5 us, which is why
#     forward sites are opt-in while the backward and in-place ones, rare events, are not.

_PKG_DIR = _os.path.dirname(_os.path.dirname(__file__)) + _os.sep
_getframe = _sys._getframe
# Whether _record notes the forward site of each node (see Note [sites]). Off by default: the
# frame walk costs about 8% of a small op; anomaly mode records sites regardless.
_record_sites = [False]
# co_filename -> whether it lies in the chainrule package (a dict read is cheaper than the test).
_in_pkg: dict[str, bool] = {}


def _file_in_pkg(filename: str) -> bool:
    inside = _in_pkg[filename] = filename.startswith(_PKG_DIR)
    return inside


def user_site(depth: int = 1) -> tuple[Any, int] | None:
    """``(code, f_lasti)`` of the innermost frame outside chainrule, starting ``depth`` frames
    above the caller (Note [sites])."""
    try:
        f: Any = _getframe(depth + 1)
    except ValueError:
        return None
    while f is not None:
        c = f.f_code
        inside = _in_pkg.get(c.co_filename)
        if inside is None:
            inside = _file_in_pkg(c.co_filename)
        if not inside:
            return (c, f.f_lasti)
        f = f.f_back
    return None


def site_line(site: tuple[Any, int]) -> int | None:
    """The line number of a site (its code's line at instruction offset ``f_lasti``)."""
    code, lasti = site
    line = None
    for start, end, ln in code.co_lines():
        if start <= lasti < end:
            return ln
        if start <= lasti:
            line = ln if ln is not None else line
    return line if line is not None else code.co_firstlineno


def format_site(site: tuple[Any, int] | None, text: bool = True) -> str:
    """``"file.py:12 in fn: <source line>"`` (the path relative to the working directory when
    it lies below it; without the source line unless ``text``). An offset of -1 stands for the
    code's first line."""
    if site is None:
        return "an unknown place"
    import linecache

    code = site[0]
    line = site_line(site)
    fn = code.co_filename
    shown = fn
    if _os.path.isabs(fn):
        try:
            rel = _os.path.relpath(fn)
            if not rel.startswith(".."):
                shown = rel
        except ValueError:  # another drive on Windows
            pass
    if not text:
        return f"{shown}:{line}"
    src = linecache.getline(fn, line).strip() if line else ""
    return f"{shown}:{line} in {code.co_name}" + (f": {src}" if src else "")


class set_record_sites:
    """Record the user's source line of every forward op (``node._site``; Note [sites]), which
    the messages of a second backward or of a modified saved tensor and ``chainrule.viz``
    then show. Off by default (it costs about 8% per op); anomaly mode records them too.

    Used as a function it sets the mode; as a context manager it restores the old one on exit.
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _record_sites[0]
        _record_sites[0] = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _record_sites[0] = self.prev


def is_record_sites_enabled() -> bool:
    """Whether forward sites are recorded (see ``set_record_sites``)."""
    return _record_sites[0]


_SITES_HINT = (
    "\n  (chainrule.autograd.graph.set_record_sites(True) or anomaly mode would also name the "
    "forward line that created the node.)"
)


def _created_at(node: Any) -> str:
    site = getattr(node, "_site", None)
    return "" if site is None else f" (created by the forward at {format_site(site)})"


def _sites_of_modified(node: Any, counter: VersionCounter) -> str:
    """The lines that say where a value was saved and where it was then changed in place."""
    lines = []
    if node is not None and getattr(node, "_site", None) is not None:
        lines.append(f"\n  saved for {node.name()} by the forward at {format_site(node._site)}")
    elif node is not None:
        lines.append(_SITES_HINT)
    last = getattr(counter, "last_write", None)
    if last is not None:
        lines.append(f"\n  modified in place at {format_site(last)}")
    return "".join(lines)


def freed_message(node: Any) -> str:
    """PyTorch's message for a second backward, plus which node's values were freed and which
    backward call freed them (Note [sites])."""
    if node is None:
        return FREED_MSG
    freed_at = getattr(node, "_freed_at", None)
    if freed_at is None:
        by, call = "", "the backward call that freed them"
    else:
        by, call = f" by the backward call at {format_site(freed_at)}", "that call"
    created = _created_at(node)
    return (
        f"{FREED_MSG}\n  The saved values of {node.name()}{created} were freed{by}. "
        f"Pass retain_graph=True to {call} if this graph is to be backpropagated again, or "
        "run the forward again to build a fresh graph for this backward."
        + ("" if created else _SITES_HINT)
    )


class VersionCounter:
    """An integer shared by a tensor, its views and its ``detach()``ed aliases.

    Every in-place op increments it; a ``SavedTensor`` compares it with the value it saved.
    Each write of ``value`` also notes where in the user's program it came from, as
    ``last_write`` (Note [sites]); in-place ops are rare, so this is always on.
    """

    __slots__ = ("value", "last_write")

    def __init__(self) -> None:
        # Not through __setattr__: creating a counter writes nothing. ``last_write`` stays
        # unset until the first write (read it with getattr(counter, "last_write", None)).
        _set_value(self, 0)

    def __setattr__(self, name: str, v: Any) -> None:
        _setattr(self, name, v)
        if name == "value":
            _set_last(self, user_site(1))


_setattr = object.__setattr__
_set_value = VersionCounter.value.__set__  # type: ignore[attr-defined]
_set_last = VersionCounter.last_write.__set__  # type: ignore[attr-defined]


class SavedTensor:
    """A value kept for backward, with the version it had when saved.

    See Note [saved outputs] for why an output keeps only its array.
    """

    __slots__ = ("data", "tensor", "counter", "version", "is_output", "output_nr", "src_name",
                 "shape_str")

    def __init__(self, tensor: Any, is_output: bool, counter: VersionCounter) -> None:
        self.data = tensor._data
        self.counter = counter
        self.version = counter.value
        self.is_output = is_output
        self.output_nr = tensor._output_nr if is_output else 0
        # An input is kept as the Tensor itself (no cycle: it does not point at this node), so
        # that create_graph can route second-order gradients to it.
        self.tensor = None if is_output else tensor
        gf = tensor.grad_fn
        self.src_name = None if is_output or gf is None else gf
        self.shape_str = None

    def unpack(self, node: Node, as_tensor: bool) -> Any:
        """The saved value: an array, or a Tensor in the graph when ``as_tensor``."""
        data = self.data
        if data is None:
            raise RuntimeError(freed_message(node))
        if self.counter.value != self.version:
            raise RuntimeError(self._modified_message(node))
        if not as_tensor:
            return data
        if self.is_output:
            from chainrule._tensor import Tensor

            return Tensor._from_node(data, node, self.output_nr)
        return self.tensor

    def _modified_message(self, node: Node) -> str:
        from chainrule._tensor import _type_name

        if self.data is not None:
            shape, dt = list(self.data.shape), self.data.dtype
        else:
            shape, dt = list(self.shape_str[0]), self.shape_str[1]
        # PyTorch names the node that now produces the tensor, without its "Backward0" suffix.
        where = ""
        t = self.tensor
        if self.is_output:
            where = f", which is output {self.output_nr} of {_short_name(node)},"
        else:
            src = t.grad_fn if t is not None and t.grad_fn is not None else self.src_name
            if src is not None:
                nr = t._output_nr if t is not None else 0
                where = f", which is output {nr} of {_short_name(src)},"
        pname = getattr(t, "_param_name", None)
        if pname is None and t is not None and t._base is not None:
            pname = getattr(t._base, "_param_name", None)  # e.g. weight.t() saved by linear
        if pname is not None:
            where += f" (the parameter '{pname}')"
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [torch.{_type_name(dt)} {shape}]{where} is at version "
            f"{self.counter.value}; expected version {self.version} instead. Hint: the "
            f"backward of {node.name()} needs this value as it was when the forward ran; use "
            "an out-of-place op, or clone() the tensor before modifying it (an optimizer "
            "step() between a forward and its backward also modifies parameters in place: "
            "call backward() first). Enable anomaly "
            "detection with chainrule.autograd.set_detect_anomaly(True) to find the operation "
            "that failed to compute its gradient." + _sites_of_modified(node, self.counter)
        )

    def release(self) -> None:
        self.data = None
        self.tensor = None


def _short_name(node: Any) -> str:
    """A node's name as PyTorch's version-counter error prints it: ``Sigmoid`` for
    ``SigmoidBackward0``."""
    name = node.name()
    i = name.rfind("Backward")
    return name[:i] if i > 0 else name


class PackedSavedTensor(SavedTensor):
    """A saved value that went through a ``saved_tensors_hooks`` pack hook.

    Only the packed object is kept, not the original tensor or array (that is what lets a hook
    offload or compress it); ``unpack`` calls the unpack hook, which must return a Tensor. For
    an input in the graph, the input's place in the graph (``grad_fn``, output number, or the
    leaf's AccumulateGrad) is kept, so that under ``create_graph`` the unpacked value routes
    second-order gradients as the input would. The version check still applies.
    """

    __slots__ = ("packed", "unpack_fn", "alive", "edge", "pname")

    def unpack(self, node: Node, as_tensor: bool) -> Any:
        if not self.alive:
            raise RuntimeError(freed_message(node))
        if self.counter.value != self.version:
            raise RuntimeError(self._modified_message(node))
        from chainrule._tensor import Tensor, _new_tensor

        t = self.unpack_fn(self.packed)
        if not isinstance(t, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                f"type {type(t).__name__}"
            )
        if not as_tensor:
            return t._data
        if self.is_output:
            return Tensor._from_node(t._data, node, self.output_nr)
        edge = self.edge
        if edge is None:
            return t
        gf, nr, acc = edge
        r = _new_tensor(t._data)
        r._requires_grad = True
        r.grad_fn = gf
        if nr:
            r._output_nr = nr
        if acc is not None:
            import weakref

            r._accum = weakref.ref(acc)
        return r

    def _modified_message(self, node: Node) -> str:
        msg = super()._modified_message(node)
        if self.pname is not None:
            msg = msg.replace("] is at version", f"] (the parameter '{self.pname}') is at version")
        return msg

    def release(self) -> None:
        self.alive = False
        self.packed = None
        self.edge = None
        self.tensor = None
        self.data = None


def pack_saved(saved: list[Any], node: Node) -> None:
    """Run the innermost pack hook on each value ``saved`` holds (in place in the list)."""
    from chainrule._tensor import Tensor

    pack, unpack = _hooks_state.stack[-1]
    for i, s in enumerate(saved):
        if type(s) is not SavedTensor:
            continue
        t = s.tensor
        src = Tensor._wrap(s.data) if t is None else t
        # Hooks see a tensor outside the graph for outputs (PyTorch passes the output itself,
        # but holding it here would make a cycle; see Note [saved outputs]).
        hooks = _hooks_state.stack
        _hooks_state.stack = []  # ops inside a pack hook are not themselves packed
        try:
            packed = pack(src)
        finally:
            _hooks_state.stack = hooks
        p = PackedSavedTensor.__new__(PackedSavedTensor)
        p.data = None
        p.tensor = None
        p.counter = s.counter
        p.version = s.version
        p.is_output = s.is_output
        p.output_nr = s.output_nr
        p.src_name = s.src_name
        p.shape_str = (tuple(s.data.shape), s.data.dtype)
        p.packed = packed
        p.unpack_fn = unpack
        p.alive = True
        p.edge = None
        p.pname = None
        if t is not None:
            p.pname = getattr(t, "_param_name", None)
            if t._requires_grad:
                gf = t.grad_fn
                p.edge = (gf, t._output_nr, t._get_accumulator() if gf is None else None)
        saved[i] = p


class NodeHooks:
    """Hooks of one node, allocated only when the first hook is registered."""

    __slots__ = ("pre", "post", "tensor_pre", "retain")

    def __init__(self) -> None:
        self.pre: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self.post: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        # output_nr -> hooks registered with Tensor.register_hook on that output
        self.tensor_pre: dict[int, OrderedDict[int, Callable[..., Any]]] = {}
        # output_nr -> the retain_grad() hook of that output (runs after the tensor hooks)
        self.retain: dict[int, Callable[..., Any]] = {}


class Node:
    """One recorded operation in the backward graph.

    ``apply(grads, create_graph)`` maps the gradients of the node's outputs to the gradients of
    its inputs (one entry per ``next_functions`` edge, ``None`` for no contribution).
    ``_input_meta[i]`` is ``(shape, numpy dtype)`` of input ``i``, which the engine uses to sum
    broadcast gradients back and to cast them; ``_out_meta`` does the same for the outputs of a
    node with several.
    """

    __slots__ = (
        "next_functions",
        "sequence_nr",
        "_input_meta",
        "_out_meta",
        "_hooks",
        "_released",
        "metadata",
        "_site",  # Note [sites]: unset unless recorded
        "_freed_at",
        "_fast",  # Note [generated apply]: the op's node_apply while the node has no hooks
        "__weakref__",
    )

    num_outputs = 1

    def __init__(self) -> None:
        self.sequence_nr = _next_seq()
        self.next_functions: tuple[tuple[Node | None, int], ...] = ()
        self._input_meta: tuple[Any, ...] = ()
        self._out_meta: tuple[Any, ...] | None = None
        self._hooks: NodeHooks | None = None
        self._released = False
        self.metadata: dict[str, Any] | None = None
        self._fast: Callable[..., Any] | None = None

    def name(self) -> str:
        """The node's class name, as PyTorch prints it (``MulBackward0``)."""
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    def apply(self, grads: list[Any], create_graph: bool) -> tuple[Any, ...]:
        raise NotImplementedError(f"{self.name()} does not implement apply")

    def release(self) -> None:
        """Drop saved values; a later backward through this node fails with PyTorch's message."""
        self._released = True

    def __call__(self, *grads: Any) -> Any:
        """Apply the node to Tensor gradients directly, as ``grad_fn(grad)`` does in PyTorch."""
        from chainrule.autograd.grad_mode import is_grad_enabled

        res = self.apply(list(grads), is_grad_enabled())
        return res[0] if len(res) == 1 else res

    # Hooks -------------------------------------------------------------------------------
    def _get_hooks(self) -> NodeHooks:
        h = self._hooks
        if h is None:
            h = self._hooks = NodeHooks()
            self._fast = None  # a node with hooks takes the engine's full path
        return h

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Post-hook ``fn(grad_inputs, grad_outputs)``; may return replacement grad_inputs."""
        return RemovableHandle(self._get_hooks().post, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Pre-hook ``fn(grad_outputs)``; may return replacement grad_outputs."""
        return RemovableHandle(self._get_hooks().pre, fn)

    def _register_tensor_hook(self, output_nr: int, fn: Callable[..., Any]) -> RemovableHandle:
        tp = self._get_hooks().tensor_pre
        return RemovableHandle(tp.setdefault(output_nr, OrderedDict()), fn)

    def _saved_tensors(self) -> tuple[SavedTensor, ...]:
        return ()


_RELEASED: tuple[Any, ...] = ()


class _Ctx:
    """The bag a VJP reads: saved values, op parameters, ``input_shapes``, ``needs_input_grad``.

    Each op gets its own subclass (``_ctx_class``) whose ``__slots__`` are the op's saved names,
    so that filling one per backward node is a few slot stores; parameters and aux arrays go
    to the instance ``__dict__``. ``input_shapes`` is computed only when a VJP reads it.
    A missing name means the op did not save it: the error says so instead of AttributeError.
    """

    @property
    def input_shapes(self) -> tuple[Any, ...]:
        return tuple(m[0] if m is not None else None for m in self._node._input_meta)

    def __getattr__(self, name: str) -> Any:
        if name == "_node":
            raise AttributeError(name)
        raise AttributeError(
            f"VJP of {self._node.op.name} reads ctx.{name}, which the op does not "
            "save or take as a parameter: add it to the op's saves=."
        )


def _ctx_class(op: Any) -> type:
    """The ctx class of ``op``: made on its first backward and kept as ``op.ctx_cls``."""
    names = tuple(n for n in op.save_names if n.isidentifier())
    slots = tuple(dict.fromkeys(names + ("needs_input_grad", "_node")))
    cls = type(f"{op.node_name}Ctx", (_Ctx,), {"__slots__": slots})
    op.ctx_cls = cls
    return cls


# Note [generated apply]
#     OpNode.apply is generic: it loops over an op's saved values and VJPs. The engine's plain
#     loop (_run_plain in engine.py) instead calls ``op.node_apply(node, grads, release,
#     freed_at)``, a function written for the one op (of one output) when it is first
#     recorded: its saved values are read and stored into the ctx by name, one line each, its
#     VJPs are called directly, and then, when ``release``, it frees the node as the engine
#     and OpNode.release do. It computes exactly what OpNode.apply does without create_graph
#     (a freed node goes to OpNode.apply for its error), in less than half the bytecode:
#     measured 127 -> 55 instructions per node. Each node holds it as ``_fast`` until it gets
#     hooks or anomaly metadata, which need the engine's full path.
_APPLY_TEMPLATE = """
def node_apply(node, grads, release, freed_at):
    if node._released:
        return general(node, grads, False)
    ctx = new(cls)
    ctx._node = node
    ctx.needs_input_grad = need = node.needs_input_grad
    p = node.params
    if p:
        ctx.__dict__.update(p)
{saved}{aux}    g = {grad}
{call}    if release:
        node._released = True
        node._freed_at = freed_at
{release}        node._aux = None
    return r
"""

_SAVED_TEMPLATE = """    s{i} = saved[{i}]
    if type(s{i}) is SavedTensor:
        v = s{i}.data
        if v is None or s{i}.counter.value != s{i}.version:
            v = s{i}.unpack(node, False)
    elif isinstance(s{i}, SavedTensor):
        v = s{i}.unpack(node, False)
    else:
        v = s{i}
    ctx.{name} = v
"""

_RELEASE_TEMPLATE = """        if type(s{i}) is SavedTensor:
            s{i}.data = None
            s{i}.tensor = None
        elif isinstance(s{i}, SavedTensor):
            s{i}.release()
"""


def _make_node_apply(op: Any) -> Callable[..., Any] | None:
    """Write ``op.node_apply`` (Note [generated apply]); None where the generic one must run."""
    names = op.save_names
    if op.num_outputs != 1 or not all(n.isidentifier() for n in names):
        return None
    if op.ctx_cls is None:
        _ctx_class(op)
    saved = "".join(_SAVED_TEMPLATE.format(i=i, name=n) for i, n in enumerate(names))
    if saved:
        saved = "    saved = node.saved\n" + saved
    env: dict[str, Any] = {"general": OpNode.apply, "new": _new, "cls": op.ctx_cls,
                           "SavedTensor": SavedTensor}
    if op.joint_vjp is not None:
        env["joint"] = op.joint_vjp
        call = "    r = joint(ctx, g)\n    if type(r) is not tuple:\n        r = (r,)\n"
    else:
        n = len(op.vjps)
        for i, f in enumerate(op.vjps):
            env[f"vjp{i}"] = f
        terms = "".join(
            f"vjp{i}(ctx, g) if need[{i}] else None, " if f is not None else "None, "
            for i, f in enumerate(op.vjps))
        # An op taking *inputs has more edges than VJPs: the generic apply handles it.
        call = (f"    if len(need) == {n}:\n        r = ({terms})\n"
                "    else:\n        r = general(node, grads, False)\n")
    src = _APPLY_TEMPLATE.format(
        saved=saved,
        aux="    a = node._aux\n    if a is not None:\n        ctx.__dict__.update(a)\n"
        if op.aux else "",
        grad="grads[0]" if op.num_outputs == 1 else "tuple(grads)",
        call=call,
        release="".join(_RELEASE_TEMPLATE.format(i=i) for i in range(len(names))))
    # Named inside the package (user_site() skips its frames), its lines in linecache.
    from chainrule.autograd._codegen import compile_generated

    return compile_generated(src, f"apply of {op.name}", env)["node_apply"]


class OpNode(Node):
    """The generic node for a registered op; ``name()`` is ``<Op>Backward0``.

    Built by ``ops._registry`` without calling ``__init__`` (the hot path sets every slot).
    """

    __slots__ = ("op", "params", "saved", "needs_input_grad", "_aux", "num_outputs")

    def name(self) -> str:
        op = self.op
        return op.node_name if op.name_fn is None else op.name_fn(self.params)

    def _saved_tensors(self) -> tuple[SavedTensor, ...]:
        return tuple(s for s in self.saved if isinstance(s, SavedTensor))

    def apply(self, grads: list[Any], create_graph: bool) -> tuple[Any, ...]:
        op = self.op
        cls = op.ctx_cls
        if cls is None:
            cls = _ctx_class(op)
        ctx = _new(cls)
        ctx._node = self
        need = ctx.needs_input_grad = self.needs_input_grad
        params = self.params
        if params:
            ctx.__dict__.update(params)
        saved = self.saved
        if saved:
            if self._released:
                raise RuntimeError(freed_message(self))
            for name, sv in zip(op.save_names, saved):
                if type(sv) is SavedTensor and not create_graph:
                    # SavedTensor.unpack inlined for arrays; it raises the errors.
                    v = sv.data
                    if v is None or sv.counter.value != sv.version:
                        v = sv.unpack(self, False)
                elif isinstance(sv, SavedTensor):
                    v = sv.unpack(self, create_graph)
                elif create_graph and type(sv) is _ndarray:
                    v = sv.item()  # a scalar operand saved as a 0-d array (Note [scalar operands])
                else:
                    v = sv
                setattr(ctx, name, v)
        if self._aux is not None:
            d = ctx.__dict__
            if create_graph:
                from chainrule._tensor import Tensor

                for k, v in self._aux.items():
                    d[k] = Tensor._wrap(v) if hasattr(v, "dtype") and hasattr(v, "shape") else v
            else:
                d.update(self._aux)
        g = grads[0] if op.num_outputs == 1 else tuple(grads)
        if op.joint_vjp is not None:
            res = op.joint_vjp(ctx, g)
            if not isinstance(res, tuple):
                res = (res,)
            return res
        vjps = op.vjps
        n = len(need)
        if n == 2 and len(vjps) == 2:
            return (vjps[0](ctx, g) if need[0] else None, vjps[1](ctx, g) if need[1] else None)
        if n == 1 and len(vjps) == 1:
            return (vjps[0](ctx, g) if need[0] else None,)
        return tuple(f(ctx, g) if nd else None for f, nd in zip(vjps, need))

    def release(self) -> None:
        self._released = True
        for s in self.saved:
            if type(s) is SavedTensor:  # SavedTensor.release, inlined for the common class
                s.data = None
                s.tensor = None
            elif isinstance(s, SavedTensor):
                s.release()
        self._aux = None


# Guards what has no node of its own to lock (Note [accumulation lock]): making a leaf's
# AccumulateGrad, and adding into a non-leaf's .grad (retain_grad, backward(inputs=[non_leaf])).
_GRAD_LOCK = threading.Lock()


class AccumulateGrad(Node):
    """The sink for one leaf: runs the leaf's hooks, then adds the gradient into ``leaf.grad``.

    The first gradient becomes ``.grad`` without a copy when nothing else holds its array (as
    PyTorch steals a gradient whose use count allows it), else as a copy, since the engine's
    buffer may be shared; later ones are added in place, or out of place under ``create_graph``
    so that ``.grad`` stays differentiable.

    Note [accumulation lock]
        Backward passes in several threads may reach one leaf at once. Reading ``.grad``,
        deciding between storing and adding, and the add itself (NumPy releases the GIL during
        a large in-place add) are one critical section, under the node's own lock, as PyTorch
        locks each AccumulateGrad; ``Tensor._get_accumulator`` makes sure that all of a leaf's
        graphs share one node. Post-accumulate hooks run after the lock is released (a hook may
        itself run a backward into this leaf). Cost, measured with bench/count.py: about 39
        bytecodes per leaf and backward (making the lock, taking it, and the locked check in
        ``_get_accumulator``), so +0.03 % bytecodes and +0.01 % machine instructions on the op
        chain (one leaf, 200 ops) and +1.1 % bytecodes on mlp_step (six leaves).
    """

    __slots__ = ("variable", "_lock")

    def __init__(self, variable: Any) -> None:
        Node.__init__(self)
        self.variable = variable
        self.next_functions = ()
        self._input_meta = ()
        self._lock = threading.Lock()

    def apply(self, grads: list[Any], create_graph: bool) -> tuple[Any, ...]:
        from chainrule._tensor import Tensor, _new_tensor

        v = self.variable
        g = grads[0]
        if g is None:
            return ()
        with self._lock:  # Note [accumulation lock]
            if v._grad is None:
                if create_graph:
                    v._grad = g if g.grad_fn is not None else g.detach()
                elif (_refcount(g) <= 3) and _stealable(g):
                    v._grad = _new_tensor(g)
                else:
                    v._grad = Tensor._wrap(g.copy())  # _wrap: a 0-d result may be a NumPy scalar
            elif create_graph or v._grad._requires_grad:
                old = v._grad
                v._grad = old + (g if create_graph else Tensor._wrap(g))
            else:
                gd = v._grad._data
                if gd.shape == g.shape:
                    gd += g
                else:
                    v._grad._data = gd + g
        hooks = v._post_acc_hooks
        if hooks:
            for fn in list(hooks.values()):
                fn(v)
        return ()


def _stealable(g: Any) -> bool:
    """Whether AccumulateGrad may keep the array ``g`` as ``.grad`` without copying it, given
    that nothing but the engine's buffer holds ``g`` itself (``getrefcount(g)`` is 3 in
    ``AccumulateGrad.apply``: the buffer list, the local and getrefcount's argument).

    A view qualifies only when it spans the whole of a base that nothing else holds (a reshape
    of a fresh sum, the transpose of a fresh product). A read-only array (a broadcast view) is
    copied.
    """
    if type(g) is not _ndarray:
        return False
    flags = g.flags
    if not (flags.c_contiguous and flags.writeable):
        return False
    b = g.base
    if b is None:
        return flags.owndata
    # b's holders: g itself, the local b and getrefcount's argument.
    return type(b) is _ndarray and b.base is None and b.size == g.size and _refcount(b) == 3


def _is_array(a: Any) -> bool:
    return hasattr(a, "nbytes") and hasattr(a, "shape") and hasattr(a, "dtype")


def packed_arrays(packed: Any) -> list[Any]:
    """The arrays inside what a ``saved_tensors_hooks`` pack hook returned: a Tensor's array, an
    array, or those found in a tuple, list or dict of them (anything else holds no memory that
    can be seen, e.g. a file name)."""
    from chainrule._tensor import Tensor

    if isinstance(packed, Tensor):
        return [packed._data]
    if _is_array(packed):
        return [packed]
    if isinstance(packed, dict):
        packed = list(packed.values())
    if isinstance(packed, (tuple, list)):
        return [a for p in packed for a in packed_arrays(p)]
    return []


def held_arrays(node: Node) -> list[Any]:
    """The arrays ``node`` still holds for its backward: saved values (as packed by a hook,
    for those saved under ``saved_tensors_hooks``) and the op's aux arrays (also those in a
    tuple, such as the index arrays of max along a dim)."""
    res = []
    for s in node._saved_tensors():
        if type(s) is PackedSavedTensor:
            if s.alive:
                res.extend(packed_arrays(s.packed))
        elif s.data is not None:
            res.append(s.data)
    aux = getattr(node, "_aux", None)
    if aux:
        res.extend(a for v in aux.values() for a in packed_arrays(v))
    return res


def saved_bytes(output: Any) -> int:
    """Bytes of saved arrays still held by the graph behind ``output`` (each array counted once;
    a value saved through a pack hook counts as the arrays the hook returned).

    This is the memory that ``retain_graph=True`` keeps alive after a backward.
    """
    seen_nodes: set[int] = set()
    seen_arrays: set[int] = set()
    total = 0
    outs = output if isinstance(output, (list, tuple)) else [output]
    stack = [t.grad_fn for t in outs if t.grad_fn is not None]
    while stack:
        n = stack.pop()
        if id(n) in seen_nodes:
            continue
        seen_nodes.add(id(n))
        for a in held_arrays(n):
            if id(a) not in seen_arrays:
                seen_arrays.add(id(a))
                total += a.nbytes
        for nxt, _ in n.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return total


class saved_tensors_hooks:
    """Context manager: values saved for backward inside it go through ``pack_hook(tensor)``
    and come back through ``unpack_hook(packed) -> Tensor`` when backward needs them (e.g. to
    offload or compress them). Hooks are per thread; the innermost pair applies.

    Example:
        >>> import chainrule as torch
        >>> x = torch.ones(3, requires_grad=True)
        >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: t.numpy(force=True).copy(),
        ...                                               lambda a: torch.from_numpy(a)):
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad
        tensor([2., 2., 2.])
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if _disabled_msg[0] is not None:
            raise RuntimeError(_disabled_msg[0])
        _hooks_state.stack.append((self.pack_hook, self.unpack_hook))
        _hooks_any[0] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        _hooks_state.stack.pop()
        _hooks_any[0] -= 1


class save_on_cpu(saved_tensors_hooks):
    """Saved values are copied to host memory when saved and moved back to their device when
    backward needs them (on a CPU-only setup this is a copy each way)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        from chainrule._tensor import Tensor
        from chainrule.backends import backend_of

        def pack(t: Any) -> Any:
            b = backend_of(t._data)
            return (b, b.to_host(t._data).copy())

        def unpack(p: Any) -> Any:
            b, host = p
            return Tensor._wrap(b.xp.asarray(host))

        super().__init__(pack, unpack)


_disabled_msg: list[str | None] = [None]


class disable_saved_tensors_hooks:
    """Context manager: entering ``saved_tensors_hooks`` inside it raises ``error_message``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self.prev = _disabled_msg[0]
        _disabled_msg[0] = self.error_message

    def __exit__(self, *exc: object) -> None:
        _disabled_msg[0] = self.prev
