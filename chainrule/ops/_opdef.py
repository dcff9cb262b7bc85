"""Op declaration: ``OpDef`` (everything about one op), the ``unary`` / ``binary`` /
``defop`` declarations, ``REGISTRY`` and ``ns``, the namespace VJPs are written in. This module
never imports ``Tensor``: an op is declared without it.

Note [ns]
    VJPs call functions through ``ns`` (``ns.cos(x)``, ``ns.sum(g, dim=(0,), keepdim=True)``).
    Each ``ns`` function dispatches on its positional arguments: with any Tensor among them it
    runs the op through ``apply_op``; with arrays only it runs the op's forward directly
    (``_make_ns_fn`` in ops/_apply.py). Arguments are passed as the forward takes them: inputs
    positionally, parameters by keyword, already normalized. See Note [two speeds] in
    autograd/graph.py.
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from chainrule.autograd.graph import node_class
from chainrule.ops._apply import _SCALAR_ARRAY_OPS, _make_ns_fn, apply_binary, apply_op, apply_unary
from chainrule.ops._record_gen import _first_record

if TYPE_CHECKING:
    from chainrule._tensor import Tensor

__all__ = ["OpDef", "unary", "binary", "defop", "ns", "REGISTRY"]

REGISTRY: dict[str, OpDef] = {}


class _Namespace:
    """Holder for the ``ns`` functions; see Note [ns]."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"ns has no function {name!r}: no op of that name is registered")


ns = _Namespace()


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"_", name) if p)


