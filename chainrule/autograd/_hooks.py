"""Hooks on the backward graph: the per-node hook tables (``NodeHooks``) and the
saved-tensor hooks (``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``)
whose pack hook ``_saved.pack_saved`` runs.

Part of the backward graph (``autograd/graph.py`` re-exports it); imports nothing of it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

__all__ = ["NodeHooks", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class _HooksState(threading.local):
    # The stack of (pack, unpack) pairs of saved_tensors_hooks, per thread as in PyTorch.
    stack: list[tuple[Callable[..., Any], Callable[..., Any]]] = []

    def __init__(self) -> None:
        self.stack = []


_hooks_state = _HooksState()
# How many saved_tensors_hooks blocks are open in any thread: a plain list read, so that _record
# looks at the thread-local stack only while some block is open.
_hooks_any = [0]


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
