"""Custom autograd Functions: ``Function``, ``FunctionCtx``, ``once_differentiable``.

A subclass defines static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` (or
``forward(*args)`` plus ``setup_context(ctx, inputs, output)``) and is called through
``MyFn.apply(*args)``. The forward runs without recording; when an input requires grad, the
outputs get a ``<ClassName>Backward`` node (a ``BackwardCFunction``) whose ``apply`` calls the
user's ``backward`` on Tensors. That node is the ``ctx`` itself (Note [ctx is the node]).
Under ``create_graph=True`` that backward runs with grad mode on, so a backward written with
differentiable ops is itself differentiable (double backward).

Saved tensors follow Note [saved outputs] in graph.py: an output saved with
``ctx.save_for_backward`` keeps only its array, so the graph has no reference cycle and is freed
by reference counting alone.

Outputs that are views (an input returned as is, a view made in ``forward``) are views, as
PyTorch's are (Notes [custom Function views] and [stale custom Function views]).

Long because custom Functions carry their own ctx, node, saved-value and view handling, as
PyTorch's do.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable
from weakref import ref as _weakref

from chainrule import _kinds
from chainrule.autograd import grad_mode
from chainrule.autograd._saved import VersionCounter, _set_last, _setattr
from chainrule.autograd.anomaly import is_anomaly_enabled
from chainrule.autograd.graph import (
    INFERENCE_SAVE_MSG,
    Node,
    PackedSavedTensor,
    SavedTensor,
    _hooks_any,
    _hooks_state,
    _new,
    _next_seq,
    _record_sites,
    freed_message,
    pack_saved,
    user_site,
)

__all__ = [
    "Function",
    "FunctionCtx",
    "BackwardCFunction",
    "FunctionNode",
    "once_differentiable",
    "InplaceFunction",
    "mark_fn_view",
    "fn_view_message",
]

_state = grad_mode._state


class FunctionCtx:
    """The ``ctx`` of a custom Function: what ``forward`` leaves for ``backward``.

    ``Function.apply`` hands ``forward`` an instance of the Function's ``<Name>Backward`` class,
    which is at once this class and the backward node, so the ctx *is* the output's ``grad_fn``
    (Note [ctx is the node]). A bare ``FunctionCtx()`` works too, with no node behind it.
    Any attribute may be set on it; tensors should go through ``save_for_backward`` so that
    in-place changes to them are detected and the graph stays free of cycles.
    """

    # Slots on the node classes, instance attributes on a bare FunctionCtx.
    to_save: tuple[Any, ...] | None
    dirty_tensors: tuple[Any, ...] | None
    non_differentiable: tuple[Any, ...] | None
    materialize_grads: bool
    needs_input_grad: tuple[bool, ...]
    _saved: tuple[Any, ...] | None
    _saved_nr: tuple[Any, ...]

    def __init__(self) -> None:
        self.to_save = None
        self.dirty_tensors = None
        self.non_differentiable = None
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._saved = None
        self._saved_nr = ()

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` (or None) for backward; read them back as ``ctx.saved_tensors``."""
        from chainrule._tensor import Tensor

        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{tensors.index(t)} is of type {type(t).__name__}"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Accepted for compatibility; chainrule has no forward-mode AD."""
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        """Declare inputs that ``forward`` modified in place (and returns as outputs)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Declare outputs that do not require grad; backward still gets a slot for them."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` receives zeros (True, the default) or None for outputs that got
        no gradient."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The tensors given to ``save_for_backward``. On a node (the ctx ``apply`` gives) they
        are checked against in-place changes; a bare FunctionCtx, which PyTorch gives no
        ``saved_tensors`` at all, hands back what it was given."""
        return tuple(self.to_save or ())

    @property
    def saved_variables(self) -> tuple[Any, ...]:
        import warnings

        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, 2)
        return self.saved_tensors


