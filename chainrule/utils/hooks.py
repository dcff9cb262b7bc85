"""RemovableHandle: what every ``register_*`` call returns."""

from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable

__all__ = ["RemovableHandle"]

_next_id = itertools.count().__next__


class RemovableHandle:
    """Handle to a registered hook; ``remove()`` unregisters it (idempotent).

    Holds the hook dict weakly so that a handle does not keep a graph alive.
    Usable as a context manager that removes the hook on exit.
    """

    __slots__ = ("_dict_ref", "_extra_refs", "id")

    def __init__(
        self,
        hooks_dict: dict[int, Callable[..., Any]],
        fn: Callable[..., Any],
        *,
        extra_dict: dict[int, Any] | list[dict[int, Any]] | None = None,
    ) -> None:
        self.id = _next_id()
        hooks_dict[self.id] = fn
        self._dict_ref = weakref.ref(hooks_dict)
        # Dicts that hold entries under the same id (flags such as with_kwargs), emptied with it.
        extras = [extra_dict] if isinstance(extra_dict, dict) else (extra_dict or [])
        self._extra_refs = tuple(weakref.ref(e) for e in extras)

    def remove(self) -> None:
        d = self._dict_ref()
        if d is not None:
            d.pop(self.id, None)
        for ref in self._extra_refs:
            e = ref()
            if e is not None:
                e.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()
