"""In-place ops on views: rewriting the base's history (PyTorch's CopySlices).

A view remembers its root ``_base`` and the chain of view ops that produced it from the root.
An in-place op on a view whose base is in a graph:
  1. computes the op on the view's current value and history, writes the result into the shared
     memory and increments the shared version counter;
  2. gives the base a ``CopySlices`` node: base_new = base_old with the view's region replaced by
     the result. Its VJP sends g with that region zeroed to the old base, and the region of g
     to the result;
  3. gives the view, and every other live view of the same base, a fresh history by replaying
     its chain of view ops on the base's new history (Note [stale views] in ``refresh_views``).

Differs from torch: a regenerated view's node is named after the view op that made it
(``SliceBackward0``...), where PyTorch shows ``AsStridedBackward0``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence
from weakref import ref as _weakref

import numpy as np

from chainrule import _kinds
from chainrule._grad_state import _state
from chainrule._tensor import Tensor, _new_tensor
from chainrule.autograd import grad_mode
from chainrule.autograd.function import fn_view_message
from chainrule.autograd.graph import SavedTensor
from chainrule.backends import backend_of
from chainrule.ops._registry import OpDef, _legacy_name, _record, apply_op, ns

__all__ = [
    "check_inplace",
    "apply_inplace",
    "inplace_compute",
    "history_alias",
    "rebase_history",
    "inplace_on_view",
    "copy_into_view",
    "apply_chain",
    "refresh_views",
    "forget_view",
    "writable",
    "make_writable",
]


def _region(xp: Any, a: Any, chain: tuple[Any, ...]) -> Any:
    """The view of array ``a`` that ``chain`` selects (shares memory with ``a``), writable
    where it can be written (Note [writing through expand])."""
    root = a
    for op, params in chain:
        a = op.forward(xp, a, **(params or {}))
    return writable(a, root)


OVERLAP_MSG = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


class _Alias:
    """An ``__array_interface__`` over memory of ``root``, which it keeps alive."""

    def __init__(self, interface: dict[str, Any], root: Any) -> None:
        self.__array_interface__ = interface
        self.root = root


def writable(a: Any, root: Any) -> Any:
    """``a``, a view of the NumPy array ``root``, made writable if it is read-only only because
    an ``expand`` (a broadcast, read-only in NumPy) lies on its chain.

    Note [writing through expand]
        ``b.expand(2, 3)[1] = v`` writes each element of b once, which PyTorch allows: only a
        written-to view whose own elements overlap (a stride 0 over a dimension longer than 1)
        is refused, with PyTorch's message. NumPy makes every view of a broadcast read-only, so
        a view without such an overlap, of a writable root, gets a writable alias of the same
        memory instead; anything else is left read-only, for the write to refuse.
    """
    if type(a) is not np.ndarray or a.flags.writeable:
        return a
    if any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        raise RuntimeError(OVERLAP_MSG)
    if type(root) is not np.ndarray or not root.flags.writeable or not np.may_share_memory(a, root):
        return a
    iface = dict(a.__array_interface__)
    iface["data"] = (iface["data"][0], False)  # (address, read-only flag)
    return np.asarray(_Alias(iface, root))


def make_writable(view: Tensor) -> None:
    """Give a view about to be written its writable alias (Note [writing through expand])."""
    base = view._base
    if base is not None:
        view._data = writable(view._data, base._data)


def apply_chain(g: Any, chain: tuple[Any, ...]) -> Any:
    """Apply a chain of view ops to ``g`` (array or Tensor) through ``ns``."""
    for op, params in chain:
        g = getattr(ns, op.name)(g, **(params or {}))
    return g


def _copy_slices_fwd(xp: Any, base: Any, src: Any, *, chain: tuple[Any, ...]) -> Any:
    out = base.copy()
    xp.copyto(_region(xp, out, chain), src)
    return out


def _zero_view_fwd(xp: Any, g: Any, *, chain: tuple[Any, ...]) -> Any:
    out = g.copy()
    _region(xp, out, chain)[...] = 0
    return out


_zero_view = OpDef("zero_view", _zero_view_fwd, ("g",), node_name="ZeroViewBackward0")
_zero_view.vjp(lambda ctx, g: (ns.zero_view(g, chain=ctx.chain),))

copy_slices = OpDef("copy_slices", _copy_slices_fwd, ("base", "src"), node_name="CopySlices")


@copy_slices.vjp
def _copy_slices_vjp(ctx: Any, g: Any) -> Any:
    need_base, need_src = ctx.needs_input_grad
    return (
        ns.zero_view(g, chain=ctx.chain) if need_base else None,
        apply_chain(g, ctx.chain) if need_src else None,
    )


def inplace_on_view(
    view: Tensor, compute: Callable[[Tensor], Tensor], copy_self: bool, alias_out: bool = False
) -> Tensor:
    """Write ``compute(view)`` into ``view`` and rewrite the history of its base; see the module
    docstring."""
    base = view._base
    assert base is not None
    chain = view._view_chain
    make_writable(view)
    result = compute(history_alias(view, copy_self))
    _write_into(view, result._data)
    view._bump_version()
    if not result._requires_grad:
        return view
    # The result node's saved output stays its own array: the view's storage will be written
    # through the base again.
    return _rewrite_base(view, base, chain, result)


def copy_into_view(view: Tensor, src: Tensor) -> Tensor:
    """``view.copy_(src)`` (and so ``x[i] = src``) while recording: the base's ``CopySlices``
    takes ``src`` itself as its second input, as in PyTorch, with no copy node between (the
    engine sums a broadcast ``src``'s gradient back to its shape and casts it to its dtype)."""
    data = src._data
    if data.dtype != view._data.dtype:
        data = data.astype(view._data.dtype)  # any cast, as copy_ does (float -> int truncates)
    _write_into(view, data)  # broadcasts (copy_ has checked that src expands to the view)
    view._bump_version()
    base = view._base
    assert base is not None  # a view
    return _rewrite_base(view, base, view._view_chain, src)


def _rewrite_base(view: Tensor, base: Tensor, chain: tuple[Any, ...], src: Tensor) -> Tensor:
    """Steps 2 and 3 of the module docstring, once ``src`` has been written into ``view``."""
    base_out = _record(
        copy_slices, (history_alias(base, False), src), base._data, {"chain": chain}, None
    )
    rebase_history(base, base_out)
    vd = view.__dict__
    if not vd.get("_temporary"):
        with grad_mode.enable_grad():
            view.grad_fn = _replay(base, chain).grad_fn
        view._requires_grad = True
        if "_output_nr" in vd:
            del vd["_output_nr"]
    refresh_views(base, base.__dict__.get("_views"), view)
    return view


def forget_view(view: Tensor) -> None:
    """Mark ``view``, just made by a view op, as internal to one write (``x[i] = v``).

    Note [temporary views]
        ``x[i] = v`` writes through a view of x that the user never sees and that dies with
        the call. Such a view is taken out of its root's view registry (it is the entry just
        added), so that later in-place ops need not refresh it, and ``inplace_on_view`` gives
        it no replayed history after the write, since nothing can read its ``grad_fn``.
    """
    vd = view.__dict__
    vd["_temporary"] = True
    root = vd.get("_base")
    reg = root.__dict__.get("_views") if root is not None else None
    if reg is not None and reg.refs and reg.refs[-1]() is view:
        reg.refs.pop()


def _replay(base: Tensor, chain: tuple[Any, ...]) -> Tensor:
    r = base
    for vop, vparams in chain:
        r = _record(vop, (r,), vop.forward(_xp_of(r), r._data, **(vparams or {})), vparams, None)
    return r


def _xp_of(t: Tensor) -> Any:
    return backend_of(t._data).xp


def refresh_views(base: Tensor, reg: Any, skip: Tensor | None) -> None:
    """Give every live view of ``base`` a history replayed from ``base``'s current one.

    Note [stale views]
        After an in-place change through one view (or to the base), the other views of the same
        base still point at nodes built from the base's old history, so their gradients would
        miss the change. PyTorch regenerates a view's grad_fn lazily when it is read and the
        version moved. Here ``grad_fn`` is a plain slot read on every op, so the refresh is
        eager instead: the base keeps weak references to its views (made in ``_mark_view``),
        and each recorded in-place op on the base or one of its views re-derives them all. The
        per-op hot path is untouched; the cost is paid by in-place ops on views only.
    """
    if reg is None or not base._requires_grad:
        return
    with grad_mode.enable_grad():
        for v in reg.live():
            # A custom Function's view keeps its node, which is then stale (Note [stale custom
            # Function views] in autograd/function.py).
            if v is skip or v._fn_view is not None:
                continue
            r = _replay(base, v._view_chain)
            v.grad_fn = r.grad_fn
            v._requires_grad = True
            if "_output_nr" in v.__dict__:
                del v.__dict__["_output_nr"]


# In-place ops ---------------------------------------------------------------------------------
#
# The in-place mechanism (here, not in the registry's files: it and the view handling above call
# each other, so they are one topic and one file).
LEAF_INPLACE_MSG = "a leaf Variable that requires grad is being used in an in-place operation."


def check_inplace(self: Tensor, others: Sequence[Any] = ()) -> None:
    """Raise if an in-place op on ``self`` would corrupt autograd, with PyTorch's messages.

    ``others``: the op's other arguments; as in PyTorch, a view made by a custom Function is
    refused when anything involved requires grad (Note [custom Function views] in
    autograd/function.py)."""
    base = self._base
    if (
        _state.enabled
        and self._fn_view is not None
        and (
            self._requires_grad
            or (base is not None and base._requires_grad)
            or any(isinstance(o, Tensor) and o._requires_grad for o in others)
        )
    ):
        raise RuntimeError(fn_view_message(self, False))
    if _state.enabled and self._requires_grad and self.grad_fn is None:
        raise RuntimeError(LEAF_INPLACE_MSG)
    if _state.enabled and base is not None and base._requires_grad and base.grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    if self._is_inference and not _state.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details."
        )