class OpDef:
    """Everything about one op: its forward, VJPs, saved values and flags.

    Attributes:
        name: the op's public name.
        forward: ``forward(xp, *arrays, **params) -> array`` (or a tuple for several outputs).
        vjps: one VJP per input, ``vjp(ctx, g) -> grad`` (``None`` for non-differentiable
            inputs), or ``joint_vjp(ctx, g) -> tuple`` computing all at once.
        saves: names of inputs, ``"out"`` (or ``"out0"``, ``"out1"``...) to keep for backward:
            all of them, in declaration order (see Note [saved only when needed]).
        save_users: per saved value, the indices of the inputs whose VJPs read it (it is
            saved only when one of them requires grad), or None (saved whenever recorded).
        aux: the forward returns ``(outputs, dict)``; the dict's arrays are kept for backward
            as constants (indices, masks) and are readable on ``ctx`` by their keys.
        promote: ``"same"`` (inputs promoted to a common dtype), ``"float"`` (like ``same``,
            then integers go to the default float dtype), or ``None`` (no promotion).
    """

    __slots__ = (
        "name",
        "forward",
        "vjps",
        "joint_vjp",
        "saves",
        "save_spec",
        "save_users",
        "save_keep",
        "save_names",
        "view",
        "differentiable",
        "materialize_grads",
        "num_outputs",
        "node_name",
        "node_cls",
        "name_fn",
        "input_names",
        "promote",
        "aux",
        "out_dtype",
        "inplace_ok",
        "grad_mask",
        "ctx_cls",
        "node_apply",
        "record",
        "np_forward",
        "max_cat",
        "scalar_array",
    )

    def __init__(
        self,
        name: str,
        forward: Callable[..., Any],
        input_names: Sequence[str],
        saves: Sequence[str] | Mapping[str, str | Sequence[str]] = (),
        vjps: Sequence[Callable[..., Any] | None] | None = None,
        view: bool = False,
        differentiable: bool = True,
        materialize_grads: bool = True,
        num_outputs: int = 1,
        node_name: str | None = None,
        name_fn: Callable[[dict[str, Any]], str] | None = None,
        promote: str | None = "same",
        aux: bool = False,
        out_dtype: Any = None,
    ) -> None:
        self.name = name
        self.forward = forward
        self.input_names = tuple(input_names)
        self.saves, self.save_users = _save_users(name, self.input_names, saves)
        spec = []
        for s in self.saves:
            if s in self.input_names:
                spec.append((0, self.input_names.index(s)))
            elif s == "out":
                spec.append((1, 0))
            elif re.fullmatch(r"out\d+", s):
                spec.append((1, int(s[3:])))
            else:
                raise ValueError(f"op {name}: saves entry {s!r} is neither an input nor 'out'")
        self.save_spec = tuple(spec)
        # needs_input_grad -> which saved values to keep, for the generic _record; filled by
        # _keep_for on first use of each mask (Note [saved only when needed]).
        self.save_keep: dict[tuple[bool, ...], tuple[bool, ...]] = {}
        self.save_names = self.saves
        self.vjps = tuple(vjps) if vjps is not None else (None,) * len(self.input_names)
        self.joint_vjp: Callable[..., Any] | None = None
        # Which inputs can receive a gradient (have a VJP); all of them with a joint VJP.
        self.grad_mask = tuple(v is not None for v in self.vjps)
        self.ctx_cls: type | None = None  # the VJPs' ctx class (autograd/graph.py _ctx_class)
        # OpNode.apply written for this op (Note [generated apply] in autograd/graph.py).
        self.node_apply: Callable[..., Any] | None = None
        # _record written for this op on its first use (Note [generated record]).
        self.record: Callable[..., Any] = _first_record
        # The NumPy function the forward is, when it is one (Note [NumPy forwards]).
        self.np_forward: Callable[..., Any] | None = None
        # The highest dtype category (Note [element kinds]) the fast paths may give
        # np_forward: 2 for ops that refuse complex input (ops/_complex_refusals.py), whose
        # complex operands go the general way, to the checked forward.
        self.max_cat = 3
        self.scalar_array = name in _SCALAR_ARRAY_OPS  # Note [scalar operands]
        self.view = view
        self.differentiable = differentiable
        self.materialize_grads = materialize_grads
        self.num_outputs = num_outputs
        self.node_name = node_name or _camel(name) + "Backward0"
        self.name_fn = name_fn
        # The class of the op's nodes (Note [node classes]); None when name_fn picks the name.
        self.node_cls = node_class(self.node_name) if name_fn is None else None
        self.promote = promote
        self.aux = aux
        self.out_dtype = out_dtype
        if name in REGISTRY:
            raise ValueError(f"op {name!r} is registered twice")
        REGISTRY[name] = self
        setattr(ns, name, _make_ns_fn(self))

    def vjp(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: register a joint VJP ``fn(ctx, g) -> tuple of input gradients``."""
        self.joint_vjp = fn
        self.grad_mask = (True,) * len(self.input_names)
        return fn

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"


# Note [saved only when needed]
#     An op declares what each input's VJP reads: ``saves={"a": "b", "b": "a"}`` for mul (the
#     gradient of a needs b, that of b needs a); a plain sequence means every VJP reads all of
#     it. A value is kept only when the VJP of some input that requires grad reads it (PyTorch's
#     rule), so ``(w * 2.0).sum()`` does not keep w, and changing w in place before the
#     backward is no error, as in PyTorch; it also keeps less memory alive. A value not kept
#     is None in ``node.saved`` and on the ctx, where no VJP that runs reads it. (PyTorch's
#     generated code keeps a value read by the VJPs of several inputs whenever it builds the
#     node; here it is kept only when one of those inputs requires grad, which differs only
#     for ops of three or more inputs, and only by keeping less.) Nothing is decided per call:
#     the generated record tests the inputs' flags it already has, one ``if`` per guarded value
#     (Note [generated record]); the generic one looks the mask up in ``op.save_keep``.


def _save_users(
    name: str, inputs: tuple[str, ...], saves: Sequence[str] | Mapping[str, Any]
) -> tuple[tuple[str, ...], tuple[tuple[int, ...] | None, ...]]:
    """The saved names and, per name, the inputs whose VJPs read it, from an op's ``saves=``
    (Note [saved only when needed])."""
    if not isinstance(saves, Mapping):
        names = tuple(saves)
        return names, (None,) * len(names)
    users: dict[str, list[int]] = {}
    for inp, needed in saves.items():
        if inp not in inputs:
            raise ValueError(f"op {name}: saves key {inp!r} is not an input")
        for v in (needed,) if isinstance(needed, str) else needed:
            users.setdefault(v, []).append(inputs.index(inp))

    def place(v: str) -> tuple[int, str]:  # inputs in their order, then outputs
        return (inputs.index(v), "") if v in inputs else (len(inputs), v)

    names = tuple(sorted(users, key=place))
    return names, tuple(tuple(users[v]) for v in names)


# Declaration helpers ------------------------------------------------------------------------


def unary(
    name: str,
    forward: Callable[..., Any] | str,
    *,
    saves: str | Sequence[str] | Mapping[str, str | Sequence[str]] = (),
    vjp: Callable[..., Any] | None = None,
    promote: str | None = "float",
    **flags: Any,
) -> Callable[..., Tensor]:
    """Declare an elementwise op of one input ``x``; returns its public function.

    ``forward`` is ``forward(xp, x)``, or the name of the ``xp`` function that computes it
    (``"tanh"``: ``xp.tanh(x)``), which NumPy arrays then reach directly (Note [NumPy forwards]).
    """
    doc = flags.pop("doc", None)
    np_forward = None
    if isinstance(forward, str):
        np_forward = getattr(np, forward)
        forward = _xp_function(forward)
    op = OpDef(name, forward, ("x",), saves=_tuple(saves), vjps=(vjp,), promote=promote, **flags)
    op.np_forward = np_forward

    if op.aux or op.view or op.num_outputs != 1:

        def fn(input: Tensor) -> Tensor:
            return apply_op(op, (input,))
    else:

        def fn(input: Tensor) -> Tensor:
            return apply_unary(op, input)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = doc or f"{name}(input): elementwise {name}."
    fn.op = op  # type: ignore[attr-defined]
    return fn


def binary(
    name: str,
    forward: Callable[..., Any],
    *,
    saves: str | Sequence[str] | Mapping[str, str | Sequence[str]] = (),
    vjp: Sequence[Callable[..., Any] | None] = (None, None),
    promote: str | None = "same",
    np_forward: Callable[..., Any] | None = None,
    **flags: Any,
) -> Callable[..., Tensor]:
    """Declare an elementwise op of inputs ``a`` and ``b`` (broadcasting, scalar-aware).

    ``np_forward``: the NumPy function that ``forward`` is on arrays, if there is one (Note
    [NumPy forwards]); ``forward`` still gives the errors.
    """
    doc = flags.pop("doc", None)
    op = OpDef(name, forward, ("a", "b"), saves=_tuple(saves), vjps=vjp, promote=promote, **flags)
    op.np_forward = np_forward

    if op.aux or op.view or op.num_outputs != 1:

        def fn(input: Any, other: Any) -> Tensor:
            return apply_op(op, (input, other))
    else:

        def fn(input: Any, other: Any) -> Tensor:
            return apply_binary(op, input, other)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = doc or f"{name}(input, other): elementwise {name}, broadcasting."
    fn.op = op  # type: ignore[attr-defined]
    return fn


# Note [NumPy forwards]
#     A forward is written against ``xp`` (NumPy or a GPU array module), and calling it costs a
#     Python frame around the one NumPy call that most elementwise ops are. ``op.np_forward``
#     is that NumPy function itself, given for ops whose forward is exactly it (unary ops
#     declared with the function's name, add/sub/mul/div); apply_unary, apply_binary and ``ns``
#     call it directly on NumPy arrays. Measured: 1.7 % of the op chain's instructions.


def _xp_function(fname: str) -> Callable[..., Any]:
    """The forward ``xp.<fname>(x)``."""

    def fwd(xp: Any, x: Any) -> Any:
        return getattr(xp, fname)(x)

    fwd.__name__ = fname
    return fwd


def defop(
    *,
    saves: str | Sequence[str] | Mapping[str, str | Sequence[str]] = (),
    name: str | None = None,
    promote: str | None = None,
    **flags: Any,
) -> Callable[[Callable[..., Any]], OpDef]:
    """Decorator declaring an op from its forward ``f(xp, *inputs, **params)``.

    Positional parameters after ``xp`` are the inputs; keyword-only ones are parameters.
    Returns the ``OpDef``; attach VJPs with ``@op.vjp`` (joint) and call it with
    ``apply_op(op, inputs, params)`` from the public wrapper.
    """

    flags.pop("doc", None)

    def deco(f: Callable[..., Any]) -> OpDef:
        sig = inspect.signature(f)
        names = [
            p.name
            for p in list(sig.parameters.values())[1:]
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        op = OpDef(
            name or f.__name__.lstrip("_"),
            f,
            names,
            saves=_tuple(saves),
            promote=promote,
            **flags,
        )
        return op

    return deco


def _tuple(s: str | Sequence[str] | Mapping[str, Any]) -> Any:
    """A ``saves=`` argument as OpDef takes it: a tuple, or the mapping of per-input needs."""
    if isinstance(s, Mapping):
        return s
    return (s,) if isinstance(s, str) else tuple(s)
