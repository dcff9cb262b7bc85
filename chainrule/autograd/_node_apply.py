"""The generated twin of ``OpNode.apply`` (Note [generated apply]): one function per op, written
from one template when the op is first recorded.

Part of the backward graph (``autograd/graph.py`` re-exports ``_make_node_apply``).
"""

from __future__ import annotations

from typing import Any, Callable

from chainrule.autograd._codegen import compile_generated
from chainrule.autograd._nodes import OpNode, _ctx_class, _new
from chainrule.autograd._saved import SavedTensor

# Note [generated apply]
#     OpNode.apply is generic: it loops over an op's saved values and VJPs. In a backward
#     without ``inputs=`` or create_graph, the engine's loop (_drain in engine.py, Note [plain
#     nodes] there) instead calls ``op.node_apply(node, grads, release,
#     freed_at)``, a function written for the one op (of one output) when it is first
#     recorded: its saved values are read and stored into the ctx by name, one line each, its
#     VJPs are called directly, and then, when ``release``, it frees the node as the engine
#     and OpNode.release do. It returns ``(gradients, node.next_functions,
#     node._input_meta)``: read here, the two reads see one class (Note [monomorphic reads] in
#     engine.py). It computes exactly what OpNode.apply does without create_graph
#     (a freed node goes to OpNode.apply for its error), in less than half the bytecode:
#     measured 127 -> 55 instructions per node. Each node holds it as ``_fast`` until it gets
#     hooks or anomaly metadata, which need the engine's full path. Every piece of it is
#     written from the templates below, and tests/ops/test_generated_apply.py checks it
#     against OpNode.apply, bit for bit, for each op the op table records.
_APPLY_TEMPLATE = """
def node_apply(node, grads, release, freed_at):
    if node._released:
        return general(node, grads, False), node.next_functions, node._input_meta
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
    return r, node.next_functions, node._input_meta
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
    env: dict[str, Any] = {
        "general": OpNode.apply,
        "new": _new,
        "cls": op.ctx_cls,
        "SavedTensor": SavedTensor,
    }
    if op.joint_vjp is not None:
        env["joint"] = op.joint_vjp
        call = "    r = joint(ctx, g)\n    if type(r) is not tuple:\n        r = (r,)\n"
    else:
        n = len(op.vjps)
        for i, f in enumerate(op.vjps):
            env[f"vjp{i}"] = f
        terms = "".join(
            f"vjp{i}(ctx, g) if need[{i}] else None, " if f is not None else "None, "
            for i, f in enumerate(op.vjps)
        )
        # An op taking *inputs has more edges than VJPs: the generic apply handles it.
        call = (
            f"    if len(need) == {n}:\n        r = ({terms})\n"
            "    else:\n        r = general(node, grads, False)\n"
        )
    src = _APPLY_TEMPLATE.format(
        saved=saved,
        aux="    a = node._aux\n    if a is not None:\n        ctx.__dict__.update(a)\n"
        if op.aux
        else "",
        grad="grads[0]" if op.num_outputs == 1 else "tuple(grads)",
        call=call,
        release="".join(_RELEASE_TEMPLATE.format(i=i) for i in range(len(names))),
    )
    # Named inside the package (user_site() skips its frames), its lines in linecache.
    return compile_generated(src, f"apply of {op.name}", env)["node_apply"]