def _unpack_saved(node: BackwardCFunction) -> tuple[Any, ...]:
    """``node.saved_tensors``: its saved values as Tensors."""
    from chainrule._tensor import Tensor

    saved = node._saved
    if saved is None:
        return ()
    res = []
    for sv, nr in zip(saved, node._saved_nr):
        if not isinstance(sv, SavedTensor):
            res.append(sv)
            continue
        if nr is None and isinstance(sv, PackedSavedTensor):
            res.append(sv.unpack(node, True))  # keeps the input's place in the graph
            continue
        arr = sv.unpack(node, False)
        if nr is not None:
            # A saved output: rebuilt around the node, as the output was (no cycle kept).
            if nr >= 0:
                res.append(Tensor._from_node(arr, node, nr))
            else:
                res.append(Tensor._wrap(arr))
        elif sv.tensor is not None and sv.tensor._data is arr:
            res.append(sv.tensor)
        else:
            res.append(Tensor._wrap(arr))
    return tuple(res)


# Note [ctx is the node]
#     As in PyTorch, the ``ctx`` of ``MyFn.apply`` is the output's ``grad_fn``: one object of
#     class ``MyFnBackward``, a subclass of both ``BackwardCFunction`` (a Node) and
#     ``FunctionCtx``, made once per Function class by ``_FunctionMeta`` and carrying
#     ``_forward_cls``. So ``ctx.foo = 1`` in forward reads back as ``y.grad_fn.foo``, and
#     ``y.grad_fn.saved_tensors`` / ``.needs_input_grad`` / ``.metadata`` are the ctx's own.
#     The ctx's own state (``to_save``, ``needs_input_grad``, the saved values ...) lives in
#     slots; what the user sets goes to the instance ``__dict__``. One object per call, where
#     there were a ctx, a node and a weak reference between them. A call in which no input
#     requires grad still gets one (unattached: the outputs have no ``grad_fn``).
#     ``next_functions`` has one edge per Tensor argument (``(None, 0)`` for one that needs
#     no gradient) and none for other arguments, while ``backward`` still returns one value
#     per argument; ``apply`` maps the two. Saved tensors read after the node was released
#     (a backward without ``retain_graph``) raise PyTorch's "backward through the graph a
#     second time" error, whether or not anything was saved, as PyTorch's do.
class BackwardCFunction(Node, FunctionCtx):
    """The backward node of one ``Function.apply`` call, which is also its ``ctx``; each
    Function class has its own subclass, named ``<ClassName>Backward`` (Note [ctx is the
    node])."""

    __slots__ = (
        "to_save",
        "dirty_tensors",
        "non_differentiable",
        "materialize_grads",
        "needs_input_grad",
        "_saved",
        "_saved_nr",
        "num_outputs",
        "_out_meta_f",
        "_arg_is_tensor",
    )

    _forward_cls: Any = None  # set on each per-Function subclass
    num_outputs: int
    _out_meta_f: tuple[Any, ...]  # (shape, dtype) of each Tensor output (zeros for backward)
    _arg_is_tensor: tuple[bool, ...]  # per argument of apply: whether it is a Tensor

    def __init__(self) -> None:
        """An unattached ctx (``apply`` builds its own without calling this)."""
        Node.__init__(self)
        FunctionCtx.__init__(self)
        self.num_outputs = 1
        self._out_meta_f = ()
        self._arg_is_tensor = ()
        self.metadata = {}

    def __repr__(self) -> str:
        cls = type(self)
        return f"<{cls.__module__}.{cls.__qualname__} object at {hex(id(self))}>"

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The tensors given to ``save_for_backward``; raises once the graph was freed."""
        if self._released:
            raise RuntimeError(freed_message(self))
        return _unpack_saved(self)

    def apply(self, grads: list[Any], create_graph: bool) -> tuple[Any, ...]:
        from chainrule._tensor import Tensor

        gs = []
        for g, meta in zip(grads, self._out_meta_f):
            if g is None:
                if self.materialize_grads and meta is not None:
                    import numpy as np

                    g = Tensor._wrap(np.zeros(meta[0], meta[1]))
            elif not isinstance(g, Tensor):
                g = Tensor._wrap(g)
            gs.append(g)
        res = self._forward_cls.backward(self, *gs)
        if not isinstance(res, tuple):
            res = (res,)
        is_tensor = self._arg_is_tensor
        n = len(is_tensor)
        if len(res) < n or any(r is not None for r in res[n:]):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {n}, got {len(res)})"
            )
        nexts = self.next_functions
        out = []
        for i in range(n):
            r = res[i]
            if not is_tensor[i]:
                if r is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a "
                        "Variable"
                    )
                continue
            if r is None or nexts[len(out)][0] is None:
                out.append(None)
                continue
            if not isinstance(r, Tensor):
                raise TypeError(
                    f"function {self.name()} returned a gradient of type {type(r).__name__} "
                    f"at position {i + 1}; expected a Tensor or None"
                )
            out.append(r if create_graph else r._data)
        return tuple(out)

    def release(self) -> None:
        self._released = True
        saved = self._saved
        if saved:
            for s in saved:
                if isinstance(s, SavedTensor):
                    s.release()

    def _saved_tensors(self) -> tuple[SavedTensor, ...]:
        return tuple(s for s in (self._saved or ()) if isinstance(s, SavedTensor))


FunctionNode = BackwardCFunction  # the name chainrule's docs used before


class _FunctionMeta(type):
    """Gives each Function subclass its own ``<Name>Backward`` node-and-ctx class."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(
            name + "Backward",
            (BackwardCFunction,),
            {"__slots__": (), "_forward_cls": cls, "__module__": __name__},
        )


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable operations.

    Example:
        >>> import chainrule as torch
        >>> class Cube(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x ** 3
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 3 * x ** 2 * g
        >>> x = torch.tensor(2.0, requires_grad=True)
        >>> Cube.apply(x).backward(); x.grad
        tensor(12.)
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("chainrule has no forward-mode AD (jvp of a Function)")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` and, when an input requires grad, record a backward node."""
        return _apply(cls, args, kwargs)


class InplaceFunction(Function):
    def __init__(self, inplace: bool = False) -> None:
        self.inplace = inplace


def _apply(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    from chainrule._tensor import Tensor

    is_tensor = tuple(isinstance(a, Tensor) for a in args)
    # As in PyTorch, needs_input_grad is requires_grad, grad mode or not.
    needs = tuple(t and a._requires_grad for a, t in zip(args, is_tensor))
    ctx = _new_ctx(cls._backward_cls, needs, is_tensor)
    record = _state.enabled and any(needs)
    if record:  # as in PyTorch, forward already sees the node's edges
        _connect(ctx, args, needs)
    custom_setup = cls.setup_context is not Function.setup_context
    with grad_mode.no_grad():
        if custom_setup:
            output = cls.forward(*args, **kwargs)
        else:
            output = cls.forward(ctx, *args, **kwargs)
    if custom_setup:
        cls.setup_context(ctx, args, output)
    single = not isinstance(output, tuple)
    outs = (output,) if single else output
    if record:
        ctx.num_outputs = len(outs)
    ctx.sequence_nr = _next_seq()  # above the AccumulateGrad nodes just made
    input_ids = {id(a) for a, t in zip(args, is_tensor) if t}
    wrapped, out_meta, out_nr = _wrap_outputs(ctx, outs, record, input_ids)
    if record:
        ctx._out_meta_f = tuple(out_meta)
    if ctx.to_save is not None:
        if record:
            _save_for_backward(ctx, wrapped, out_nr)
        else:  # as in PyTorch, a call that records nothing saves nothing
            ctx.to_save = None
    if single:
        return wrapped[0]
    return tuple(wrapped)


def _new_ctx(
    node_cls: type[BackwardCFunction], needs: tuple[bool, ...], is_tensor: tuple[bool, ...]
) -> BackwardCFunction:
    """The ctx of one ``apply``, which becomes its outputs' node if an input needs a gradient
    (Note [ctx is the node]); every slot set here, without the two ``__init__`` calls."""
    ctx = _new(node_cls)
    ctx.to_save = None
    ctx.dirty_tensors = None
    ctx.non_differentiable = None
    ctx.materialize_grads = True
    ctx.needs_input_grad = needs
    ctx._saved = None
    ctx._saved_nr = ()
    ctx._arg_is_tensor = is_tensor
    ctx._out_meta_f = ()
    ctx.num_outputs = 1
    ctx.next_functions = ()
    ctx._input_meta = ()
    ctx._out_meta = None
    ctx._hooks = None
    ctx._released = False
    ctx.metadata = {}
    ctx._fast = None
    return ctx


def _connect(node: BackwardCFunction, args: tuple[Any, ...], needs: tuple[bool, ...]) -> None:
    """Make ``node`` the backward node of one ``cls.apply``: one edge per Tensor argument, to
    the argument's node where it needs a gradient, else ``(None, 0)``."""
    from chainrule._tensor import Tensor

    nexts = []
    meta = []
    for a, need in zip(args, needs):
        if need:
            gf = a.grad_fn
            nexts.append((gf, a._output_nr) if gf is not None else (a._get_accumulator(), 0))
            meta.append((a._data.shape, a._data.dtype))
        elif isinstance(a, Tensor):
            nexts.append((None, 0))
            meta.append(None)
    node.next_functions = tuple(nexts)
    node._input_meta = tuple(meta)
    if _record_sites[0] or is_anomaly_enabled():
        node._site = user_site(2)  # Note [sites] in _sites.py


def _wrap_outputs(
    ctx: BackwardCFunction, outs: tuple[Any, ...], record: bool, input_ids: set[int]
) -> tuple[list[Any], list[Any], dict[int, int]]:
    """Each differentiable tensor output made an output of the node ``ctx`` when ``record``.
    Returns the wrapped outputs, the (shape, dtype) of each Tensor output (None for other
    outputs) and the output number of each original output, by id."""
    from chainrule._tensor import Tensor

    dirty_ids = {id(t) for t in ctx.dirty_tensors or ()}
    nondiff_ids = {id(t) for t in ctx.non_differentiable or ()}
    wrapped = []
    out_meta = []
    out_nr: dict[int, int] = {}
    views: list[tuple[Any, bool]] = []
    n_diff = 0
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            wrapped.append(o)
            out_meta.append(None)
            continue
        dirty = id(o) in dirty_ids
        is_input = id(o) in input_ids
        diff = record and _kinds.is_inexact(o._data) and id(o) not in nondiff_ids
        t = _output_tensor(o, dirty, is_input, diff, record)
        # What backward gets for an output with no gradient: zeros for every Tensor output,
        # differentiable or not, as in PyTorch (None for other outputs).
        out_meta.append((o._data.shape, o._data.dtype))
        if diff:
            t.grad_fn = ctx
            t._requires_grad = True
            n_diff += 1
            if i:
                t._output_nr = i
            elif "_output_nr" in t.__dict__:
                del t.__dict__["_output_nr"]
        elif not dirty:
            t._requires_grad = False
        if not dirty and t._base is not None:
            views.append((t, diff))
        if dirty or not is_input:
            # An input returned as is stays an input for save_for_backward (PyTorch saves the
            # input, whose grad_fn is not this node, not the new output tensor).
            out_nr[id(o)] = i
        wrapped.append(t)
    for t, diff in views:  # Note [custom Function views]
        mark_fn_view(t, "multi" if diff and n_diff > 1 else "custom")
    return wrapped, out_meta, out_nr


# Note [custom Function views]
#     As in PyTorch, an output of ``forward`` that is an input returned as is becomes a view of
#     that input (of its root ``_base``, through a ``view_as`` made without recording), and one
#     that is a view (of an input or of anything else) stays one: ``_base``, ``_is_view()``
#     and the shared ``_version`` are a view's. Every such view is marked as made inside a
#     custom Function, in ``_fn_view`` ("multi" where the Function has more than one
#     differentiable output, else "custom"), and so is every view taken of it later
#     (``_mark_view`` in ops/_apply.py passes the mark on). Modifying a marked view in place
#     under grad mode, when it, its base or another argument requires grad, raises
#     (``check_inplace`` in ops/views.py, with PyTorch's wording from ``fn_view_message``):
#     the view+inplace rewrite would replace the custom backward. A view that got no node (a
#     call that records nothing) gets the "created in no_grad mode" wording. As in PyTorch,
#     an input returned as is that is not differentiable (``mark_non_differentiable``, or a
#     call that records nothing) is a view only when it does not require grad; otherwise it
#     is a detached alias. Differs from PyTorch: such a no-grad view of a base that requires
#     grad has ``requires_grad`` False here (PyTorch says True; chainrule's no-grad views are
#     all so).
def _output_tensor(o: Any, dirty: bool, is_input: bool, diff: bool, record: bool) -> Any:
    """The tensor that stands for output ``o``: ``o`` itself when it is a dirty (modified in
    place) input, a fresh tensor or a view made in ``forward``; a view of ``o`` for an input
    returned as is (a detached alias where PyTorch makes one); else a new tensor on the same
    memory."""
    from chainrule._tensor import _new_tensor

    if dirty:
        if record and o._requires_grad and o.grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )
        o._bump_version()  # as PyTorch does for a dirty tensor, on top of the op's own
        return o
    if is_input:
        if diff or not o._requires_grad:
            with grad_mode.no_grad():
                return o.view_as(o)
        return o.detach()
    if o.grad_fn is not None or o._requires_grad:
        t = _new_tensor(o._data)
        t._vc = o._get_vc()
        return t
    return o


def mark_fn_view(t: Any, mark: str) -> None:
    """Mark ``t`` as a view made by (or of an output of) a custom Function (Note [custom
    Function views]) and have later writes to its memory make it stale (Note [stale custom
    Function views])."""
    t.__dict__["_fn_view"] = mark
    vc = t._get_vc()
    if type(vc) is not _FnViewCounter:
        vc.__class__ = _FnViewCounter
        vc.fn_views = []
    vc.fn_views.append(_weakref(t))


def fn_view_message(t: Any, indirect: bool) -> str:
    """PyTorch's error for an in-place change to a view marked by a custom Function (Note
    [custom Function views]), or (``indirect``) for using one after its base or another view
    of the base was changed in place (Note [stale custom Function views])."""
    gf = t.grad_fn
    nr = t._output_nr
    if type(gf) is _StaleFnView:
        gf, nr = gf.node, gf.nr
    modified = "its base or another view of its base has been" if indirect else "is being"
    if gf is None:
        head = (
            f"A view was created in no_grad mode and {modified} modified inplace with grad "
            "mode enabled."
        )
    else:
        name = re.sub(r"Backward\d*$", "", gf.name())
        head = f"Output {nr} of {name} is a view and {modified} modified inplace."
    if t._fn_view == "multi":
        return head + (
            " This view is the output of a function that returns multiple views. Such functions "
            "do not allow the output views to be modified inplace. You should replace the "
            "inplace operation by an out-of-place one."
        )
    return head + (
        " This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom Function."
    )


# Note [stale custom Function views]
#     In PyTorch, reading the ``grad_fn`` of a custom Function's view after its memory was
#     written in place (through its base, another view, or itself under no_grad) raises "...
#     its base or another view of its base has been modified inplace", so any use of it in
#     autograd does. chainrule's ``grad_fn`` is a plain slot, so the check is eager instead:
#     ``mark_fn_view`` gives the shared version counter the class ``_FnViewCounter`` and a list
#     of weak references to the marked views; each write to the counter gives every live
#     marked view that has a node a ``_StaleFnView`` node (named ``DelayedError``) in its
#     place, whose ``apply`` raises PyTorch's message. Graphs recorded from the view before
#     the write keep the old node and still work, as in PyTorch. ``refresh_views`` leaves
#     marked views alone. Differs from PyTorch: the error comes at backward, not when
#     ``grad_fn`` is read or an op records the view; a view without a node (made in a call
#     that recorded nothing) is not checked.
class _FnViewCounter(VersionCounter):
    """The version counter of memory shared with custom Function views: each write makes
    them stale (Note [stale custom Function views])."""

    __slots__ = ()

    def __setattr__(self, name: str, v: Any) -> None:
        _setattr(self, name, v)
        if name == "value":
            _set_last(self, user_site(1))
            _make_stale(self)


def _make_stale(vc: Any) -> None:
    refs = vc.fn_views
    vc.fn_views = []
    for r in refs:
        v = r()
        if v is None:
            continue
        gf = v.grad_fn
        if gf is None or type(gf) is _StaleFnView:
            vc.fn_views.append(r)  # nothing to replace (yet)
            continue
        node = _StaleFnView()
        node.node = gf
        node.nr = v._output_nr
        node.msg = fn_view_message(v, True)
        node.next_functions = ((gf, v._output_nr),)
        node._input_meta = (None,)
        v.grad_fn = node
        if "_output_nr" in v.__dict__:
            del v.__dict__["_output_nr"]


class _StaleFnView(Node):
    """Stands for the node of a custom Function's view whose memory was written in place:
    backward through it raises PyTorch's error (Note [stale custom Function views])."""

    __slots__ = ("node", "nr", "msg")

    node: Any
    nr: int
    msg: str

    def name(self) -> str:
        return "DelayedError"

    def apply(self, grads: list[Any], create_graph: bool) -> tuple[Any, ...]:
        raise RuntimeError(self.msg)


def _save_for_backward(ctx: BackwardCFunction, wrapped: list[Any], out_nr: dict[int, int]) -> None:
    """``ctx.save_for_backward``'s tensors as SavedTensors, taken after the outputs are
    wrapped (dirty inputs are saved as outputs), for a call that records its node."""
    saved: list[Any] = []
    nrs: list[Any] = []
    for t in ctx.to_save or ():
        if t is None:
            saved.append(None)
            nrs.append(None)
            continue
        if t._is_inference:
            raise RuntimeError(INFERENCE_SAVE_MSG)
        vc = t._get_vc()
        nr = out_nr.get(id(t))
        if nr is not None:
            is_out = wrapped[nr].grad_fn is ctx
            saved.append(SavedTensor(wrapped[nr], True, vc))
            nrs.append(nr if is_out else -1)
        else:
            saved.append(SavedTensor(t, False, vc))
            nrs.append(None)
    if _hooks_any[0] and _hooks_state.stack:
        pack_saved(saved, ctx)
    ctx._saved = tuple(saved)
    ctx._saved_nr = tuple(nrs)
    ctx.to_save = None


class _OnceDifferentiableNode(Node):
    """Stands behind gradients computed by a ``once_differentiable`` backward: differentiating
    through it fails, as in PyTorch."""

    __slots__ = ("fn_name",)

    def name(self) -> str:
        return "DelayedError"

    def apply(self, grads: list[Any], create_graph: bool) -> tuple[Any, ...]:
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator for a ``backward`` that is not itself differentiable: it runs without
    recording, and trying to differentiate its result fails."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        from chainrule._tensor import Tensor

        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not _state.enabled:
            return outputs
        req = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        if not req:
            return outputs
        err = _OnceDifferentiableNode()
        err.next_functions = tuple(
            (a.grad_fn, a._output_nr) if a.grad_fn is not None else (a._get_accumulator(), 0)
            for a in req
        )
        err._input_meta = tuple(None for _ in req)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        res = tuple(
            Tensor._from_node(o._data, err, 0) if isinstance(o, Tensor) else o for o in outs
        )
        return res[0] if single else res

    return wrapper
