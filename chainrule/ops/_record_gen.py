"""Code generation: ``_record`` (ops/_record.py) written out for one op on its first
recorded use, from one template (Note [generated record]); tests/ops/test_record_gen.py checks
that it builds the same node, outputs and saved values as the generic ``_record``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from chainrule import _kinds
from chainrule._tensor import Tensor
from chainrule.autograd._codegen import compile_generated
from chainrule.autograd.anomaly import _anomaly_enabled
from chainrule.autograd.graph import (
    INFERENCE_SAVE_MSG,
    NODE_CLASSES,
    SavedTensor,
    VersionCounter,
    _hooks_any,
    _hooks_state,
    _make_node_apply,
    _next_seq,
    _record_sites,
    pack_saved,
)
from chainrule.backends import as_array
from chainrule.ops._record import (
    _META,
    _NEEDS_ONE,
    _NEEDS_TWO,
    _NO_EDGE,
    _meta,
    _note_site,
    _record,
    _set_version,
)

if TYPE_CHECKING:
    from chainrule.ops._opdef import OpDef

__all__ = ["_first_record", "_make_record"]

_ndarray = np.ndarray
_asarray = as_array
_new = object.__new__


# Note [generated record]
#     _record is generic: it dispatches on the number of inputs and outputs, walks the op's
#     grad mask and save spec, and checks view and aux flags. apply_op calls ``op.record``
#     instead, which for an op of one or two inputs and one output (most ops) is _record
#     written out for that op on its first recorded use: the mask, the save spec and the flags
#     are fixed there, so each input's edge and each saved value is a few straight lines. It
#     builds the same node, outputs and saved values as _record (which handles the other ops,
#     and is what a call with a different number of inputs falls back to). Measured: 239 ->
#     about 150 instructions per op on the op chain. Generating costs about 0.2 ms per op.
_RECORD_TEMPLATE = """
def record(op, inputs, out, params, aux):
    if len(inputs) != {n}:
        return generic(op, inputs, out, params, aux)
    node = new({node_cls})
    node.op = op
    node.params = params
    node._hooks = None
    node._released = False
    node.metadata = None
    node._aux = aux
    node._fast = fast
    {unpack}
{edges}    node.next_functions = ({edge_tuple})
    node._input_meta = ({meta_tuple})
    node.needs_input_grad = {needs}
    node.sequence_nr = next_seq()
    if type(out) is not ndarray:
        out = asarray(out)
    t = new(Tensor)
    t._data = out
    t._vc = None
    if out.dtype.num in INEXACT:
        t._requires_grad = True
        t.grad_fn = node
    else:
        t._requires_grad = False
        t.grad_fn = None
    node._out_meta = None
    node.num_outputs = 1
{saves}    if record_sites[0] or anomaly[0]:
        note_site(node)
    return t
"""

_EDGE_TEMPLATE = """    if isinstance(x{i}, Tensor) and x{i}._requires_grad:
        gf = x{i}.grad_fn
        d = x{i}._data
        e{i} = (gf, x{i}._output_nr) if gf is not None else (x{i}._get_accumulator(), 0)
        k = (d.shape, d.dtype)
        m{i} = META.get(k)
        if m{i} is None:
            m{i} = meta(k)
        n{i} = True
    else:
        e{i} = NO_EDGE
        m{i} = None
        n{i} = False
"""

# A fresh output's counter is new and at 0, and it is output 0 of the node: the SavedTensor's
# fields are constants but for its array (SavedTensor.__init__ with is_output=True, inlined).
_SAVE_OUT_TEMPLATE = """    vc = new(VersionCounter)
    set_version(vc, 0)
    t._vc = vc
    s{j} = new(SavedTensor)
    s{j}.data = out
    s{j}.counter = vc
    s{j}.version = 0
    s{j}.is_output = True
    s{j}.output_nr = 0
    s{j}.tensor = None
    s{j}.src_name = None
    s{j}.shape_str = None
"""

_SAVE_TEMPLATE = """    src = {src}
    if isinstance(src, Tensor):
        vc = src._vc
        if vc is None:
            vc = src._vc = VersionCounter()
        elif src._is_inference:
            raise RuntimeError(INFERENCE_SAVE_MSG)
        s{j} = SavedTensor(src, {is_out}, vc)
    else:
        s{j} = src
