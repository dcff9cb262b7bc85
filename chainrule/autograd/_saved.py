"""Saved values and version counters: ``VersionCounter``, ``SavedTensor`` (and
``PackedSavedTensor``, a value that went through a pack hook), ``pack_saved``, and the readers
of what a graph still holds (``held_arrays``, ``saved_bytes``).

Part of the backward graph (``autograd/graph.py`` re-exports it); see Note [saved outputs]
there. Imports ``_sites`` and ``_hooks``, never ``_nodes`` (a node reaches these, not the
other way round).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chainrule.autograd._hooks import _hooks_state
from chainrule.autograd._sites import _sites_of_modified, freed_message, user_site

if TYPE_CHECKING:
    from chainrule.autograd._nodes import Node

__all__ = [
    "INFERENCE_SAVE_MSG",
    "VersionCounter",
    "SavedTensor",
    "PackedSavedTensor",
    "pack_saved",
    "packed_arrays",
    "held_arrays",
    "saved_bytes",
]

INFERENCE_SAVE_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)


class VersionCounter:
    """An integer shared by a tensor, its views and its ``detach()``ed aliases.

    Every in-place op increments it; a ``SavedTensor`` compares it with the value it saved.
    Each write of ``value`` also notes where in the user's program it came from, as
    ``last_write`` (Note [sites]); in-place ops are rare, so this is always on.
    """

    # ``fn_views``: set only on a counter shared with views output by a custom Function
    # (Note [stale custom Function views] in autograd/function.py).
    __slots__ = ("value", "last_write", "fn_views")

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

    __slots__ = (
        "data",
        "tensor",
        "counter",
        "version",
        "is_output",
        "output_nr",
        "src_name",
        "shape_str",
    )
    data: Any  # the array; None once released
    # a packed value's (shape, dtype), for the modified-version message
    shape_str: tuple[tuple[int, ...], Any] | None

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
            shape_str = self.shape_str
            assert shape_str is not None  # a packed value, whose array is not kept
            shape, dt = list(shape_str[0]), shape_str[1]
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
    # an input's place in the graph: (grad_fn, output number, AccumulateGrad or None)
    edge: tuple[Any, int, Any] | None

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
