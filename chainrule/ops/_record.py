"""Node building: ``_record``, the generic path that makes an op's ``OpNode``, its edges,
its outputs and its saved values (Note [saved only when needed] in ops/_opdef.py), and the
helpers that the generated records (ops/_record_gen.py) share with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from chainrule import _kinds
from chainrule._tensor import Tensor, _new_tensor
from chainrule.autograd.anomaly import _anomaly_enabled
from chainrule.autograd.graph import (
    INFERENCE_SAVE_MSG,
    NODE_CLASSES,
    OpNode,
    SavedTensor,
    VersionCounter,
    _hooks_any,
    _hooks_state,
    _next_seq,
    _record_sites,
    pack_saved,
    user_site,
)
from chainrule.backends import as_array
from chainrule.ops._apply import _mark_view

if TYPE_CHECKING:
    from chainrule.ops._opdef import OpDef

__all__ = ["_record"]

_ndarray = np.ndarray
_asarray = as_array
_new = object.__new__
_new_node = object.__new__


def _keep_for(op: OpDef, needs: tuple[bool, ...]) -> tuple[bool, ...]:
    """Which of ``op``'s saved values to keep when ``needs`` are its inputs' needs_input_grad
    (cached in ``op.save_keep``). An op taking *inputs keeps all of them."""
    if len(needs) != len(op.input_names):
        keep = (True,) * len(op.save_users)
    else:
        keep = tuple(u is None or any(needs[i] for i in u) for u in op.save_users)
    if len(op.save_keep) < 64:
        op.save_keep[needs] = keep
    return keep


# complexity: the edges for one and two inputs are unrolled cases beside the general loop, so
# that the generic record stays the line-by-line reference of the generated one (_record_gen).
def _record(  # noqa: C901
    op: OpDef, inputs: tuple[Any, ...], out: Any, params: dict[str, Any] | None, aux: Any
) -> Any:
    """Build the node for one op application and wrap the outputs as non-leaf Tensors."""
    # Note [node classes]: an op without a class of its own has a name_fn.
    node = _new_node(op.node_cls or NODE_CLASSES[op.name_fn(params)])  # pyright: ignore[reportOptionalCall, reportArgumentType]
    node.op = op
    node.params = params
    node._hooks = None
    node._released = False
    node.metadata = None
    node._aux = aux
    node._fast = op.node_apply
    mask = op.grad_mask
    # The edges: unrolled for one and two inputs, the common cases.
    n = len(inputs)
    if len(mask) != n:  # an op taking *inputs
        joint = op.joint_vjp is not None
        vj = op.vjps
        mask = tuple(joint or (i < len(vj) and vj[i] is not None) for i in range(n))
    if n == 1:
        x = inputs[0]
        if mask[0] and isinstance(x, Tensor) and x._requires_grad:
            gf = x.grad_fn
            d = x._data
            node.next_functions = (
                (gf, x._output_nr) if gf is not None else (x._get_accumulator(), 0),
            )
            k = (d.shape, d.dtype)
            m = _META.get(k)
            if m is None:
                m = _meta(k)
            node._input_meta = (m,)
            node.needs_input_grad = _NEEDS_ONE
        else:
            node.next_functions = ((None, 0),)
            node._input_meta = (None,)
            node.needs_input_grad = (False,)
    elif n == 2:
        a, b = inputs
        if mask[0] and isinstance(a, Tensor) and a._requires_grad:
            gf = a.grad_fn
            d = a._data
            ea = (gf, a._output_nr) if gf is not None else (a._get_accumulator(), 0)
            k = (d.shape, d.dtype)
            ma = _META.get(k)
            if ma is None:
                ma = _meta(k)
            na = True
        else:
            ea = _NO_EDGE
            ma = None
            na = False
        if mask[1] and isinstance(b, Tensor) and b._requires_grad:
            gf = b.grad_fn
            d = b._data
            eb = (gf, b._output_nr) if gf is not None else (b._get_accumulator(), 0)
            k = (d.shape, d.dtype)
            mb = _META.get(k)
            if mb is None:
                mb = _meta(k)
            nb = True
        else:
            eb = _NO_EDGE
            mb = None
            nb = False
        node.next_functions = (ea, eb)
        node._input_meta = (ma, mb)
        node.needs_input_grad = _NEEDS_TWO[na + na + nb]
    else:
        nexts = []
        meta = []
        needs = []
        for x, has in zip(inputs, mask):
            if has and isinstance(x, Tensor) and x._requires_grad:
                gf = x.grad_fn
                nexts.append((gf, x._output_nr) if gf is not None else (x._get_accumulator(), 0))
                d = x._data
                meta.append((d.shape, d.dtype))
                needs.append(True)
            else:
                nexts.append(_NO_EDGE)
                meta.append(None)
                needs.append(False)
        node.next_functions = tuple(nexts)
        node._input_meta = tuple(meta)
        node.needs_input_grad = tuple(needs)
    # Numbered after the inputs' AccumulateGrad nodes it may have just created, so that a
    # node's sequence number is always above those of the nodes it feeds.
    node.sequence_nr = _next_seq()

    if op.num_outputs == 1:
        if type(out) is not _ndarray:
            out = _asarray(out)
        t = _new(Tensor)
        t._data = out
        t._vc = None
        if out.dtype.num in _kinds.INEXACT_NUMS:
            t._requires_grad = True
            t.grad_fn = node
        else:
            t._requires_grad = False
            t.grad_fn = None
        outs: tuple[Tensor, ...] = (t,)
        node._out_meta = None
        node.num_outputs = 1
    else:
        outs = tuple(
            _make_out(o if type(o) is _ndarray else _asarray(o), node, i) for i, o in enumerate(out)
        )
        node._out_meta = tuple((t._data.shape, t._data.dtype) for t in outs)
        node.num_outputs = len(outs)
    if op.view:
        _mark_view(outs[0], inputs[0], op, params)

    spec = op.save_spec
    if spec:
        saved = []
        needs = node.needs_input_grad
        keep = op.save_keep.get(needs)
        if keep is None:
            keep = _keep_for(op, needs)
        for (kind, idx), kept in zip(spec, keep):
            if not kept:
                saved.append(None)  # Note [saved only when needed]
                continue
            src = outs[idx] if kind else inputs[idx]
            if isinstance(src, Tensor):
                vc = src._vc
                if vc is None:
                    vc = src._vc = VersionCounter()
                elif src._is_inference:
                    raise RuntimeError(INFERENCE_SAVE_MSG)
                saved.append(SavedTensor(src, kind == 1, vc))
            else:
                saved.append(src)
        if _hooks_any[0] and _hooks_state.stack:
            pack_saved(saved, node)
        node.saved = tuple(saved)
    else:
        node.saved = ()
    if _record_sites[0]:
        # The user's line that made this node (Note [sites] in autograd/graph.py).
        node._site = user_site(2)
    if _anomaly_enabled[0]:
        from chainrule.autograd.anomaly import record_trace

        node._site = user_site(2)
        record_trace(node)
    return outs[0] if op.num_outputs == 1 else outs


# VersionCounter.__init__'s one store, for the generated records.
_set_version = VersionCounter.value.__set__  # type: ignore[attr-defined]


def _note_site(node: OpNode) -> None:
    """The tail of _record for a generated record: the user's line that made ``node``."""
    node._site = user_site(3)
    if _anomaly_enabled[0]:
        from chainrule.autograd.anomaly import record_trace

        record_trace(node, 3)


_NO_EDGE = (None, 0)
_NEEDS_ONE = (True,)
_NEEDS_TWO = ((False, False), (False, True), (True, False), (True, True))

# Note [shared metadata]
#     Every object a node keeps alive is one more object for Python's cycle collector to walk
#     again and again while the graph lives, which on a long graph costs as much as building it.
#     So the per-input ``(shape, dtype)`` pairs are shared, one per distinct pair (the cache is
#     dropped when it grows past _META_MAX), and ``needs_input_grad`` tuples are constants.
_META: dict[tuple[Any, Any], tuple[Any, Any]] = {}
_META_MAX = 4096


def _meta(key: tuple[Any, Any]) -> tuple[Any, Any]:
    if len(_META) >= _META_MAX:
        _META.clear()
    _META[key] = key
    return key


def _make_out(data: Any, node: OpNode, nr: int) -> Tensor:
    t = _new_tensor(data)
    if data.dtype.num in _kinds.INEXACT_NUMS:
        t._requires_grad = True
        t.grad_fn = node
        if nr:
            t._output_nr = nr
    return t