"""


def _guarded(code: str, j: int, users: tuple[int, ...] | None, mask: tuple[bool, ...]) -> str:
    """``code`` (which saves value ``j``) run only when an input among ``users`` requires
    grad, else the value is None (Note [saved only when needed]). Unguarded when those are all
    the inputs that can need a gradient (the record runs only when one of them does)."""
    if users is None:
        return code
    users = tuple(i for i in users if mask[i])
    if not users:
        return f"    s{j} = None\n"
    if len(users) == sum(mask):
        return code
    test = " or ".join(f"n{i}" for i in users)
    body = "".join("    " + ln + "\n" for ln in code.splitlines())
    return f"    if {test}:\n{body}    else:\n        s{j} = None\n"


def _first_record(op: OpDef, inputs: tuple[Any, ...], out: Any, params: Any, aux: Any) -> Any:
    """``op.record`` before the op's first recorded use: write it and the op's node_apply
    (Note [generated apply] in autograd/graph.py), then record."""
    op.node_apply = _make_node_apply(op)
    op.record = _make_record(op)
    return op.record(op, inputs, out, params, aux)


def _make_record(op: OpDef) -> Callable[..., Any]:
    """_record written for ``op`` (Note [generated record]), or _record itself."""
    n = len(op.input_names)
    if op.num_outputs != 1 or op.view or n not in (1, 2) or len(op.grad_mask) != n:
        return _record
    unpack = "x0, = inputs" if n == 1 else "x0, x1 = inputs"
    edges = "".join(
        _EDGE_TEMPLATE.format(i=i)
        if has
        else f"    e{i} = NO_EDGE\n    m{i} = None\n    n{i} = False\n"
        for i, has in enumerate(op.grad_mask)
    )
    if n == 1:
        edge_tuple, meta_tuple, needs = "e0,", "m0,", "NEEDS_ONE if n0 else (False,)"
    else:
        edge_tuple, meta_tuple, needs = "e0, e1", "m0, m1", "NEEDS_TWO[n0 + n0 + n1]"
    saves = ""
    for j, ((kind, idx), users) in enumerate(zip(op.save_spec, op.save_users)):
        code = (
            _SAVE_OUT_TEMPLATE.format(j=j)
            if kind
            else _SAVE_TEMPLATE.format(j=j, src=f"x{idx}", is_out=False)
        )
        saves += _guarded(code, j, users, op.grad_mask)
    if op.save_spec:
        names = ", ".join(f"s{j}" for j in range(len(op.save_spec)))
        saves += (
            f"    saved = ({names},)\n    if hooks_any[0] and hooks_state.stack:\n"
            "        saved = list(saved)\n        pack_saved(saved, node)\n"
            "        saved = tuple(saved)\n    node.saved = saved\n"
        )
    else:
        saves = "    node.saved = ()\n"
    src = _RECORD_TEMPLATE.format(
        node_cls="NodeCls" if op.node_cls is not None else "CLASSES[name_fn(params)]",
        n=n,
        unpack=unpack,
        edges=edges,
        edge_tuple=edge_tuple,
        meta_tuple=meta_tuple,
        needs=needs,
        saves=saves,
    )
    env: dict[str, Any] = {
        "generic": _record,
        "new": _new,
        "NodeCls": op.node_cls,
        "CLASSES": NODE_CLASSES,
        "name_fn": op.name_fn,
        "Tensor": Tensor,
        "ndarray": _ndarray,
        "asarray": _asarray,
        "INEXACT": _kinds.INEXACT_NUMS,
        "NO_EDGE": _NO_EDGE,
        "META": _META,
        "meta": _meta,
        "NEEDS_ONE": _NEEDS_ONE,
        "NEEDS_TWO": _NEEDS_TWO,
        "next_seq": _next_seq,
        "VersionCounter": VersionCounter,
        "SavedTensor": SavedTensor,
        "INFERENCE_SAVE_MSG": INFERENCE_SAVE_MSG,
        "hooks_any": _hooks_any,
        "hooks_state": _hooks_state,
        "pack_saved": pack_saved,
        "record_sites": _record_sites,
        "anomaly": _anomaly_enabled,
        "note_site": _note_site,
        "fast": op.node_apply,
        "set_version": _set_version,
    }
    # Named inside the package (user_site() skips its frames), its lines in linecache.
    return compile_generated(src, f"record of {op.name}", env)["record"]