def apply_inplace(
    op: OpDef, self: Tensor, others: tuple[Any, ...], params: dict[str, Any] | None = None
) -> Tensor:
    """Apply ``op`` to ``(self, *others)`` and write the result into ``self``.

    Increments ``self``'s version. When the op is recorded, ``self``'s history is rebased: its
    ``grad_fn`` becomes the new node, whose first edge leads to the old history.
    """
    # Whether the node will keep self (Note [saved only when needed]): only then must the op
    # see a copy of it, since the write overwrites it.
    saves_self = False
    for (kind, idx), users in zip(op.save_spec, op.save_users):
        if kind == 0 and idx == 0:
            saves_self = users is None or any(_may_need(op, i, self, others) for i in users)
    # A unary op that saves only its output (exp_, relu_, sigmoid_...) keeps self's storage as
    # that output, as PyTorch saves ``result``: a later in-place change to self is then caught.
    # Other ops keep their own copies, as PyTorch saves a clone of the original self.
    alias_out = not saves_self and not others
    if params:
        return inplace_compute(
            self,
            lambda a: apply_op(op, (a,) + others, params),
            others,
            saves_self,
            op.differentiable,
            alias_out,
        )
    return inplace_compute(
        self,
        lambda a: apply_op(op, (a,) + others),
        others,
        saves_self,
        op.differentiable,
        alias_out,
    )


