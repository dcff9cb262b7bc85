"""Final callbacks of a backward pass (PyTorch's ``Variable._execution_engine.queue_callback``).

A callback queued while a backward runs (from a hook, say) runs once that backward's graph has
been processed, before ``backward()`` returns; DistributedDataParallel's ``static_graph`` uses
it to start its delayed all-reduce at the end of the first backward. Each backward (nested
ones included) has its own list, on a per-thread stack; a backward that raises drops its list.
"""

from __future__ import annotations

import threading
from typing import Callable

__all__ = ["queue_callback"]


class _Stack(threading.local):
    def __init__(self) -> None:
        self.lists: list[list[Callable[[], object]]] = []


_stack = _Stack()


def queue_callback(callback: Callable[[], object]) -> None:
    """Run ``callback()`` when the backward pass now running has finished its graph."""
    lists = _stack.lists
    if not lists:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    lists[-1].append(callback)


def push() -> list[Callable[[], object]]:
    """Open the callback list of a backward that is starting."""
    lst: list[Callable[[], object]] = []
    _stack.lists.append(lst)
    return lst


def pop(run: bool) -> None:
    """Close the innermost backward's list, running its callbacks (in order, including any that
    a callback queues) when ``run``."""
    lst = _stack.lists[-1]
    try:
        i = 0
        while run and i < len(lst):
            lst[i]()
            i += 1
    finally:
        _stack.lists.pop()
