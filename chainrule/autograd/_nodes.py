"""Nodes of the backward graph: ``Node``, ``OpNode`` (any registered op), ``AccumulateGrad``
(the sink of a leaf) and the ctx a VJP reads.

Part of the backward graph (``autograd/graph.py`` re-exports it). Its generated twin of
``OpNode.apply`` is written in ``_node_apply.py`` (Note [generated apply]).
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from sys import getrefcount as _refcount
from typing import Any, Callable

from numpy import ndarray as _ndarray

from chainrule.autograd._hooks import NodeHooks
from chainrule.autograd._saved import SavedTensor
from chainrule.autograd._sites import freed_message
from chainrule.utils.hooks import RemovableHandle

__all__ = ["Node", "OpNode", "AccumulateGrad", "NODE_CLASSES", "node_class"]

_next_seq = itertools.count().__next__
_new = object.__new__


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
        return f"<{type(self).__name__} object at {hex(id(self))}>"

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


class OpNode(Node):
    """The node of a registered op. Each node is an instance of the subclass named as PyTorch
    names the node (``MulBackward0``), so ``type(grad_fn).__name__ == grad_fn.name()``
    (Note [node classes]).

    Built by ``ops._record`` without calling ``__init__`` (the hot path sets every slot).
    """

    __slots__ = ("op", "params", "saved", "needs_input_grad", "_aux", "num_outputs")

    def _show_as(self, name: str) -> None:
        """Show this node under PyTorch's name ``name`` (the in-place form of a view op:
        ``transpose_``'s ``TransposeBackward1``): only its class changes (Note [node
        classes]); it still computes as its op's node."""
        if type(self).__name__ != name:
            object.__setattr__(self, "__class__", node_class(name))

    def _saved_tensors(self) -> tuple[SavedTensor, ...]:
        return tuple(s for s in self.saved if isinstance(s, SavedTensor))

    # complexity: the kinds of saved value and of VJP as cases of one frame (see the docstring).
    def apply(self, grads: list[Any], create_graph: bool) -> tuple[Any, ...]:  # noqa: C901
        """The generic apply, the reference for the generated one (Note [generated apply]).

        Complexity 17: its branches are the kinds of saved value and of VJP that the generated
        apply fixes per op, kept in one frame because this runs for every node of a backward
        with ``inputs=`` or create_graph."""
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


# Note [node classes]
#     PyTorch's nodes are instances of one class per node name (``type(grad_fn).__name__`` is
#     ``'MulBackward0'``), and tutorials print them so. Here the class of each name is a subclass
#     of OpNode with ``__slots__ = ()``, made once, when an op of that name is registered
#     (``OpDef.node_cls``; for an op whose name depends on its parameters, ``name_fn``, when the
#     record first meets the name), so an instance is laid out and costs exactly as an OpNode.
#     The generated record builds ``new(NodeCls)`` with the class bound in its globals, the
#     bytecodes it ran with ``new(OpNode)``; ``name()`` is the class name (``Node.name``).
#     Several ops may share a name (``to_dtype`` and ``to_device`` are both ``ToCopyBackward0``)
#     and then share its class; ``isinstance(node, OpNode)`` still tells an op node.
class _NodeClasses(dict[str, type[OpNode]]):
    """Node name -> its OpNode subclass, made on first lookup (Note [node classes])."""

    def __missing__(self, name: str) -> type[OpNode]:
        cls = type(name, (OpNode,), {"__slots__": (), "__module__": __name__})
        self[name] = cls
        return cls


NODE_CLASSES = _NodeClasses()


def node_class(name: str) -> type[OpNode]:
    """The OpNode subclass of the node name ``name`` (Note [node classes]), made on first use."""
    return NODE_CLASSES[name]


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

    def name(self) -> str:
        """PyTorch's C++ name for this node, ``torch::autograd::AccumulateGrad`` (its class
        name, as ``type(node).__name__`` shows, stays ``AccumulateGrad``)."""
        return "torch::autograd::AccumulateGrad"

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