def _may_need(op: OpDef, i: int, self: Tensor, others: tuple[Any, ...]) -> bool:
    """Whether input ``i`` of ``op`` applied to ``(self, *others)`` would need a gradient."""
    x = self if i == 0 else others[i - 1] if i - 1 < len(others) else None
    return i < len(op.grad_mask) and op.grad_mask[i] and isinstance(x, Tensor) and x._requires_grad


def inplace_compute(
    self: Tensor,
    compute: Callable[[Tensor], Tensor],
    others: Sequence[Any] = (),
    copy_self: bool = True,
    differentiable: bool = True,
    alias_out: bool = False,
) -> Tensor:
    """Write ``compute(self)`` into ``self``: the in-place form of any out-of-place function.

    ``compute`` receives a stand-in for ``self``'s current value and history; ``others`` are the
    remaining Tensor arguments (to decide whether the op is recorded). ``copy_self``: the
    stand-in gets a copy of the array, needed when the computation keeps it for backward, since
    the write overwrites it.
    """
    check_inplace(self, others)
    recording = (
        _state.enabled
        and differentiable
        and (self._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others))
    )
    if recording and self._base is not None:
        return inplace_on_view(self, compute, copy_self, alias_out)
    if not recording:
        with grad_mode.no_grad():
            result = compute(self)
        _write_into(self, result._data)
        self._bump_version()
        return self
    result = compute(history_alias(self, copy_self))
    _write_into(self, result._data)
    self._bump_version()
    rebase_history(self, result, alias_out)
    reg = self.__dict__.get("_views")
    if reg is not None:
        refresh_views(self, reg, None)
    return self


