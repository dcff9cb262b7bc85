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

The graph is written in parts, by topic, and this module (``torch.autograd.graph``'s place)
gathers their public names; the parts import one another in one direction only:

- ``_sites.py``: source sites (Note [sites]) and the messages that name them;
- ``_hooks.py``: per-node hook tables and the saved-tensor hooks;
- ``_saved.py``: ``VersionCounter``, ``SavedTensor``, packing and the readers of saved memory;
- ``_nodes.py``: ``Node``, ``OpNode``, ``AccumulateGrad`` and the VJPs' ctx;
- ``_node_apply.py``: ``OpNode.apply``'s generated twin (Note [generated apply]).
"""

from __future__ import annotations

# Besides the public names, the private ones that chainrule's other modules import from here
# (hence the noqa: re-exports, not unused imports).
from chainrule.autograd._hooks import (  # noqa: F401
    NodeHooks,
    _disabled_msg,
    _hooks_any,
    _hooks_state,
    _HooksState,
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)
from chainrule.autograd._node_apply import _make_node_apply  # noqa: F401
from chainrule.autograd._nodes import (  # noqa: F401
    _GRAD_LOCK,
    NODE_CLASSES,
    AccumulateGrad,
    Node,
    OpNode,
    _Ctx,
    _ctx_class,
    _new,
    _next_seq,
    _stealable,
    node_class,
)
from chainrule.autograd._saved import (  # noqa: F401
    INFERENCE_SAVE_MSG,
    PackedSavedTensor,
    SavedTensor,
    VersionCounter,
    _is_array,
    _short_name,
    held_arrays,
    pack_saved,
    packed_arrays,
    saved_bytes,
)
from chainrule.autograd._sites import (  # noqa: F401
    FREED_MSG,
    _created_at,
    _record_sites,
    _sites_of_modified,
    format_site,
    freed_message,
    is_record_sites_enabled,
    set_record_sites,
    site_line,
    user_site,
)

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