def history_alias(t: Tensor, copy: bool) -> Tensor:
    """A Tensor standing for ``t``'s current value and history (a copy of the value if asked),
    so that an in-place op can be computed out of place before ``t`` is overwritten."""
    a = _new_tensor(t._data.copy() if copy else t._data)
    a._requires_grad = t._requires_grad
    a.grad_fn = t.grad_fn
    if t._output_nr:
        a._output_nr = t._output_nr
    if t._requires_grad and t.grad_fn is None:
        a._accum = t._accum
        # A leaf only gets here under no_grad or through a view; its gradient must still
        # reach the leaf's own AccumulateGrad.
        if a._accum is None:
            a._accum = _weakref(t._get_accumulator())
    pn = t.__dict__.get("_param_name")
    if pn is not None:
        a.__dict__["_param_name"] = pn
    return a


def rebase_history(self: Tensor, result: Tensor, alias_out: bool = True) -> None:
    """Make ``self`` the output of ``result``'s node (after its data was copied into self).

    ``alias_out``: the node's saved output becomes self's storage and version counter (else
    it keeps the result's own array)."""
    node = result.grad_fn
    if node is None:
        return
    old = self.grad_fn
    if self._retain_handle is not None and old is not None and old._hooks is not None:
        # retain_grad() follows the tensor to its new history, as in PyTorch.
        h = old._hooks.retain.pop(self._output_nr, None)
        if h is not None:
            node._get_hooks().retain[0] = h
    self.grad_fn = node
    self._requires_grad = True
    if "_output_nr" in self.__dict__:
        del self.__dict__["_output_nr"]
    vc = self._get_vc()
    if not alias_out:
        return
    # The node's saved output is now self's storage; see Note [saved outputs].
    for s in getattr(node, "saved", ()):
        if type(s) is SavedTensor and s.is_output:
            s.data = self._data
            s.counter = vc
            s.version = vc.value


def _write_into(self: Tensor, data: Any, op: Any = None) -> None:
    dst = self._data
    if data.dtype != dst.dtype and _kinds.category(data) > _kinds.category(dst):
        raise RuntimeError(
            f"result type {_legacy_name(data.dtype)} can't be cast to the desired output type "
            f"{_legacy_name(dst.dtype)}"
        )
    if data.shape != dst.shape:
        try:
            np.broadcast_shapes(data.shape, dst.shape)
            ok = np.broadcast_shapes(data.shape, dst.shape) == dst.shape
        except ValueError:
            ok = False
        if not ok:
            bshape = (
                np.broadcast_shapes(data.shape, dst.shape)
                if _bc_ok(data.shape, dst.shape)
                else data.shape
            )
            raise RuntimeError(
                f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                f"{list(bshape)}"
            )
    be = backend_of(dst)
    if not be.writeable(dst):
        # A view through expand() is read-only in NumPy but may be written when its own
        # elements do not overlap (Note [writing through expand] in ops/views.py).
        base = getattr(self, "_base", None)
        if base is not None:
            dst = writable(dst, base._data)
    if not be.writeable(dst):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    be.xp.copyto(dst, data, casting="unsafe")


def _bc_ok(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False
